/**
 * External authentication through a real haproxy (`auth-url`, `auth-signin`, `auth-response-headers`;
 * the Lua action of templates/ic_ext_auth.lua): an auth service on loopback answers 200 with
 * `X-Auth-Request-User: alice` for the cookie `session=ok`, 403 for `session=banned`, 401 with a
 * challenge otherwise; a test backend echoes what it received. Shown: 401 and 403 reach the client
 * and the backend sees nothing; with `auth-signin` a 401 is a 302 with the original URL in `rd`; a
 * 2xx lets the request through with the listed headers copied from the auth answer (a client's own
 * copies removed) and the answer's Set-Cookie headers added to the response; the auth request is a GET with the original headers, no body, and the
 * X-Original-* headers; an auth service that is down, hangs or answers anything else is a 500.
 */
import assert from "node:assert/strict";
import { lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/localenv/backend.ts";
import { freePort } from "../../lib/localenv/ports.ts";
import { createCA } from "../../lib/pki/certs.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

const A = "ingress-controller.io/";

interface Seen {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: string;
}

/** The auth service: its answers follow the `session` cookie (`status=NNN` answers NNN); it records each request. */
function startAuth(tls?: { cert: string; key: string }) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {}, ...tls }, async (req) => {
    const url = new URL(req.url);
    seen.push({
      method: req.method,
      target: url.pathname + url.search,
      headers: Object.fromEntries(req.headers),
      body: await req.text(),
    });
    const cookie = req.headers.get("cookie") ?? "";
    if (cookie.includes("session=ok")) {
      const headers = new Headers({ "X-Auth-Request-User": "alice", "X-Other": "not copied" });
      headers.append("Set-Cookie", "_session=refreshed; Path=/; HttpOnly");
      headers.append("Set-Cookie", "_csrf=x; Path=/");
      return new Response(null, { status: 202, headers });
    }
    if (cookie.includes("session=banned")) return new Response("banned", { status: 403 });
    const status = /status=([0-9]{3})/.exec(cookie)?.[1];
    if (status) return new Response(null, { status: Number(status), headers: { location: "/elsewhere" } });
    return new Response("who are you", { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="test"' } });
  });
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** One Ingress per host (each with its annotations) to Service `web` on the test backend. */
function objects(port: number, hosts: Record<string, Record<string, string>>) {
  return {
    ingresses: Object.entries(hosts).map(([host, annotations], i) =>
      ingress({ name: `ing-${i}`, annotations, rules: [{ host, paths: [{ path: "/", service: "web", port: 80 }] }] })
    ),
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port }], [{ address: "127.0.0.1" }])],
    }),
  };
}

const received = (body: string): Record<string, string> => JSON.parse(body).headers;

Deno.test("auth-url: 401 and 403 reach the client, 2xx lets the request through with the auth answer's headers", async () => {
  await using web = await startBackend({ name: "web" });
  await using auth = startAuth();
  const headers = `${A}auth-response-headers`;
  const objs = objects(web.port, {
    "plain.example.com": { [`${A}auth-url`]: `${auth.url}/oauth2/auth?from=proxy`, [headers]: "X-Auth-Request-User" },
    "signin.example.com": {
      [`${A}auth-url`]: `${auth.url}/oauth2/auth`,
      [`${A}auth-signin`]: "/oauth2/start",
      [headers]: "X-Auth-Request-User, X-Auth-Request-Email",
    },
    "query.example.com": {
      [`${A}auth-url`]: `${auth.url}/oauth2/auth`,
      [`${A}auth-signin`]: "https://login.example.com/start?app=shop",
    },
    "open.example.com": {},
  });
  await withProxy(objs, {}, async ({ http }) => {
    const base = `http://127.0.0.1:${http}`;
    const get = (host: string, path: string, ...args: string[]) => curl(["-H", `Host: ${host}`, ...args, base + path]);
    const served = web.requests;

    // No session: the auth service's 401 and its challenge reach the client, the backend sees nothing.
    const denied = await curl(["-o", "/dev/null", "-D", "-", "-H", "Host: plain.example.com", `${base}/`]);
    assert.equal(denied.status, 401);
    assert.match(denied.body, /^www-authenticate: Bearer realm="test"\r?$/im);
    assert.equal((await get("plain.example.com", "/", "-b", "session=banned")).status, 403);
    assert.equal(web.requests, served, "the backend saw none of the refused requests");

    // With auth-signin: a 401 is a 302 to it, the original URL escaped in rd (& when it has a query).
    const login = await curl([
      "-o",
      "/dev/null",
      "-D",
      "-",
      "-H",
      "Host: signin.example.com",
      `${base}/shop/cart?item=1&n=2`,
    ]);
    assert.equal(login.status, 302);
    assert.match(
      login.body,
      /^location: \/oauth2\/start\?rd=http:\/\/signin\.example\.com\/shop\/cart%3Fitem%3D1%26n%3D2\r?$/im,
    );
    const other = await get("query.example.com", "/x");
    assert.equal(other.location, "https://login.example.com/start?app=shop&rd=http://query.example.com/x");
    assert.equal((await get("signin.example.com", "/", "-b", "session=banned")).status, 403, "403 is not redirected");

    // A session: the request goes through; the listed headers come from the auth answer only.
    const ok = await get(
      "signin.example.com",
      "/shop?a=1",
      ...["-b", "session=ok", "-H", "X-Auth-Request-User: mallory", "-H", "X-Auth-Request-Email: forged@example.com"],
    );
    assert.equal(ok.status, 200);
    assert.equal(ok.backend, "web");
    assert.equal(ok.target, "/shop?a=1");
    const got = received(ok.body);
    assert.equal(got["x-auth-request-user"], "alice", "the auth answer's value replaces the client's");
    assert.equal(got["x-auth-request-email"], undefined, "a listed header the answer lacks is removed");
    assert.equal(got["x-other"], undefined, "headers not listed are not copied");
    assert.equal(got.cookie, "session=ok");
    const answer = await curl([
      ...["-o", "/dev/null", "-D", "-", "-b", "session=ok", "-H", "Host: signin.example.com", `${base}/`],
    ]);
    assert.deepEqual(
      answer.body.split("\r\n").filter((l) => /^set-cookie:/i.test(l)),
      ["set-cookie: _session=refreshed; Path=/; HttpOnly", "set-cookie: _csrf=x; Path=/"],
      "the auth answer's cookies reach the client (session refresh)",
    );

    // The auth request: a GET to the auth URL with the original headers, no body, and the X-Original-* headers.
    const before = auth.seen.length;
    const post = await get("plain.example.com", "/api?q=1", "-b", "session=ok", "-H", "X-Trace: 7", "-d", "payload");
    assert.equal(post.status, 200);
    assert.equal(received(post.body)["x-auth-request-user"], "alice");
    const sent = auth.seen.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].method, "GET");
    assert.equal(sent[0].target, "/oauth2/auth?from=proxy");
    assert.equal(sent[0].body, "");
    assert.equal(sent[0].headers["content-length"], undefined);
    assert.equal(sent[0].headers.cookie, "session=ok");
    assert.equal(sent[0].headers["x-trace"], "7");
    assert.equal(sent[0].headers["x-original-url"], "http://plain.example.com/api?q=1");
    assert.equal(sent[0].headers["x-original-method"], "POST");
    assert.equal(sent[0].headers["x-forwarded-host"], "plain.example.com");
    assert.equal(sent[0].headers["x-real-ip"], "127.0.0.1");
    assert.equal(sent[0].headers["x-auth-request-redirect"], "/api?q=1");
    assert.equal(sent[0].headers.host, new URL(auth.url).host);

    // An Ingress without auth-url is not authenticated, though it shares the Service.
    const before2 = auth.seen.length;
    assert.equal((await get("open.example.com", "/")).status, 200);
    assert.equal(auth.seen.length, before2);
  });
});

Deno.test("auth-url fails closed: an auth service that is down, hangs or answers 3xx/5xx gives 500", async () => {
  await using web = await startBackend({ name: "web" });
  await using auth = startAuth();
  // A listener that accepts and never answers.
  const hung = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of hung) held.push(conn);
  })();
  const objs = objects(web.port, {
    "down.example.com": { [`${A}auth-url`]: `http://127.0.0.1:${freePort()}/auth` },
    "hung.example.com": { [`${A}auth-url`]: `http://127.0.0.1:${(hung.addr as Deno.NetAddr).port}/auth` },
    "odd.example.com": { [`${A}auth-url`]: `${auth.url}/auth`, [`${A}auth-signin`]: "/login" },
  });
  try {
    await withProxy(objs, {}, async ({ http }) => {
      const get = (host: string, cookie = "session=ok") =>
        curl(["-H", `Host: ${host}`, "-b", cookie, `http://127.0.0.1:${http}/`]);
      assert.equal((await get("down.example.com")).status, 500);
      assert.equal((await get("hung.example.com")).status, 500);
      assert.equal((await get("odd.example.com", "status=302")).status, 500, "a redirect is not a verdict");
      assert.equal((await get("odd.example.com", "status=503")).status, 500);
      assert.equal((await get("odd.example.com")).status, 200, "the same service's 2xx lets it through");
      assert.equal(web.requests, 1, "only the authenticated request reached the backend");
      assert.ok(held.length > 0, "the hanging service was asked");
    });
  } finally {
    hung.close();
    await accepting.catch(() => {});
    for (const c of held) c.close();
  }
});

Deno.test("an https auth URL is not verified (as ingress-nginx's auth-url): a self-signed auth service works", async () => {
  await using web = await startBackend({ name: "web" });
  const self = await createCA({ commonName: "auth.example.com" });
  await using auth = startAuth({ cert: self.certPem, key: self.keyPem });
  const objs = objects(web.port, {
    "tls.example.com": { [`${A}auth-url`]: `${auth.url}/check`, [`${A}auth-response-headers`]: "X-Auth-Request-User" },
  });
  await withProxy(objs, {}, async ({ http }) => {
    const get = (cookie: string) => curl(["-H", "Host: tls.example.com", "-b", cookie, `http://127.0.0.1:${http}/`]);
    const ok = await get("session=ok");
    assert.equal(ok.status, 200);
    assert.equal(received(ok.body)["x-auth-request-user"], "alice");
    assert.equal((await get("session=none")).status, 401);
    assert.equal(auth.seen.length, 2);
  });
});
