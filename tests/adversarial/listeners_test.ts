/**
 * The red-team findings against the controller's listeners (issue 9), replayed against the real
 * secure port (release A, TLS, HTTP/1.1 and HTTP/2) and the real plain-HTTP ops listener (release
 * B's `--ops-address`), started in-process:
 * - `/debug/pprof/heap` must never return memory contents (it served a V8 heap snapshot holding
 *   every cached TLS key); profiles are bounded in duration and run one at a time;
 * - slow-loris, idle and surplus connections are closed, counted in metrics, while others are served;
 * - a request that is not answered in time gets 504, a long-running profile is not cut.
 * Waits are event-driven (socket/session close); the fail-safes only stop a test that would hang.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import tls from "node:tls";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { HealthChecks } from "../../lib/parts/health.ts";
import { type ServingDeps, type ServingHandle, startServing } from "../../lib/serving/server.ts";
import { defaultSettings, type ServingSettings } from "../../lib/serving/settings.ts";
import { h2get, request, tempDir } from "../serving/helpers.ts";

/** A private key as the controller caches it from a TLS Secret: built at run time, held for the whole run. */
const marker = `ic-red-team-${crypto.randomUUID()}`;
export const cachedSecret = {
  "tls.key": ["-----BEGIN", "PRIVATE KEY-----"].join(" ") + `\n${btoa(marker.repeat(8))}\n-----END PRIVATE KEY-----\n`,
};

/** Generous: only stops a test whose connection is never closed (the defaults are 32 s and more). */
const failSafeMs = 10_000;

type Limits = NonNullable<ServingSettings["connections"]>;
const relaxed: Limits = {
  headerTimeoutMs: 60_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 60_000,
  maxConnections: 100,
};

const noTokens: TokenReviewer = () => Promise.resolve({ authenticated: false });
const allowAll: AccessReviewer = () => Promise.resolve({ allowed: true, reason: "test allows all" });

interface Started extends AsyncDisposable {
  readonly handle: ServingHandle;
  readonly port: number;
}

/** The ops listener of release B (secure port off) or the secure port of release A, on loopback. */
async function start(
  listener: "ops" | "secure",
  limits: Partial<Limits> = {},
  deps: Partial<ServingDeps> = {},
): Promise<Started> {
  const tmp = tempDir("adversarial-");
  const settings: ServingSettings = {
    ...defaultSettings,
    ...(listener === "ops"
      ? { release: "B", version: "7.0.0-rc.2", securePort: 0, opsAddress: "127.0.0.1:0" }
      : { bindAddress: "127.0.0.1" }),
    certDir: join(tmp.dir, "certs"),
    authenticationSkipLookup: true,
    connections: { ...relaxed, ...limits },
  };
  const handle = await startServing(settings, {
    tokenReviewer: noTokens,
    accessReviewer: allowAll,
    ephemeralPorts: true,
    ...deps,
  });
  const port = listener === "ops" ? handle.ops!.port : handle.secure!.port;
  return {
    handle,
    port,
    async [Symbol.asyncDispose]() {
      await handle.stop();
      tmp[Symbol.dispose]();
    },
  };
}

/** Current value of a counter or gauge with exactly these labels (0 when absent). */
async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  const want = Object.entries(labels);
  const v = values.find((x) =>
    want.every(([k, val]) => String((x.labels as Record<string, unknown>)[k]) === val) &&
    Object.keys(x.labels).length === want.length
  );
  return v?.value ?? 0;
}

/** Resolves with `value`, or with "fail-safe" when it takes longer than `ms`. */
function orFailSafe<T>(p: Promise<T>, ms = failSafeMs): Promise<T | "fail-safe"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const safe = new Promise<"fail-safe">((resolve) => (timer = setTimeout(() => resolve("fail-safe"), ms)));
  return Promise.race([p, safe]).finally(() => clearTimeout(timer));
}

/** A socket or an HTTP/2 session, as far as waiting for its end goes. */
interface Closable {
  readonly destroyed: boolean;
  once(event: "close", listener: () => void): unknown;
  destroy(): void;
}

/** Whether the server closes `conn` (false: still open at the fail-safe; it is then destroyed). */
async function closedByServer(conn: Closable): Promise<boolean> {
  if (conn.destroyed) return true;
  const closed = new Promise<true>((resolve) => conn.once("close", () => resolve(true)));
  const r = await orFailSafe(closed);
  conn.destroy();
  await closed;
  return r === true;
}

function plainSocket(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => resolve(s));
    s.on("error", reject);
  });
}

function tlsSocket(port: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      { port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] },
      () => resolve(s),
    );
    s.on("error", reject);
  });
}

/**
 * A bare HTTP/2 client over TLS (ALPN h2): the connection preface and an empty SETTINGS, the
 * server's SETTINGS acknowledged, GETs as HEADERS frames. Not node:http2: when the server ends an
 * idle session with GOAWAY, Deno 2.9.6's nghttp2 binding can abort the whole test process
 * (denoland/deno#36788), and what is under test here is the server's close, not a client library.
 */
class RawH2 {
  #buf = new Uint8Array(0);
  #next = 1;
  #wake: (() => void) | null = null;
  #closed = false;
  /** DATA received per stream, and the streams that ended. */
  #data = new Map<number, string>();
  #ended = new Set<number>();

  private constructor(readonly sock: tls.TLSSocket) {
    sock.on("data", (d: Uint8Array) => {
      const buf = new Uint8Array(this.#buf.length + d.length);
      buf.set(this.#buf);
      buf.set(d, this.#buf.length);
      this.#buf = buf;
      this.#frames();
      this.#wake?.();
    });
    sock.on("error", () => {});
    sock.on("close", () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  static connect(port: number): Promise<RawH2> {
    return new Promise((resolve, reject) => {
      const s = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: ["h2"] }, () => {
        if (s.alpnProtocol !== "h2") return reject(new Error(`ALPN chose ${s.alpnProtocol}, not h2`));
        s.write(new TextEncoder().encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
        s.write(RawH2.#frame(4, 0, 0, new Uint8Array(0)));
        resolve(new RawH2(s));
      });
      s.on("error", reject);
    });
  }

  static #frame(type: number, flags: number, stream: number, payload: Uint8Array): Uint8Array {
    const f = new Uint8Array(9 + payload.length);
    const v = new DataView(f.buffer);
    v.setUint32(0, payload.length << 8);
    f[3] = type;
    f[4] = flags;
    v.setUint32(5, stream);
    f.set(payload, 9);
    return f;
  }

  #frames(): void {
    while (this.#buf.length >= 9) {
      const v = new DataView(this.#buf.buffer, this.#buf.byteOffset);
      const length = v.getUint32(0) >>> 8;
      if (this.#buf.length < 9 + length) return;
      const [type, flags] = [this.#buf[3], this.#buf[4]];
      const stream = v.getUint32(5) & 0x7fffffff;
      const payload = this.#buf.subarray(9, 9 + length);
      this.#buf = this.#buf.slice(9 + length);
      // SETTINGS (not an ACK) is acknowledged; DATA is kept; END_STREAM ends DATA or HEADERS.
      if (type === 4 && !(flags & 1)) this.sock.write(RawH2.#frame(4, 1, 0, new Uint8Array(0)));
      if (type === 0) {
        const padded = flags & 0x8 ? 1 : 0; // PADDED: a pad length byte first, that many bytes last
        const body = payload.subarray(padded, payload.length - (padded ? payload[0] : 0));
        this.#data.set(stream, (this.#data.get(stream) ?? "") + new TextDecoder().decode(body));
      }
      if ((type === 0 || type === 1) && flags & 1) this.#ended.add(stream);
    }
  }

  /** GET `path`; the body once the stream ends. */
  async get(path: string): Promise<string> {
    const stream = this.#next;
    this.#next += 2;
    const enc = new TextEncoder();
    const literal = (index: number, value: string) => [index, value.length, ...enc.encode(value)];
    // HPACK: :method GET (2), :scheme https (7), then :authority (1) and :path (4) as literals
    // without indexing, their names from the static table.
    const block = new Uint8Array([0x82, 0x87, ...literal(1, "127.0.0.1"), ...literal(4, path)]);
    this.sock.write(RawH2.#frame(1, 0x4 | 0x1, stream, block));
    while (!this.#ended.has(stream)) {
      if (this.#closed) throw new Error(`session closed before the answer to ${path}`);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    return this.#data.get(stream) ?? "";
  }
}

/** A keep-alive HTTP/1.1 client on one socket (answers carry Content-Length). */
class Http1 {
  #buf = "";
  #wake: (() => void) | null = null;
  #closed = false;

  constructor(readonly sock: net.Socket) {
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      this.#buf += d;
      this.#wake?.();
    });
    sock.on("error", () => {});
    sock.on("close", () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    this.sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    for (;;) {
      const end = this.#buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = this.#buf.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#buf.length >= end + 4 + length) {
          const body = this.#buf.slice(end + 4, end + 4 + length);
          this.#buf = this.#buf.slice(end + 4 + length);
          return { status: Number(head.split(" ")[1]), body };
        }
      }
      if (this.#closed) throw new Error(`connection closed before the answer to ${path}`);
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

Deno.test("/debug/pprof/heap is an allocation sample, never memory contents (ops listener B, secure port A)", async () => {
  assert.ok(cachedSecret["tls.key"].includes(btoa(marker.repeat(8))));
  const secret = btoa(marker.repeat(8));
  for (const listener of ["ops", "secure"] as const) {
    await using s = await start(listener);
    const get = (path: string) =>
      listener === "ops"
        ? fetch(`http://127.0.0.1:${s.port}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }))
        : request({ port: s.port, path });
    const heap = await get("/debug/pprof/heap?seconds=1");
    assert.equal(heap.status, 200, `${listener}: ${heap.body.slice(0, 200)}`);
    assert.ok(!heap.body.includes(secret), `${listener}: the heap profile contains the cached key`);
    assert.ok(!heap.body.includes(marker), `${listener}: the heap profile contains memory contents`);
    assert.doesNotMatch(heap.body, /PRIVATE KEY/);
    const profile = JSON.parse(heap.body);
    assert.equal(profile.snapshot, undefined, `${listener}: a heap snapshot was served`);
    assert.equal(profile.head?.callFrame?.functionName, "(root)", `${listener}: a sampling profile has a root node`);
    assert.ok(Array.isArray(profile.samples), `${listener}: a sampling profile lists samples`);

    const cpu = await get("/debug/pprof/profile?seconds=1");
    assert.equal(cpu.status, 200);
    assert.ok(!cpu.body.includes(marker) && !cpu.body.includes(secret));
  }
});

Deno.test("profile durations are bounded and one profile runs at a time", async () => {
  await using s = await start("ops");
  const base = `http://127.0.0.1:${s.port}`;
  for (const path of ["heap?seconds=61", "profile?seconds=61", "profile?seconds=300", "heap?seconds=1e3"]) {
    const r = await fetch(`${base}/debug/pprof/${path}`);
    assert.equal(r.status, 400, path);
    assert.match(await r.text(), /^seconds=\S+: give an integer from 1 to 60$/m, path);
  }

  // A 60 s heap profile and a 1 s CPU profile at once: whichever comes second is refused.
  const long = new AbortController();
  const heap = fetch(`${base}/debug/pprof/heap?seconds=60`, { signal: long.signal });
  const cpu = await fetch(`${base}/debug/pprof/profile?seconds=1`);
  await cpu.body?.cancel();
  if (cpu.status === 200) {
    const first = await heap; // the CPU profile won: the heap profile was refused at once
    assert.equal(first.status, 409);
    assert.match(await first.text(), /one profile runs at a time/);
  } else {
    assert.equal(cpu.status, 409);
    // A client that goes away ends its profile: the slot is free again long before 60 s.
    long.abort();
    await assert.rejects(heap, (e: Error) => e.name === "AbortError");
  }
  let again = 409;
  for (let i = 0; i < 100 && again === 409; i++) {
    const r = await fetch(`${base}/debug/pprof/heap?seconds=1`);
    again = r.status;
    await r.body?.cancel();
    if (again === 409) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(again, 200, "the profile slot is free again");
});

/** On a keep-alive connection, a second request whose headers never end: the runtime answers 408 and closes. */
async function slowSecondRequest(sock: net.Socket, what: string): Promise<void> {
  const c = new Http1(sock);
  assert.deepEqual(await c.get("/healthz"), { status: 200, body: "ok" });
  sock.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  assert.ok(await closedByServer(sock), `${what}: a slow second request held the connection open`);
}

Deno.test("slow-loris: a connection that never completes its request headers is closed", async () => {
  const limits = { headerTimeoutMs: 300 };
  {
    await using s = await start("ops", limits);
    const before = await metric("serving_connections_timed_out_total", { listener: "ops", reason: "header_timeout" });
    const sock = await plainSocket(s.port);
    sock.on("error", () => {});
    sock.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    assert.ok(await closedByServer(sock), "ops listener: partial headers held the connection open");
    const after = await metric("serving_connections_timed_out_total", { listener: "ops", reason: "header_timeout" });
    assert.ok(after > before, "ops listener: counted as a header timeout");
    await slowSecondRequest(await plainSocket(s.port), "ops listener");
  }
  {
    await using s = await start("secure", limits);
    const labels = { listener: "secure", reason: "header_timeout" };
    const before = await metric("serving_connections_timed_out_total", labels);
    // HTTP/1.1 over TLS, headers cut short.
    const h1 = await tlsSocket(s.port);
    h1.on("error", () => {});
    h1.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    assert.ok(await closedByServer(h1), "secure port: partial HTTP/1.1 headers held the connection open");
    await slowSecondRequest(await tlsSocket(s.port), "secure port");
    // TCP only: no TLS ClientHello at all.
    const raw = await plainSocket(s.port);
    raw.on("error", () => {});
    assert.ok(await closedByServer(raw), "secure port: a connection without a TLS handshake stayed open");
    // HTTP/2: the connection preface and settings, then no request.
    const h2 = await RawH2.connect(s.port);
    assert.ok(await closedByServer(h2.sock), "secure port: an HTTP/2 session without a request stayed open");
    const after = await metric("serving_connections_timed_out_total", labels);
    assert.ok(after >= before + 3, `secure port: three header timeouts counted (${after - before})`);
  }
});

Deno.test("an idle keep-alive connection is closed after the idle timeout (HTTP/1.1 and HTTP/2)", async () => {
  const limits = { idleTimeoutMs: 300 };
  for (const listener of ["ops", "secure"] as const) {
    await using s = await start(listener, limits);
    const labels = { listener, reason: "idle_timeout" };
    const before = await metric("serving_connections_timed_out_total", labels);
    const c = new Http1(await (listener === "ops" ? plainSocket(s.port) : tlsSocket(s.port)));
    assert.deepEqual(await c.get("/healthz"), { status: 200, body: "ok" });
    assert.ok(await closedByServer(c.sock), `${listener}: an idle HTTP/1.1 keep-alive connection stayed open`);
    assert.equal(await metric("serving_connections_timed_out_total", labels), before + 1);
    if (listener === "ops") continue;

    const h2 = await RawH2.connect(s.port);
    assert.equal(await h2.get("/healthz"), "ok");
    assert.ok(await closedByServer(h2.sock), "secure port: an idle HTTP/2 session stayed open");
    assert.equal(await metric("serving_connections_timed_out_total", labels), before + 2);
  }
});

Deno.test("connections beyond the limit are refused while admitted ones are still served", async () => {
  for (const listener of ["ops", "secure"] as const) {
    await using s = await start(listener, { maxConnections: 2 });
    const connect = () => listener === "ops" ? plainSocket(s.port) : tlsSocket(s.port);
    const before = await metric("serving_connections_refused_total", { listener });
    const a = new Http1(await connect());
    const b = new Http1(await connect());
    // Both answered: both are admitted and counted.
    assert.equal((await a.get("/healthz")).body, "ok");
    assert.equal((await b.get("/healthz")).body, "ok");

    const third = await plainSocket(s.port);
    third.on("error", () => {});
    assert.ok(await closedByServer(third), `${listener}: a third connection was accepted`);
    assert.equal(await metric("serving_connections_refused_total", { listener }), before + 1);
    assert.deepEqual(await a.get("/healthz"), { status: 200, body: "ok" }, `${listener}: admitted client still served`);

    // A closed connection frees its place.
    b.sock.destroy();
    let freed: Http1 | null = null;
    for (let i = 0; i < 100 && !freed; i++) {
      const sock = await connect().catch(() => null); // refused while the server has not seen b's close
      const c = sock && new Http1(sock);
      if (c && (await c.get("/healthz").catch(() => null))?.body === "ok") freed = c;
      else {
        c?.sock.destroy();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    assert.ok(freed, `${listener}: the place of a closed connection was not freed`);
    freed.sock.destroy();
    a.sock.destroy();
  }
});

Deno.test("request timeout: an unanswered request gets 504; a long-running profile is not cut", async () => {
  const limits = { requestTimeoutMs: 300 };
  // Secure port: the SubjectAccessReview never answers in time.
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slowReviewer: AccessReviewer = async () => {
    await gate;
    return { allowed: true, reason: "late" };
  };
  {
    await using s = await start("secure", limits, { accessReviewer: slowReviewer });
    try {
      const h1 = await orFailSafe(request({ port: s.port, path: "/metrics" }));
      assert.notEqual(h1, "fail-safe", "HTTP/1.1 request never answered");
      assert.equal(h1 !== "fail-safe" && h1.status, 504);
      assert.match(h1 !== "fail-safe" ? h1.body : "", /"reason":"Timeout"/);
      const h2 = await orFailSafe(h2get(s.port, "/metrics"));
      assert.notEqual(h2, "fail-safe", "HTTP/2 request never answered");
      assert.equal(h2 !== "fail-safe" && h2.status, 504);
    } finally {
      release();
    }
  }
  // Ops listener: a readiness check that hangs; the profile takes longer than the request timeout.
  const health = new HealthChecks();
  let unblock = () => {};
  const blocked = new Promise<void>((resolve) => (unblock = resolve));
  health.register("stuck", () => blocked);
  {
    await using s = await start("ops", limits, { health });
    try {
      const base = `http://127.0.0.1:${s.port}`;
      const before = await metric("serving_connections_timed_out_total", {
        listener: "ops",
        reason: "request_timeout",
      });
      const ready = await orFailSafe(fetch(`${base}/readyz`));
      assert.notEqual(ready, "fail-safe", "a hanging readiness check held the request");
      if (ready !== "fail-safe") {
        assert.equal(ready.status, 504);
        await ready.body?.cancel();
      }
      assert.equal(
        await metric("serving_connections_timed_out_total", { listener: "ops", reason: "request_timeout" }),
        before + 1,
      );
      const cpu = await fetch(`${base}/debug/pprof/profile?seconds=1`);
      assert.equal(cpu.status, 200, "the 1 s profile outlives the 300 ms request timeout");
      assert.ok(Array.isArray((await cpu.json()).nodes));
    } finally {
      unblock();
    }
  }
});
