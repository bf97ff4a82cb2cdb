/**
 * @module controller/status_lane
 * Ingress status writes, off the reconcile of their group. A class of 10,000 ingresses needs 10,000
 * status PATCHes after its first publish; written inside the reconcile they held the group for
 * tens of seconds, and the next route change waited behind them. Here each ingress has at most one
 * pending write (the latest wins), a few run at a time, and never two for the same ingress. While
 * held ({@link StatusLane.hold}), writes are kept pending and none starts.
 */

export type StatusJob = () => Promise<void>;

export class StatusLane {
  readonly #limit: number;
  readonly #onFailure: (key: string, err: unknown) => void;
  readonly #onIdle: () => void;
  #pending = new Map<string, StatusJob>();
  #running = new Set<string>();
  #drained: (() => void)[] = [];
  /**
   * Where the walk over the pending writes stands. A walk from the start at every finished write
   * stepped over every entry deleted before it (a Map keeps them as holes until it shrinks): with
   * 100,000 writes after a first publish, seconds of CPU. The walk goes on from here instead, and
   * starts again from the start only at the end (for the writes that waited for their key).
   */
  #cursor: Iterator<[string, StatusJob]> | null = null;
  /** Holds not yet released: no write starts while there is one. */
  #holds = 0;

  constructor(opts: { limit: number; onFailure: (key: string, err: unknown) => void; onIdle: () => void }) {
    this.#limit = opts.limit;
    this.#onFailure = opts.onFailure;
    this.#onIdle = opts.onIdle;
  }

  /** Nothing pending or running. */
  get idle(): boolean {
    return this.#pending.size === 0 && this.#running.size === 0;
  }

  /** Writes after those pending; replaces a pending (not yet started) write of the same key. */
  add(key: string, job: StatusJob): void {
    this.#pending.delete(key); // re-inserted last: the order of arrival is kept
    this.#pending.set(key, job);
    this.#pump();
  }

  /** No write starts until {@link release} (writes already running finish; new ones stay pending). */
  hold(): void {
    this.#holds++;
  }

  /** Ends a {@link hold}; once none is left, the pending writes start. */
  release(): void {
    if (this.#holds === 0) return;
    this.#holds--;
    this.#pump();
  }

  /** Drops what has not started (the controller stops, or lost its lease). */
  clear(): void {
    this.#pending.clear();
    this.#cursor = null;
    this.#settle();
  }

  /** Resolves once nothing is pending or running. */
  drained(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  #pump(): void {
    if (this.#holds > 0) return;
    let fresh = false;
    while (this.#running.size < this.#limit) {
      if (this.#cursor === null) {
        this.#cursor = this.#pending.entries();
        fresh = true;
      }
      const next = this.#cursor.next();
      if (next.done) {
        this.#cursor = null;
        if (fresh) return; // a whole walk: what is pending waits for its key's running write
        continue;
      }
      const [key, job] = next.value;
      if (this.#running.has(key)) continue; // its next write waits for this one
      this.#pending.delete(key);
      this.#running.add(key);
      job().catch((err) => this.#onFailure(key, err)).finally(() => {
        this.#running.delete(key);
        this.#pump();
        this.#settle();
      });
    }
  }

  #settle(): void {
    if (!this.idle) return;
    for (const d of this.#drained.splice(0)) d();
    this.#onIdle();
  }
}
