/**
 * @module malloc_trim
 * Gives memory back to the system once a burst of work is over: V8's heap by one memory-reducing
 * collection (lib/runtime/heap_compact.ts), then the C heap's free pages. Response bodies,
 * request buffers and the runtime's own allocations live in glibc's heap, not in V8's; freed after a
 * first sync of 10,000 objects, they stay in glibc's free lists and count as the process's RSS
 * until `malloc_trim(3)` returns them (docs/controller-scale.md has the figures). Where there is no
 * glibc (or no `--allow-ffi`), trimming does nothing.
 */

import { compactHeap } from "./heap_compact.ts";
import { log } from "../log/logger.ts";

const LIBC = "libc.so.6";

/** `malloc_trim(0)` through FFI: true when it ran. Opened and closed each time: a few µs, no resource left. */
export function mallocTrim(): boolean {
  if (Deno.build.os !== "linux") return false;
  let lib;
  try {
    lib = Deno.dlopen(LIBC, { malloc_trim: { parameters: ["usize"], result: "i32" } });
  } catch {
    return false; // musl, or no FFI permission: nothing to trim with
  }
  try {
    lib.symbols.malloc_trim(0n);
    return true;
  } finally {
    lib.close();
  }
}

/**
 * The heap first: a collection frees the C memory of the objects it collects (buffers, the
 * runtime's handles), which the trim after it can give back.
 */
export function releaseMemory(): boolean {
  const t0 = performance.now();
  const compacted = compactHeap();
  const t1 = performance.now();
  const trimmed = mallocTrim();
  log.v(2)?.info("memory released after work", {
    collectMs: Math.round(t1 - t0),
    trimMs: Math.round(performance.now() - t1),
    rssMB: Math.round(Deno.memoryUsage().rss / 1e6),
  });
  return trimmed || compacted;
}

export interface IdleTrimmerOptions {
  /** Quiet time after the work ends before trimming. */
  afterIdleMs?: number;
  /** The least time between two trims (each collects V8's heap and walks the whole C heap). */
  minIntervalMs?: number;
  trim?: () => boolean;
}

/** Trims once the owner has been idle for a moment: `idle()` when work ends, `busy()` when it starts. */
export class IdleTrimmer {
  readonly #afterIdleMs: number;
  readonly #minIntervalMs: number;
  readonly #trim: () => boolean;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastAt = -Infinity;
  #stopped = false;
  /** Trims that ran. */
  trims = 0;

  constructor(opts: IdleTrimmerOptions = {}) {
    this.#afterIdleMs = opts.afterIdleMs ?? 1_000;
    this.#minIntervalMs = opts.minIntervalMs ?? 10_000;
    this.#trim = opts.trim ?? releaseMemory;
  }

  /** The work is over: trim after the quiet time (a timer already set is kept). */
  idle(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const wait = Math.max(this.#afterIdleMs, this.#lastAt + this.#minIntervalMs - performance.now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#lastAt = performance.now();
      if (this.#trim()) this.trims++;
    }, wait);
  }

  /** Work started: no trim in the middle of it. */
  busy(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  stop(): void {
    this.#stopped = true;
    this.busy();
  }
}
