/**
 * @module controller/queue
 * A keyed work queue with dedup and coalescing: a key added many times before a worker takes
 * it is handled once; a key is never handled by two workers at once (added while in work, it is
 * handled again afterwards); a key added while quiet (not made ready within the last `coalesceMs`)
 * is ready at once, and adds that follow within `coalesceMs` of that are collected into one more
 * item, ready when the window ends: a single change is handled without waiting, and a burst of
 * changes produces two renders at most. Failed keys come back after a per-key exponential backoff.
 * A paused queue (a standby controller) keeps collecting keys but hands none out until resumed.
 */
import { Backoff } from "../cluster/backoff.ts";

export interface WorkQueueOptions {
  /** The shortest time between two handlings of a key that a burst of adds can cause. */
  coalesceMs?: number;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

export class WorkQueue {
  #ready: string[] = [];
  #readySet = new Set<string>();
  #waiting = new Map<string, ReturnType<typeof setTimeout>>();
  #processing = new Set<string>();
  #again = new Set<string>();
  #retries = new Map<string, Backoff>();
  /** When each key was last made ready (`performance.now()`), for the coalescing window. */
  #readyAt = new Map<string, number>();
  #takers: ((key: string | undefined) => void)[] = [];
  #closed = false;
  #paused = false;
  readonly coalesceMs: number;

  constructor(readonly opts: WorkQueueOptions = {}) {
    this.coalesceMs = opts.coalesceMs ?? 0;
  }

  /** Number of keys ready or waiting (not counting those in work). */
  get length(): number {
    return this.#ready.length + this.#waiting.size;
  }

  get processing(): number {
    return this.#processing.size;
  }

  /** Schedules `key`; `delayMs` overrides the coalescing window (used for retries). */
  add(key: string, delayMs?: number): void {
    if (this.#closed) return;
    if (this.#processing.has(key)) {
      this.#again.add(key);
      return;
    }
    if (this.#readySet.has(key) || this.#waiting.has(key)) return;
    delayMs ??= this.coalesceMs - (performance.now() - (this.#readyAt.get(key) ?? -Infinity));
    if (delayMs <= 0) return this.#makeReady(key);
    this.#waiting.set(
      key,
      setTimeout(() => {
        this.#waiting.delete(key);
        this.#makeReady(key);
      }, delayMs),
    );
  }

  #makeReady(key: string): void {
    if (this.#closed || this.#readySet.has(key)) return;
    if (this.coalesceMs > 0) this.#readyAt.set(key, performance.now());
    if (this.#processing.has(key)) {
      this.#again.add(key);
      return;
    }
    const taker = this.#paused ? undefined : this.#takers.shift();
    if (taker) {
      this.#processing.add(key);
      taker(key);
      return;
    }
    this.#ready.push(key);
    this.#readySet.add(key);
  }

  /** The next ready key (marked in work), or undefined once the queue is shut down. */
  take(): Promise<string | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    const key = this.#paused ? undefined : this.#ready.shift();
    if (key !== undefined) {
      this.#readySet.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.#takers.push(resolve));
  }

  /** Marks `key` as handled; if it was added meanwhile it becomes ready again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#again.delete(key)) this.#makeReady(key);
  }

  /** Schedules `key` again after its backoff (call before `done`). Returns the delay. */
  retry(key: string): number {
    let b = this.#retries.get(key);
    if (!b) this.#retries.set(key, b = new Backoff(this.opts.retryInitialMs ?? 200, this.opts.retryMaxMs ?? 60_000));
    const delay = b.next();
    this.#processing.delete(key);
    this.#again.delete(key);
    this.add(key, delay);
    this.#processing.add(key);
    return delay;
  }

  /** Clears the backoff of `key` after a success. */
  forget(key: string): void {
    this.#retries.delete(key);
    // A window long past says nothing any more (keeps the map as small as the keys in use).
    const at = this.#readyAt.get(key);
    if (at !== undefined && performance.now() - at >= this.coalesceMs) this.#readyAt.delete(key);
  }

  /** Hands out no key until `resume` (keys in work go on; new ones are kept). */
  pause(): void {
    this.#paused = true;
  }

  /** Hands the ready keys to the waiting takers again. */
  resume(): void {
    this.#paused = false;
    while (this.#takers.length > 0 && this.#ready.length > 0) {
      const key = this.#ready.shift()!;
      this.#readySet.delete(key);
      this.#processing.add(key);
      this.#takers.shift()!(key);
    }
  }

  /** Stops the queue: waiting takers get undefined, timers are cleared. */
  shutdown(): void {
    this.#closed = true;
    for (const t of this.#waiting.values()) clearTimeout(t);
    this.#waiting.clear();
    this.#ready = [];
    this.#readySet.clear();
    for (const t of this.#takers.splice(0)) t(undefined);
  }
}
