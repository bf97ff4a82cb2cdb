/**
 * @module process_metrics
 * A process's own metrics (`process_*`, `nodejs_*`): those of prom-client's
 * `collectDefaultMetrics` but its event-loop delay histogram. Under Deno,
 * `perf_hooks.monitorEventLoopDelay` keeps an HDR histogram whose counts array grows with the
 * longest delay it has seen and never shrinks: 10 MB of RSS after one 100 ms block, 14 MB in the
 * controller after the first sync of 10,000 Ingresses (docs/controller-scale.md). The event-loop
 * lag (`nodejs_eventloop_lag_seconds`, measured when scraped) stays; its `_min`, `_max`,
 * `_mean`, `_stddev` and `_p50`/`_p90`/`_p99` companions are not exported.
 */
import client from "prom-client";
import processCpuTotal from "prom-client/lib/metrics/processCpuTotal.js";
import processStartTime from "prom-client/lib/metrics/processStartTime.js";
import osMemoryHeap from "prom-client/lib/metrics/osMemoryHeap.js";
import processOpenFileDescriptors from "prom-client/lib/metrics/processOpenFileDescriptors.js";
import processMaxFileDescriptors from "prom-client/lib/metrics/processMaxFileDescriptors.js";
import processResources from "prom-client/lib/metrics/processResources.js";
import processHandles from "prom-client/lib/metrics/processHandles.js";
import processRequests from "prom-client/lib/metrics/processRequests.js";
import heapSizeAndUsed from "prom-client/lib/metrics/heapSizeAndUsed.js";
import heapSpacesSizeAndUsed from "prom-client/lib/metrics/heapSpacesSizeAndUsed.js";
import version from "prom-client/lib/metrics/version.js";
import gc from "prom-client/lib/metrics/gc.js";
import process from "node:process";

type DefaultMetric = (registry: client.Registry, config: Record<string, unknown>) => void;

const collectors: DefaultMetric[] = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  // As collectDefaultMetrics does: only where the runtime has it.
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === "function"
    ? [processResources]
    : []),
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
  gc,
];

/** Registers the process metrics in `registry` (once per registry). */
export function collectProcessMetrics(registry: client.Registry): void {
  for (const collect of collectors) collect(registry, {});
  new client.Gauge({
    name: "nodejs_eventloop_lag_seconds",
    help: "Lag of event loop in seconds.",
    registers: [registry],
    aggregator: "average",
    // The time a callback queued now waits for its turn (prom-client's own measure of this gauge).
    async collect() {
      const start = performance.now();
      await new Promise((resolve) => setImmediate(resolve));
      this.set((performance.now() - start) / 1000);
    },
  });
}
