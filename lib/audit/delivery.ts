/**
 * @module audit/delivery
 * The two delivery modes. Blocking: the request waits until its event is delivered. Batch: events go
 * into a bounded buffer and a worker hands them to the backend in batches of up to the maximum size,
 * waiting at most the maximum wait for a batch to fill, at most `qps` batches per second (burst
 * `burst`) when throttled. A full buffer drops the event (counted, logged at most every few
 * seconds) and never blocks the request; shutdown delivers everything queued.
 */
import { log } from "../log/logger.ts";
import type { Backend, Sink } from "./backend.ts";
import type { AuditEvent } from "./event.ts";
import { batchSize, eventsDropped } from "./metrics.ts";
import type { BatchSettings } from "./settings.ts";
import { everyFewSeconds } from "./throttled_log.ts";

/** Blocking mode: each event is one `process` call the request awaits. */
export class BlockingSink implements Sink {
  readonly name: "log" | "webhook";
  readonly inOrder: boolean;
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;

  constructor(private readonly backend: Backend) {
    this.name = backend.name;
    this.inOrder = backend.inOrder;
  }

  offer(event: AuditEvent): Promise<void> {
    if (this.#closed) {
      eventsDropped.inc({ backend: this.name, reason: "shutdown" });
      return Promise.resolve();
    }
    batchSize.observe({ backend: this.name }, 1);
    const p = this.backend.process([event]);
    this.#inFlight.add(p);
    p.finally(() => this.#inFlight.delete(p));
    return p;
  }

  async shutdown(deadline: AbortSignal): Promise<void> {
    const onDeadline = () => this.backend.abort();
    deadline.addEventListener("abort", onDeadline);
    try {
      if (deadline.aborted) onDeadline();
      while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
      this.#closed = true;
      await this.backend.close();
    } finally {
      deadline.removeEventListener("abort", onDeadline);
    }
  }
}

/** Batch mode. */
export class BufferedSink implements Sink {
  readonly name: "log" | "webhook";
  /** One queue, one worker. */
  readonly inOrder = true;
  #queue: AuditEvent[] = [];
  #closing = false;
  #finished = false;
  /** Wakes the worker; set while it waits. */
  #wake: (() => void) | null = null;
  /** The worker only needs waking once the queue holds this many events. */
  #wakeAt = 1;
  #throttled = false;
  readonly #worker: Promise<void>;
  readonly #bucket: TokenBucket | null;
  readonly #warnFull = everyFewSeconds();

  constructor(private readonly backend: Backend, private readonly batch: BatchSettings) {
    this.name = backend.name;
    this.#bucket = batch.throttleEnable && batch.throttleQPS > 0
      ? new TokenBucket(batch.throttleQPS, Math.max(1, batch.throttleBurst))
      : null;
    this.#worker = this.#run();
  }

  /** Events waiting in the buffer. */
  get queued(): number {
    return this.#queue.length;
  }

  /** Whether the worker is waiting for the throttle to let the next batch go. */
  get throttled(): boolean {
    return this.#throttled;
  }

  offer(event: AuditEvent): void {
    if (this.#finished) {
      eventsDropped.inc({ backend: this.name, reason: "shutdown" });
      return;
    }
    if (this.#queue.length >= this.batch.bufferSize) {
      eventsDropped.inc({ backend: this.name, reason: "buffer_full" });
      this.#warnFull((suppressed) =>
        log.warn(`audit event dropped: the --audit-${this.name}-batch-buffer-size buffer is full`, {
          auditID: event.auditID,
          bufferSize: this.batch.bufferSize,
          suppressed,
        })
      );
      return;
    }
    this.#queue.push(event);
    if (this.#wake && this.#queue.length >= this.#wakeAt) this.#wakeUp();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Waits until the queue holds `n` events, `ms` passed (if > 0) or shutdown began. */
  async #waitFor(n: number, ms: number): Promise<void> {
    if (this.#queue.length >= n || this.#closing) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.#wakeAt = n;
      this.#wake = resolve;
      if (ms > 0) timer = setTimeout(() => this.#wakeUp(), ms);
    });
    clearTimeout(timer);
  }

  async #run(): Promise<void> {
    const { maxBatchSize, maxBatchWaitMs } = this.batch;
    for (;;) {
      await this.#waitFor(1, 0);
      if (this.#queue.length === 0) {
        if (this.#closing) break;
        continue;
      }
      // A partial batch waits for more events up to the maximum wait, counted from when the worker saw its first event.
      if (maxBatchWaitMs > 0 && this.#queue.length < maxBatchSize) await this.#waitFor(maxBatchSize, maxBatchWaitMs);
      if (this.#bucket && !this.#closing) {
        this.#throttled = true;
        await this.#bucket.take(() => this.#closing);
        this.#throttled = false;
      }
      const batch = this.#queue.length <= maxBatchSize ? this.#queue : this.#queue.slice(0, maxBatchSize);
      this.#queue = batch === this.#queue ? [] : this.#queue.slice(maxBatchSize);
      batchSize.observe({ backend: this.name }, batch.length);
      await this.backend.process(batch);
    }
    this.#finished = true;
  }

  async shutdown(deadline: AbortSignal): Promise<void> {
    const onDeadline = () => this.backend.abort();
    deadline.addEventListener("abort", onDeadline);
    try {
      if (deadline.aborted) onDeadline();
      this.#closing = true;
      this.#wakeUp();
      this.#bucket?.interrupt();
      await this.#worker;
      await this.backend.close();
    } finally {
      deadline.removeEventListener("abort", onDeadline);
    }
  }
}

/** At most `qps` takes per second on average, up to `burst` at once. */
class TokenBucket {
  #tokens: number;
  #last = performance.now();
  #interrupt: (() => void) | null = null;

  constructor(private readonly qps: number, private readonly burst: number) {
    this.#tokens = burst;
  }

  /** Waits for a token; returns early once `stop()` is true after an interrupt. */
  async take(stop: () => boolean): Promise<void> {
    for (;;) {
      const now = performance.now();
      this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
      this.#last = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      if (stop()) return;
      const ms = Math.ceil(((1 - this.#tokens) / this.qps) * 1000);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.#interrupt = resolve;
        timer = setTimeout(resolve, ms);
      });
      clearTimeout(timer);
      this.#interrupt = null;
    }
  }

  interrupt(): void {
    this.#interrupt?.();
  }
}
