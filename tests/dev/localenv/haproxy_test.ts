import assert from "node:assert/strict";
import { join } from "node:path";
import { startBackend } from "../../../lib/dev/localenv/backend.ts";
import { haproxyCheck, parseWorkers, startHaproxy } from "../../../lib/dev/localenv/haproxy.ts";
import { requestWithHost } from "../../../lib/dev/localenv/http.ts";
import { freePort } from "../../../lib/dev/localenv/ports.ts";
import { processExists } from "../../../lib/dev/localenv/process.ts";

const config = `global
    log stderr format raw local0 warning

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend web
    bind "\${IC_BIND_ADDR}:\${IC_HTTP_PORT}"
    use_backend be_one if { hdr(host) -i one.example }
    default_backend be_two

backend be_one
    server s1 "\${BE_ONE}"

backend be_two
    server s1 "\${BE_TWO}"
`;

Deno.test("haproxy -c accepts a valid config and rejects a broken one with its message", async () => {
  const env = { IC_BIND_ADDR: "127.0.0.1", IC_HTTP_PORT: "8080", BE_ONE: "127.0.0.1:1", BE_TWO: "127.0.0.1:2" };
  const good = await haproxyCheck(config, { env });
  assert.equal(good.ok, true, good.output);
  const bad = await haproxyCheck(config.replace("default_backend be_two", "default_backend be_missing"), { env });
  assert.equal(bad.ok, false);
  assert.match(bad.output, /be_missing/);
});

Deno.test("haproxy in master-worker mode routes to test backends by host", async () => {
  await using one = await startBackend({ name: "one", host: "127.0.0.2" });
  await using two = await startBackend({ name: "two", host: "127.0.0.3" });
  const dir = await Deno.makeTempDir({ prefix: "ic-haproxy-test-" });
  try {
    const cfg = join(dir, "haproxy.cfg");
    await Deno.writeTextFile(cfg, config);
    const port = freePort("127.0.0.4");
    const proxy = await startHaproxy(cfg, {
      env: {
        IC_BIND_ADDR: "127.0.0.4",
        IC_HTTP_PORT: String(port),
        BE_ONE: `${one.address}:${one.port}`,
        BE_TWO: `${two.address}:${two.port}`,
      },
    });
    let workers: number[] = [];
    try {
      workers = await proxy.workerPids();
      assert.equal(workers.length, 1);
      const get = async (host: string) => {
        const res = await requestWithHost({ address: "127.0.0.4", port, host, path: "/some/path?q=1" });
        assert.equal(res.status, 200);
        return JSON.parse(res.body);
      };
      const a = await get("one.example");
      assert.equal(a.name, "one");
      assert.equal(a.address, "127.0.0.2");
      assert.equal(a.path, "/some/path?q=1");
      assert.equal(a.host, "one.example");
      const b = await get("other.example");
      assert.equal(b.name, "two");
      assert.equal(one.requests, 1);
      assert.equal(two.requests, 1);

      // A reload through the master socket starts a new worker and keeps serving.
      await proxy.masterCommand("reload");
      let after: number[] = [];
      for (let i = 0; i < 100; i++) {
        after = await proxy.workerPids();
        if (after.length === 1 && after[0] !== workers[0]) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.notDeepEqual(after, workers);
      assert.equal((await get("one.example")).name, "one");
      workers.push(...after);
    } finally {
      await proxy.stop();
    }
    assert.equal(processExists(proxy.pid), false, "master gone");
    // Workers are the master's children; they leave with it.
    for (let i = 0; i < 50 && workers.some(processExists); i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(workers.filter(processExists), []);
    await assert.rejects(Deno.stat(proxy.dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseWorkers keeps only current workers", () => {
  const out = `#<PID>          <type>          <reloads>       <uptime>        <version>
100             master          1               0d00h00m05s     2.6.12
# workers
102             worker          0               0d00h00m01s     2.6.12
# old workers
101             worker          1               0d00h00m05s     2.6.12
`;
  assert.deepEqual(parseWorkers(out), [102]);
});
