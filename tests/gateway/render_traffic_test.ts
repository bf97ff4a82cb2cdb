/**
 * The Gateway renderer's configuration serving real traffic: the rendered files run by the real
 * haproxy, small HTTP backends on addresses of a private network namespace, requests from this
 * process. Checks the precedence the spec asks for (Exact before longer before shorter prefixes, a
 * regex, hosts before wildcards of one or more labels before any host; header, query and method
 * conditions beating a map hit only where their precedence is higher), 404 and 500, weighted
 * targets, header modifiers, redirects, rewrites, HTTPS with a certificate per listener by SNI, a
 * second HTTP port; random route tables against the spec's first match; and the proxy's own
 * Applier (lib/proxy/apply.ts) taking a path change and an endpoint change through the Runtime
 * API without reload. Runs inside
 * a private network namespace (lib/dev/localenv/netns.ts); outside one, the single test below
 * re-runs this file there.
 */
import assert from "node:assert/strict";
import http from "node:http";
import tls from "node:tls";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { type Backend as TestBackend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { proxyUnderTest, workerPid } from "../proxy/fixtures.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import type { MapFile } from "../../lib/render/maps.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { GatewayProxyModel, RouteEntry } from "../../lib/gateway/model_types.ts";
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
  /** The test backend's JSON answer, or null when haproxy answered itself. */
  body: { name: string; host: string; path: string; target: string; headers: Record<string, string> } | null;
}

/** One plain HTTP request to 127.0.0.1 (or `address`):`port` with Host `host`. */
function get(
  port: number,
  host: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; address?: string } = {},
) {
  return new Promise<Answer>((resolve, reject) => {
    const req = http.request(
      {
        host: opts.address ?? "127.0.0.1",
        port,
        path,
        method: opts.method ?? "GET",
        headers: { host, ...opts.headers },
        agent: false,
      },
      (res) => {
        let text = "";
        res.on("data", (d) => text += d);
        res.on("end", () => {
          let body = null;
          try {
            body = JSON.parse(text);
          } catch { /* haproxy's own answer */ }
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The name of the backend that answered (or the status when haproxy answered itself). */
async function who(port: number, host: string, path: string, opts: Parameters<typeof get>[3] = {}): Promise<string> {
  const a = await get(port, host, path, opts);
  return a.body?.name ?? String(a.status);
}

/** A TLS request with SNI `servername`: the common name of the certificate shown, and the backend's name. */
function tlsWho(port: number, servername: string, ca: string): Promise<{ peer: string; name: string }> {
  return new Promise((resolve, reject) => {
    let peer = "";
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      servername,
      ca,
      ALPNProtocols: ["http/1.1"],
      // the chain is checked against `ca`; the name is not: the default certificate is shown for other names
      checkServerIdentity: () => undefined,
    }, () => {
      peer = String(s.getPeerCertificate().subject?.CN);
      s.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    s.on("data", (c: Buffer) => chunks.push(c));
    s.on("error", reject);
    s.on("end", () => {
      const text = Buffer.concat(chunks).toString();
      const name = /"name":"([^"]+)"/.exec(text)?.[1] ?? text.split("\r\n")[0];
      resolve({ peer, name });
      s.destroy();
    });
  });
}

const HOSTS = ["a.x.com", "b.a.x.com", "*.x.com", "*.a.x.com", ""] as const;
/** Listener hostnames, most specific first. */
const LISTENERS: readonly string[] = ["a.x.com", "*.a.x.com", "*.x.com", ""];

/** Whether listener hostname `l` matches every host that entry hostname `h` matches. */
function covers(l: string, h: string): boolean {
  if (l === "" || l === h) return true;
  if (h === "" || !l.startsWith("*.")) return false;
  return h.endsWith(l.slice(1)) && h.length > l.length - 1;
}

/** Whether `hostname` ("" any, `*.suffix` one or more labels) matches the request's host. */
function hostMatches(hostname: string, host: string): boolean {
  return hostname === "" || hostname === host ||
    (hostname.startsWith("*.") && host.endsWith(hostname.slice(1)) && host.length > hostname.length - 1);
}
const PATHS = ["/", "/a", "/a/b", "/ab", "=/a", "=/a/b", "~/a/[0-9]+"] as const;
const REQUEST_VARIANTS: [string, boolean, boolean][] = [
  ["GET", false, false],
  ["GET", true, false],
  ["POST", false, false],
  ["POST", true, true],
  ["GET", false, true],
];

/** A small deterministic random number generator (mulberry32). */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The spec's answer, written from its words: the listener with the most specific hostname matching
 * the host serves the request, with the first of its entries (in the order) that matches it.
 */
function firstMatch(
  entries: readonly RouteEntry[],
  r: { host: string; path: string; method: string; header: boolean; query: boolean },
): number | null {
  const present = LISTENERS.filter((l) => entries.some((e) => e.listenerHostname === l));
  const listener = present.find((l) => hostMatches(l, r.host));
  const i = entries.findIndex((e) => {
    const hostOk = e.listenerHostname === listener && hostMatches(e.hostname, r.host);
    const v = e.path.value;
    const pathOk = e.path.type === "Exact"
      ? r.path === v
      : e.path.type === "PathPrefix"
      ? v === "/" || r.path === v || r.path.startsWith(`${v}/`)
      : new RegExp(`^(?:${v})$`).test(r.path);
    const headerOk = e.headers.every((m) => r.header && m.value === "1");
    const queryOk = e.queryParams.every((m) => r.query && m.value === "1");
    return hostOk && pathOk && headerOk && queryOk && (e.method === null || e.method === r.method);
  });
  return i < 0 ? null : i;
}

if (!inPrivateNetwork()) {
  Deno.test("Gateway traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("a rendered Gateway configuration routes real traffic", async (t) => {
    const names = ["alpha", "beta", "gamma", "delta"];
    const servers: TestBackend[] = [];
    for (const [i, name] of names.entries()) servers.push(await startBackend({ name, host: privateAddress(10 + i) }));
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-traffic-" });
    try {
      const [alpha, beta, gamma, delta] = servers.map((s) =>
        service("ns", s.name, [{ address: s.address, port: s.port }])
      );
      const be = { alpha: alpha.name, beta: beta.name, gamma: gamma.name, delta: delta.name };
      const hdrs = (name: string, value: string) => [{ name, type: "Exact" as const, value }];
      const port80 = (first: RouteEntry[]) =>
        httpPort(80, [
          ...first,
          // a.example.com: Exact, regex, the longer prefix, a header match on /v2, /v2, a method match on /, /
          entry("a.example.com", "=/exact", "gw_alpha"),
          entry("a.example.com", "~/re/[0-9]+", "gw_delta"),
          entry("a.example.com", "/v2/long", "gw_delta"),
          entry("a.example.com", "/v2", "gw_beta", { headers: [{ name: "x-env", type: "Exact", value: "canary" }] }),
          entry("a.example.com", "/v2", "gw_gamma"),
          entry("a.example.com", "/", "gw_beta", { method: "POST" }),
          entry("a.example.com", "/", "gw_alpha"),
          // one or more labels
          entry("*.example.com", "/", "gw_delta"),
          // any host
          entry("", "/q", "gw_beta", { queryParams: hdrs("v", "1") }),
          entry("", "/hdr", "gw_beta", { headers: [{ name: "x-re", type: "RegularExpression", value: "ab+c" }] }),
          entry("", "/headers", "gw_headers"),
          entry("", "/rewrite", "gw_rewrite"),
          entry("", "/rw2/deep", "gw_rewrite"),
          entry("", "/full", "gw_full"),
          entry("", "/redirect", "gw_redirect"),
          entry("", "/weighted", "gw_weighted"),
          entry("", "/half", "gw_half"),
          entry("", "/none", "gw_none"),
        ]);
      const build = (first: RouteEntry[] = []): GatewayProxyModel =>
        model(
          [
            port80(first),
            httpsPort(443, [
              entry("a.example.com", "/", "gw_alpha"),
              entry("*.wild.example", "/", "gw_beta"),
              entry("", "/", "gw_gamma"),
            ], [cert("ns", "a", ["a.example.com"]), cert("ns", "wild", ["*.wild.example"]), cert("ns", "any", [])]),
            httpPort(8080, [entry("", "/redirect", "gw_redirect"), entry("", "/", "gw_delta")]),
          ],
          [
            rule("gw_alpha", [[be.alpha, 1]]),
            rule("gw_beta", [[be.beta, 1]]),
            rule("gw_gamma", [[be.gamma, 1]]),
            rule("gw_delta", [[be.delta, 1]]),
            rule("gw_headers", [[be.alpha, 1]], {
              requestHeaders: {
                set: [{ name: "X-Set", value: `a'b%c"d\\e` }, { name: "x-replaced", value: "new" }],
                add: [{ name: "X-Add", value: "added" }],
                remove: ["x-rm"],
              },
              responseHeaders: { set: [{ name: "X-Resp", value: "100%" }], add: [], remove: ["content-type"] },
            }),
            rule("gw_rewrite", [[be.beta, 1]], {
              rewrite: { hostname: "internal.example", path: { type: "ReplacePrefixMatch", value: "/new" } },
            }),
            rule("gw_full", [[be.beta, 1]], {
              rewrite: { hostname: null, path: { type: "ReplaceFullPath", value: "/other" } },
            }),
            rule("gw_redirect", [], {
              redirect: {
                scheme: null,
                hostname: null,
                port: null,
                path: { type: "ReplacePrefixMatch", value: "/" },
                statusCode: 302,
              },
            }),
            rule("gw_weighted", [[be.alpha, 70], [be.beta, 30]]),
            rule("gw_half", [[be.gamma, 1]], { invalidWeight: 1 }),
            rule("gw_none", []),
          ],
          [alpha, beta, gamma, delta],
        );
      const templates = await loadTemplates(null);
      const ca = await createCA({ commonName: "gateway test CA" });
      const pems = {
        "ns_a.pem": await pemFor(ca, ["a.example.com"]),
        "ns_wild.pem": await pemFor(ca, ["*.wild.example"]),
        "ns_any.pem": await pemFor(ca, ["default.example"]),
      };
      const rendered = renderGateway(build(), templates);
      await writeRendered(dir, rendered, pems);
      const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      const [p80, p443, p8080] = [containerPort(80), containerPort(443), containerPort(8080)];
      try {
        await t.step("paths: Exact, regex, longer prefix, element-wise; hosts lower-cased without port", async () => {
          assert.equal(await who(p80, "a.example.com", "/exact"), "alpha");
          assert.equal(await who(p80, "a.example.com", "/exact/x"), "alpha"); // the prefix "/"
          assert.equal(await who(p80, "a.example.com", "/re/123"), "delta");
          assert.equal(await who(p80, "a.example.com", "/re/12x"), "alpha");
          assert.equal(await who(p80, "a.example.com", "/v2"), "gamma");
          assert.equal(await who(p80, "a.example.com", "/v2/"), "gamma");
          assert.equal(await who(p80, "a.example.com", "/v2/x?y=1"), "gamma");
          assert.equal(await who(p80, "a.example.com", "/v2example"), "alpha");
          assert.equal(await who(p80, "a.example.com", "/v2/long/x"), "delta");
          assert.equal(await who(p80, "A.Example.COM:80", "/v2"), "gamma");
        });
        await t.step("hosts: exact before wildcard of one or more labels before any host; 404", async () => {
          assert.equal(await who(p80, "b.example.com", "/v2"), "delta");
          assert.equal(await who(p80, "x.y.z.example.com", "/"), "delta");
          assert.equal(await who(p80, "example.com", "/"), "404");
          assert.equal(await who(p80, ".example.com", "/"), "404");
          assert.equal(await who(p80, "other.test", "/"), "404");
          assert.equal(await who(p80, "other.test", "/headers"), "alpha");
        });
        await t.step("header, query and method matches win only where their precedence is higher", async () => {
          const canary = { headers: { "x-env": "canary" } };
          assert.equal(await who(p80, "a.example.com", "/v2/x", canary), "beta");
          assert.equal(await who(p80, "a.example.com", "/v2/x", { headers: { "x-env": "other" } }), "gamma");
          // the longer prefix comes first whatever the headers
          assert.equal(await who(p80, "a.example.com", "/v2/long", canary), "delta");
          assert.equal(await who(p80, "a.example.com", "/other", { method: "POST" }), "beta");
          assert.equal(await who(p80, "a.example.com", "/exact", { method: "POST" }), "alpha");
          assert.equal(await who(p80, "a.example.com", "/v2", { method: "POST" }), "gamma");
          assert.equal(await who(p80, "any.test", "/q?v=1"), "beta");
          assert.equal(await who(p80, "any.test", "/q?w=2&v=1"), "beta");
          assert.equal(await who(p80, "any.test", "/q?v=2"), "404");
          assert.equal(await who(p80, "any.test", "/hdr", { headers: { "x-re": "abbbc" } }), "beta");
          assert.equal(await who(p80, "any.test", "/hdr", { headers: { "x-re": "xabc" } }), "404");
        });
        await t.step("request and response header modifiers", async () => {
          const a = await get(p80, "any.test", "/headers", {
            headers: { "x-rm": "1", "x-replaced": "old", "x-add": "first" },
          });
          assert.equal(a.body?.name, "alpha");
          assert.equal(a.body?.headers["x-set"], `a'b%c"d\\e`);
          assert.equal(a.body?.headers["x-replaced"], "new");
          assert.equal(a.body?.headers["x-add"], "first, added");
          assert.equal(a.body?.headers["x-rm"], undefined);
          assert.equal(a.headers["x-resp"], "100%");
          assert.equal(a.headers["content-type"], undefined);
        });
        await t.step("Server (server-header): on the backends' answers and the proxy's own 404", async () => {
          assert.equal((await get(p80, "any.test", "/headers")).headers.server, "ingress-controller");
          const missing = await get(p80, "any.test", "/nowhere");
          assert.deepEqual([missing.status, missing.headers.server], [404, "ingress-controller"]);
        });
        await t.step("rewrites: hostname and prefix, full path; the query kept", async () => {
          const a = await get(p80, "any.test", "/rewrite/x/y?q=1");
          assert.deepEqual([a.body?.name, a.body?.host, a.body?.target], ["beta", "internal.example", "/new/x/y?q=1"]);
          assert.equal((await get(p80, "any.test", "/rewrite")).body?.target, "/new");
          // the rule's other prefix
          assert.equal((await get(p80, "any.test", "/rw2/deep/z")).body?.target, "/new/z");
          assert.equal((await get(p80, "any.test", "/full/a?b=c")).body?.target, "/other?b=c");
        });
        await t.step(
          "redirects: the listener's port unless the scheme's default, prefix replaced, query kept",
          async () => {
            const r = await get(p80, "any.test", "/redirect/x?y=1");
            assert.deepEqual([r.status, r.headers.location], [302, "http://any.test/x?y=1"]);
            assert.equal((await get(p80, "any.test", "/redirect")).headers.location, "http://any.test/");
            assert.equal((await get(p8080, "any.test", "/redirect/z")).headers.location, "http://any.test:8080/z");
            assert.equal(await who(p8080, "any.test", "/other"), "delta");
          },
        );
        await t.step("500 for a rule without backends; weighted targets and the share of invalid ones", async () => {
          assert.equal((await get(p80, "any.test", "/none")).status, 500);
          const count = async (path: string, n: number) => {
            const seen: Record<string, number> = {};
            for (let i = 0; i < n; i++) {
              const name = await who(p80, "any.test", path);
              seen[name] = (seen[name] ?? 0) + 1;
            }
            return seen;
          };
          const w = await count("/weighted", 200);
          assert.deepEqual(Object.keys(w).sort(), ["alpha", "beta"]);
          assert.ok(w.alpha >= 115 && w.alpha <= 165, `70/30 of 200: ${JSON.stringify(w)}`);
          const h = await count("/half", 200);
          assert.deepEqual(Object.keys(h).sort(), ["500", "gamma"]);
          assert.ok(h.gamma >= 65 && h.gamma <= 135, `1/1 of 200: ${JSON.stringify(h)}`);
        });
        await t.step("HTTPS: each listener's certificate by SNI, the hostname-less one's for other names", async () => {
          assert.deepEqual(await tlsWho(p443, "a.example.com", ca.certPem), { peer: "a.example.com", name: "alpha" });
          assert.deepEqual(await tlsWho(p443, "x.wild.example", ca.certPem), { peer: "*.wild.example", name: "beta" });
          assert.deepEqual(await tlsWho(p443, "other.example", ca.certPem), { peer: "default.example", name: "gamma" });
        });
      } finally {
        await proxy.stop();
      }
    } finally {
      for (const s of servers) await s.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test("random route tables in any order: haproxy answers as the first matching entry", async () => {
    const n = 16;
    const servers: TestBackend[] = [];
    for (let i = 0; i < n; i++) servers.push(await startBackend({ name: `s${i}`, host: privateAddress(20 + i) }));
    const templates = await loadTemplates(null);
    const random = seeded(20261127);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    try {
      for (let round = 0; round < 4; round++) {
        const entries: RouteEntry[] = [];
        for (let i = 0; i < n; i++) {
          const more: Partial<RouteEntry> = {};
          if (random() < 0.3) more.headers = [{ name: "x-h", type: "Exact", value: "1" }];
          if (random() < 0.2) more.method = "POST";
          if (random() < 0.15) more.queryParams = [{ name: "q", type: "Exact", value: "1" }];
          const hostname = pick(HOSTS);
          // a listener whose hostname covers the entry's (the model intersects them)
          more.listenerHostname = pick(LISTENERS.filter((l) => covers(l, hostname)));
          entries.push(entry(hostname, pick(PATHS), `gw_e${i}`, more));
        }
        // the model's order: by listener, most specific first (a stable sort keeps the rest as drawn)
        entries.sort((x, y) => LISTENERS.indexOf(x.listenerHostname!) - LISTENERS.indexOf(y.listenerHostname!));
        const backends = servers.map((s) => service("ns", s.name, [{ address: s.address, port: s.port }]));
        const m = model(
          [httpPort(80, entries)],
          entries.map((e) => rule(e.rule, [[backends[Number(e.rule.slice(4))].name, 1]])),
          backends,
        );
        const rendered = renderGateway(m, templates);
        const dir = await Deno.makeTempDir({ prefix: "ic-gateway-random-" });
        try {
          await writeRendered(dir, rendered, {});
          const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
          try {
            for (const host of ["a.x.com", "b.a.x.com", "c.b.a.x.com", "x.com", "z.com"]) {
              for (const path of ["/", "/a", "/a/", "/a/b", "/a/b/c", "/ab", "/a/12", "/a/1x"]) {
                for (const [method, header, query] of REQUEST_VARIANTS) {
                  const want = firstMatch(entries, { host, path, method, header, query });
                  const headers: Record<string, string> = header ? { "x-h": "1" } : {};
                  const got = await who(containerPort(80), host, `${path}${query ? "?q=1" : ""}`, { method, headers });
                  assert.equal(
                    got,
                    want === null ? "404" : `s${entries[want].rule.slice(4)}`,
                    `${method} ${host}${path} header ${header} query ${query} in round ${round}: ` +
                      JSON.stringify(
                        entries.map((
                          e,
                        ) => [e.hostname, e.path.value, e.method, e.headers.length, e.queryParams.length]),
                      ),
                  );
                }
              }
            }
          } finally {
            await proxy.stop();
          }
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      }
    } finally {
      for (const s of servers) await s.close();
    }
  });

  Deno.test("the proxy applies a Gateway's path and endpoint changes through the Runtime API, no reload", async () => {
    const servers: TestBackend[] = [];
    for (const [i, name] of ["alpha", "beta", "gamma"].entries()) {
      servers.push(await startBackend({ name, host: privateAddress(40 + i) }));
    }
    const [alpha, beta, gamma] = servers;
    await using p = await proxyUnderTest();
    try {
      const templates = await loadTemplates(null);
      const at = (s: TestBackend) => [{ address: s.address, port: s.port }];
      const desired = (path: string, betaServer: TestBackend, more: RouteEntry[] = []): DesiredState => {
        const m = model(
          [httpPort(80, [...more, entry("a.example.com", path, "gw_a"), entry("", "/", "gw_f")])],
          [
            rule("gw_a", [[service("ns", "alpha", []).name, 1]]),
            rule("gw_f", [[service("ns", "beta", []).name, 1]], {
              requestHeaders: { set: [{ name: "X-F", value: "1" }], add: [], remove: [] },
            }),
          ],
          [service("ns", "alpha", at(alpha)), service("ns", "beta", at(betaServer))],
        );
        const r = renderGateway(m, templates);
        return {
          config: r.config,
          crtList: r.crtList,
          pems: new Map(),
          maps: new Map(Object.entries(r.maps) as [MapFile, string][]),
        };
      };
      const port = containerPort(80);
      // the Applier's HAProxy binds its own loopback address (IC_BIND_ADDR) at the container port
      const getAt = (host: string, path: string) =>
        get(port, host, path, { address: p.bind }).then((a) =>
          `${a.body?.name ?? a.status} ${a.body?.headers["x-f"] ?? "-"}`
        );
      const first = await p.applier.apply(desired("/v1", beta));
      assert.deepEqual([first.kind, first.ok], ["start", true], first.error ?? "");
      assert.equal(await getAt("a.example.com", "/v1/x"), "alpha -");
      assert.equal(await getAt("a.example.com", "/other"), "beta 1");
      const pid = await workerPid(p.haproxy);

      const moved = await p.applier.apply(desired("/v2", beta));
      assert.deepEqual([moved.kind, moved.ok], ["runtime", true], moved.error ?? "");
      assert.equal(await getAt("a.example.com", "/v2"), "alpha -");
      assert.equal(await getAt("a.example.com", "/v1"), "beta 1");

      // the filtered rule's backend holds a copy of the Service's slots: both follow the endpoint
      const endpoint = await p.applier.apply(desired("/v2", gamma));
      assert.deepEqual([endpoint.kind, endpoint.ok], ["runtime", true], endpoint.error ?? "");
      assert.equal(await getAt("a.example.com", "/v1"), "gamma 1");
      assert.equal(await workerPid(p.haproxy), pid, "no reload");

      // a header match is a configuration line: a reload
      const header = [entry("a.example.com", "/v1", "gw_a", { headers: [{ name: "x-h", type: "Exact", value: "1" }] })];
      const conditioned = await p.applier.apply(desired("/v2", gamma, header));
      assert.deepEqual([conditioned.kind, conditioned.ok], ["reload", true], conditioned.error ?? "");
      assert.equal(await getAt("a.example.com", "/v1"), "gamma 1");
    } finally {
      await p.close();
      for (const s of servers) await s.close();
    }
  });
}
