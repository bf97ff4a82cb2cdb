/**
 * @module cluster/rate_limiter
 * Client-side token bucket for `--qps`/`--burst`, put in front of every cluster API call
 * (the client library has none). Reservation style: every caller takes a token at once and
 * waits until the bucket would have held it, so waiters are served in arrival order.
 */
import { sleep } from "../runtime/timers.ts";

export interface RateLimiterOptions {
  /** Tokens per second; 0 or less (or non-finite) means no limit. */
  qps: number;
  /** Bucket size; at least 1. */
  burst: number;
  /** Clock in milliseconds; tests pass a fake. */
  now?: () => number;
}

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  #tokens: number;
  #last: number;
  #now: () => number;

  constructor(opts: RateLimiterOptions) {
    this.qps = opts.qps > 0 && Number.isFinite(opts.qps) ? opts.qps : Infinity;
    this.burst = Math.max(1, Math.floor(opts.burst));
    this.#now = opts.now ?? (() => performance.now());
    this.#tokens = this.burst;
    this.#last = this.#now();
  }

  /** Takes one token now and returns how many milliseconds the caller must wait for it (0: none). */
  reserve(): number {
    if (this.qps === Infinity) return 0;
    const now = this.#now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.qps) * 1000;
  }

  /** Waits for a token. Resolves with the milliseconds waited; rejects when `signal` aborts. */
  async take(signal?: AbortSignal): Promise<number> {
    const wait = this.reserve();
    if (wait <= 0) return 0;
    await sleep(wait, signal);
    return wait;
  }
}
