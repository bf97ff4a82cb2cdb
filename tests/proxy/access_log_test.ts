/**
 * HAProxy's access log reaches the stdout of the process running it (the proxy container's), not
 * the proxy's own log: a child Deno process runs lib/proxy/haproxy.ts's HAProxy with the rendered
 * global and defaults sections, one request goes through, and the child's stdout holds its line.
 */
import assert from "node:assert/strict";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import { DEFAULT_PROXY_OPTIONS, proxyView } from "../../lib/render/proxy_options.ts";

Deno.test("access log: the lines of `log stdout` are copied to the process's stdout", async () => {
  const haproxy = await ensureHaproxy();
  const dir = await Deno.makeTempDir({ prefix: "ic-access-log-" });
  try {
    const [http, https, stats] = freePorts(3);
    const view = proxyView(DEFAULT_PROXY_OPTIONS);
    await Deno.writeTextFile(
      `${dir}/haproxy.cfg`,
      [
        "global",
        `    stats socket "\${IC_RUNTIME_SOCKET}" mode 600 level admin`,
        `    log ${view.logTarget}`,
        "defaults",
        "    mode http",
        "    timeout connect 5s",
        "    timeout client 5s",
        "    timeout server 5s",
        "    log global",
        `    log-format ${view.logFormat}`,
        "frontend http",
        `    bind "\${IC_BIND_ADDR}:\${IC_HTTP_PORT}"`,
        "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower",
        "    http-request set-var(txn.path) path",
        "    http-request return status 204",
        "",
      ].join("\n"),
    );
    const haproxyModule = new URL("../../lib/proxy/haproxy.ts", import.meta.url).href;
    const script = `
      import { HAProxy } from ${JSON.stringify(haproxyModule)};
      const h = new HAProxy({ binary: ${JSON.stringify(haproxy)}, workDir: ${JSON.stringify(dir)},
        bindAddress: "127.0.0.1", httpPort: ${http}, httpsPort: ${https}, statsPort: ${stats},
        runtimeSocket: ${JSON.stringify(`${dir}/runtime.sock`)}, certDir: ${JSON.stringify(dir)} });
      await h.start();
      const r = await fetch("http://127.0.0.1:${http}/hello?x=1");
      await r.body?.cancel();
      // The worker writes the line after the response; the copy runs until haproxy's stdout closes.
      await new Promise((r) => setTimeout(r, 300));
      await h.stop();
    `;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--quiet", script],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const lines = stdout.split("\n").filter((l) => l.trim() !== "");
    assert.equal(lines.length, 1, JSON.stringify(lines));
    // HAProxy's one line per frontend/backend at a stop is not the proxy's log at info (10,000 at scale)
    const stderr = new TextDecoder().decode(out.stderr);
    assert.doesNotMatch(stderr, /Proxy http stopped/);
    const entry = JSON.parse(lines[0]);
    assert.equal(entry.host, "127.0.0.1");
    assert.equal(entry.path, "/hello");
    assert.equal(entry.status, 204);
    assert.equal(entry.method, "GET");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
