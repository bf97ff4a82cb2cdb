/**
 * @module lib/dev/localenv/backend
 * Test backends for traffic tests: small HTTP servers on a loopback address that answer every
 * request with 200 and a JSON description of themselves and of the request, so a test can tell
 * which backend a proxy picked and what it forwarded.
 */

/** What a backend answers (JSON body). */
export interface BackendAnswer {
  /** The backend's name. */
  name: string;
  /** Address and port the backend listens on. */
  address: string;
  port: number;
  /** The request's Host header, method, path with query, and the headers it received. */
  host: string | null;
  method: string;
  path: string;
  /** The request target exactly as received (path and query, not normalized as `path` is by URL parsing). */
  target: string;
  headers: Record<string, string>;
}

export interface BackendOptions {
  name: string;
  /** Loopback address, e.g. "127.0.0.2" (default "127.0.0.1"). */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface Backend extends AsyncDisposable {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** http://address:port */
  readonly url: string;
  /** Requests answered so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/** Starts a backend; close it with `close()` or `await using`. */
export function startBackend(opts: BackendOptions): Promise<Backend> {
  const address = opts.host ?? "127.0.0.1";
  let requests = 0;
  let port = 0;
  const server = Deno.serve({ hostname: address, port: opts.port ?? 0, onListen: () => {} }, async (req) => {
    requests++;
    // the request is read to its end before the answer, as a real service does: an HTTP/2 stream
    // answered while its client still sends is reset, which clients such as curl report as an error
    if (req.body) await req.arrayBuffer().catch(() => {});
    const url = new URL(req.url);
    const answer: BackendAnswer = {
      name: opts.name,
      address,
      port,
      host: req.headers.get("host"),
      method: req.method,
      path: url.pathname + url.search,
      target: req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2)),
      headers: Object.fromEntries(req.headers),
    };
    return Response.json(answer);
  });
  port = server.addr.port;
  let closing: Promise<void> | null = null;
  const close = () => closing ??= server.shutdown();
  return Promise.resolve({
    name: opts.name,
    address,
    port,
    url: `http://${address.includes(":") ? `[${address}]` : address}:${port}`,
    get requests() {
      return requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  });
}
