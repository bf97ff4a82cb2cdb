/**
 * @module admission/limit
 * At most N xray checks (`haproxy -c` children) at a time: a burst of ingress writes (a chart
 * install) queues instead of forking one haproxy per request. Hand-written: a dozen lines, and
 * no pinned dependency offers it.
 */
export class Limit {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`limit must be a positive integer, got ${max}`);
    this.#free = max;
  }

  /** Runs `fn` once a slot is free; the slot is released when it settles. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }

  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.#waiting.length;
  }
}
