/**
 * @module bench/status_lane_bench
 * `deno task bench status_lane`: the status lane's own CPU (lib/controller/status_lane.ts) for the
 * writes after a first publish: BENCH_INGRESSES (default 100,000) writes added at once, two at a
 * time, each finishing at once (no API server), until drained. Figure: `status_lane.drain_ms`.
 */
import { StatusLane } from "../lib/controller/status_lane.ts";
import { figureList } from "./figures.ts";

const n = Number(Deno.env.get("BENCH_INGRESSES") ?? 100_000);
const { figures, fig } = figureList();
const lane = new StatusLane({ limit: 2, onFailure: () => {}, onIdle: () => {} });
const t0 = performance.now();
for (let i = 0; i < n; i++) lane.add(`apps/i${i}`, () => Promise.resolve());
await lane.drained();
fig("status_lane.writes", "writes", n);
fig("status_lane.drain_ms", "ms", performance.now() - t0);
console.log(JSON.stringify(figures));
