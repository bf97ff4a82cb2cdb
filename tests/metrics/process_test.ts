import assert from "node:assert/strict";
import client from "prom-client";
import { collectProcessMetrics } from "../../lib/metrics/process.ts";

const names = async (r: client.Registry) => (await r.getMetricsAsJSON()).map((m) => m.name).sort();

Deno.test("process metrics are prom-client's defaults without the event-loop delay histogram's gauges", async () => {
  const ours = new client.Registry();
  collectProcessMetrics(ours);
  const defaults = new client.Registry();
  client.collectDefaultMetrics({ register: defaults });
  const histogramGauges = ["min", "max", "mean", "stddev", "p50", "p90", "p99"].map((s) =>
    `nodejs_eventloop_lag_${s}_seconds`
  );
  assert.deepEqual(await names(ours), (await names(defaults)).filter((n) => !histogramGauges.includes(n)));
  const text = await ours.metrics();
  assert.match(text, /^nodejs_eventloop_lag_seconds \d/m, "the lag is measured when scraped");
  assert.match(text, /^process_resident_memory_bytes \d/m);
});
