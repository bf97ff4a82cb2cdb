/**
 * @module bench/dataplane_proxy
 * The proxy side of bench/dataplane_bench.ts, in a process of its own as in a proxy pod: a
 * configuration laid out in `<workDir>` (haproxy.cfg, certs/) started with lib/proxy/haproxy.ts,
 * whose HAProxy writes its access log to this process's stdout (the bench reads it as a container
 * runtime would). Says `ready` on stderr once a worker runs; stops HAProxy when stdin closes.
 * `deno run -A bench/dataplane_proxy.ts <workDir> <bindAddress> <httpPort> <httpsPort> <statsPort>`
 */
import { join } from "node:path";
import { HAProxy } from "../lib/proxy/haproxy.ts";
import { ensureHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { log } from "../lib/log/logger.ts";

log.configure({ level: "warn" });
const [workDir, bindAddress, http, https, stats] = Deno.args;
const haproxy = new HAProxy({
  binary: await ensureHaproxy(),
  workDir,
  bindAddress,
  httpPort: Number(http),
  httpsPort: Number(https),
  statsPort: Number(stats),
  runtimeSocket: join(workDir, "runtime.sock"),
  certDir: join(workDir, "certs"),
  timeoutMs: 120_000,
});
await haproxy.start();
console.error("ready");
// until the bench closes our stdin
for await (const _ of Deno.stdin.readable) { /* nothing is sent */ }
await haproxy.stop();
