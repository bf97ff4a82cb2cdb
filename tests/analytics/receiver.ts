/**
 * A real analytics endpoint for tests: an HTTP server on 127.0.0.1 that records every request.
 * `mode` "ok" answers 204, "fail" answers 503, "slow" holds every answer until `close()`.
 */
export interface Received {
  method: string;
  path: string;
  contentType: string | null;
  body: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  mode: "ok" | "fail" | "slow";
  /** Resolves when `n` requests have arrived. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export function startReceiver(mode: Receiver["mode"] = "ok"): Receiver {
  const received: Received[] = [];
  const held: (() => void)[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    let json: unknown = undefined;
    try {
      json = JSON.parse(body);
    } catch {
      // recorded as text only
    }
    received.push({
      method: req.method,
      path: new URL(req.url).pathname,
      contentType: req.headers.get("content-type"),
      body,
      json,
    });
    for (const w of waiters.filter((w) => received.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    if (receiver.mode === "slow") await new Promise<void>((resolve) => held.push(resolve));
    return new Response(null, { status: receiver.mode === "fail" ? 503 : 204 });
  });
  const receiver: Receiver = {
    url: `http://127.0.0.1:${server.addr.port}/v1/events?key=secret-key`,
    received,
    mode,
    waitFor(n) {
      if (received.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      for (const release of held.splice(0)) release();
      await server.shutdown();
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
  return receiver;
}

/** A port on 127.0.0.1 where nothing listens (bound, then closed). */
export function deadEndpoint(): string {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return `http://127.0.0.1:${port}/events`;
}
