/**
 * @module admission/queue
 * A bounded queue of reviews in front of one review worker (admission/review_worker.ts, a Web
 * Worker: its own thread and event loop). Deciding a review of a few MiB costs hundreds of
 * milliseconds of CPU (JSON parse, static checks, rendering); in the worker that time no longer
 * blocks the secure port, so health probes and other requests stay responsive.
 *
 * At most `capacity` reviews wait or run; one more is answered `busy` at once instead of waiting
 * past the API server's timeout. At most `concurrency` are in the worker at a time (their xray
 * children overlap; the CPU part is serial anyway). A review not decided by its deadline is
 * answered `late` (a waiting one is dropped; a running one keeps its slot until the worker
 * finishes it, and a worker still busy well after the deadline is replaced).
 */
import { log } from "../log/logger.ts";
import type { ReviewPolicy, ReviewResult } from "./review.ts";

/** What the worker needs to decide reviews (structured-cloneable: no functions, no compiled templates). */
export interface WorkerInit {
  readonly ingressClass: string | null;
  readonly restrictToNamespace: string | null;
  /** Whether the cluster's default IngressClass can be asked (through the main thread). */
  readonly askDefaultClass: boolean;
  readonly xray:
    | { readonly customTemplates: string | null; readonly haproxy: string; readonly timeoutMs: number }
    | null;
}

/** Main thread → worker. The body's buffer is transferred, not copied. */
export type ToWorker =
  | { readonly type: "init"; readonly init: WorkerInit }
  | {
    readonly type: "review";
    readonly id: number;
    readonly body: Uint8Array<ArrayBuffer>;
    readonly deadline: number;
    /** The global settings reviews follow, as last read by the main thread. */
    readonly policy: ReviewPolicy;
  }
  | { readonly type: "defaultClass"; readonly ask: number; readonly value: string | null };

/** Worker → main thread. */
export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "initFailed"; readonly message: string }
  | { readonly type: "result"; readonly id: number; readonly result: ReviewResult | { readonly failed: string } }
  | { readonly type: "defaultClass"; readonly ask: number };

export type QueueOutcome =
  | { readonly result: ReviewResult }
  | { readonly busy: string }
  | { readonly late: string }
  | { readonly failed: string };

export interface QueueOptions {
  /** For log lines: "small" or "large". */
  readonly name: string;
  readonly init: WorkerInit;
  readonly capacity: number;
  readonly concurrency: number;
  readonly defaultClass?: () => Promise<string | null>;
  /** The global settings reviews follow now (a cached value: called for every review). */
  readonly policy?: () => ReviewPolicy;
}

interface Item {
  readonly id: number;
  readonly body: Uint8Array<ArrayBuffer>;
  readonly deadline: number;
  settle(outcome: QueueOutcome): void;
  settled: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

/** A worker still busy this long after a review's deadline is assumed stuck and replaced. */
const STUCK_AFTER_MS = 5_000;
const WORKER_URL = new URL("./review_worker.ts", import.meta.url);

export class ReviewQueue {
  readonly #o: QueueOptions;
  readonly #waiting: Item[] = [];
  readonly #running = new Map<number, Item>();
  #worker!: Worker;
  #nextId = 0;
  #closed = false;

  private constructor(o: QueueOptions) {
    this.#o = o;
  }

  /** Starts the worker and waits until it has loaded the templates (a template error fails here). */
  static async start(o: QueueOptions): Promise<ReviewQueue> {
    if (!Number.isInteger(o.capacity) || !Number.isInteger(o.concurrency) || o.concurrency < 1 || o.capacity < 1) {
      throw new RangeError(`review queue ${o.name}: capacity and concurrency must be positive integers`);
    }
    const queue = new ReviewQueue(o);
    const failure = await queue.#spawn();
    if (failure !== null) {
      queue.close();
      throw new Error(`the validating webhook's review worker cannot start: ${failure}`);
    }
    return queue;
  }

  /** Reviews waiting or running. */
  get pending(): number {
    return this.#waiting.length + this.#running.size;
  }

  /** Why one more review would be refused now; null when it would be taken. */
  get busy(): string | null {
    return this.pending >= this.#o.capacity ? `${this.pending} reviews of this size are already queued` : null;
  }

  /** Decides `body` in the worker; `deadline` is epoch ms. */
  submit(body: Uint8Array<ArrayBuffer>, deadline: number): Promise<QueueOutcome> {
    if (this.#closed) return Promise.resolve({ failed: "the webhook is shutting down" });
    const busy = this.busy;
    if (busy !== null) return Promise.resolve({ busy });
    return new Promise((resolve) => {
      const item: Item = {
        id: ++this.#nextId,
        body,
        deadline,
        settled: false,
        settle: (outcome) => {
          if (item.settled) return;
          item.settled = true;
          resolve(outcome);
        },
      };
      item.timer = setTimeout(() => this.#expire(item), Math.max(0, deadline - Date.now()));
      this.#waiting.push(item);
      this.#pump();
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#worker.terminate();
    for (const item of [...this.#waiting, ...this.#running.values()]) this.#finish(item, { failed: "shut down" });
    this.#waiting.length = 0;
  }

  #pump(): void {
    while (this.#running.size < this.#o.concurrency && this.#waiting.length > 0) {
      const item = this.#waiting.shift()!;
      this.#running.set(item.id, item);
      const msg: ToWorker = {
        type: "review",
        id: item.id,
        body: item.body,
        deadline: item.deadline,
        policy: this.#o.policy?.() ?? { riskLimit: null, nginxCompat: false },
      };
      this.#worker.postMessage(msg, [item.body.buffer]);
    }
  }

  #finish(item: Item, outcome: QueueOutcome): void {
    clearTimeout(item.timer);
    this.#running.delete(item.id);
    item.settle(outcome);
  }

  #expire(item: Item): void {
    const late = { late: "the review was not decided before the webhook's deadline" };
    const waiting = this.#waiting.indexOf(item);
    if (waiting >= 0) {
      this.#waiting.splice(waiting, 1);
      return this.#finish(item, late);
    }
    item.settle(late);
    // Still running: its slot stays taken until the worker answers, or the worker is replaced.
    item.timer = setTimeout(() => {
      if (!this.#running.has(item.id) || this.#closed) return;
      log.error("admission: review worker stuck past a deadline; restarting it", { queue: this.#o.name });
      this.#restart("stuck");
    }, STUCK_AFTER_MS);
  }

  #restart(why: string): void {
    this.#worker.terminate();
    for (const item of this.#running.values()) this.#finish(item, { failed: `review worker ${why}` });
    void this.#spawn().then((failure) => {
      if (failure !== null) log.error("admission: review worker cannot start", { queue: this.#o.name, error: failure });
    });
    this.#pump();
  }

  /** Starts a worker; resolves when it is ready (null) or failed to start (why). */
  #spawn(): Promise<string | null> {
    const worker = new Worker(WORKER_URL, { type: "module", name: `admission-${this.#o.name}` });
    this.#worker = worker;
    let ready = false;
    return new Promise((resolve) => {
      worker.onmessage = (e: MessageEvent<FromWorker>) => {
        if (e.data.type === "ready") {
          ready = true;
          return resolve(null);
        }
        if (e.data.type === "initFailed") return resolve(e.data.message);
        if (worker === this.#worker) this.#onMessage(e.data);
      };
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault();
        if (!ready) return resolve(e.message);
        if (worker !== this.#worker || this.#closed) return;
        log.error("admission: review worker failed; restarting it", { queue: this.#o.name, error: e.message });
        this.#restart(`failed: ${e.message}`);
      };
      const init: ToWorker = { type: "init", init: this.#o.init };
      worker.postMessage(init);
    });
  }

  #onMessage(msg: FromWorker): void {
    const worker = this.#worker;
    switch (msg.type) {
      case "result": {
        const item = this.#running.get(msg.id);
        if (!item) return;
        this.#finish(item, "failed" in msg.result ? { failed: msg.result.failed } : { result: msg.result });
        return this.#pump();
      }
      case "defaultClass": {
        const answer = this.#o.defaultClass?.() ?? Promise.resolve(null);
        void answer.catch(() => null).then((value) => {
          if (worker === this.#worker && !this.#closed) {
            const reply: ToWorker = { type: "defaultClass", ask: msg.ask, value };
            worker.postMessage(reply);
          }
        });
      }
    }
  }
}
