/**
 * Annotations change real traffic: a real haproxy serves the rendered configuration (backend
 * variants, docs/annotations-rendering.md) in front of real test backends on loopback, and curl
 * shows each key's behaviour: redirect codes, HSTS, 413, 403, 429, header edits, CORS preflight,
 * sticky cookies, rewrites, timeouts, PROXY protocol, and one Ingress's settings never reaching
 * another's routes to the same Service.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";
import { backendNames, withProxy } from "./live.ts";

const A = "ingress-controller.io/";

/** A full answer: status, response headers (lower-case names; repeated ones joined by `, `), body. */
interface Full {
  status: number;
  headers: Record<string, string>;
  body: string;
  backend: string | null;
  received: Record<string, string>;
  target: string | null;
}

async function request(args: string[]): Promise<Full> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--path-as-is", "--max-time", "10", "-D", "-", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `curl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout);
  const cut = text.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = text.slice(0, cut).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    const k = l.slice(0, i).toLowerCase(), v = l.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  const body = text.slice(cut + 4);
  let answer: { name?: string; headers?: Record<string, string>; target?: string } = {};
  try {
    answer = JSON.parse(body);
  } catch { /* haproxy answered */ }
  return {
    status: Number(statusLine.split(" ")[1]),
    headers,
    body,
    backend: answer.name ?? null,
    received: answer.headers ?? {},
    target: answer.target ?? null,
  };
}

/** One Service `web` (port 80) on the given test backend ports, and one Ingress per host with its annotations. */
function objects(
  ports: number[],
  hosts: Record<string, Record<string, string>>,
  extra: { tls?: { hosts: string[]; secretName: string }[]; secrets?: unknown[]; path?: string } = {},
) {
  return {
    ingresses: Object.entries(hosts).map(([host, annotations], i) =>
      ingress({
        name: `ing-${i}`,
        annotations,
        tls: extra.tls?.filter((t) => t.hosts.includes(host)),
        rules: [{ host, paths: [{ path: extra.path ?? "/", service: "web", port: 80 }] }],
      })
    ),
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: ports.map((p, i) =>
        endpointSlice("web", [{ name: "", port: p }], [{ address: "127.0.0.1" }], { name: `web-${i}` })
      ),
      // deno-lint-ignore no-explicit-any
      secrets: (extra.secrets ?? []) as any,
    }),
  };
}

/** One Ingress `name` routing `host` to Service `name` (port 80) whose one endpoint is 127.0.0.1:`port`. */
function single(name: string, port: number, host: string, annotations: Record<string, string>) {
  return {
    ingresses: [ingress({ name, annotations, rules: [{ host, paths: [{ path: "/", service: name, port: 80 }] }] })],
    lookup: lookupFromLists({
      services: [service(name, [{ port: 80 }])],
      endpointSlices: [endpointSlice(name, [{ name: "", port }], [{ address: "127.0.0.1" }])],
    }),
  };
}

Deno.test("ssl-redirect-code and HSTS: the redirect's code per Ingress, the header only on HTTPS answers", async () => {
  await using web = await startBackend({ name: "web" });
  const ca = await createCA({ commonName: "annotations-test-ca" });
  const leaf = await issueCertificate(ca, {
    commonName: "a.example.com",
    dnsNames: ["a.example.com", "b.example.com"],
    usages: ["serverAuth"],
  });
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { namespace: "default", name: "tls" },
    data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
  };
  const dir = await Deno.makeTempDir({ prefix: "ic-annotations-ca-" });
  try {
    await Deno.writeTextFile(join(dir, "ca.pem"), ca.certPem);
    const hsts = { [`${A}hsts`]: "true", [`${A}hsts-max-age`]: "600", [`${A}hsts-include-subdomains`]: "true" };
    const objs = objects([web.port], {
      "a.example.com": { [`${A}ssl-redirect-code`]: "301", ...hsts, [`${A}hsts-preload`]: "true" },
      "b.example.com": {},
      "c.example.com": hsts, // no TLS: never an HSTS header on plain HTTP
    }, {
      tls: [{ hosts: ["a.example.com"], secretName: "tls" }, { hosts: ["b.example.com"], secretName: "tls" }],
      secrets: [secret],
    });
    const pem = `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n`;
    await withProxy(objs, { "default_tls.pem": pem }, async ({ http, https }) => {
      const a = await request(["-H", "Host: a.example.com", `http://127.0.0.1:${http}/x?y=1`]);
      assert.equal(a.status, 301);
      assert.equal(a.headers.location, "https://a.example.com/x?y=1");
      assert.equal((await request(["-H", "Host: b.example.com", `http://127.0.0.1:${http}/`])).status, 308);
      const tls = (host: string) =>
        request([
          "--resolve",
          `${host}:${https}:127.0.0.1`,
          "--cacert",
          join(dir, "ca.pem"),
          `https://${host}:${https}/`,
        ]);
      const sa = await tls("a.example.com");
      assert.equal(sa.backend, "web");
      assert.equal(sa.headers["strict-transport-security"], "max-age=600; includeSubDomains; preload");
      assert.equal((await tls("b.example.com")).headers["strict-transport-security"], undefined);
      const c = await request(["-H", "Host: c.example.com", `http://127.0.0.1:${http}/`]);
      assert.equal(c.backend, "web");
      assert.equal(c.headers["strict-transport-security"], undefined);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("redirect-to with its code, app-root", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "moved.example.com": {
      [`${A}redirect-to`]: "https://new.example.com/landing?from=old",
      [`${A}redirect-code`]: "301",
    },
    "temp.example.com": { [`${A}redirect-to`]: "https://new.example.com/" },
    "app.example.com": { [`${A}app-root`]: "/app" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const get = (host: string, path: string) => request(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const moved = await get("moved.example.com", "/anything");
    assert.deepEqual([moved.status, moved.headers.location], [301, "https://new.example.com/landing?from=old"]);
    assert.equal((await get("temp.example.com", "/")).status, 302);
    const root = await get("app.example.com", "/");
    assert.deepEqual([root.status, root.headers.location], [302, "http://app.example.com/app"]);
    assert.equal((await get("app.example.com", "/app")).backend, "web");
  });
});

Deno.test("max-body-size: 413 over the limit; allow-list and deny-list: 403", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "small.example.com": { [`${A}max-body-size`]: "1k" },
    "allowed.example.com": { [`${A}allow-list`]: "127.0.0.0/8, ::1" },
    "others.example.com": { [`${A}allow-list`]: "10.0.0.0/8, 2001:db8::/32" },
    "denied.example.com": { [`${A}deny-list`]: "192.0.2.0/24, 127.0.0.1" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const url = `http://127.0.0.1:${http}/`;
    const post = (n: number) => request(["-H", "Host: small.example.com", "--data-binary", "x".repeat(n), url]);
    assert.equal((await post(1024)).status, 200);
    assert.equal((await post(1025)).status, 413);
    assert.equal((await request(["-H", "Host: allowed.example.com", url])).status, 200);
    assert.equal((await request(["-H", "Host: others.example.com", url])).status, 403);
    assert.equal((await request(["-H", "Host: denied.example.com", url])).status, 403);
  });
});

Deno.test("rate limits per client address: 429 over the limit, never for the allow-list", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "limited.example.com": { [`${A}rate-limit-rpm`]: "5" },
    "trusted.example.com": { [`${A}rate-limit-rpm`]: "5", [`${A}rate-limit-allow-list`]: "127.0.0.1" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const codes = async (host: string) => {
      const out: number[] = [];
      for (let i = 0; i < 8; i++) {
        out.push((await request(["-H", `Host: ${host}`, `http://127.0.0.1:${http}/`])).status);
      }
      return out;
    };
    assert.deepEqual(await codes("limited.example.com"), [200, 200, 200, 200, 200, 429, 429, 429]);
    assert.deepEqual(await codes("trusted.example.com"), Array(8).fill(200));
  });
});

Deno.test("rate-limit-connections: 429 once a client has more requests in flight than the limit (as nginx's limit_conn)", async () => {
  const hanging = rawServer(null, true); // reads each request and never answers
  const objs = single("hang", hanging.port, "conns.example.com", { [`${A}rate-limit-connections`]: "2" });
  const conns: Deno.TcpConn[] = [];
  try {
    await withProxy(objs, {}, async ({ http }) => {
      const send = async () => {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port: http });
        conns.push(conn);
        await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: conns.example.com\r\n\r\n"));
        return conn;
      };
      await send();
      await send();
      // both requests are in flight once the backend has them (bounded wait for that event)
      for (let i = 0; i < 200 && hanging.firsts.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
      assert.equal(hanging.firsts.length, 2);
      const third = await send();
      const buf = new Uint8Array(8192);
      const n = await third.read(buf);
      assert.match(new TextDecoder().decode(buf.slice(0, n ?? 0)), /^HTTP\/1\.1 429 /);
      for (const c of conns.splice(0)) c.close();
    });
  } finally {
    for (const c of conns) c.close();
    await hanging.close();
  }
});

Deno.test("request and response headers: set, add, delete; one Ingress's settings never reach another's", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "h.example.com": {
      [`${A}request-headers-set`]: "X-Env: prod\nX-Team: blue # not a comment",
      [`${A}request-headers-add`]: "X-Extra: 1",
      [`${A}request-headers-delete`]: "X-Drop",
      [`${A}response-headers-set`]: "X-Frame-Options: DENY",
      [`${A}response-headers-add`]: "X-Served-By: ingress",
      [`${A}response-headers-delete`]: "Content-Type",
    },
    "plain.example.com": {},
  });
  await withProxy(objs, {}, async ({ http }) => {
    const get = (host: string) =>
      request(["-H", `Host: ${host}`, "-H", "X-Drop: secret", "-H", "X-Env: dev", `http://127.0.0.1:${http}/`]);
    const h = await get("h.example.com");
    assert.equal(h.received["x-env"], "prod");
    assert.equal(h.received["x-team"], "blue # not a comment");
    assert.equal(h.received["x-extra"], "1");
    assert.equal(h.received["x-drop"], undefined);
    assert.equal(h.headers["x-frame-options"], "DENY");
    assert.equal(h.headers["x-served-by"], "ingress");
    assert.equal(h.headers["content-type"], undefined);
    const plain = await get("plain.example.com");
    assert.deepEqual([plain.received["x-env"], plain.received["x-drop"]], ["dev", "secret"]);
    assert.equal(plain.headers["x-frame-options"], undefined);
    assert.equal(plain.headers["content-type"], "application/json");
  });
});

Deno.test("CORS: preflight answered with 204 and the headers; allowed origins echoed, others not", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "cors.example.com": {
      [`${A}cors-enable`]: "true",
      [`${A}cors-allow-origin`]: "https://app.example.com, https://*.example.org",
      [`${A}cors-allow-methods`]: "GET, POST",
      [`${A}cors-allow-headers`]: "Authorization, X-Custom",
      [`${A}cors-expose-headers`]: "X-Total",
      [`${A}cors-max-age`]: "600",
    },
    "any.example.com": { [`${A}cors-enable`]: "true", [`${A}cors-allow-credentials`]: "false" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const url = `http://127.0.0.1:${http}/api`;
    const preflight = (host: string, origin: string) =>
      request([
        "-X",
        "OPTIONS",
        "-H",
        `Host: ${host}`,
        "-H",
        `Origin: ${origin}`,
        "-H",
        "Access-Control-Request-Method: POST",
        url,
      ]);
    const p = await preflight("cors.example.com", "https://app.example.com");
    assert.equal(p.status, 204);
    assert.equal(p.backend, null);
    assert.equal(p.headers["access-control-allow-origin"], "https://app.example.com");
    assert.equal(p.headers["access-control-allow-methods"], "GET, POST");
    assert.equal(p.headers["access-control-allow-headers"], "Authorization, X-Custom");
    assert.equal(p.headers["access-control-allow-credentials"], "true");
    assert.equal(p.headers["access-control-max-age"], "600");
    const w = await preflight("cors.example.com", "https://x.example.org");
    assert.equal(w.headers["access-control-allow-origin"], "https://x.example.org");
    const other = await preflight("cors.example.com", "https://evil.example.net");
    assert.equal(other.backend, "web"); // not a CORS request of an allowed origin: proxied, no CORS headers
    assert.equal(other.headers["access-control-allow-origin"], undefined);
    const get = await request(["-H", "Host: cors.example.com", "-H", "Origin: https://app.example.com", url]);
    assert.equal(get.backend, "web");
    assert.equal(get.headers["access-control-allow-origin"], "https://app.example.com");
    assert.equal(get.headers["access-control-expose-headers"], "X-Total");
    const any = await preflight("any.example.com", "https://whoever.example");
    assert.deepEqual([any.status, any.headers["access-control-allow-origin"]], [204, "*"]);
  });
});

Deno.test("sticky cookie pins a client to one server; without it requests spread", async () => {
  await using one = await startBackend({ name: "one" });
  await using two = await startBackend({ name: "two" });
  const objs = objects([one.port, two.port], {
    "sticky.example.com": {
      [`${A}sticky-cookie`]: "true",
      [`${A}sticky-cookie-name`]: "route",
      [`${A}sticky-cookie-max-age`]: "1h",
      [`${A}sticky-cookie-secure`]: "true",
      [`${A}sticky-cookie-samesite`]: "Lax",
    },
    "spread.example.com": { [`${A}load-balance`]: "roundrobin" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const url = `http://127.0.0.1:${http}/`;
    const first = await request(["-H", "Host: sticky.example.com", url]);
    const cookie = first.headers["set-cookie"];
    // after the server's id, HAProxy's max-age dates: its base64 alphabet has `+` and `/` too
    assert.match(cookie, /^route=[0-9a-f]+(\|[A-Za-z0-9+/]+)*; path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=3600$/);
    const seen = new Set<string | null>();
    for (let i = 0; i < 10; i++) {
      seen.add(
        (await request(["-H", "Host: sticky.example.com", "-H", `Cookie: ${cookie.split(";")[0]}`, url])).backend,
      );
    }
    assert.deepEqual([...seen], [first.backend]);
    const spread = new Set<string | null>();
    for (let i = 0; i < 4; i++) spread.add((await request(["-H", "Host: spread.example.com", url])).backend);
    assert.deepEqual([...spread].sort(), ["one", "two"]);
  });
});

Deno.test("rewrite-target replaces the route's prefix", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "root.example.com": { [`${A}rewrite-target`]: "/" },
    "v2.example.com": { [`${A}rewrite-target`]: "/v2/" },
  }, { path: "/api" });
  await withProxy(objs, {}, async ({ http }) => {
    const get = async (host: string, path: string) =>
      (await request(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`])).target;
    assert.equal(await get("root.example.com", "/api/users?id=1"), "/users?id=1");
    assert.equal(await get("root.example.com", "/api"), "/");
    assert.equal(await get("v2.example.com", "/api/users"), "/v2/users");
    assert.equal(await get("v2.example.com", "/api"), "/v2");
  });
});

/**
 * A loopback TCP server that records the first bytes of each connection and hands the connection
 * and those bytes to `handle`; `close` waits for what `handle` started and closes every connection.
 */
function recordingServer(handle: (conn: Deno.Conn, first: Uint8Array) => Promise<unknown>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const firsts: Uint8Array[] = [];
  const conns: Deno.Conn[] = [];
  const pending: Promise<unknown>[] = [];
  const done = (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      const buf = new Uint8Array(4096);
      const n = await conn.read(buf).catch(() => null);
      const first = buf.slice(0, n ?? 0);
      if (n) firsts.push(first);
      pending.push(handle(conn, first).catch(() => {}));
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    firsts,
    async close() {
      listener.close();
      await done;
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await Promise.all(pending);
    },
  };
}

/** A server that answers `answer` (or nothing) to each connection, then closes it unless `keepOpen`. */
function rawServer(answer: string | null, keepOpen = false) {
  return recordingServer(async (conn) => {
    if (answer === null) return;
    await conn.write(new TextEncoder().encode(answer));
    if (!keepOpen) conn.close();
  });
}

Deno.test("backend PROXY protocol v2 header on every connection; timeout-server and timeout-sse give 504", async () => {
  const pp = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
  const silent = rawServer(null);
  try {
    const objs = {
      ingresses: [
        ingress({
          name: "pp",
          annotations: { [`${A}backend-proxy-protocol`]: "v2" },
          rules: [{ host: "pp.example.com", paths: [{ path: "/", service: "pp", port: 80 }] }],
        }),
        ingress({
          name: "slow",
          annotations: { [`${A}timeout-server`]: "300ms" },
          rules: [{ host: "slow.example.com", paths: [{ path: "/", service: "silent", port: 80 }] }],
        }),
        ingress({
          name: "events",
          annotations: { [`${A}timeout-sse`]: "300ms" },
          rules: [{ host: "events.example.com", paths: [{ path: "/", service: "silent", port: 80 }] }],
        }),
      ],
      lookup: lookupFromLists({
        services: [service("pp", [{ port: 80 }]), service("silent", [{ port: 80 }])],
        endpointSlices: [
          endpointSlice("pp", [{ name: "", port: pp.port }], [{ address: "127.0.0.1" }]),
          endpointSlice("silent", [{ name: "", port: silent.port }], [{ address: "127.0.0.1" }]),
        ],
      }),
    };
    await withProxy(objs, {}, async ({ http }) => {
      const r = await request(["-H", "Host: pp.example.com", `http://127.0.0.1:${http}/`]);
      assert.equal(r.status, 200);
      const sig = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
      assert.deepEqual([...pp.firsts[0].slice(0, 12)], sig);
      assert.equal((await request(["-H", "Host: slow.example.com", `http://127.0.0.1:${http}/`])).status, 504);
      // timeout-sse: the server timeout of event-stream requests only (the defaults' 60 s would outlast curl's 10 s)
      const sse = ["-H", "Host: events.example.com", "-H", "Accept: text/event-stream", `http://127.0.0.1:${http}/`];
      assert.equal((await request(sse)).status, 504);
    });
  } finally {
    await pp.close();
    await silent.close();
  }
});

Deno.test("bad values: a Warning problem naming the key, the key ignored for that Ingress only", () => {
  const objs = objects([8080], {
    "bad.example.com": {
      [`${A}max-body-size`]: "1k\n    http-request deny",
      [`${A}response-headers-set`]: "X-A: 'quoted'",
      [`${A}hsts`]: "true",
    },
    "good.example.com": { [`${A}max-body-size`]: "1k" },
  });
  const { model, problems } = buildModel({ ...objs, allowLoopbackEndpoints: true });
  const messages = problems.map((p) => `${p.object} ${p.reason}: ${p.message}`);
  assert.equal(messages.length, 2, messages.join("\n"));
  assert.match(messages[0], /^default\/ing-0 InvalidAnnotation: annotation ingress-controller.io\/max-body-size: /);
  assert.match(messages[1], /response-headers-set: .*ignored$/);
  const bad = model.backends.find((b) => b.name === model.routes.find((r) => r.host === "bad.example.com")!.backend)!;
  assert.equal(bad.settings?.maxBody, null);
  assert.ok(bad.settings?.hsts, "the Ingress's other keys still apply");
  const good = model.backends.find((b) => b.name === model.routes.find((r) => r.host === "good.example.com")!.backend)!;
  assert.equal(good.settings?.maxBody, 1024);
});

/** A TCP relay to `target` that records the first bytes of each connection (what protocol the proxy spoke). */
function recordingRelay(target: number) {
  return recordingServer(async (conn, first) => {
    const up = await Deno.connect({ hostname: "127.0.0.1", port: target });
    await up.write(first);
    await Promise.all([
      conn.readable.pipeTo(up.writable).catch(() => {}),
      up.readable.pipeTo(conn.writable).catch(() => {}),
    ]);
  });
}

Deno.test("backend-protocol h2: the proxy speaks HTTP/2 (prior knowledge) to the backend, end to end", async () => {
  await using web = await startBackend({ name: "h2web" });
  const relay = recordingRelay(web.port);
  try {
    const objs = single("grpc", relay.port, "grpc.example.com", { [`${A}backend-protocol`]: "h2" });
    await withProxy(objs, {}, async ({ http }) => {
      const r = await request([
        "--http2-prior-knowledge",
        "-H",
        "Host: grpc.example.com",
        "-H",
        "Content-Type: application/grpc",
        `http://127.0.0.1:${http}/pkg.Service/Method`,
      ]);
      assert.equal(r.status, 200);
      assert.equal(r.backend, "h2web");
      assert.equal(r.received["content-type"], "application/grpc");
      assert.equal(new TextDecoder().decode(relay.firsts[0].slice(0, 24)), "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    });
  } finally {
    await relay.close();
  }
});

Deno.test("timeout-tunnel: an idle upgraded (websocket) connection is closed after the Ingress's tunnel timeout", async () => {
  const ws = rawServer(
    // the accept value of RFC 6455's sample key, which the request below sends (HAProxy checks it)
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
    true,
  );
  try {
    const objs = single("ws", ws.port, "ws.example.com", { [`${A}timeout-tunnel`]: "300ms" });
    await withProxy(objs, {}, async ({ http }) => {
      using conn = await Deno.connect({ hostname: "127.0.0.1", port: http });
      await conn.write(new TextEncoder().encode(
        "GET /chat HTTP/1.1\r\nHost: ws.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      ));
      const buf = new Uint8Array(4096);
      const n = await conn.read(buf);
      assert.match(new TextDecoder().decode(buf.slice(0, n ?? 0)), /^HTTP\/1\.1 101 /);
      // the proxy closes the idle tunnel (the defaults would keep it for 60 s; the guard only bounds a failure)
      let guard: ReturnType<typeof setTimeout> | undefined;
      const closed = await Promise.race([
        conn.read(buf).then((r) => r === null ? "closed" : "data", () => "closed"),
        new Promise<string>((resolve) => guard = setTimeout(() => resolve("still open after 15 s"), 15_000)),
      ]);
      clearTimeout(guard);
      assert.equal(closed, "closed");
    });
  } finally {
    await ws.close();
  }
});

Deno.test("two Ingresses sharing a Service with different settings get two backends; no settings: the plain one", () => {
  const objs = objects([8080], {
    "a.example.com": { [`${A}timeout-server`]: "5s", [`${A}load-balance`]: "leastconn" },
    "b.example.com": { [`${A}timeout-server`]: "90s" },
    "c.example.com": {},
    "d.example.com": { [`${A}timeout-server`]: "90s" },
  });
  const { model, problems } = buildModel({ ...objs, allowLoopbackEndpoints: true });
  assert.deepEqual(problems, []);
  const be = (host: string) =>
    model.backends.find((b) => b.name === model.routes.find((r) => r.host === host)!.backend)!;
  assert.deepEqual([be("a.example.com").timeoutServer, be("a.example.com").balance], ["5s", "leastconn"]);
  assert.deepEqual([be("b.example.com").timeoutServer, be("b.example.com").balance], ["90s", "roundrobin"]);
  assert.equal(be("c.example.com").name, "be_default_web_80");
  assert.equal(be("c.example.com").timeoutServer, null);
  assert.equal(be("d.example.com").name, be("b.example.com").name, "equal settings share one variant");
  assert.match(be("a.example.com").name, /^be_default_web_80_[0-9a-f]{10}$/);
  assert.equal(model.backends.length, 3);
});

/** Services `main` and `next`, each with one endpoint on loopback at its port. */
function mainAndNext(mainPort: number, nextPort: number) {
  return lookupFromLists({
    services: [service("main", [{ port: 80 }]), service("next", [{ port: 80 }])],
    endpointSlices: [
      endpointSlice("main", [{ name: "", port: mainPort }], [{ address: "127.0.0.1" }]),
      endpointSlice("next", [{ name: "", port: nextPort }], [{ address: "127.0.0.1" }]),
    ],
  });
}

Deno.test("canary: weight within ±5% over 2,000 requests, header and cookie override it, other routes untouched", async () => {
  await using main = await startBackend({ name: "main" });
  await using next = await startBackend({ name: "next" });
  const route = (name: string, host: string, svc: string, annotations: Record<string, string> = {}) =>
    ingress({ name, annotations, rules: [{ host, paths: [{ path: "/", service: svc, port: 80 }] }] });
  const objs = {
    ingresses: [
      route("main", "shop.example.com", "main"),
      route("canary", "shop.example.com", "next", {
        [`${A}canary`]: "true",
        [`${A}canary-weight`]: "20",
        [`${A}canary-header`]: "X-Canary",
        [`${A}canary-cookie`]: "canary",
      }),
      route("other", "other.example.com", "main"), // same Service, no canary
    ],
    lookup: mainAndNext(main.port, next.port),
  };
  await withProxy(objs, {}, async ({ http: port }) => {
    const { get, close } = backendNames("127.0.0.1", port);
    try {
      let canary = 0;
      for (let i = 0; i < 2000; i++) if (await get("shop.example.com") === "next") canary++;
      assert.ok(canary >= 300 && canary <= 500, `${canary} of 2,000 to the canary (want 400 ± 100)`);
      for (let i = 0; i < 20; i++) {
        assert.equal(await get("shop.example.com", { "x-canary": "always" }), "next");
        assert.equal(await get("shop.example.com", { "x-canary": "never", cookie: "canary=always" }), "main");
        assert.equal(await get("shop.example.com", { cookie: "canary=always" }), "next");
        assert.equal(await get("shop.example.com", { cookie: "canary=never" }), "main");
        assert.equal(await get("other.example.com", { "x-canary": "always" }), "main");
      }
    } finally {
      close();
    }
  });
});

Deno.test("canary: a header value of } (the word that ends HAProxy's inline conditions) routes as any other", async () => {
  await using main = await startBackend({ name: "main" });
  await using next = await startBackend({ name: "next" });
  const route = (name: string, svc: string, annotations: Record<string, string> = {}) =>
    ingress({
      name,
      annotations,
      rules: [{ host: "shop.example.com", paths: [{ path: "/", service: svc, port: 80 }] }],
    });
  const objs = {
    ingresses: [
      route("main", "main"),
      route("canary", "next", {
        [`${A}canary`]: "true",
        [`${A}canary-header`]: "X-Canary",
        [`${A}canary-header-value`]: "}",
      }),
    ],
    lookup: mainAndNext(main.port, next.port),
  };
  await withProxy(objs, {}, async ({ http: port }) => {
    const { get, close } = backendNames("127.0.0.1", port);
    try {
      assert.equal(await get("shop.example.com", { "x-canary": "}" }), "next");
      assert.equal(await get("shop.example.com", { "x-canary": "}}" }), "main");
      assert.equal(await get("shop.example.com"), "main");
    } finally {
      close();
    }
  });
});

Deno.test("canary without a main route, or a second canary of a route: a problem, ignored", () => {
  const objs = objects([8080], { "a.example.com": {} });
  const lone = ingress({
    name: "lone",
    annotations: { [`${A}canary`]: "true" },
    rules: [{ host: "b.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
  });
  const twice = (name: string, created: string) =>
    ingress({
      name,
      created,
      annotations: { [`${A}canary`]: "true", [`${A}canary-weight`]: "10" },
      rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    });
  const { model, problems } = buildModel({
    ingresses: [...objs.ingresses, lone, twice("c1", "2026-01-02T00:00:00Z"), twice("c2", "2026-01-03T00:00:00Z")],
    lookup: objs.lookup,
    allowLoopbackEndpoints: true,
  });
  assert.deepEqual(problems.map((p) => `${p.object} ${p.reason}`), [
    "default/lone CanaryWithoutMain",
    "default/c2 CanaryConflict",
  ]);
  assert.equal(model.routes.length, 1);
  assert.equal(model.canaries?.length, 1);
});

Deno.test("backend-protocol h1-tls and h2-tls: TLS to the backend with SNI; a CA Secret makes verification fail closed", async () => {
  const ca = await createCA({ commonName: "backend-ca" });
  const leaf = await issueCertificate(ca, {
    commonName: "api.internal",
    dnsNames: ["api.internal"],
    usages: ["serverAuth"],
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: leaf.certPem, key: leaf.keyPem, onListen: () => {} },
    (req) =>
      Response.json({ name: "tls", headers: Object.fromEntries(req.headers), target: new URL(req.url).pathname }),
  );
  try {
    const port = server.addr.port;
    const objs = (host: string, annotations: Record<string, string>) =>
      single("secure", port, host, { ...annotations, [`${A}backend-sni`]: "api.internal" });
    for (const protocol of ["h1-tls", "h2-tls"]) {
      await withProxy(objs("t.example.com", { [`${A}backend-protocol`]: protocol }), {}, async ({ http }) => {
        const r = await request(["-H", "Host: t.example.com", `http://127.0.0.1:${http}/x`]);
        assert.deepEqual([r.status, r.backend], [200, "tls"], protocol);
      });
    }
    const verified = objs("v.example.com", {
      [`${A}backend-protocol`]: "h1-tls",
      [`${A}backend-ca-secret`]: "backend-ca",
    });
    const { problems } = buildModel({ ...verified, allowLoopbackEndpoints: true });
    assert.match(
      problems[0]?.message ?? "",
      /backend-ca-secret: Secret default\/backend-ca not found; every request gets 503/,
    );
    await withProxy(verified, {}, async ({ http }) => {
      // no CA to verify with: the proxy refuses the backend (no silent downgrade; tests/render/annotations_auth_test.ts)
      assert.equal((await request(["-H", "Host: v.example.com", `http://127.0.0.1:${http}/x`])).status, 503);
    }, { allowProblems: true });
  } finally {
    await server.shutdown();
  }
});

Deno.test("www-redirect: the www twin redirects to the host and the bare twin to the www host; routed twins are kept", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = objects([web.port], {
    "example.com": { [`${A}www-redirect`]: "true" },
    "www.shop.example": { [`${A}www-redirect`]: "true" },
    "blog.example": { [`${A}www-redirect`]: "true" },
    "www.blog.example": {}, // routed itself: not redirected
  });
  await withProxy(objs, {}, async ({ http }) => {
    const get = (host: string, path: string) => request(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    const a = await get("www.example.com", "/a/b?c=1");
    assert.deepEqual([a.status, a.headers.location], [308, "http://example.com/a/b?c=1"]);
    const b = await get("shop.example", "/");
    assert.deepEqual([b.status, b.headers.location], [308, "http://www.shop.example/"]);
    assert.equal((await get("example.com", "/")).backend, "web");
    assert.equal((await get("www.blog.example", "/")).backend, "web");
  });
});
