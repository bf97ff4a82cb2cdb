/**
 * @module cluster/transport
 * How the cluster client's calls reach the API server: one interface, two transports.
 *
 * - `fetch` through one `Deno.HttpClient` built from the kubeconfig's CA and client certificate, over
 *   HTTP/1.1 with kept-alive connections (a watch holds one; calls reuse the others). The default.
 *   Not HTTP/2, though kube-apiserver offers it: Deno's fetch over HTTP/2 took 51–54 ms to POST a
 *   300 KB ConfigMap that takes 8–9 ms over HTTP/1.1 (`deno task bench api_transport`), and a
 *   proxy's configuration head is that large at 10,000 Ingresses.
 * - `node:https` with one keep-alive agent, for the two things Deno's fetch cannot do: a TLS server
 *   name other than the URL's host (`tls-server-name`) and `insecure-skip-tls-verify`.
 *
 * Why fetch first (docs/controller-scale.md, "The socket read buffers"): Deno 2.9's node:http client
 * keeps up to about 250 of its 64 KiB socket read buffers allocated after their responses were read
 * and collected (16 MB in a process that read a few MB through it; none with fetch). Both
 * transports trust the kubeconfig's CA on top of the runtime's root store, as Deno's TLS does for
 * either.
 */
import http from "node:http";
import https from "node:https";
import type { Buffer } from "node:buffer";
import type { Connection } from "./kubeconfig.ts";

/** One call as the client sends it. */
export interface OutgoingRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Aborts the call, also while its body is read. */
  readonly signal?: AbortSignal;
}

/** The server's answer: its status and a body to read once (or to cancel). */
export interface Exchange {
  readonly status: number;
  readonly body: AsyncIterable<Uint8Array>;
  /**
   * The whole body as UTF-8 text (instead of `body`). Through fetch, the runtime reads it in one
   * go: a list page of 5,000 objects read chunk by chunk through its stream cost about as much as
   * parsing it (1.1 s of the 7.5 s a controller took to list 100,000 Ingresses, Services and
   * EndpointSlices, in its CPU profile).
   */
  text(): Promise<string>;
  /** Stops reading and releases the stream; a read under way ends with an error. */
  cancel(): void;
}

export interface Transport {
  readonly kind: "fetch" | "node";
  send(req: OutgoingRequest): Promise<Exchange>;
  /** New TLS material (rotated certificate files); calls under way finish on the old one. */
  setTls(c: Connection): void;
  /** Closes kept-alive connections; calls under way may fail. */
  close(): void;
}

/**
 * The transport a server and its TLS settings need: fetch unless they ask for what only node:https
 * does. `maxIdle`: idle connections fetch keeps at most (node:https's agent keeps 16).
 */
export function transportFor(server: URL, c: Connection, maxIdle = 16): Transport {
  const ownName = c.servername !== undefined && c.servername !== server.hostname;
  return ownName || c.rejectUnauthorized === false ? new NodeTransport(server, c) : new FetchTransport(c, maxIdle);
}

const pem = (v: string | Buffer | undefined): string | undefined => v === undefined ? undefined : String(v);

interface PooledClient {
  readonly client: Deno.HttpClient;
  readonly material: string;
  users: number;
  retired: boolean;
  closed: boolean;
}

class FetchTransport implements Transport {
  readonly kind = "fetch";
  #current: PooledClient;
  #maxIdle: number;

  constructor(c: Connection, maxIdle: number) {
    this.#maxIdle = maxIdle;
    this.#current = this.#make(c);
  }

  #make(c: Connection): PooledClient {
    const ca = pem(c.ca), cert = pem(c.cert), key = pem(c.key);
    const client = Deno.createHttpClient({
      http2: false,
      poolMaxIdlePerHost: this.#maxIdle,
      ...(ca ? { caCerts: [ca] } : {}),
      ...(cert && key ? { cert, key } : {}),
    });
    return { client, material: JSON.stringify([ca, cert, key]), users: 0, retired: false, closed: false };
  }

  setTls(c: Connection): void {
    const next = JSON.stringify([pem(c.ca), pem(c.cert), pem(c.key)]);
    if (next === this.#current.material) return;
    const old = this.#current;
    this.#current = this.#make(c);
    old.retired = true;
    closeIfIdle(old);
  }

  async send(req: OutgoingRequest): Promise<Exchange> {
    const pooled = this.#current;
    pooled.users++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      pooled.users--;
      closeIfIdle(pooled);
    };
    // cancel() must also end a read under way, which a locked stream's cancel() cannot.
    const own = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, own.signal]) : own.signal;
    try {
      const res = await fetch(req.url, {
        method: req.method,
        // Deno's fetch asks for gzip and brotli by default; the node:http client asks for nothing, and
        // compressing lists for a client on the same host or network costs the server CPU for nothing.
        headers: { "Accept-Encoding": "identity", ...req.headers },
        body: req.body,
        signal,
        client: pooled.client,
      });
      return {
        status: res.status,
        body: read(res, release),
        text: async () => {
          try {
            return await res.text();
          } finally {
            release();
          }
        },
        cancel: () => {
          own.abort(new Error("cancelled"));
          release();
        },
      };
    } catch (err) {
      release();
      throw err;
    }
  }

  close(): void {
    this.#current.retired = true;
    closeIfIdle(this.#current);
  }
}

/** Closes a retired client once its last call is done; closing twice would throw (BadResource). */
function closeIfIdle(p: PooledClient): void {
  if (!p.retired || p.users > 0 || p.closed) return;
  p.closed = true;
  p.client.close();
}

async function* read(res: Response, release: () => void): AsyncGenerator<Uint8Array> {
  try {
    if (res.body) yield* res.body;
  } finally {
    release();
  }
}

class NodeTransport implements Transport {
  readonly kind = "node";
  #agent: http.Agent;
  #tls: https.RequestOptions = {};
  #secure: boolean;

  constructor(server: URL, c: Connection) {
    this.#secure = server.protocol === "https:";
    const options = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64, maxFreeSockets: 16 };
    this.#agent = this.#secure ? new https.Agent(options) : new http.Agent(options);
    this.setTls(c);
  }

  setTls(c: Connection): void {
    this.#tls = {
      ca: c.ca,
      cert: c.cert,
      key: c.key,
      servername: c.servername,
      ...(c.rejectUnauthorized !== undefined ? { rejectUnauthorized: c.rejectUnauthorized } : {}),
    };
  }

  send(r: OutgoingRequest): Promise<Exchange> {
    const headers: Record<string, string> = { ...r.headers };
    if (r.body !== undefined) headers["Content-Length"] = String(new TextEncoder().encode(r.body).length);
    const mod = this.#secure ? https : http;
    return new Promise<Exchange>((resolve, reject) => {
      const req = mod.request(r.url, { method: r.method, headers, agent: this.#agent, ...this.#tls }, (res) => {
        resolve({ status: res.statusCode ?? 0, body: res, text: () => readText(res), cancel: () => res.destroy() });
      });
      const onAbort = () => req.destroy(r.signal?.reason ?? new Error("aborted"));
      r.signal?.addEventListener("abort", onAbort, { once: true });
      req.on("close", () => r.signal?.removeEventListener("abort", onAbort));
      req.on("error", reject);
      if (r.body !== undefined) req.write(r.body);
      req.end();
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** A node:http response's body as UTF-8 text. */
async function readText(res: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const c of res) chunks.push(c);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(out);
}
