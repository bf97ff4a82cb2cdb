/**
 * The Gateway renderer's extended HTTPRoute features serving real traffic through the real
 * haproxy: the CORS filter (preflights answered by the proxy for allowed origins, headers on the
 * answers, nothing for other origins), rule timeouts (504 when the backend is slower, none with
 * `0s`), backendRef header filters (applied only for the backend the request goes to), misdirected
 * requests on HTTPS (421 when the Host picks another listener than the SNI did), HTTP/2 without TLS
 * from clients (prior knowledge) and to an appProtocol `kubernetes.io/h2c` backend. Expectations
 * come from the Gateway API reference (HTTPCORSFilter, HTTPRouteTimeouts, HTTPBackendRef.filters,
 * GatewayHTTPSListenerDetectMisdirectedRequests, GEP-1911) and the Fetch standard. Runs inside a
 * private network namespace (lib/dev/localenv/netns.ts); outside one, the single test below re-runs
 * this file there.
 */
import assert from "node:assert/strict";
import http from "node:http";
import tls from "node:tls";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { type Backend as TestBackend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { CorsPolicy } from "../../lib/gateway/model_types.ts";
import {
  cert,
  createCA,
  entry,
  httpPort,
  httpsPort,
  model,
  pemFor,
  proxyEnv,
  rule,
  service,
  writeRendered,
} from "./render_fixtures.ts";

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { name: string; method: string; headers: Record<string, string> } | null;
}

function request(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; host?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: opts.method ?? "GET",
        headers: { host: opts.host ?? "any.test", ...opts.headers },
        agent: false,
      },
      (res) => {
        let text = "";
        res.on("data", (d) => text += d);
        res.on("end", () => {
          let body = null;
          try {
            body = JSON.parse(text);
          } catch { /* the proxy's own answer */ }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** One HTTPS request with SNI `sni` and Host `host`: the status line's code and the backend's name. */
function tlsRequest(port: number, sni: string, host: string, ca: string): Promise<{ status: number; name: string }> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername: sni, ca, ALPNProtocols: ["http/1.1"] }, () => {
      s.write(`GET /x HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("end", () => {
      const text = Buffer.concat(chunks).toString();
      resolve({ status: Number(text.split(" ")[1]), name: /"name":"([^"]+)"/.exec(text)?.[1] ?? "" });
      s.destroy();
    });
  });
}

/** A backend that answers 200 after `?delay=<ms>` milliseconds. */
function slowBackend(address: string): { port: number; close(): Promise<void> } {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server = Deno.serve({ hostname: address, port: 0, onListen: () => {} }, async (req) => {
    const delay = Number(new URL(req.url).searchParams.get("delay") ?? "0");
    await new Promise<void>((r) => {
      const id = setTimeout(() => (timers.delete(id), r()), delay);
      timers.add(id);
    });
    return new Response(JSON.stringify({ name: "slow", method: req.method, headers: {} }));
  });
  return {
    port: server.addr.port,
    close: async () => {
      for (const id of timers) clearTimeout(id);
      await server.shutdown();
    },
  };
}

/** curl's answer to an HTTP/2 request without TLS (prior knowledge): "<http version> <status> <body>". */
async function h2cRequest(port: number, path: string): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: [
      "-sS",
      "--http2-prior-knowledge",
      "-H",
      "Host: any.test",
      "-w",
      "\n%{http_version} %{http_code}",
      `http://127.0.0.1:${port}${path}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const lines = text.trimEnd().split("\n");
  return `${lines.at(-1)} ${lines.slice(0, -1).join("\n")}`;
}

const corsCredentials: CorsPolicy = {
  allowOrigins: ["https://www.foo.com", "https://*.bar.com"],
  allowCredentials: true,
  allowMethods: ["GET", "OPTIONS"],
  allowHeaders: ["x-header-1", "x-header-2"],
  exposeHeaders: ["x-header-3", "x-header-4"],
  maxAge: 3600,
};
const corsAny: CorsPolicy = {
  allowOrigins: ["*"],
  allowCredentials: false,
  allowMethods: ["*"],
  allowHeaders: ["*"],
  exposeHeaders: [],
  maxAge: 5,
};

if (!inPrivateNetwork()) {
  Deno.test("Gateway extended-feature traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("a rendered Gateway configuration serves the extended HTTPRoute features", async (t) => {
    const servers: TestBackend[] = [];
    for (const [i, name] of ["alpha", "beta"].entries()) {
      servers.push(await startBackend({ name, host: privateAddress(20 + i) }));
    }
    const slow = slowBackend(privateAddress(22));
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-ext-" });
    try {
      const [alpha, beta] = servers.map((s) => service("ns", s.name, [{ address: s.address, port: s.port }]));
      const slowBe = service("ns", "slow", [{ address: privateAddress(22), port: slow.port }]);
      // the Deno test backend speaks HTTP/2 without TLS to a client that starts with the preface
      const h2 = {
        ...service("ns", "alpha", [{ address: servers[0].address, port: servers[0].port }], 81),
        proto: "h2" as const,
      };
      const m = model(
        [
          httpPort(80, [
            entry("", "/cors-1", "gw_cors"),
            entry("", "/cors-any", "gw_cors_any"),
            entry("", "/timeout", "gw_timeout"),
            entry("", "/no-timeout", "gw_no_timeout"),
            entry("", "/per-backend", "gw_per_backend"),
            entry("", "/h2c", "gw_h2c"),
            entry("", "/", "gw_alpha"),
          ]),
          {
            ...httpsPort(443, [
              entry("second.example", "/", "gw_beta", { listenerHostname: "second.example" }),
              entry("*.wild.example", "/", "gw_beta", { listenerHostname: "*.wild.example" }),
              entry("", "/", "gw_alpha", { listenerHostname: "" }),
            ], [
              cert("ns", "second", ["second.example"]),
              cert("ns", "wild", ["*.wild.example"]),
              cert("ns", "any", []),
            ]),
            listenerHostnames: ["second.example", "*.wild.example"],
          },
        ],
        [
          rule("gw_alpha", [[alpha.name, 1]]),
          rule("gw_beta", [[beta.name, 1]]),
          rule("gw_cors", [[alpha.name, 1]], { cors: corsCredentials }),
          rule("gw_cors_any", [[alpha.name, 1]], { cors: corsAny }),
          rule("gw_timeout", [[slowBe.name, 1]], { timeoutMs: 500 }),
          rule("gw_no_timeout", [[slowBe.name, 1]], { timeoutMs: 0 }),
          {
            ...rule("gw_per_backend", []),
            targets: [
              {
                backend: alpha.name,
                weight: 1,
                requestHeaders: { set: [{ name: "Backend", value: "alpha" }], add: [], remove: [] },
                responseHeaders: null,
              },
              {
                backend: beta.name,
                weight: 1,
                requestHeaders: { set: [{ name: "Backend", value: "beta" }], add: [], remove: [] },
                responseHeaders: { set: [{ name: "X-Went-To", value: "beta" }], add: [], remove: [] },
              },
            ],
          },
          rule("gw_h2c", [[h2.name, 1]]),
        ],
        [alpha, beta, slowBe, h2],
      );
      const ca = await createCA({ commonName: "gateway test CA" });
      const caPem = ca.certPem;
      const pems = {
        "ns_second.pem": await pemFor(ca, ["second.example"]),
        "ns_wild.pem": await pemFor(ca, ["*.wild.example"]),
        "ns_any.pem": await pemFor(ca, ["example.org"]),
      };
      await writeRendered(dir, renderGateway(m, await loadTemplates(null)), pems);
      const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      const [p80, p443] = [containerPort(80), containerPort(443)];
      try {
        await t.step("CORS: a preflight from an allowed origin is answered by the proxy", async () => {
          for (const origin of ["https://www.foo.com", "https://www.bar.com", "https://a.b.bar.com"]) {
            const a = await request(p80, "/cors-1", {
              method: "OPTIONS",
              headers: {
                origin,
                "access-control-request-method": "GET",
                "access-control-request-headers": "x-header-1",
              },
            });
            assert.equal(a.status, 204, origin);
            assert.equal(a.body, null, "answered by the proxy");
            assert.equal(a.headers["access-control-allow-origin"], origin);
            assert.equal(a.headers["access-control-allow-methods"], "GET, OPTIONS");
            assert.equal(a.headers["access-control-allow-headers"], "x-header-1, x-header-2");
            assert.equal(a.headers["access-control-expose-headers"], "x-header-3, x-header-4");
            assert.equal(a.headers["access-control-max-age"], "3600");
            assert.equal(a.headers["access-control-allow-credentials"], "true");
            assert.equal(a.headers["vary"], "Origin");
          }
        });
        await t.step("CORS: other origins get no CORS headers; a suffix alone is not a label", async () => {
          for (
            const origin of ["https://foobar.com", "https://bar.com", "http://www.foo.com", "https://www.foo.com.evil"]
          ) {
            const pre = await request(p80, "/cors-1", {
              method: "OPTIONS",
              headers: { origin, "access-control-request-method": "GET" },
            });
            assert.equal(pre.headers["access-control-allow-origin"], undefined, origin);
            assert.deepEqual([pre.status, pre.body], [204, null], "answered by the proxy");
            const simple = await request(p80, "/cors-1", { headers: { origin } });
            assert.equal(simple.status, 200);
            assert.equal(simple.headers["access-control-allow-origin"], undefined, origin);
          }
        });
        await t.step("CORS: answers to allowed origins get the headers; requests pass unchanged", async () => {
          const a = await request(p80, "/cors-1", { headers: { origin: "https://www.bar.com" } });
          assert.equal(a.body?.name, "alpha");
          assert.equal(a.headers["access-control-allow-origin"], "https://www.bar.com");
          assert.equal(a.headers["access-control-allow-credentials"], "true");
          assert.equal(a.headers["access-control-expose-headers"], "x-header-3, x-header-4");
          // an OPTIONS request that is not a preflight goes to the backend
          assert.equal(
            (await request(p80, "/cors-1", { method: "OPTIONS", headers: { origin: "https://www.foo.com" } }))
              .body?.method,
            "OPTIONS",
          );
        });
        await t.step("CORS: wildcards allow what the preflight asks; no credentials header without them", async () => {
          const a = await request(p80, "/cors-any", {
            method: "OPTIONS",
            headers: {
              origin: "https://foobar.com:12345",
              "access-control-request-method": "PUT",
              "access-control-request-headers": "x-a, x-b",
            },
          });
          assert.equal(a.status, 204);
          assert.equal(a.headers["access-control-allow-origin"], "https://foobar.com:12345");
          assert.equal(a.headers["access-control-allow-methods"], "PUT");
          assert.equal(a.headers["access-control-allow-headers"], "x-a, x-b");
          assert.equal(a.headers["access-control-max-age"], "5");
          assert.equal(a.headers["access-control-allow-credentials"], undefined);
          const b = await request(p80, "/cors-any", { method: "PUT", headers: { origin: "https://foobar.com" } });
          assert.equal(b.body?.method, "PUT");
          assert.equal(b.headers["access-control-allow-origin"], "https://foobar.com");
          assert.equal(b.headers["access-control-allow-credentials"], undefined);
          // no Origin: not a CORS request at all
          assert.equal((await request(p80, "/cors-any")).headers["access-control-allow-origin"], undefined);
        });
        await t.step("timeouts: 504 when the backend takes longer, none with 0s", async () => {
          assert.equal((await request(p80, "/timeout")).status, 200);
          assert.equal((await request(p80, "/timeout?delay=1000")).status, 504);
          assert.equal((await request(p80, "/no-timeout?delay=1000")).status, 200);
        });
        await t.step("backendRef filters apply only for the backend the request goes to", async () => {
          const seen = new Set<string>();
          for (let i = 0; i < 20; i++) {
            const a = await request(p80, "/per-backend");
            assert.ok(a.body);
            assert.equal(a.body.headers["backend"], a.body.name);
            assert.equal(a.headers["x-went-to"], a.body.name === "beta" ? "beta" : undefined);
            seen.add(a.body.name);
          }
          assert.deepEqual([...seen].sort(), ["alpha", "beta"]);
        });
        await t.step("HTTPS: 421 when the Host picks another listener than the SNI", async () => {
          const caText = caPem;
          // SNI of no listener's hostname: the hostname-less listener's, as is a Host of none
          assert.deepEqual(await tlsRequest(p443, "example.org", "example.org", caText), {
            status: 200,
            name: "alpha",
          });
          assert.equal((await tlsRequest(p443, "example.org", "second.example", caText)).status, 421);
          assert.deepEqual(await tlsRequest(p443, "second.example", "second.example", caText), {
            status: 200,
            name: "beta",
          });
          assert.equal((await tlsRequest(p443, "second.example", "example.org", caText)).status, 421);
          assert.equal((await tlsRequest(p443, "second.example", "x.wild.example", caText)).status, 421);
          // one wildcard listener: any host under it on the connection, case and port aside
          assert.deepEqual(await tlsRequest(p443, "a.wild.example", "B.c.Wild.example:443", caText), {
            status: 200,
            name: "beta",
          });
          assert.equal((await tlsRequest(p443, "a.wild.example", "wild.example", caText)).status, 421);
        });
        await t.step("HTTP/2 without TLS: from clients (prior knowledge) and to an h2c backend", async () => {
          const front = await h2cRequest(p80, "/");
          assert.match(front, /^2 200 .*"name":"alpha"/s);
          const back = await h2cRequest(p80, "/h2c");
          assert.match(back, /^2 200 .*"name":"alpha"/s);
        });
      } finally {
        await proxy.stop();
      }
    } finally {
      for (const s of servers) await s.close();
      await slow.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
