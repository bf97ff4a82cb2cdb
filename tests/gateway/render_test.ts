/**
 * The Gateway renderer (lib/gateway/render.ts) on hand-written proxy models: the container ports,
 * `haproxy -c` on a model using every feature, the map keys and ranks (and when an entry becomes a
 * guarded line), the crt-list, the refusal of unsafe values, and the proxy's reload decision
 * (lib/proxy/plan.ts) for route changes: a path or hostname change of an unconditioned entry is a
 * map change, applied without reload.
 */
import assert from "node:assert/strict";
import { containerPort, containerPortClashes } from "../../lib/gateway/ports.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { type DesiredState, type Plan, planApply } from "../../lib/proxy/plan.ts";
import { MAP_FILES, MAP_LINE, type MapFile } from "../../lib/render/maps.ts";
import type { GatewayProxyModel, RouteEntry, RuleBackend } from "../../lib/gateway/model_types.ts";
import {
  cert,
  checkRendered,
  createCA,
  entry,
  httpPort,
  httpsPort,
  model,
  pemFor,
  rule,
  service,
} from "./render_fixtures.ts";

const templates = await loadTemplates(null);
const a = service("ns", "a", [{ address: "10.0.0.1", port: 8080 }]);
const b = service("ns", "b", [{ address: "10.0.0.2", port: 8080 }, { address: "[fd00::2]", port: 8080 }]);
const h2c = { ...service("ns", "grpc", [{ address: "10.0.0.3", port: 3001 }], 8081), proto: "h2" as const };
const render = (m: GatewayProxyModel) => renderGateway(m, templates);

Deno.test("containerPort: 80 and 443 as an Ingress proxy, privileged ports up, the pod's own ports never", () => {
  assert.equal(containerPort(80), 8080);
  assert.equal(containerPort(443), 8443);
  assert.equal(containerPort(8000), 8000);
  assert.equal(containerPort(30080), 30080);
  assert.equal(containerPort(22), 10022);
  assert.equal(containerPort(1), 10001);
  assert.equal(containerPort(1023), 11023);
  assert.equal(containerPort(1024), 1024);
  // 8080 and 8443 are 80's and 443's: a Gateway listening on 80 and 8080 binds two ports
  assert.equal(containerPort(8080), 18080);
  assert.equal(containerPort(8443), 18443);
  for (const p of [56789, 56790, 56791]) assert.equal(containerPort(p), p - 10000);
  assert.deepEqual(containerPortClashes([80, 8080, 443, 8443, 56789]), []);
  assert.deepEqual(containerPortClashes([81, 10081, 8080, 18080]), [[81, 10081], [8080, 18080]]);
  assert.throws(() => containerPort(0), RangeError);
  assert.throws(() => containerPort(65536), RangeError);
});

/** A model that uses every feature of the renderer. */
function fullModel(): GatewayProxyModel {
  const hdr = (name: string, value: string, type: "Exact" | "RegularExpression" = "Exact") => ({ name, type, value });
  return model(
    [
      httpPort(80, [
        entry("a.example.com", "=/exact", "gw_direct"),
        entry("a.example.com", "/v2", "gw_headers", { headers: [hdr("x-env", "it's 100%")] }),
        entry("a.example.com", "/", "gw_weighted", {
          method: "POST",
          queryParams: [hdr("q", "^[0-9]+$", "RegularExpression")],
        }),
        entry("a.example.com", "/", "gw_rewrite"),
        entry("*.deep.a.b.c.d.example.com", "/", "gw_direct"),
        entry("*.example.com", "/redirect", "gw_redirect"),
        entry("*.example.com", "/", "gw_direct"),
        entry("", "~/re/[0-9]+", "gw_direct"),
        entry("", "/none", "gw_none"),
        entry("", "/cors", "gw_cors"),
        entry("", "/cors-any", "gw_cors_any"),
        entry("", "/slow", "gw_timeout"),
        entry("", "/unlimited", "gw_no_timeout"),
        entry("", "/per-backend", "gw_per_backend"),
        entry("", "/h2c", "gw_h2c"),
        entry("", "/", "gw_prefix_redirect"),
      ]),
      {
        ...httpsPort(443, [entry("", "/", "gw_direct")], [
          cert("ns", "tls", ["a.example.com"]),
          cert("ns", "wild", ["*.example.com"]),
          cert("ns", "any", []),
        ]),
        listenerHostnames: ["a.example.com", "*.example.com"],
      },
      httpPort(8080, [entry("", "/", "gw_direct")]),
    ],
    [
      rule("gw_direct", [[a.name, 1]]),
      rule("gw_headers", [[b.name, 1]], {
        requestHeaders: {
          set: [{ name: "X-Set", value: `a'b%c"d\\e` }],
          add: [{ name: "X-Add", value: "1" }],
          remove: ["x-rm"],
        },
        responseHeaders: { set: [{ name: "X-Resp", value: "yes" }], add: [], remove: ["server"] },
      }),
      rule("gw_weighted", [[a.name, 70], [b.name, 30]], { invalidWeight: 10 }),
      rule("gw_rewrite", [[b.name, 1]], {
        rewrite: { hostname: "internal.example", path: { type: "ReplaceFullPath", value: "/full" } },
      }),
      rule("gw_redirect", [], { redirect: { scheme: null, hostname: null, port: 8443, path: null, statusCode: 302 } }),
      rule("gw_prefix_redirect", [], {
        redirect: {
          scheme: "https",
          hostname: "x.example",
          port: null,
          path: { type: "ReplacePrefixMatch", value: "/new" },
          statusCode: 301,
        },
      }),
      rule("gw_none", []),
      rule("gw_cors", [[a.name, 1]], {
        cors: {
          allowOrigins: ["https://www.example.com", "https://*.example.org:8443"],
          allowCredentials: true,
          allowMethods: ["GET", "OPTIONS"],
          allowHeaders: ["x-a", "x-b"],
          exposeHeaders: ["x-c"],
          maxAge: 3600,
        },
      }),
      rule("gw_cors_any", [[a.name, 1]], {
        cors: {
          allowOrigins: ["*"],
          allowCredentials: false,
          allowMethods: ["*"],
          allowHeaders: ["*"],
          exposeHeaders: [],
          maxAge: 5,
        },
      }),
      rule("gw_timeout", [[a.name, 1]], { timeoutMs: 500 }),
      rule("gw_no_timeout", [[a.name, 1]], { timeoutMs: 0 }),
      {
        ...rule("gw_per_backend", [[a.name, 1], [b.name, 1]]),
        targets: [
          {
            backend: a.name,
            weight: 1,
            requestHeaders: { set: [{ name: "Backend", value: "a" }], add: [], remove: [] },
            responseHeaders: null,
          },
          { backend: b.name, weight: 1, requestHeaders: null, responseHeaders: { set: [], add: [], remove: ["x-b"] } },
        ],
      },
      rule("gw_h2c", [[h2c.name, 1]]),
    ],
    [a, b, h2c],
  );
}

Deno.test("renderGateway: a model using every feature passes haproxy -c", async () => {
  const ca = await createCA({ commonName: "test CA" });
  const r = render(fullModel());
  const pems = {
    "ns_tls.pem": await pemFor(ca, ["a.example.com"]),
    "ns_wild.pem": await pemFor(ca, ["*.example.com"]),
    "ns_any.pem": await pemFor(ca, ["any.example"]),
  };
  const check = await checkRendered(r, pems);
  assert.ok(check.ok, `${check.output}\n${r.config}`);
  // one frontend per port, bound on its container port
  assert.match(r.config, /^frontend http_80\n {4}bind "\$\{IC_BIND_ADDR\}:8080"$/m);
  assert.match(
    r.config,
    /^frontend https_443\n {4}bind "\$\{IC_BIND_ADDR\}:8443" ssl crt-list "\$\{IC_CERT_DIR\}\/crt-list" alpn h2,http\/1.1$/m,
  );
  assert.match(r.config, /^frontend http_8080\n {4}bind "\$\{IC_BIND_ADDR\}:18080"$/m);
  // the shared sections
  assert.match(r.config, /^global\n/m);
  assert.match(r.config, /^frontend stats\n/m);
  assert.match(r.config, /^backend ic_default_404\n/m);
  for (const [file, text] of Object.entries(r.maps)) {
    for (const line of text.split("\n").filter((l) => l !== "")) assert.match(line, MAP_LINE, file);
  }
});

Deno.test("renderGateway: map keys by listener port and host part, values with the rank of guarded lines before", () => {
  const r = render(fullModel());
  assert.equal(r.maps["routes-exact.map"], "80:a.example.com/exact be_ns_a_80:0\n");
  assert.deepEqual(r.maps["routes-prefix.map"].split("\n").filter((l) => l), [
    "443:/ be_ns_a_80:0",
    "8080:/ be_ns_a_80:0",
    // after the two conditioned entries of a.example.com
    "80:.example.com/ be_ns_a_80:3",
    "80:.example.com/redirect/ gw_redirect:3",
    "80:/ gw_prefix_redirect:3",
    "80:/cors-any/ gw_cors_any:3",
    "80:/cors/ gw_cors:3",
    "80:/h2c/ be_ns_grpc_8081:3",
    "80:/none/ gw_none:3",
    "80:/per-backend/ gw_per_backend:3",
    "80:/slow/ gw_timeout:3",
    "80:/unlimited/ gw_no_timeout:3",
    "80:a.example.com/ gw_rewrite:2",
  ]);
  assert.equal(r.maps["routes-regex.map"], "^80:(?=/)(?:/re/[0-9]+)$ be_ns_a_80:3\n");
  for (const f of ["redirect-hosts.map", "passthrough.map", "owned-hosts.map"] as const) assert.equal(r.maps[f], "");
  // conditioned entries, and the wildcard deeper than the lookups go, are guarded lines in order
  const guarded = r.config.split("\n").filter((l) => l.includes("if { var(txn.hit),field(2,:) -m int gt"));
  assert.deepEqual(guarded.map((l) => l.trim().split(" ")[1] + " " + l.trim().split(" ")[2]), [
    "set-var(txn.hit) str(gw_headers:0)",
    "set-var(txn.hit) str(gw_weighted:1)",
    "set-var(txn.hit) str(be_ns_a_80:2)",
  ]);
  assert.match(
    guarded[0],
    /\{ var\(txn.host\) -m str a.example.com \} \{ var\(txn.pslash\) -m beg -- '\/v2\/' \} \{ req.fhdr\(x-env\) -m str -- 'it'\\''s 100%' \}$/,
  );
  assert.match(guarded[1], /\{ method POST \} \{ urlp\(q\) -m reg -- '\^\(\?:\^\[0-9\]\+\$\)\$' \}$/);
  assert.match(guarded[2], /\{ var\(txn.host\) -m end .deep.a.b.c.d.example.com \} !\{ var\(txn.host\) -m beg . \}$/);
});

Deno.test("renderGateway: rule backends: direct rules have none, filters and weights do", () => {
  const r = render(fullModel());
  const backend = (name: string) => {
    const m = new RegExp(`^backend ${name.replaceAll(".", "[.]")}\\n((?: {4}.*\\n)*)`, "m").exec(r.config);
    assert.ok(m, `backend ${name} in\n${r.config}`);
    return m[1].split("\n").map((l) => l.trim()).filter((l) =>
      l && !l.startsWith("server ") && !l.startsWith("balance")
    );
  };
  assert.doesNotMatch(r.config, /^backend gw_direct$/m);
  assert.deepEqual(backend("gw_headers"), [
    `http-request set-header X-Set 'a'\\''b%%c"d\\e'`,
    "http-request add-header X-Add '1'",
    "http-request del-header x-rm",
    "http-response set-header X-Resp 'yes'",
    "http-response del-header server",
  ]);
  assert.deepEqual(backend("gw_rewrite"), [
    "http-request set-header Host internal.example",
    "http-request set-path '/full'",
  ]);
  assert.deepEqual(backend("gw_redirect"), [
    "http-request redirect prefix 'https://%[var(txn.host)]:8443' code 302 if { ssl_fc }",
    "http-request redirect prefix 'http://%[var(txn.host)]:8443' code 302",
  ]);
  assert.deepEqual(backend("gw_prefix_redirect"), [
    "http-request set-var(txn.rest) var(txn.path),bytes(0)",
    "http-request set-var(txn.qs) query,regsub(^,?)",
    "http-request redirect location 'https://x.example/new%[var(txn.rest)]%[var(txn.qs)]' code 301",
  ]);
  assert.match(backend("gw_none")[0], /^http-request return status 500 /);
  assert.match(backend("gw_weighted")[0], /^http-request return status 500 /);
  assert.match(r.config, /^backend gw_weighted\.0\n {4}balance roundrobin\n {4}server s1 10\.0\.0\.1:8080$/m);
  assert.match(r.config, /^backend gw_weighted\.1\n {4}balance roundrobin\n {4}server s1 10\.0\.0\.2:8080$/m);
  // each frontend picks a weighted rule's target: 70 of 110 → .0, 30 → .1, the invalid 10 stay on the rule (500)
  assert.equal(r.config.match(/rand\(110\) if \{ var\(txn.route\) -m str gw_weighted \}/g)?.length, 3);
  assert.match(
    r.config,
    /str\(gw_weighted\.0\) if \{ var\(txn.route\) -m str gw_weighted \} \{ var\(txn.rnd\) -m int lt 70 \}/,
  );
  assert.match(
    r.config,
    /str\(gw_weighted\.1\) if \{ var\(txn.route\) -m str gw_weighted \} \{ var\(txn.rnd\) -m int lt 100 \}/,
  );
});

Deno.test("renderGateway: ReplacePrefixMatch keeps the rest of the path without a double slash", () => {
  const rewrite = (value: string) =>
    render(model(
      [httpPort(80, [entry("", "/foo", "gw_r")])],
      [rule("gw_r", [[a.name, 1]], { rewrite: { hostname: null, path: { type: "ReplacePrefixMatch", value } } })],
      [a],
    )).config.split("\n").filter((l) => l.includes("txn.rest")).map((l) => l.trim());
  assert.deepEqual(rewrite("/xyz"), [
    "http-request set-var(txn.rest) var(txn.path),bytes(4)",
    "http-request set-path '/xyz%[var(txn.rest)]'",
  ]);
  assert.deepEqual(rewrite("/xyz/"), rewrite("/xyz"));
  const empty = [
    "http-request set-var(txn.rest) var(txn.path),bytes(4)",
    "http-request set-path '%[var(txn.rest)]' if { var(txn.rest) -m len gt 0 }",
    "http-request set-path '/' if !{ var(txn.rest) -m len gt 0 }",
  ];
  assert.deepEqual(rewrite(""), empty);
  assert.deepEqual(rewrite("/"), empty);
  // a rule with several prefixes: the longest the request is under
  const two = render(model(
    [httpPort(80, [entry("", "/foo/bar", "gw_r"), entry("", "/foo", "gw_r"), entry("", "/", "gw_r")])],
    [rule("gw_r", [[a.name, 1]], { rewrite: { hostname: null, path: { type: "ReplacePrefixMatch", value: "/x" } } })],
    [a],
  )).config.split("\n").filter((l) => l.includes("txn.pfx") || l.includes("txn.rest")).map((l) => l.trim());
  assert.deepEqual(two, [
    "http-request set-var(txn.pfx) int(0) if { var(txn.pslash) -m beg -- '/foo/bar/' }",
    "http-request set-var(txn.pfx) int(1) if { var(txn.pslash) -m beg -- '/foo/' } !{ var(txn.pfx) -m found }",
    "http-request set-var(txn.pfx) int(2) if { var(txn.pslash) -m beg -- '/' } !{ var(txn.pfx) -m found }",
    "http-request set-var(txn.rest) var(txn.path),bytes(8) if { var(txn.pfx) -m int eq 0 }",
    "http-request set-var(txn.rest) var(txn.path),bytes(4) if { var(txn.pfx) -m int eq 1 }",
    "http-request set-var(txn.rest) var(txn.path),bytes(0) if { var(txn.pfx) -m int eq 2 }",
    "http-request set-path '/x%[var(txn.rest)]'",
  ]);
});

Deno.test("renderGateway: crt-list with the hostname-less listener's certificate first; strict-sni without one", () => {
  const m = (certs: ReturnType<typeof cert>[]) =>
    render(model([httpsPort(443, [entry("", "/", "gw_d")], certs)], [rule("gw_d", [[a.name, 1]])], [a]));
  const both = m([
    cert("ns", "wild", ["*.example.com"]),
    cert("ns", "site", ["a.example.com", "b.example.com"]),
    cert("ns", "any", []),
  ]);
  assert.equal(both.crtList, "ns_any.pem !*\nns_wild.pem *.example.com\nns_site.pem a.example.com b.example.com\n");
  assert.deepEqual(both.secrets.map((s) => s.file), ["ns_any.pem", "ns_site.pem", "ns_wild.pem"]);
  assert.doesNotMatch(both.config, /strict-sni/);
  const named = m([cert("ns", "site", ["a.example.com"])]);
  assert.equal(named.crtList, "ns_site.pem a.example.com\n");
  assert.match(named.config, /alpn h2,http\/1.1 strict-sni$/m);
  // one Secret for two listeners: one line with both names
  const shared = m([cert("ns", "site", ["a.example.com"]), cert("ns", "site", ["b.example.com"])]);
  assert.equal(shared.crtList, "ns_site.pem a.example.com b.example.com\n");
});

Deno.test("renderGateway: an order the map lookups cannot give makes the later entry a guarded line", () => {
  const guardedOf = (routes: RouteEntry[]) => {
    const r = render(model([httpPort(80, routes)], [rule("gw_1", [[a.name, 1]]), rule("gw_2", [[b.name, 1]])], [a, b]));
    return {
      guarded: r.config.split("\n").filter((l) => l.includes("field(2,:) -m int gt")).length,
      maps: r.maps["routes-exact.map"] + r.maps["routes-prefix.map"] + r.maps["routes-regex.map"],
    };
  };
  // the spec's order: all in maps
  assert.equal(
    guardedOf([entry("a.x.com", "/", "gw_1"), entry("*.x.com", "/a", "gw_2"), entry("", "/a/b", "gw_2")]).guarded,
    0,
  );
  assert.equal(guardedOf([entry("", "=/a", "gw_1"), entry("", "/a/b", "gw_2"), entry("", "/a", "gw_1")]).guarded, 0);
  // a wildcard first, then a host under it; a short prefix before a longer one; a prefix before an Exact path under it
  assert.equal(guardedOf([entry("*.x.com", "/", "gw_1"), entry("a.x.com", "/", "gw_2")]).guarded, 1);
  assert.equal(guardedOf([entry("", "/a", "gw_1"), entry("", "/a/b", "gw_2")]).guarded, 1);
  assert.equal(guardedOf([entry("", "/a", "gw_1"), entry("", "=/a/b", "gw_2")]).guarded, 1);
  assert.equal(guardedOf([entry("", "/a", "gw_1"), entry("", "~/a/.*", "gw_2")]).guarded, 1);
  // unrelated prefixes and hosts in any order stay in the maps
  assert.equal(
    guardedOf([
      entry("b.x.com", "/b", "gw_1"),
      entry("a.x.com", "/", "gw_2"),
      entry("", "/a", "gw_1"),
      entry("", "/ab/c", "gw_2"),
    ])
      .guarded,
    0,
  );
  // a regex whose paths are under no earlier prefix of its host stays in the map
  assert.equal(guardedOf([entry("", "/b", "gw_1"), entry("", "~/re/[0-9]+", "gw_2")]).guarded, 0);
  assert.equal(guardedOf([entry("", "/re", "gw_1"), entry("", "~/re/[0-9]+", "gw_2")]).guarded, 1);
  assert.equal(guardedOf([entry("", "/b", "gw_1"), entry("", "~/(re|b)/x", "gw_2")]).guarded, 1);
  // an Exact path after a regex that matches it
  assert.equal(guardedOf([entry("", "~/re/[0-9]+", "gw_1"), entry("", "=/re/1", "gw_2")]).guarded, 1);
  assert.equal(guardedOf([entry("", "~/re/[0-9]+", "gw_1"), entry("", "=/re/x", "gw_2")]).guarded, 0);
  // the same key twice: the first takes every request, the second is left out
  const twice = guardedOf([entry("", "/a", "gw_1"), entry("", "/a", "gw_2")]);
  assert.deepEqual([twice.guarded, twice.maps], [0, "80:/a/ be_ns_a_80:0\n"]);
});

Deno.test("renderGateway: listener isolation: after a listener's entries, a stop for the hosts it wins", () => {
  const on = (listenerHostname: string, e: RouteEntry) => ({ ...e, listenerHostname });
  const r = render(model(
    [httpPort(80, [
      on("a.example.com", entry("a.example.com", "/a", "gw_1")),
      on("*.example.com", entry("b.example.com", "/b", "gw_1")),
      on("*.example.com", entry("*.example.com", "/w", "gw_1", { method: "GET" })),
      on("", entry("", "/x", "gw_1")),
      // dead: every host of theirs is won by a more specific listener
      on("", entry("c.example.com", "/c", "gw_1", { method: "GET" })),
      on("", entry("*.a.example.com", "/c", "gw_1")),
    ])],
    [rule("gw_1", [[a.name, 1]])],
    [a],
  ));
  assert.deepEqual(r.maps["routes-prefix.map"].split("\n").filter((l) => l), [
    "80:.example.com/ ic_default_404:1",
    "80:/x/ be_ns_a_80:1",
    "80:a.example.com/ ic_default_404:0",
    "80:a.example.com/a/ be_ns_a_80:0",
    "80:b.example.com/b/ be_ns_a_80:0",
  ]);
  assert.equal(r.config.split("\n").filter((l) => l.includes("-m int gt")).length, 1);
  // a listener's entries after a less specific listener's, or not together: a bug of the model
  const bad = (listeners: string[]) => () =>
    render(model(
      [httpPort(80, listeners.map((l, i) => on(l, entry(l, `/${i}`, "gw_1"))))],
      [rule("gw_1", [[a.name, 1]])],
      [a],
    ));
  assert.throws(bad(["*.example.com", "a.example.com"]), /after a less specific one/);
  assert.throws(bad(["", "a.example.com"]), /after a less specific one/);
  assert.throws(bad(["a.example.com", "b.example.com", "a.example.com"]), /not together/);
  bad(["a.example.com", "b.example.com", "*.example.com", ""])();
});

Deno.test("renderGateway: unsafe values throw instead of being rendered", () => {
  const one = (e: Partial<RouteEntry>, r: Partial<RuleBackend> = {}) => () =>
    render(model([httpPort(80, [entry("", "/", "gw_r", e)])], [rule("gw_r", [[a.name, 1]], r)], [a]));
  const hdr = (name: string, value: string) => ({ headers: [{ name, type: "Exact" as const, value }] });
  const bad: [string, () => unknown][] = [
    ["header value with a line break", one(hdr("x", "a\nb"))],
    ["header name with a space", one(hdr("x y", "a"))],
    ["header name with a parenthesis", one(hdr("x)", "a"))],
    ["header regex that does not compile", one({ headers: [{ name: "x", type: "RegularExpression", value: "(" }] })],
    ["query name with a quote", one({ queryParams: [{ name: "q'", type: "Exact", value: "a" }] })],
    ["method with a space", one({ method: "GET if" })],
    ["host with a space", one({ hostname: "a.com b" })],
    ["path with a quote", one({ path: { type: "Exact", value: "/a'b" } })],
    ["path regex with a space", one({ path: { type: "RegularExpression", value: "/a b" } })],
    ["path prefix with a trailing slash", one({ path: { type: "PathPrefix", value: "/a/" } })],
    [
      "set-header value with a control character",
      one({}, { requestHeaders: { set: [{ name: "x", value: "\x01" }], add: [], remove: [] } }),
    ],
    ["removed header name with a newline", one({}, { responseHeaders: { set: [], add: [], remove: ["x\ny"] } })],
    ["rewrite hostname wildcard", one({}, { rewrite: { hostname: "*.a.com", path: null } })],
    [
      "redirect status 200",
      one({}, { redirect: { scheme: null, hostname: null, port: null, path: null, statusCode: 200 } }),
    ],
    [
      "rewrite path with a space",
      one({}, { rewrite: { hostname: null, path: { type: "ReplaceFullPath", value: "/a b" } } }),
    ],
    ["negative weight", one({}, { targets: [{ backend: a.name, weight: -1 }] })],
    ["unknown target", one({}, { targets: [{ backend: "be_ns_x_80", weight: 1 }] })],
    [
      "rule name with a space",
      () => render(model([httpPort(80, [entry("", "/", "gw_r x")])], [rule("gw_r x", [[a.name, 1]])], [a])),
    ],
    [
      "entry of an unknown rule",
      () => render(model([httpPort(80, [entry("", "/", "gw_x")])], [rule("gw_r", [[a.name, 1]])], [a])),
    ],
    [
      "server address that is no IP",
      () => render(model([httpPort(80, [])], [], [service("ns", "c", [{ address: "a.com", port: 80 }])])),
    ],
    [
      "certificate file of another shape",
      () =>
        render(
          model([httpsPort(443, [], [{ file: "../x.pem", namespace: "ns", name: "x", hosts: ["a.com"] }])], [], []),
        ),
    ],
    ["two listener ports of one container port", () => render(model([httpPort(81, []), httpPort(10081, [])], [], []))],
  ];
  for (const [what, fn] of bad) assert.throws(fn, /^Error: bug: /, what);
});

/** The state the proxy receives for a render (PEM contents do not matter to the plan). */
function desired(m: GatewayProxyModel): DesiredState {
  const r = render(m);
  return {
    config: r.config,
    crtList: r.crtList,
    pems: new Map(r.secrets.map((s) => [s.file!, `pem of ${s.file}`])),
    maps: new Map(Object.entries(r.maps) as [MapFile, string][]),
  };
}

function planFrom(last: GatewayProxyModel, next: GatewayProxyModel): Plan {
  const start = planApply(null, desired(last));
  assert.equal(start.kind, "reload");
  return planApply({ state: desired(last), lines: (start as Extract<Plan, { kind: "reload" }>).lines }, desired(next));
}

Deno.test("planApply: a path or hostname change of an unconditioned route is a map change, never a reload", () => {
  const tls = [cert("ns", "tls", ["a.example.com"])];
  const rules = [
    rule("gw_1", [[a.name, 1]]),
    rule("gw_2", [[b.name, 1]], { requestHeaders: { set: [{ name: "x", value: "1" }], add: [], remove: [] } }),
    rule("gw_3", [[a.name, 1]], {
      redirect: { scheme: "https", hostname: null, port: null, path: null, statusCode: 301 },
    }),
  ];
  const at = (routes: RouteEntry[]) => model([httpPort(80, routes), httpsPort(443, routes, tls)], rules, [a, b]);
  const conditioned = entry("a.example.com", "/c", "gw_2", { method: "GET" });
  const before = at([conditioned, entry("a.example.com", "/v1", "gw_1"), entry("", "/", "gw_3")]);
  for (
    const [what, after] of [
      ["a path changed", at([conditioned, entry("a.example.com", "/v2", "gw_1"), entry("", "/", "gw_3")])],
      ["a path type changed", at([conditioned, entry("a.example.com", "=/v1", "gw_1"), entry("", "/", "gw_3")])],
      ["a hostname changed", at([conditioned, entry("*.example.com", "/v1", "gw_1"), entry("", "/", "gw_3")])],
      [
        "an entry added",
        at([conditioned, entry("a.example.com", "/v1", "gw_1"), entry("", "/x", "gw_2"), entry("", "/", "gw_3")]),
      ],
      ["an entry removed", at([conditioned, entry("", "/", "gw_3")])],
      [
        "an entry re-pointed to another rule",
        at([conditioned, entry("a.example.com", "/v1", "gw_2"), entry("", "/", "gw_3")]),
      ],
    ] as const
  ) {
    const p = planFrom(before, after);
    assert.equal(p.kind, "runtime", `${what}: ${JSON.stringify(p)}`);
    const changes = (p as Extract<Plan, { kind: "runtime" }>).changes;
    assert.equal(changes.configChanged, false, what);
    assert.ok(changes.maps.length > 0 && changes.maps.every((m) => MAP_FILES.includes(m.file)), what);
  }
  // a new conditioned entry changes haproxy.cfg: a reload, as any new configuration line
  const more = at([
    conditioned,
    entry("", "/h", "gw_1", { method: "PUT" }),
    entry("a.example.com", "/v1", "gw_1"),
    entry("", "/", "gw_3"),
  ]);
  const p = planFrom(before, more);
  assert.equal(p.kind === "reload" && p.reason, "structure");
  // an endpoint change is a server slot change
  const moved = model([httpPort(80, [entry("", "/", "gw_1")])], [rule("gw_1", [[a.name, 1]])], [
    service("ns", "a", [{ address: "10.0.0.9", port: 8080 }]),
  ]);
  const slots = planFrom(model([httpPort(80, [entry("", "/", "gw_1")])], [rule("gw_1", [[a.name, 1]])], [a]), moved);
  assert.equal(slots.kind, "runtime");
  // also for the copies of the slots in the backends of a filtered and of a weighted rule
  const rules2 = (x: typeof a) => [
    rule("gw_f", [[x.name, 1]], { requestHeaders: { set: [], add: [], remove: ["x"] } }),
    rule("gw_w", [[x.name, 3], [b.name, 1]]),
  ];
  const routes2 = [entry("", "/f", "gw_f"), entry("", "/", "gw_w")];
  const two = service("ns", "a", [{ address: "10.0.0.9", port: 8080 }, { address: "10.0.0.8", port: 8080 }]);
  const copies = planFrom(
    model([httpPort(80, routes2)], rules2(a), [a, b]),
    model([httpPort(80, routes2)], rules2(two), [two, b]),
  );
  assert.equal(copies.kind, "runtime", JSON.stringify(copies));
  const commands = (copies as Extract<Plan, { kind: "runtime" }>).changes.servers.commands.map((c) => c.slot).sort();
  assert.deepEqual(commands.filter((c, i) => commands.indexOf(c) === i), [
    "be_ns_a_80/s1",
    "be_ns_a_80/s2",
    "gw_f/s1",
    "gw_f/s2",
    "gw_w.0/s1",
    "gw_w.0/s2",
  ]);
});
