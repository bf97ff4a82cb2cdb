/**
 * @module bench/log_bench
 * Cost of a `log.v(4)` gate (`-v` 0): without `--vmodule` (one comparison); with a `--vmodule`
 * whose levels stay below 4 (one more comparison); with one that could enable level 4 (a one-frame
 * stack capture, then a per-call-site cache lookup), not matching and matching this file. Each
 * figure is the best of 5 rounds of a bounded loop. Last stdout line: JSON array of {name, unit, value}.
 */
import { log } from "../lib/log/logger.ts";

const calls = Number(Deno.env.get("LOG_BENCH_CALLS") ?? 100_000);
const rounds = 5;
// Only V statements run; nothing is written (level error drops the enabled info lines).
log.configure({ level: "error", verbosity: 0 });

let hits = 0;
function loop(): number {
  const start = performance.now();
  for (let i = 0; i < calls; i++) {
    if (log.v(4)) hits++;
  }
  return ((performance.now() - start) * 1e6) / calls;
}

function best(setup: () => void): number {
  setup();
  let min = Infinity;
  for (let r = 0; r < rounds; r++) min = Math.min(min, loop());
  return Number(min.toFixed(1));
}

const figures = [
  { name: "log.v(4) disabled, no --vmodule", unit: "ns/call", value: best(() => log.configure({ vmodule: null })) },
  {
    name: "log.v(4) disabled, --vmodule levels below 4",
    unit: "ns/call",
    value: best(() => log.configure({ vmodule: "informer=3,lib/cluster/*=2" })),
  },
  {
    name: "log.v(4) disabled, --vmodule set (no match)",
    unit: "ns/call",
    value: best(() => log.configure({ vmodule: "informer=4,lib/cluster/*=5" })),
  },
  {
    name: "log.v(4) enabled by --vmodule (log_bench=4)",
    unit: "ns/call",
    value: best(() => log.configure({ vmodule: "log_bench=4" })),
  },
];
log.configure({ vmodule: null });
console.error(`log bench: ${calls} calls per round, ${rounds} rounds, ${hits} enabled`);
console.log(JSON.stringify(figures));
