/**
 * External authentication through a real haproxy (`auth-url`, `auth-signin`, `auth-response-headers`,
 * `auth-request-headers`; the Lua action of templates/ic_ext_auth.lua). Runs in a private network
 * namespace (lib/dev/localenv/netns.ts) whose resolv.conf names the test's DNS server
 * (lib/dev/localenv/dns.ts): auth services listen on private addresses, a fake metadata service on
 * 169.254.169.254 and [fd00:ec2::254]. An auth service answers 200 with `X-Auth-Request-User: alice`
 * for the cookie `session=ok`, 403 for `session=banned`, 401 with a challenge otherwise; a test
 * backend echoes what it received. Shown: 401/403/2xx/sign-in as ingress-nginx; only the client's
 * Cookie, Authorization and `auth-request-headers` reach the auth service, with the proxy's own
 * X-Original-* and X-Forwarded-* (a client's forged copies never); a refused auth-url is never contacted
 * and its route answers 500; a name that resolves, at request time, to a refused address (in every
 * IPv6 form) is answered 500 without contacting it, and the proxy connects to the address it checked,
 * never to a second DNS answer; an auth URL leading back to the proxy is refused at once (no loop);
 * an auth service down, hung or answering anything else gives 500; https auth URLs are not verified.
 */
import assert from "node:assert/strict";
import { lookupFromLists } from "../../../lib/render/model.ts";
import { startBackend } from "../../../lib/dev/localenv/backend.ts";
import { freePort } from "../../../lib/dev/localenv/ports.ts";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../../lib/dev/localenv/netns.ts";
import { startDnsServer } from "../../../lib/dev/localenv/dns.ts";
import { createCA } from "../../../lib/pki/certs.ts";
import { endpointSlice, ingress, service } from "../fixtures.ts";
import { curl, withProxy } from "../live.ts";

const A = "ingress-controller.io/";

interface Seen {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: string;
}

/** An auth service on `hostname`: its answers follow the `session` cookie (`status=NNN` answers NNN); it records each request. */
function startAuth(hostname: string, opts: { tls?: { cert: string; key: string }; port?: number } = {}) {
  const seen: Seen[] = [];
  const server = Deno.serve({ hostname, port: opts.port ?? 0, onListen: () => {}, ...opts.tls }, async (req) => {
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
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `${opts.tls ? "https" : "http"}://${host}:${server.addr.port}`,
    port: server.addr.port,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** One Ingress per host (each with its annotations; "" is a host-less rule) to Service `web` on the test backend. */
function objects(port: number, hosts: Record<string, Record<string, string>>) {
  return {
    ingresses: Object.entries(hosts).map(([host, annotations], i) =>
      ingress({
        name: `ing-${i}`,
        annotations,
        rules: [{ ...(host ? { host } : {}), paths: [{ path: "/", service: "web", port: 80 }] }],
      })
    ),
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port }], [{ address: "127.0.0.1" }])],
    }),
  };
}

const received = (body: string): Record<string, string> => JSON.parse(body).headers;

async function ip(...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "null", stderr: "piped" }).output();
  assert.ok(out.success, `ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

if (!inPrivateNetwork()) {
  Deno.test("external authentication traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname, { resolver: true });
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  // The addresses of the cloud metadata services, on this namespace's own loopback.
  await ip("addr", "add", "169.254.169.254/32", "dev", "lo");
  await ip("-6", "addr", "add", "fd00:ec2::254/128", "dev", "lo", "nodad");

  Deno.test("auth-url: 401 and 403 reach the client, 2xx lets the request through with the auth answer's headers", async () => {
    await using web = await startBackend({ name: "web" });
    await using auth = startAuth(privateAddress(20));
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
      const get = (host: string, path: string, ...args: string[]) =>
        curl(["-H", `Host: ${host}`, ...args, base + path]);
      const served = web.requests;

      // No session: the auth service's 401 and its challenge reach the client, the backend sees nothing.
      const denied = await curl(["-o", "/dev/null", "-D", "-", "-H", "Host: plain.example.com", `${base}/`]);
      assert.equal(denied.status, 401);
      assert.match(denied.body, /^www-authenticate: Bearer realm="test"\r?$/im);
      assert.equal((await get("plain.example.com", "/", "-b", "session=banned")).status, 403);
      assert.equal(web.requests, served, "the backend saw none of the refused requests");

      // With auth-signin: a 401 is a 302 to it, the original URL escaped in rd (& when it has a query).
      const login = await curl([
        ...["-o", "/dev/null", "-D", "-", "-H", "Host: signin.example.com", `${base}/shop/cart?item=1&n=2`],
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

      // An Ingress without auth-url is not authenticated, though it shares the Service.
      const before = auth.seen.length;
      assert.equal((await get("open.example.com", "/")).status, 200);
      assert.equal(auth.seen.length, before);
    });
  });

  Deno.test("only Cookie, Authorization and auth-request-headers of the client reach the auth service", async () => {
    await using web = await startBackend({ name: "web" });
    await using auth = startAuth(privateAddress(21));
    const objs = objects(web.port, {
      "plain.example.com": { [`${A}auth-url`]: `${auth.url}/oauth2/auth?from=proxy` },
      "keys.example.com": { [`${A}auth-url`]: `${auth.url}/check`, [`${A}auth-request-headers`]: "X-Api-Key, Accept" },
    });
    await withProxy(objs, {}, async ({ http }) => {
      const client = [
        ...["-b", "session=ok", "-H", "Authorization: Bearer t0k3n", "-H", "X-Trace: 7", "-H", "X-Api-Key: k1"],
        ...[
          "-H",
          "X-Forwarded-Host: forged.example",
          "-H",
          "X-Original-URL: http://forged.example/",
          "-H",
          "X-Real-IP: 6.6.6.6",
          "-H",
          "X-Auth-Request-Redirect: /forged",
          "-H",
          "Accept: application/json",
        ],
        ...["-A", "curl-test", "-H", "X-Forwarded-For: 203.0.113.9", "-d", "payload"],
      ];
      for (const host of ["plain.example.com", "keys.example.com"]) {
        const before = auth.seen.length;
        const r = await curl(["-H", `Host: ${host}`, ...client, `http://127.0.0.1:${http}/api?q=1`]);
        assert.equal(r.status, 200, host);
        assert.equal(received(r.body)["x-api-key"], "k1", "the backend still gets every header");
        assert.equal(auth.seen.length, before + 1);
      }
      const [plain, keys] = auth.seen.slice(-2);
      const proxySet = {
        "x-original-url": "http://plain.example.com/api?q=1",
        "x-original-method": "POST",
        "x-forwarded-host": "plain.example.com",
        "x-forwarded-proto": "http",
        "x-forwarded-for": "203.0.113.9, 127.0.0.1",
        "x-real-ip": "127.0.0.1",
        "x-auth-request-redirect": "/api?q=1",
        "x-sent-from": "ingress-controller",
      };
      assert.deepEqual(plain.headers, {
        host: new URL(auth.url).host,
        cookie: "session=ok",
        authorization: "Bearer t0k3n",
        // the httpclient's own
        accept: "*/*",
        "user-agent": "HAProxy",
        ...proxySet,
      });
      assert.deepEqual([plain.method, plain.target, plain.body], ["GET", "/oauth2/auth?from=proxy", ""]);
      assert.deepEqual(keys.headers, {
        host: new URL(auth.url).host,
        cookie: "session=ok",
        authorization: "Bearer t0k3n",
        "x-api-key": "k1",
        accept: "application/json",
        "user-agent": "HAProxy",
        ...proxySet,
        "x-original-url": "http://keys.example.com/api?q=1",
        "x-forwarded-host": "keys.example.com",
      });
    });
  });

  Deno.test("a refused auth-url is never contacted: its route answers 500, with a problem", async () => {
    await using web = await startBackend({ name: "web" });
    await using metadata = startAuth("169.254.169.254", { port: 80 });
    await using metadata6 = startAuth("fd00:ec2::254", { port: 80 });
    const hosts: Record<string, string> = {
      "a.example.com": "http://169.254.169.254/latest/meta-data/",
      "b.example.com": "http://2852039166/latest/meta-data/",
      "c.example.com": "http://[::ffff:169.254.169.254]/latest/meta-data/",
      "d.example.com": "http://[fd00:ec2::254]/latest/meta-data/",
      "e.example.com": "http://metadata.google.internal/computeMetadata/v1/",
    };
    const objs = objects(
      web.port,
      Object.fromEntries(Object.entries(hosts).map(([h, url]) => [h, { [`${A}auth-url`]: url }])),
    );
    await withProxy(objs, {}, async ({ http }) => {
      for (const host of Object.keys(hosts)) {
        const r = await curl(["-H", `Host: ${host}`, "-b", "session=ok", `http://127.0.0.1:${http}/`]);
        assert.equal(r.status, 500, host);
      }
    }, { allowProblems: true });
    assert.deepEqual([metadata.seen.length, metadata6.seen.length, web.requests], [0, 0, 0]);
  });

  Deno.test("a name resolving to a refused address at request time gets 500, and is never contacted", async () => {
    await using web = await startBackend({ name: "web" });
    await using auth = startAuth(privateAddress(22));
    await using metadata = startAuth("169.254.169.254", { port: 80 });
    await using metadata6 = startAuth("fd00:ec2::254", { port: 80 });
    // The loopback: the auth service's port there is the one a name pointing at 127.0.0.1 would reach.
    await using local = startAuth("127.0.0.1", { port: auth.port });
    await using dns = await startDnsServer({
      "good.auth.test": [privateAddress(22)],
      "meta.auth.test": ["169.254.169.254"],
      "mapped.auth.test": ["::ffff:169.254.169.254"],
      "compat.auth.test": ["::a9fe:a9fe"],
      "nat64.auth.test": ["64:ff9b::a9fe:a9fe"],
      "sixtofour.auth.test": ["2002:a9fe:a9fe::1"],
      "aws6.auth.test": ["fd00:ec2::254"],
      "local.auth.test": ["127.0.0.1"],
      // the first lookup gets the good address, a second one (were there one) the metadata service
      "rebind.auth.test": { rotate: [privateAddress(22), "169.254.169.254"] },
    });
    const names = [
      "meta",
      "mapped",
      "compat",
      "nat64",
      "sixtofour",
      "aws6",
      "local",
      "missing",
    ];
    const at = (name: string, port: number) => ({ [`${A}auth-url`]: `http://${name}.auth.test:${port}/check` });
    const objs = objects(web.port, {
      "good.example.com": at("good", auth.port),
      "rebind.example.com": at("rebind", auth.port),
      ...Object.fromEntries(names.map((n) => [`${n}.example.com`, at(n, n === "local" ? auth.port : 80)])),
    });
    await withProxy(objs, {}, async ({ http, output }) => {
      const get = (host: string) => curl(["-H", `Host: ${host}`, "-b", "session=ok", `http://127.0.0.1:${http}/`]);
      for (const n of names) assert.equal((await get(`${n}.example.com`)).status, 500, n);
      assert.deepEqual([metadata.seen.length, metadata6.seen.length, local.seen.length], [0, 0, 0]);
      assert.equal(web.requests, 0);
      // Each was refused by the address check (logged), not by a failed connection.
      const log = await output();
      for (const n of names.filter((n) => n !== "missing")) {
        assert.match(
          log,
          new RegExp(`${n}\\.auth\\.test:[0-9]+/check leads to [0-9a-f:.]+, an address the proxy never contacts`),
          n,
        );
      }
      assert.match(await output(), /missing\.auth\.test:80\/check did not resolve/);

      // A good name is resolved by the proxy and used; the address checked is the one connected to.
      assert.equal((await get("good.example.com")).status, 200);
      assert.equal((await get("rebind.example.com")).status, 200);
      assert.equal(auth.seen.length, 2);
      assert.equal(auth.seen[1].headers.host, `rebind.auth.test:${auth.port}`, "the URL's name is the Host header");
      assert.equal(metadata.seen.length, 0, "the second DNS answer was never used");
      assert.ok(dns.asked.includes("meta.auth.test A"), dns.asked.join());
    });
  });

  Deno.test("an auth URL leading back to the proxy is answered 500 at once, without a loop", async () => {
    await using web = await startBackend({ name: "web" });
    const self = privateAddress(30);
    const port = freePort("0.0.0.0");
    // A host-less rule catches the auth request too: without the guards each would ask again.
    const objs = objects(web.port, { "": { [`${A}auth-url`]: `http://${self}:${port}/loop` } });
    await withProxy(objs, {}, async ({ http, stats }) => {
      const requests = async () => {
        const csv = (await curl([`http://127.0.0.1:${stats}/;csv`])).body.split("\n");
        const header = csv[0].replace(/^# /, "").split(",");
        return Number(csv.find((l) => l.startsWith("http,FRONTEND,"))!.split(",")[header.indexOf("req_tot")]);
      };
      // Through another address: the auth request reaches the proxy, which refuses to ask again (X-Sent-From).
      const r = await curl(["-H", "Host: app.example.com", "-b", "session=ok", `http://127.0.0.1:${http}/`]);
      assert.equal(r.status, 500);
      assert.equal(await requests(), 2, "the client's request and one auth request");
      // Through the auth URL's own address: the proxy does not even send it (its own address).
      const own = await curl(["-H", "Host: app.example.com", "-b", "session=ok", `http://${self}:${http}/`]);
      assert.equal(own.status, 500);
      assert.equal(await requests(), 3, "the client's request only");
      assert.equal(web.requests, 0);
    }, { bindAddress: "0.0.0.0", httpPort: port });
  });

  Deno.test("auth-url fails closed: an auth service that is down, hangs or answers 3xx/5xx gives 500", async () => {
    await using web = await startBackend({ name: "web" });
    await using auth = startAuth(privateAddress(23));
    // A listener that accepts and never answers.
    const hung = Deno.listen({ hostname: privateAddress(24), port: 0 });
    const held: Deno.Conn[] = [];
    const accepting = (async () => {
      for await (const conn of hung) held.push(conn);
    })();
    const objs = objects(web.port, {
      "down.example.com": { [`${A}auth-url`]: `http://${privateAddress(25)}:${freePort(privateAddress(25))}/auth` },
      "hung.example.com": { [`${A}auth-url`]: `http://${privateAddress(24)}:${(hung.addr as Deno.NetAddr).port}/auth` },
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

  Deno.test("an https auth URL is not verified (as ingress-nginx's auth-url): a self-signed auth service works, by address and by name", async () => {
    await using web = await startBackend({ name: "web" });
    const self = await createCA({ commonName: "auth.example.com" });
    await using auth = startAuth(privateAddress(26), { tls: { cert: self.certPem, key: self.keyPem } });
    await using _dns = await startDnsServer({ "tls.auth.test": [privateAddress(26)] });
    const objs = objects(web.port, {
      "tls.example.com": {
        [`${A}auth-url`]: `${auth.url}/check`,
        [`${A}auth-response-headers`]: "X-Auth-Request-User",
      },
      "named.example.com": { [`${A}auth-url`]: `https://tls.auth.test:${auth.port}/check` },
    });
    await withProxy(objs, {}, async ({ http }) => {
      const get = (host: string, cookie: string) =>
        curl(["-H", `Host: ${host}`, "-b", cookie, `http://127.0.0.1:${http}/`]);
      const ok = await get("tls.example.com", "session=ok");
      assert.equal(ok.status, 200);
      assert.equal(received(ok.body)["x-auth-request-user"], "alice");
      assert.equal((await get("tls.example.com", "session=none")).status, 401);
      assert.equal((await get("named.example.com", "session=ok")).status, 200);
      assert.equal(auth.seen.length, 3);
      assert.equal(auth.seen[2].headers.host, `tls.auth.test:${auth.port}`);
    });
  });
}
