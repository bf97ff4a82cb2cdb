/**
 * Frontend-level settings change real traffic through a real haproxy: `ssl-passthrough` (a TLS
 * backend's own certificate reaches the client, other hosts keep the proxy's certificate and HTTP
 * routing, with the client's address), `accept-proxy-protocol` (a PROXY v2 header is read from
 * trusted sources only) and the class's `timeout-http-request` (a slow client gets 408).
 */
import assert from "node:assert/strict";
import net from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import { Buffer } from "node:buffer";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { DEFAULT_PROXY_OPTIONS, type ProxyOptions } from "../../lib/render/proxy_options.ts";
import { parseCidr } from "../../lib/annotations/values.ts";
import { defaultGlobalSettings, parseGlobalSettings } from "../../lib/controller/global_settings.ts";
import { ingress, loopbackServices, pemFile, realTlsSecret } from "./fixtures.ts";
import { withProxy } from "./live.ts";
import { buildModel } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { MAP_FILES } from "../../lib/render/maps.ts";
import type { DesiredState } from "../../lib/proxy/apply.ts";
import { proxyUnderTest, workerPid } from "../proxy/fixtures.ts";

const A = "ingress-controller.io/";

/** A TLS server on loopback with its own certificate, answering every request with its name. */
function startTlsBackend(name: string, cert: { certPem: string; keyPem: string }) {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: cert.certPem, key: cert.keyPem, signal: ac.signal, onListen: () => {} },
    (req) => Response.json({ name, host: req.headers.get("host") }),
  );
  return {
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      ac.abort();
      await server.finished;
    },
  };
}

interface TlsAnswer {
  /** The common name of the certificate the client was shown. */
  peer: string;
  alpn: string | false | null;
  /** The HTTP answer: status line and body. */
  status: string;
  body: Record<string, unknown>;
}

/**
 * One HTTP/1.1 request over TLS to 127.0.0.1:`port` with SNI `servername`, trusting `ca` only (so
 * the handshake itself fails if another certificate is shown); `socket` is an already open
 * connection (after a PROXY header) to run TLS on.
 */
function tlsGet(
  port: number,
  servername: string,
  ca: string,
  socket?: net.Socket,
  host = "127.0.0.1",
): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    let peer: string | null = null;
    const s = tls.connect({ host, port, servername, ca, socket, ALPNProtocols: ["http/1.1"] }, () => {
      peer = String(s.getPeerCertificate().subject?.CN);
      s.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("end", () => {
      if (peer === null) {
        reject(new Error("connection closed before the TLS handshake"));
        s.destroy();
        return;
      }
      const text = Buffer.concat(chunks).toString();
      const cut = text.indexOf("\r\n\r\n");
      const head = text.slice(0, cut);
      let body = text.slice(cut + 4);
      if (/transfer-encoding: chunked/i.test(head)) {
        body = body.replace(/^[0-9a-f]+\r\n/, "").replace(/\r\n0\r\n\r\n$/, "");
      }
      resolve({
        peer,
        alpn: s.alpnProtocol,
        status: head.split("\r\n")[0],
        body: JSON.parse(body),
      });
      s.destroy();
    });
  });
}

/** A raw connection from `localAddress` to 127.0.0.1:`port`; resolves once connected. */
function connectFrom(localAddress: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: "127.0.0.1", port, localAddress }, () => resolve(s));
    s.on("error", reject);
  });
}

/**
 * A connection to 127.0.0.1:`port` whose first write (a TLS ClientHello) reaches the peer in two
 * TCP segments 100 ms apart, as a large hello over a real network does.
 */
async function splitHelloSocket(port: number): Promise<Duplex> {
  const inner = await connectFrom("127.0.0.1", port);
  inner.setNoDelay(true);
  let first = true;
  const outer = new Duplex({
    write(chunk: Buffer, _encoding, done) {
      if (!first) return inner.write(chunk, done);
      first = false;
      inner.write(chunk.subarray(0, 16));
      setTimeout(() => inner.write(chunk.subarray(16), done), 100);
    },
    read() {},
    final(done) {
      inner.end(done);
    },
  });
  inner.on("data", (c: Buffer) => outer.push(c));
  inner.on("end", () => outer.push(null));
  inner.on("error", (e) => outer.destroy(e));
  return outer;
}

/** Writes `data` (if any) and reads until the peer closes. */
function exchange(s: net.Socket, data: string | Uint8Array | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("close", () => resolve(Buffer.concat(chunks).toString()));
    if (data !== null) s.write(data);
  });
}

/** A PROXY protocol v2 header (PROXY command, TCP over IPv4) claiming `src`:`srcPort` → `dst`:`dstPort`. */
function proxyV2(src: string, srcPort: number, dst: string, dstPort: number): Uint8Array {
  const sig = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  const ip = (a: string) => a.split(".").map(Number);
  return new Uint8Array([
    ...sig,
    0x21, // version 2, PROXY
    0x11, // AF_INET, STREAM
    0x00,
    12,
    ...ip(src),
    ...ip(dst),
    srcPort >> 8,
    srcPort & 0xff,
    dstPort >> 8,
    dstPort & 0xff,
  ]);
}

/** The JSON answer of a test backend in an HTTP/1.1 response (Content-Length bodies). */
function answerOf(response: string): { status: number; body: { name?: string; headers?: Record<string, string> } } {
  const cut = response.indexOf("\r\n\r\n");
  const status = Number(response.slice(0, cut).split(" ")[1]);
  let body = {};
  try {
    body = JSON.parse(response.slice(cut + 4));
  } catch { /* haproxy answered */ }
  return { status, body };
}

/** One Ingress routing web.example.com to Service `web`, whose one endpoint is 127.0.0.1:`port`. */
function webOnly(port: number) {
  return {
    ingresses: [
      ingress({ name: "web", rules: [{ host: "web.example.com", paths: [{ path: "/", service: "web", port: 80 }] }] }),
    ],
    lookup: lookupFromLists(loopbackServices([{ name: "web", servicePort: 80, port }])),
  };
}

function cidrs(...list: string[]) {
  return list.map((c) => parseCidr(c)!);
}

Deno.test("ssl-passthrough: the TLS backend's own certificate reaches the client; other hosts keep the proxy's TLS and HTTP routing", async () => {
  const backendCa = await createCA({ commonName: "backend-ca" });
  const proxyCa = await createCA({ commonName: "proxy-ca" });
  const backendLeaf = await issueCertificate(backendCa, {
    commonName: "pass.example.com",
    dnsNames: ["pass.example.com", "x.wild.example.com"],
    usages: ["serverAuth"],
  });
  const proxyLeaf = await issueCertificate(proxyCa, {
    commonName: "web.example.com",
    dnsNames: ["web.example.com", "pass.example.com"],
    usages: ["serverAuth"],
  });
  await using secure = startTlsBackend("secure", backendLeaf);
  await using web = await startBackend({ name: "web" });
  const objs = {
    ingresses: [
      ingress({
        name: "pass",
        annotations: { [`${A}ssl-passthrough`]: "true" },
        rules: [
          { host: "pass.example.com", paths: [{ path: "/", service: "secure", port: 443 }] },
          { host: "*.wild.example.com", paths: [{ path: "/", service: "secure", port: 443 }] },
        ],
      }),
      ingress({
        name: "web",
        tls: [{ hosts: ["web.example.com"], secretName: "tls" }],
        rules: [{ host: "web.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
    ],
    lookup: lookupFromLists({
      ...loopbackServices([
        { name: "secure", servicePort: 443, port: secure.port },
        { name: "web", servicePort: 80, port: web.port },
      ]),
      secrets: [realTlsSecret("tls", proxyLeaf)],
    }),
  };
  const pem = pemFile(proxyLeaf);
  await withProxy(objs, { "default_tls.pem": pem }, async ({ https, reload, output }) => {
    // the backend's certificate (trusting the backend's CA only), and its own HTTP answer
    const pass = await tlsGet(https, "pass.example.com", backendCa.certPem);
    assert.deepEqual([pass.peer, pass.status, pass.body.name], ["pass.example.com", "HTTP/1.1 200 OK", "secure"]);
    // a ClientHello in two segments is read whole before the SNI is looked up
    const split = await tlsGet(
      https,
      "pass.example.com",
      backendCa.certPem,
      await splitHelloSocket(https) as net.Socket,
    );
    assert.deepEqual([split.peer, split.body.name], ["pass.example.com", "secure"]);
    const wild = await tlsGet(https, "x.wild.example.com", backendCa.certPem);
    assert.equal(wild.body.name, "secure");
    // the proxy's certificate would not do for a passthrough host
    await assert.rejects(tlsGet(https, "pass.example.com", proxyCa.certPem), /certificate/i);
    // another host: the proxy's certificate, HTTP routing, and the client's address in X-Forwarded-For
    const other = await tlsGet(https, "web.example.com", proxyCa.certPem);
    assert.deepEqual([other.peer, other.status, other.body.name], ["web.example.com", "HTTP/1.1 200 OK", "web"]);
    assert.equal((other.body.headers as Record<string, string>)["x-forwarded-for"], "127.0.0.1");
    assert.equal((other.body.headers as Record<string, string>)["x-forwarded-proto"], "https");
    // one access log line per passed-through connection, from the SNI frontend (the others' requests: https)
    const logged = async () =>
      (await output()).split("\n").filter((l) => l.includes(`"frontend":"https_sni"`)).map((l) => JSON.parse(l));
    // haproxy writes its log lines as the connections end: wait (bounded) for both frontends' lines
    const webLine = `"frontend":"https","method":"GET","host":"web.example.com"`;
    for (let i = 0; i < 100 && ((await logged()).length < 2 || !(await output()).includes(webLine)); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const lines = await logged();
    assert.ok(lines.every((l) => l.backend === "be_default_secure_443_tcp"), JSON.stringify(lines));
    assert.deepEqual(lines.map((l) => l.sni).sort().slice(0, 2), ["pass.example.com", "pass.example.com"]);
    assert.ok((await output()).includes(webLine));
    // a reload hands the port and the local socket over to the new worker
    await reload();
    assert.equal((await tlsGet(https, "pass.example.com", backendCa.certPem)).body.name, "secure");
    assert.equal((await tlsGet(https, "web.example.com", proxyCa.certPem)).body.name, "web");
  });
  // with accept-proxy-protocol, a load balancer's PROXY v2 header is read by the SNI frontend and the address it
  // carries reaches the HTTPS frontend (through the local socket's own PROXY header) and the passthrough backend's route
  const proxy: ProxyOptions = { ...DEFAULT_PROXY_OPTIONS, acceptProxy: cidrs("127.0.0.2") };
  await withProxy(objs, { "default_tls.pem": pem }, async ({ https }) => {
    const behindBalancer = async (servername: string, ca: string) => {
      const socket = await connectFrom("127.0.0.2", https);
      socket.write(proxyV2("198.51.100.9", 50000, "127.0.0.1", https));
      return tlsGet(https, servername, ca, socket);
    };
    const other = await behindBalancer("web.example.com", proxyCa.certPem);
    assert.equal((other.body.headers as Record<string, string>)["x-forwarded-for"], "198.51.100.9");
    const pass = await behindBalancer("pass.example.com", backendCa.certPem);
    assert.deepEqual([pass.peer, pass.body.name], ["pass.example.com", "secure"]);
  }, { proxy });
});

Deno.test("ssl-passthrough without any certificate of the proxy: passthrough hosts only, other TLS connections closed", async () => {
  const backendCa = await createCA({ commonName: "backend-ca" });
  const leaf = await issueCertificate(backendCa, {
    commonName: "pass.example.com",
    dnsNames: ["pass.example.com"],
    usages: ["serverAuth"],
  });
  await using secure = startTlsBackend("secure", leaf);
  const objs = {
    ingresses: [ingress({
      name: "pass",
      annotations: { [`${A}ssl-passthrough`]: "true" },
      rules: [{ host: "pass.example.com", paths: [{ path: "/", service: "secure", port: 443 }] }],
    })],
    lookup: lookupFromLists(loopbackServices([{ name: "secure", servicePort: 443, port: secure.port }])),
  };
  await withProxy(objs, {}, async ({ https }) => {
    assert.equal((await tlsGet(https, "pass.example.com", backendCa.certPem)).body.name, "secure");
    await assert.rejects(
      tlsGet(https, "other.example.com", backendCa.certPem),
      /before the TLS handshake|socket disconnected|ECONNRESET/,
    );
  });
});

Deno.test("accept-proxy-protocol: a PROXY v2 header from a trusted source sets the client address; from others it is not read", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = webOnly(web.port);
  const proxy: ProxyOptions = { ...DEFAULT_PROXY_OPTIONS, acceptProxy: cidrs("127.0.0.2/32", "10.0.0.0/8") };
  const get = "GET / HTTP/1.1\r\nHost: web.example.com\r\nConnection: close\r\n\r\n";
  await withProxy(objs, {}, async ({ http }) => {
    const header = proxyV2("203.0.113.7", 40000, "127.0.0.1", http);
    const withHeader = (from: string) =>
      connectFrom(from, http).then((s) => exchange(s, new Uint8Array([...header, ...new TextEncoder().encode(get)])));
    const trusted = answerOf(await withHeader("127.0.0.2"));
    assert.equal(trusted.status, 200);
    assert.equal(trusted.body.headers?.["x-forwarded-for"], "203.0.113.7");
    // an untrusted source's header is not read: its bytes are a bad request
    assert.equal(answerOf(await withHeader("127.0.0.3")).status, 400);
    const plain = answerOf(await connectFrom("127.0.0.3", http).then((s) => exchange(s, get)));
    assert.equal(plain.body.headers?.["x-forwarded-for"], "127.0.0.3");
  }, { proxy });
});

Deno.test("timeout-http-request: a client slower than the class's timeout with its headers gets 408", async () => {
  await using web = await startBackend({ name: "web" });
  const objs = webOnly(web.port);
  // the class's parameters ConfigMap overrides the global one (lib/controller/global_settings.ts)
  const global = parseGlobalSettings({ "timeout-http-request": "20s" }, defaultGlobalSettings, "global", "ops");
  const cls = parseGlobalSettings({ "timeout-http-request": "300ms" }, global.settings, "class", "ops");
  assert.deepEqual([...global.problems, ...cls.problems], []);
  const proxy: ProxyOptions = { ...cls.settings.proxy, defaultCertificate: null };
  await withProxy(objs, {}, async ({ http }) => {
    // the headers never end: haproxy answers when the request timeout fires
    const slow = await connectFrom("127.0.0.1", http).then((s) =>
      exchange(s, "GET / HTTP/1.1\r\nHost: web.example.com\r\n")
    );
    assert.match(slow, /^HTTP\/1\.[01] 408 /);
    const complete = answerOf(
      await connectFrom("127.0.0.1", http).then((s) =>
        exchange(s, "GET / HTTP/1.1\r\nHost: web.example.com\r\nConnection: close\r\n\r\n")
      ),
    );
    assert.equal(complete.body.name, "web");
  }, { proxy });
});

Deno.test("ssl-passthrough through the proxy's applier: another host and an endpoint move are Runtime API changes", async () => {
  const ca = await createCA({ commonName: "backend-ca" });
  const leaf = (name: string) =>
    issueCertificate(ca, { commonName: name, dnsNames: ["a.example.com", "b.example.com"], usages: ["serverAuth"] });
  await using first = startTlsBackend("first", await leaf("first"));
  await using second = startTlsBackend("second", await leaf("second"));
  const templates = await loadTemplates(null);
  const state = (hosts: string[], port: number): DesiredState => {
    const { model, problems } = buildModel({
      ingresses: [ingress({
        name: "pass",
        annotations: { [`${A}ssl-passthrough`]: "true" },
        rules: hosts.map((host) => ({ host, paths: [{ path: "/", service: "secure", port: 443 }] })),
      })],
      lookup: lookupFromLists(loopbackServices([{ name: "secure", servicePort: 443, port }])),
      allowLoopbackEndpoints: true,
    });
    assert.deepEqual(problems, []);
    const r = render(model, templates);
    return {
      config: r.config,
      crtList: r.crtList,
      pems: new Map(),
      maps: new Map(MAP_FILES.map((f) => [f, r.maps[f]])),
    };
  };
  await using p = await proxyUnderTest();
  const get = (host: string) => tlsGet(p.httpsPort, host, ca.certPem, undefined, p.bind);
  const start = await p.applier.apply(state(["a.example.com"], first.port));
  assert.ok(start.ok, start.error ?? "");
  const pid = await workerPid(p.haproxy);
  assert.deepEqual([(await get("a.example.com")).peer, (await get("a.example.com")).body.name], ["first", "first"]);
  const more = await p.applier.apply(state(["a.example.com", "b.example.com"], first.port));
  // passthrough.map, and routes-prefix.map for the HTTP route of the new host
  assert.deepEqual([more.kind, more.ok, more.mapsChanged], ["runtime", true, 2], more.error ?? "");
  assert.equal((await get("b.example.com")).body.name, "first");
  const moved = await p.applier.apply(state(["a.example.com", "b.example.com"], second.port));
  // one slot in the HTTP backend, one in its mode tcp copy
  assert.deepEqual([moved.kind, moved.ok, moved.serversChanged], ["runtime", true, 2], moved.error ?? "");
  assert.deepEqual([(await get("b.example.com")).peer, (await get("a.example.com")).body.name], ["second", "second"]);
  assert.equal(await workerPid(p.haproxy), pid, "no reload");
});
