/**
 * @module cluster/client
 * One HTTP(S) client for the cluster API server, used for every call the controller and the
 * proxy make. Why not the generated client of @kubernetes/client-node 2.0.1: it builds a new
 * undici Agent (so a new TLS connection) for every request in `applySecurityAuthentication`, and
 * its `Watch` aborts a stream after 30 s without data (`requestTimeoutMs`). Here one keep-alive
 * `https.Agent` built from the kubeconfig's TLS material is shared by all calls (connections are
 * counted at socket creation), and every call first takes a token from the `--qps`/`--burst` bucket.
 */
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import { apiRequests, connectionsOpened, rateLimiterWait } from "./metrics.ts";
import { TokenBucket } from "./rate_limiter.ts";
import { type ClusterAccess, loadKubeConfig } from "./access.ts";

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
  /** Per-request timeout for non-watch calls (ms). */
  requestTimeoutMs?: number;
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
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
  /** Connections opened so far (also exported as a metric). */
  connectionsOpened = 0;
  /** Requests sent so far (also exported as a metric). */
  requestsSent = 0;
  #agent: http.Agent;
  #tls: https.AgentOptions = {};
  #headers: Record<string, string> = {};
  #headersAt = -Infinity;
  #userAgent: string;
  #timeoutMs: number;
  #closed = false;
  #streams = new Set<{ destroy(): void }>();

  private constructor(kc: ClusterAccess, opts: ClusterClientOptions) {
    this.kubeConfig = kc;
    this.server = new URL(kc.server);
    this.limiter = new TokenBucket({ qps: opts.qps, burst: opts.burst });
    this.#userAgent = opts.userAgent ?? "ingress-controller";
    this.#timeoutMs = opts.requestTimeoutMs ?? 60_000;
    const secure = this.server.protocol === "https:";
    const agentOptions = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64, maxFreeSockets: 16 };
    this.#agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    // Count connections where the agent creates them: the only place every new socket passes.
    const agent = this.#agent as http.Agent & { createConnection(o: unknown, cb: unknown): Duplex };
    const create = agent.createConnection.bind(agent);
    agent.createConnection = (o: unknown, cb: unknown) => {
      this.connectionsOpened++;
      connectionsOpened.inc();
      return create(o, cb);
    };
  }

  /** Loads the cluster configuration and reads its TLS material and credentials once. */
  static async create(opts: ClusterClientOptions): Promise<ClusterClient> {
    const kc = opts.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
    const client = new ClusterClient(kc, opts);
    await client.#refreshCredentials(true);
    return client;
  }

  /** The namespace of the kubeconfig's current context, if any. */
  get contextNamespace(): string | undefined {
    return this.kubeConfig.namespace;
  }

  async #refreshCredentials(force = false): Promise<void> {
    if (!force && performance.now() - this.#headersAt < headerTtlMs) return;
    // Token and certificate files are read again (rotation); exec plugins run (lib/cluster/kubeconfig.ts).
    const c = await this.kubeConfig.connection();
    this.#tls = {
      ca: c.ca,
      cert: c.cert,
      key: c.key,
      servername: c.servername,
      ...(c.rejectUnauthorized !== undefined ? { rejectUnauthorized: c.rejectUnauthorized } : {}),
    };
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
    timeoutMs: number,
  ): Promise<http.IncomingMessage> {
    if (this.#closed) throw new Error(`cluster client is closed (${method} ${path})`);
    const waited = await this.limiter.take(opts.signal);
    rateLimiterWait.observe(waited / 1000);
    await this.#refreshCredentials();
    // Aborted while waiting above: the abort listener below would never fire for it (a stopped
    // informer would still open its watch and wait for the server to end it).
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error(`${method} ${path}: aborted`);
    const url = this.#url(path, opts.query);
    const payload = opts.body === undefined
      ? undefined
      : typeof opts.body === "string"
      ? opts.body
      : JSON.stringify(opts.body);
    const headers: Record<string, string> = {
      ...this.#headers,
      Accept: "application/json",
      "User-Agent": this.#userAgent,
    };
    if (payload !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(new TextEncoder().encode(payload).length);
    }
    this.requestsSent++;
    const mod = this.server.protocol === "https:" ? https : http;
    return await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = mod.request(url, { method, headers, agent: this.#agent, ...this.#tls }, (res) => {
        apiRequests.inc({ verb, code: String(res.statusCode ?? 0) });
        resolve(res);
      });
      const onAbort = () => req.destroy(opts.signal?.reason ?? new Error("aborted"));
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      req.on("close", () => opts.signal?.removeEventListener("abort", onAbort));
      if (timeoutMs > 0) {
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      }
      req.on("error", (err) => {
        apiRequests.inc({ verb, code: "0" });
        reject(err);
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** One API call; resolves with the parsed JSON body; rejects with `ApiError` on a non-2xx status. */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const verb = verbOf(method, opts);
    const res = await this.#send(method, path, opts, verb, this.#timeoutMs);
    const text = await readAll(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw errorFrom(status, text, method, path);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Opens a watch (`path` is a collection path; `watch=true` is added). Events come one per
   * line; the stream ends when the server ends it (timeoutSeconds) or the connection breaks.
   */
  async watch(path: string, query: RequestOptions["query"], signal?: AbortSignal): Promise<WatchStream> {
    const res = await this.#send("GET", path, { query: { ...query, watch: "true" }, signal }, "watch", 0);
    const status = res.statusCode ?? 0;
    if (status !== 200) throw errorFrom(status, await readAll(res), "WATCH", path);
    this.#streams.add(res);
    const streams = this.#streams;
    async function* events(): AsyncGenerator<RawWatchEvent> {
      const decoder = new TextDecoder();
      let buf = "";
      try {
        for await (const chunk of res) {
          buf += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
          let nl: number;
          while ((nl = buf.indexOf("\n")) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line) yield JSON.parse(line) as RawWatchEvent;
          }
        }
      } finally {
        streams.delete(res);
        res.destroy();
      }
    }
    return {
      events: events(),
      close: () => {
        streams.delete(res);
        res.destroy();
      },
    };
  }

  /** Ends open watches and closes every kept-alive connection. */
  close(): void {
    this.#closed = true;
    for (const s of this.#streams) s.destroy();
    this.#streams.clear();
    this.#agent.destroy();
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

async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of res) chunks.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
  return new TextDecoder().decode(concat(chunks));
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
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
