/**
 * @module cluster/client
 * One client for the cluster API server, used for every call the controller and the proxy make.
 * Why not the generated client of @kubernetes/client-node 2.0.1: it builds a new undici Agent (so a
 * new TLS connection) for every request in `applySecurityAuthentication`, and its `Watch` aborts a
 * stream after 30 s without data (`requestTimeoutMs`). Here one transport built from the
 * kubeconfig's TLS material (lib/cluster/transport.ts) carries every call, its connections kept
 * alive, and every call first takes a token from the `--qps`/`--burst` bucket.
 *
 * At most `maxInFlight` calls (not watches) are under way at once; the others wait their turn.
 * Over HTTP/1.1 every call under way holds a connection of its own, and Deno's fetch keeps each one
 * it opened: a burst of 1,500 calls (one Event per Ingress of a conflicting class) left 1,500 idle
 * TLS connections to the API server and 56 MB of the C heap (about 37 KB each) in the controller.
 * client-go keeps at most 25 idle connections per host for the same reason. Watches are not
 * counted: each holds its connection for as long as it runs, and there is one per informer.
 */
import http from "node:http";
import pLimit, { type LimitFunction } from "p-limit";
import { apiRequests, rateLimiterWait } from "./metrics.ts";
import { TokenBucket } from "./rate_limiter.ts";
import { type ClusterAccess, loadKubeConfig } from "./access.ts";
import { type Exchange, type Transport, transportFor } from "./transport.ts";

export interface ClusterClientOptions {
  /** Path of a kubeconfig; null/empty: in-cluster configuration. */
  kubeconfig?: string | null;
  /** An already loaded configuration (wins over `kubeconfig`). */
  kubeConfig?: ClusterAccess;
  /** `--qps`: requests per second; <= 0 means unlimited. */
  qps: number;
  /** `--burst`. */
  burst: number;
  userAgent?: string;
  /** Per-request timeout for non-watch calls (ms), from when the call is made (its wait for a turn included). */
  requestTimeoutMs?: number;
  /** Calls (not watches) under way at once; default `DEFAULT_MAX_IN_FLIGHT`. */
  maxInFlight?: number;
}

/** Calls under way at once unless a client says otherwise (lib/cluster/client.ts's header says why). */
export const DEFAULT_MAX_IN_FLIGHT = 32;

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  /** The Accept header (default `application/json`): e.g. a metadata-only list (lib/cluster/metadata_list.ts). */
  accept?: string;
  signal?: AbortSignal;
  /**
   * false: the call does not take a token from the `--qps`/`--burst` bucket (it still waits for its
   * turn among the calls under way). For reads whose number the caller bounds itself: the proxy's
   * first read of each part of its configuration (lib/transport/part_cache.ts).
   */
  rateLimited?: boolean;
}

/** A non-2xx answer of the API server, with the fields of its `Status` body. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly verb: string,
    readonly path: string,
  ) {
    super(`${verb} ${path}: ${status} ${reason}: ${message}`);
  }
}

/** A watch event as sent by the API server (one JSON object per line). */
export interface RawWatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: any;
}

/** An open watch stream. Iterate `events`; call `close()` to end it early. */
export interface WatchStream {
  events: AsyncIterable<RawWatchEvent>;
  close(): void;
}

const headerTtlMs = 10_000;

export class ClusterClient {
  readonly kubeConfig: ClusterAccess;
  readonly server: URL;
  readonly limiter: TokenBucket;
  /** Requests sent so far (also exported as a metric). */
  requestsSent = 0;
  #transport: Transport;
  #headers: Record<string, string> = {};
  #headersAt = -Infinity;
  #userAgent: string;
  #timeoutMs: number;
  #closed = false;
  #streams = new Set<Exchange>();
  #turns: LimitFunction;

  private constructor(kc: ClusterAccess, opts: ClusterClientOptions, transport: Transport, maxInFlight: number) {
    this.kubeConfig = kc;
    this.#turns = pLimit(maxInFlight);
    this.server = new URL(kc.server);
    this.limiter = new TokenBucket({ qps: opts.qps, burst: opts.burst });
    this.#userAgent = opts.userAgent ?? "ingress-controller";
    this.#timeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.#transport = transport;
  }

  /** Loads the cluster configuration and reads its TLS material and credentials once. */
  static async create(opts: ClusterClientOptions): Promise<ClusterClient> {
    const kc = opts.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
    const c = await kc.connection();
    // As many idle connections kept as calls may be under way.
    const maxInFlight = Math.max(1, opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
    const client = new ClusterClient(kc, opts, transportFor(new URL(kc.server), c, maxInFlight), maxInFlight);
    client.#headers = { ...c.headers };
    client.#headersAt = performance.now();
    return client;
  }

  /** Calls under way and calls waiting for their turn (watches not counted). */
  get calls(): { active: number; waiting: number } {
    return { active: this.#turns.activeCount, waiting: this.#turns.pendingCount };
  }

  /** Which transport carries the calls (lib/cluster/transport.ts). */
  get transport(): Transport["kind"] {
    return this.#transport.kind;
  }

  /** The namespace of the kubeconfig's current context, if any. */
  get contextNamespace(): string | undefined {
    return this.kubeConfig.namespace;
  }

  async #refreshCredentials(): Promise<void> {
    if (performance.now() - this.#headersAt < headerTtlMs) return;
    // Token and certificate files are read again (rotation); exec plugins run (lib/cluster/kubeconfig.ts).
    const c = await this.kubeConfig.connection();
    this.#transport.setTls(c);
    this.#headers = { ...c.headers };
    this.#headersAt = performance.now();
  }

  #url(path: string, query?: RequestOptions["query"]): URL {
    const url = new URL(this.server.toString().replace(/\/$/, "") + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  async #send(
    method: string,
    path: string,
    opts: RequestOptions,
    verb: string,
    signal?: AbortSignal,
  ): Promise<Exchange> {
    if (this.#closed) throw new Error(`cluster client is closed (${method} ${path})`);
    if (opts.rateLimited !== false) rateLimiterWait.observe(await this.limiter.take(opts.signal) / 1000);
    await this.#refreshCredentials();
    // Aborted while waiting above: the call would go out anyway (a stopped informer would still open
    // its watch and wait for the server to end it).
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error(`${method} ${path}: aborted`);
    const body = opts.body === undefined || typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    const headers: Record<string, string> = {
      ...this.#headers,
      Accept: opts.accept ?? "application/json",
      "User-Agent": this.#userAgent,
    };
    if (body !== undefined) headers["Content-Type"] = opts.contentType ?? "application/json";
    this.requestsSent++;
    try {
      const ex = await this.#transport.send({ method, url: this.#url(path, opts.query), headers, body, signal });
      apiRequests.inc({ verb, code: String(ex.status) });
      return ex;
    } catch (err) {
      apiRequests.inc({ verb, code: "0" });
      throw err;
    }
  }

  /** One API call; resolves with the parsed JSON body; rejects with `ApiError` on a non-2xx status. */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const verb = verbOf(method, opts);
    // The deadline covers the answer and its whole body.
    const deadline = new AbortController();
    const ms = this.#timeoutMs;
    const timer = ms > 0
      ? setTimeout(() => deadline.abort(new Error(`${method} ${path}: no answer within ${ms} ms`)), ms)
      : undefined;
    try {
      const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
      // The turn lasts until the whole body is read: until then the call holds its connection.
      const { status, text } = await this.#turns(async () => {
        const ex = await this.#send(method, path, opts, verb, signal);
        return { status: ex.status, text: await ex.text() };
      });
      if (status < 200 || status >= 300) throw errorFrom(status, text, method, path);
      return (text ? JSON.parse(text) : undefined) as T;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Opens a watch (`path` is a collection path; `watch=true` is added). Events come one per
   * line; the stream ends when the server ends it (timeoutSeconds) or the connection breaks.
   */
  async watch(
    path: string,
    query: RequestOptions["query"],
    signal?: AbortSignal,
    rateLimited = true,
  ): Promise<WatchStream> {
    const ex = await this.#send(
      "GET",
      path,
      { query: { ...query, watch: "true" }, signal, rateLimited },
      "watch",
      signal,
    );
    if (ex.status !== 200) throw errorFrom(ex.status, await ex.text(), "WATCH", path);
    this.#streams.add(ex);
    const streams = this.#streams;
    let closed = false;
    const close = () => {
      closed = true;
      streams.delete(ex);
      ex.cancel();
    };
    async function* events(): AsyncGenerator<RawWatchEvent> {
      const decoder = new TextDecoder();
      let buf = "";
      try {
        for await (const chunk of ex.body) {
          buf += decoder.decode(chunk, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) yield JSON.parse(line) as RawWatchEvent;
          }
        }
      } catch (err) {
        // A closed watch ends its events; a broken one throws.
        if (!closed) throw err;
      } finally {
        close();
      }
    }
    return { events: events(), close };
  }

  /** Ends open watches and closes every kept-alive connection. */
  close(): void {
    this.#closed = true;
    for (const s of this.#streams) s.cancel();
    this.#streams.clear();
    this.#transport.close();
  }
}

function verbOf(method: string, opts: RequestOptions): string {
  switch (method) {
    case "GET":
      return "get";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return opts.contentType === "application/apply-patch+yaml" ? "apply" : "patch";
    case "DELETE":
      return "delete";
    default:
      return method.toLowerCase();
  }
}

function errorFrom(status: number, text: string, method: string, path: string): ApiError {
  let reason = "";
  let message = text.slice(0, 300).replace(/\s+/g, " ");
  try {
    const s = JSON.parse(text);
    reason = s.reason ?? "";
    message = s.message ?? message;
  } catch {
    // not a Status object: keep the raw text
  }
  return new ApiError(status, reason || http.STATUS_CODES[status] || "Error", message, method, path);
}

/** Whether `err` is an `ApiError` with one of the given statuses. */
export function isStatus(err: unknown, ...statuses: number[]): err is ApiError {
  return err instanceof ApiError && statuses.includes(err.status);
}
