/**
 * @module audit/throttled_log
 * Rate-limits a recurring log line (dropped events can come by the thousand per second): the first
 * occurrence is logged, then at most one line per interval carrying how many were suppressed.
 */

/** Returns a gate: `gate((suppressed) => log.warn(…))` runs the callback at most once per interval. */
export function everyFewSeconds(intervalMs = 10_000): (emit: (suppressed: number) => void) => void {
  let last = -Infinity;
  let suppressed = 0;
  return (emit) => {
    const now = performance.now();
    if (now - last < intervalMs) {
      suppressed++;
      return;
    }
    last = now;
    const n = suppressed;
    suppressed = 0;
    emit(n);
  };
}
