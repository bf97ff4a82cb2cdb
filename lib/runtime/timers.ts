/**
 * @module timers
 * The one way this program waits: `sleep` rejects when its signal aborts (for loops that must
 * stop at once), `pause` returns early instead (for back-off between retries that should give up
 * quietly). Both clear their timer, so an aborted wait leaves nothing pending.
 */

/** Waits `ms`; rejects with the signal's reason when `signal` aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Waits `ms` or until `signal` aborts, whichever comes first; never rejects. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => undefined);
}

/** Wall time of consecutive phases (`lap(name)` ends the current one), in whole milliseconds, for logs. */
export class PhaseTimer {
  readonly laps: Record<string, number> = {};
  #last = performance.now();

  lap(name: string): void {
    const now = performance.now();
    this.laps[name] = Math.round(now - this.#last);
    this.#last = now;
  }
}
