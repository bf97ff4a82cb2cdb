/**
 * @module bench/model_change_bench
 * The controller's own share of a one-Ingress change with 10,000 present (`BENCH_INGRESSES`), in a
 * process of its own, with the memos the controller keeps (lib/render/ingress_reading.ts's
 * ModelMemo, lib/render/render.ts's RenderMemo): a host added to one Ingress, then the model (a
 * delta of the last one) and the rendering. No API server and no proxy: the scale bench measures
 * the whole path; this one is the part that grows with the class, without the noise of sharing
 * two cores with them, and with the V8 flags the chart runs the controller with (its small young
 * generation makes the garbage of a change cost more than V8's defaults do). Figures:
 * `model_change.model_ms` and `model_change.render_ms`, p50 and p90 of 200 changes;
 * `model_change.allocated_mb`, p50 of what V8 allocated for the model and render of one change (the
 * garbage a change leaves for the collector, which at 100,000 runs near its heap limit); and
 * `model_change.full_build_ms`, p50 of BENCH_FULL_BUILDS (default 20) changes a delta cannot take (a
 * default backend).
 */
import type { V1EndpointSlice, V1Ingress, V1Service } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, lookupFromLists } from "../lib/render/model.ts";
import { ModelMemo } from "../lib/render/ingress_reading.ts";
import { loadTemplates, render, RenderMemo } from "../lib/render/render.ts";
import { CONTROLLER_HEAP_LIMIT_MB, CONTROLLER_SEMI_SPACE_MB, v8Flags } from "../lib/controller/v8_flags.ts";
import { figureList, percentile } from "./figures.ts";
import v8 from "node:v8";

if (Deno.env.get("IC_MODEL_CHANGE_BENCH") !== "child") {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${v8Flags(CONTROLLER_HEAP_LIMIT_MB, CONTROLLER_SEMI_SPACE_MB)}`,
      new URL(import.meta.url).pathname,
    ],
    env: { IC_MODEL_CHANGE_BENCH: "child" },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  Deno.exit(code);
}

const INGRESSES = Number(Deno.env.get("BENCH_INGRESSES") ?? 10_000);
const CHANGES = 200;
const FULL_BUILDS = Number(Deno.env.get("BENCH_FULL_BUILDS") ?? 20);
/** Bytes V8 has allocated so far (garbage included). */
const allocated = () => (v8.getHeapStatistics() as { total_allocated_bytes?: number }).total_allocated_bytes ?? 0;

const ingresses: V1Ingress[] = [];
const services: V1Service[] = [];
const slices: V1EndpointSlice[] = [];
for (let i = 0; i < INGRESSES; i++) {
  const ns = `ns${i % 50}`;
  const svc = `svc-${i}`;
  ingresses.push({
    metadata: {
      namespace: ns,
      name: `ing-${i}`,
      uid: `uid-${i}`,
      creationTimestamp: new Date(1_700_000_000_000 + i).toISOString() as unknown as Date,
    },
    spec: {
      rules: [{
        host: `host-${i}.example.com`,
        http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: svc, port: { number: 80 } } } }] },
      }],
    },
  });
  services.push({
    metadata: { namespace: ns, name: svc },
    spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  });
  slices.push({
    metadata: { namespace: ns, name: `${svc}-x`, labels: { "kubernetes.io/service-name": svc } },
    addressType: "IPv4",
    endpoints: [{
      addresses: [`10.${1 + Math.floor(i / 62_500)}.${Math.floor(i / 250) % 250}.${i % 250}`],
      conditions: { ready: true },
    }],
    ports: [{ name: "http", port: 8080 }],
  });
}
// The controller's lookup counts the changes of what it hands out: nothing changes here.
const lookup: ClusterLookup = {
  ...lookupFromLists({ services, endpointSlices: slices, secrets: [] }),
  generation: () => 0,
};
const templates = await loadTemplates(null);
const memo = new ModelMemo();
const renderMemo = new RenderMemo();
render(buildModel({ ingresses, lookup, memo }).model, templates, undefined, renderMemo);

const modelMs: number[] = [];
const renderMs: number[] = [];
const allocatedMb: number[] = [];
for (let c = 0; c < CHANGES; c++) {
  const i = (c * 7919) % INGRESSES;
  const old = ingresses[i];
  const rule = old.spec!.rules![0];
  // A new object, as the controller's cache hands out after a watch event.
  ingresses[i] = {
    ...old,
    metadata: { ...old.metadata },
    spec: { rules: [rule, { host: `n${c}.example.com`, http: rule.http }] },
  };
  const a0 = allocated();
  const t0 = performance.now();
  const { model } = buildModel({ ingresses, lookup, memo });
  const t1 = performance.now();
  render(model, templates, undefined, renderMemo);
  modelMs.push(t1 - t0);
  renderMs.push(performance.now() - t1);
  allocatedMb.push((allocated() - a0) / 1e6);
}
if (memo.deltas < CHANGES) throw new Error(`only ${memo.deltas} of ${CHANGES} changes were deltas`);
// A change a delta cannot take (a default backend added, then removed): the full build over the
// kept fragments, with the rules between Ingresses (conflicts, host owners) decided again.
const fullMs: number[] = [];
const deltasBefore = memo.deltas;
for (let c = 0; c < FULL_BUILDS; c++) {
  const i = (c * 104_729) % INGRESSES;
  const old = ingresses[i];
  const backend = old.spec!.rules![0].http!.paths[0].backend;
  ingresses[i] = { ...old, metadata: { ...old.metadata }, spec: { ...old.spec, defaultBackend: backend } };
  const t0 = performance.now();
  buildModel({ ingresses, lookup, memo });
  fullMs.push(performance.now() - t0);
  ingresses[i] = old;
  buildModel({ ingresses, lookup, memo });
}
if (memo.deltas !== deltasBefore) throw new Error("a default backend change was a delta");
const { figures, fig } = figureList();
fig("model_change.ingresses", "ingresses", INGRESSES);
fig("model_change.model_ms", "ms", percentile(modelMs, 50));
fig("model_change.model_ms_p90", "ms", percentile(modelMs, 90));
fig("model_change.render_ms", "ms", percentile(renderMs, 50));
fig("model_change.render_ms_p90", "ms", percentile(renderMs, 90));
fig("model_change.allocated_mb", "MB", percentile(allocatedMb, 50));
fig("model_change.full_build_ms", "ms", percentile(fullMs, 50));
console.log(JSON.stringify(figures));
