/**
 * @module cluster/informer
 * A list+watch informer that keeps a local Store in step with the API server and never stops
 * by itself (unlike @kubernetes/client-node's, which stops for good on any error but 410 Gone):
 * - watches carry a server-side `timeoutSeconds` (5–10 min, random, like client-go) and
 *   `allowWatchBookmarks`; when a watch ends it is re-opened from the last resourceVersion seen
 *   (bookmarks included), without a relist;
 * - 410 Gone (expired resourceVersion) → immediate relist;
 * - any other failure → exponential backoff with jitter, then a re-watch (and a relist after
 *   repeated failures); failures are logged and counted, never swallowed;
 * - `resyncMs` > 0 → a full relist that often (`--resync-period`); 0 → only when needed.
 * Handlers see add/update/delete; a relist diffs the new list against the store.
 */
import { log } from "../log/logger.ts";
import { Backoff } from "./backoff.ts";
import { type ClusterClient, isStatus } from "./client.ts";
import { relists, watchErrors, watchStarts } from "./metrics.ts";
import { sleep } from "../runtime/timers.ts";
import { apiVersionOf, collectionPath, keyOf, type KubeObject, type ResourceType } from "./resources.ts";
import { Store } from "./store.ts";

/** How many listed objects an informer files between two turns of the event loop. */
const REPLACE_SLICE = 5_000;

/**
 * Objects per page of a list. The API server (1.34) serves a paginated list from its watch cache,
 * but each page costs it more than the objects in it: listing 100,000 Ingresses, Services and
 * EndpointSlices took it 9.8 s of CPU in pages of 500 and 1.5 s in pages of 5,000, 8.6 → 4.1 s
 * until the three caches synced (bench/informer_list_bench.ts). One page of 5,000 objects is a few
 * MB to 25 MB of JSON; a list without `limit`, or with `resourceVersion=0` (client-go's first list,
 * which the watch cache answers whole), would be one body of every object (36 MB for the bench's
 * 100,000 small Ingresses, far more for real ones): one string that large is not read here.
 */
export const LIST_PAGE_SIZE = 5_000;

/**
 * Secrets and ConfigMaps carry data of up to 1 MiB each (certificate chains, keys, configuration
 * parts): their pages stay at 500 objects, client-go's page size, so that one page stays as large as before.
 */
export const DATA_PAGE_SIZE = 500;

function pageSizeOf(r: ResourceType): number {
  return r.group === "" && (r.plural === "secrets" || r.plural === "configmaps") ? DATA_PAGE_SIZE : LIST_PAGE_SIZE;
}

export interface InformerOptions {
  namespace?: string | null;
  labelSelector?: string;
  fieldSelector?: string;
  /** Full relist period in ms; 0: relist only when the watch cannot resume. */
  resyncMs?: number;
  /** Page size of lists (default {@link LIST_PAGE_SIZE}; {@link DATA_PAGE_SIZE} for Secrets and ConfigMaps). */
  pageSize?: number;
  /** Fixed server-side watch timeout in seconds (default: random 300–600). */
  watchTimeoutSeconds?: number;
  backoff?: Backoff;
  /**
   * Its lists and watches take no token of the client's rate limit unless they follow a failure (then
   * they wait for one, after the backoff, as every other call does). For the proxy's watch of each listed
   * Secret by name: a start opens one list and one watch per Secret, and each watch is renewed every 5–10
   * minutes; at 10,000 Secrets that is more than the client's 20 calls a second on its own.
   */
  unlimitedWhileHealthy?: boolean;
  /**
   * Shrinks each object before it is stored and handed to handlers (like client-go's
   * TransformFunc). Default: `compactMetadata`.
   */
  transform?: (obj: KubeObject) => KubeObject;
}

/** Written by `kubectl apply`: the whole object again, as JSON. */
export const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The default transform: the object without `metadata.managedFields` nor the `kubectl apply`
 * annotation, which no reader here needs and which are often the largest part of an object.
 * The metadata is rebuilt rather than `delete`d from: a `delete` turns an object into a V8
 * dictionary, 380 bytes more for every cached Ingress, Service and EndpointSlice (measured with
 * bench/memory/cache_bench.ts).
 */
export function compactMetadata<T extends KubeObject>(obj: T): T {
  const m = obj.metadata;
  if (!m) return obj;
  const annotations = m.annotations;
  const lastApplied = annotations !== undefined && annotations !== null && LAST_APPLIED in annotations;
  if (!("managedFields" in m) && !lastApplied) return obj;
  const { managedFields: _, ...metadata } = m as typeof m & { managedFields?: unknown };
  if (lastApplied) {
    const { [LAST_APPLIED]: _applied, ...rest } = annotations;
    metadata.annotations = rest;
  }
  obj.metadata = metadata;
  return obj;
}

export interface InformerHandlers<T extends KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
  /** Called after every completed list (initial, resync, recovery). */
  onSync?(): void;
}

type WatchEnd = "ended" | "gone" | "resync";

export class Informer<T extends KubeObject = KubeObject> {
  readonly store = new Store<T>();
  /** Watches opened (first and restarts), lists done. */
  watchStarts = 0;
  lists = 0;
  lastError: unknown = null;
  #handlers: InformerHandlers<T>[] = [];
  #stop = new AbortController();
  #watchAbort: AbortController | null = null;
  #resyncDue = false;
  #restartDue = false;
  #resyncTimer: ReturnType<typeof setTimeout> | undefined;
  #loop: Promise<void> | null = null;
  #rv = "";
  #synced = false;
  #syncWaiters: (() => void)[] = [];
  #backoff: Backoff;
  /** The last list or watch failed: the next calls take a token (`unlimitedWhileHealthy`). */
  #failing = false;
  readonly name: string;

  constructor(readonly client: ClusterClient, readonly resource: ResourceType, readonly opts: InformerOptions = {}) {
    this.#backoff = opts.backoff ?? new Backoff();
    this.name = opts.namespace && resource.namespaced ? `${resource.plural}@${opts.namespace}` : resource.plural;
  }

  on(handlers: InformerHandlers<T>): this {
    this.#handlers.push(handlers);
    return this;
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  get resourceVersion(): string {
    return this.#rv;
  }

  start(): this {
    if (!this.#loop) {
      this.#loop = this.#run();
      if (this.opts.resyncMs && this.opts.resyncMs > 0) this.#scheduleResync();
    }
    return this;
  }

  /** Resolves once the first list is in the store. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push(resolve);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error("informer stopped"));
    clearTimeout(this.#resyncTimer);
    this.#watchAbort?.abort();
    await this.#loop?.catch(() => {});
  }

  /** Ends the current watch and relists now (used by the periodic resync and by tests). */
  resync(): void {
    this.#resyncDue = true;
    this.#watchAbort?.abort(new Error("resync"));
  }

  /**
   * Ends the current watch and resumes it from `resourceVersion` (default: the last seen).
   * For diagnostics and tests (an expired resourceVersion must lead to a relist).
   */
  restartWatch(resourceVersion?: string): void {
    if (resourceVersion !== undefined) this.#rv = resourceVersion;
    this.#restartDue = true;
    this.#watchAbort?.abort(new Error("restart"));
  }

  #scheduleResync(): void {
    this.#resyncTimer = setTimeout(() => {
      if (this.#stop.signal.aborted) return;
      this.resync();
      this.#scheduleResync();
    }, this.opts.resyncMs!);
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    let needList = true;
    let reason = "initial";
    let watchFailures = 0;
    while (!stop.aborted) {
      try {
        if (needList) {
          await this.#list(reason);
          needList = false;
          this.#backoff.reset();
        }
        const end = await this.#watch();
        watchFailures = 0;
        if (end === "gone") [needList, reason] = [true, "gone"];
        else if (end === "resync") [needList, reason] = [true, "resync"];
      } catch (err) {
        if (stop.aborted) break;
        if (this.#resyncDue) {
          [needList, reason] = [true, "resync"];
          continue;
        }
        this.#failing = true;
        this.lastError = err;
        watchErrors.inc({ resource: this.name });
        if (isStatus(err, 410)) {
          [needList, reason] = [true, "gone"];
          continue;
        }
        // A watch that cannot be re-opened several times in a row may be stuck on a bad
        // resourceVersion: start over with a list.
        if (!needList && ++watchFailures >= 3) [needList, reason, watchFailures] = [true, "error", 0];
        const delay = this.#backoff.next();
        log.warn("cluster watch failed; retrying", {
          resource: this.name,
          error: err instanceof Error ? err.message : String(err),
          retryInMs: Math.round(delay),
          relist: needList,
        });
        try {
          await sleep(delay, stop);
        } catch {
          break;
        }
      }
    }
  }

  /** Whether the next list or watch takes a token (`unlimitedWhileHealthy`). */
  #rateLimited(): boolean {
    return !this.opts.unlimitedWhileHealthy || this.#failing;
  }

  #query(): Record<string, string | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  async #list(reason: string): Promise<void> {
    this.#resyncDue = false;
    relists.inc({ resource: this.name, reason });
    this.lists++;
    const path = collectionPath(this.resource, this.opts.namespace);
    const items: T[] = [];
    let cont: string | undefined;
    let rv = "";
    do {
      const page = await this.client.request("GET", path, {
        query: { ...this.#query(), limit: this.opts.pageSize ?? pageSizeOf(this.resource), continue: cont },
        signal: this.#stop.signal,
        rateLimited: this.#rateLimited(),
      });
      for (const item of page.items ?? []) items.push(this.#shape(item));
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion ?? rv;
    } while (cont);
    this.#failing = false;
    await this.#replace(items);
    this.#rv = rv;
    log.v(2)?.info("cluster list done", { resource: this.name, reason, objects: items.length, resourceVersion: rv });
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
    this.#emit((h) => h.onSync?.());
  }

  /**
   * Files a list's objects, telling the handlers of each; the event loop turns every
   * {@link REPLACE_SLICE} objects: filing 100,000 Ingresses at once held it for seconds, past the
   * leader's renew deadline on a busy node.
   */
  async #replace(items: T[]): Promise<void> {
    const seen = new Set<string>();
    for (let i = 0; i < items.length; i++) {
      if (i > 0 && i % REPLACE_SLICE === 0) {
        await new Promise((r) => setTimeout(r, 0));
        if (this.#stop.signal.aborted) return;
      }
      const obj = items[i];
      const key = keyOf(obj);
      seen.add(key);
      const old = this.store.set(obj);
      if (!old) this.#emit((h) => h.onAdd?.(obj));
      else this.#emit((h) => h.onUpdate?.(old, obj));
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key);
      if (old) this.#emit((h) => h.onDelete?.(old));
    }
  }

  async #watch(): Promise<WatchEnd> {
    const abort = new AbortController();
    this.#watchAbort = abort;
    const onStop = () => abort.abort();
    this.#stop.signal.addEventListener("abort", onStop, { once: true });
    const timeoutSeconds = this.opts.watchTimeoutSeconds ?? Math.floor(300 + Math.random() * 300);
    // Guard against a half-open connection that would never deliver the server's end of stream.
    const guard = setTimeout(() => abort.abort(new Error("watch outlived its timeout")), (timeoutSeconds + 60) * 1000);
    watchStarts.inc({ resource: this.name });
    this.watchStarts++;
    let stream;
    try {
      stream = await this.client.watch(
        collectionPath(this.resource, this.opts.namespace),
        {
          ...this.#query(),
          resourceVersion: this.#rv,
          allowWatchBookmarks: true,
          timeoutSeconds,
        },
        abort.signal,
        this.#rateLimited(),
      );
      this.#failing = false;
      const closeOnAbort = () => stream!.close();
      abort.signal.addEventListener("abort", closeOnAbort, { once: true });
      // A resync or restart asked for while the watch was being opened.
      if (this.#resyncDue || this.#restartDue) abort.abort(new Error("resync"));
      // A stop that came after the answer but before this line fired no listener: without this the
      // loop would read on until the server's next event or the end of the watch's timeout.
      if (abort.signal.aborted) stream.close();
      let events = 0;
      for await (const ev of stream.events) {
        if (abort.signal.aborted) break;
        if (ev.type === "ERROR") {
          const code = ev.object?.code;
          if (code === 410) return "gone";
          throw new Error(`watch error event: ${code ?? "?"} ${ev.object?.reason ?? ""} ${ev.object?.message ?? ""}`);
        }
        const rv = ev.object?.metadata?.resourceVersion;
        if (rv) this.#rv = rv;
        if (++events === 1) this.#backoff.reset();
        if (ev.type === "BOOKMARK") continue;
        this.#apply(ev.type, this.#shape(ev.object));
      }
      if (this.#resyncDue) return "resync";
      if (this.#stop.signal.aborted || this.#restartDue) return "ended";
      if (abort.signal.aborted) throw abort.signal.reason ?? new Error("watch aborted");
      log.v(4)?.info("cluster watch ended; resuming", { resource: this.name, resourceVersion: this.#rv });
      return "ended";
    } catch (err) {
      if (this.#resyncDue) return "resync";
      if (this.#restartDue && !isStatus(err, 410)) return "ended";
      throw err;
    } finally {
      this.#restartDue = false;
      clearTimeout(guard);
      this.#stop.signal.removeEventListener("abort", onStop);
      stream?.close();
      this.#watchAbort = null;
    }
  }

  #shape(obj: T): T {
    const t = this.opts.transform ?? compactMetadata;
    return t(withKind(obj, this.resource)) as T;
  }

  #apply(type: string, obj: T): void {
    const key = keyOf(obj);
    if (type === "DELETED") {
      const old = this.store.delete(key) ?? obj;
      this.#emit((h) => h.onDelete?.(old));
      return;
    }
    const old = this.store.set(obj);
    if (old) this.#emit((h) => h.onUpdate?.(old, obj));
    else this.#emit((h) => h.onAdd?.(obj));
  }

  #emit(call: (h: InformerHandlers<T>) => void): void {
    for (const h of this.#handlers) {
      try {
        call(h);
      } catch (err) {
        log.error("informer handler failed", { resource: this.name, error: err instanceof Error ? err.message : err });
      }
    }
  }
}

/**
 * List items come without apiVersion/kind; set them so handlers see complete objects. Every
 * object gets the resource's own two strings (a watch event's are copies of the same text), so
 * 10,000 cached objects share two strings instead of holding 10,000 each.
 */
function withKind<T extends KubeObject>(obj: T, r: ResourceType): T {
  const apiVersion = apiVersionOf(r);
  if (!obj.kind || obj.kind === r.kind) obj.kind = r.kind;
  if (!obj.apiVersion || obj.apiVersion === apiVersion) obj.apiVersion = apiVersion;
  return obj;
}
