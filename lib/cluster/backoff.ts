/**
 * @module cluster/backoff
 * Exponential backoff with full jitter, as used between failed lists and watches.
 */

export class Backoff {
  #attempt = 0;
  constructor(readonly initialMs = 500, readonly maxMs = 30_000, readonly random: () => number = Math.random) {}

  /** The next delay: a random value in [d/2, d] where d doubles per attempt up to `maxMs`. */
  next(): number {
    const d = Math.min(this.maxMs, this.initialMs * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    return d / 2 + this.random() * (d / 2);
  }

  get attempts(): number {
    return this.#attempt;
  }

  reset(): void {
    this.#attempt = 0;
  }
}
