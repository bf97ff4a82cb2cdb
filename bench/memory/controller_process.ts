/**
 * @module bench/memory/controller_process
 * Runs the controller alone in this process for the RSS figures of convergence_bench.ts and
 * scale_bench.ts: `controller_process.ts <kubeconfig> [settings JSON]` (the JSON overrides the
 * settings below, e.g. an operator namespace and validation on); prints one JSON line `{"rssBytes", "ingresses", …}` on
 * stdout each time its queue is idle after a line arrives on stdin, and exits on EOF.
 */
import { startController } from "../../lib/controller/controller.ts";
import { log } from "../../lib/log/logger.ts";

log.configure({ level: (Deno.env.get("BENCH_LOG") ?? "warn") as "warn" });
const kubeconfig = Deno.args[0];
const overrides = Deno.args[1] ? JSON.parse(Deno.args[1]) : {};
const ctl = await startController({
  kubeconfig,
  validateProxyConfig: false,
  resyncPeriodMs: 0,
  workers: 8,
  coalesceMs: 0,
  ...overrides,
});
await ctl.synced;
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buf = "";
for await (const chunk of lines) {
  buf += chunk;
  while (buf.includes("\n")) {
    buf = buf.slice(buf.indexOf("\n") + 1);
    await ctl.idle();
    // With --v8-flags=--expose-gc: collect first, so the figure is the live set, not garbage.
    (globalThis as { gc?: () => void }).gc?.();
    const s = ctl.stats();
    const m = Deno.memoryUsage();
    console.log(
      JSON.stringify({ rssBytes: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, ...s }),
    );
  }
}
await ctl.stop();
