import assert from "node:assert/strict";
import { haproxyEnv, statsAddress, timeLimitOf } from "../../lib/proxy/haproxy.ts";

Deno.test("haproxy env: the stats listener is always on a loopback address, the traffic listeners on --bind-address", () => {
  // In a pod (--bind-address 0.0.0.0, or the pod IP) the exporter sidecar reads 127.0.0.1.
  for (const bind of ["0.0.0.0", "::", "10.244.1.7", "10.255.255.3", "fd00::7", "128.0.0.1"]) {
    assert.equal(statsAddress(bind), "127.0.0.1", bind);
  }
  // A loopback --bind-address (tests give each proxy one of its own) is kept.
  for (const bind of ["127.0.0.1", "127.104.9.33", "::1"]) assert.equal(statsAddress(bind), bind, bind);
  const env = haproxyEnv({
    bindAddress: "0.0.0.0",
    httpPort: 8080,
    httpsPort: 8443,
    statsPort: 56789,
    runtimeSocket: "/w/runtime.sock",
    certDir: "/w/certs",
  });
  assert.equal(env.IC_BIND_ADDR, "0.0.0.0");
  assert.equal(env.IC_STATS_ADDR, "127.0.0.1");
  assert.equal(env.IC_STATS_PORT, "56789");
});

Deno.test("haproxy time limit: the base up to 2 MB of configuration, in proportion beyond (a 19 MB start took over 30 s)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-haproxy-limit-" });
  try {
    const path = `${dir}/haproxy.cfg`;
    assert.equal(timeLimitOf(30_000, path), 30_000, "no file yet: the base");
    await Deno.writeTextFile(path, "global\n");
    assert.equal(timeLimitOf(30_000, path), 30_000);
    await Deno.writeTextFile(path, "#".repeat(2_000_000));
    assert.equal(timeLimitOf(30_000, path), 30_000);
    await Deno.writeTextFile(path, "#".repeat(19_000_000));
    assert.equal(timeLimitOf(30_000, path), 285_000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
