/**
 * @module controller/restores
 * How often the controller puts back an object someone else changed (lib/controller/drift.ts).
 * The first restore of an object is immediate; when the object is changed again soon after, each
 * further restore waits twice as long as the one before (1 s, 2 s, 4 s, … up to 5 minutes, with
 * jitter), so a writer that keeps changing it (a script, another controller, a GitOps tool with
 * its own idea of the object) meets one write per back-off period, not a write fight. An object
 * left alone for `QUIET_MS` starts over. Only restores are paced: a write because what the
 * controller wants changed is never delayed.
 */
import { LRUCache } from "lru-cache";
import { Backoff } from "../cluster/backoff.ts";

/** After this long without a restore, an object's next restore is immediate again. */
export const QUIET_MS = 10 * 60_000;
/** First and longest wait between restores of one object. */
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 5 * 60_000;

interface Paced {
  backoff: Backoff;
  /** When the next restore may happen (`now()` clock). */
  notBefore: number;
  /** Restores since the object was last left alone. */
  count: number;
}

export class RestorePacer {
  /** Per object path; an entry not touched for QUIET_MS is forgotten. */
  #objects: LRUCache<string, Paced>;

  constructor(readonly now: () => number = () => performance.now(), readonly random: () => number = Math.random) {
    this.#objects = new LRUCache({ max: 10_000, ttl: QUIET_MS, ttlResolution: 0, perf: { now } });
  }

  /** Milliseconds until `path` may be restored (0: now). */
  wait(path: string): number {
    const p = this.#objects.get(path, { updateAgeOnGet: false });
    return p ? Math.max(0, p.notBefore - this.now()) : 0;
  }

  /** `path` was restored now; returns how many times since it was last left alone for QUIET_MS. */
  restored(path: string): number {
    const p = this.#objects.get(path) ??
      { backoff: new Backoff(FIRST_WAIT_MS, MAX_WAIT_MS, this.random), notBefore: 0, count: 0 };
    p.count++;
    p.notBefore = this.now() + p.backoff.next();
    this.#objects.set(path, p);
    return p.count;
  }

  forget(path: string): void {
    this.#objects.delete(path);
  }
}
