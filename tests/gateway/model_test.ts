/**
 * buildGateway as a whole: conformance scenarios end to end (route entries, rule backends, certificates),
 * stable rule names, what the build read, the problems it reports, and hostile values.
 */
import assert from "node:assert/strict";
import { ruleBackendName } from "../../lib/gateway/rules.ts";
import { backends, build, gateway, http, https, NS, route, routeCondition, tlsSecret, toService } from "./fixtures.ts";
import { serve } from "./serve.ts";

Deno.test("HTTPS listeners on one port: certificates most specific SNI first; a route per hostname (conformance HTTPRouteHTTPSListener)", () => {
  const gw = gateway([
    https("https", "cert"),
    https("https-with-hostname", "cert", 443, { hostname: "second-example.org" }),
    https("https-with-wildcard-hostname", "cert", 443, { hostname: "*.wildcard.org" }),
    https("https-fourth", "cert", 443, { hostname: "fourth-example.wildcard.org" }),
  ]);
  const routes = [
    route("httproute-https-test", [toService("v1")], { parentRefs: [{ name: "gw" }], hostnames: ["example.org"] }),
    route("httproute-https-test-no-hostname", [toService("v2")], {
      parentRefs: [{ name: "gw", sectionName: "https-with-hostname" }],
    }),
  ];
  const b = build(gw, { routes, secrets: [tlsSecret("cert", NS)], ...backends("v1", "v2") });
  const port = b.proxy.ports[0];
  assert.equal(port.protocol, "HTTPS");
  assert.deepEqual(port.certs.map((c) => c.hosts), [["fourth-example.wildcard.org"], ["second-example.org"], [
    "*.wildcard.org",
  ], []]);
  const svc = (host: string) => {
    const e = serve(port, { host, path: "/" });
    return e && b.proxy.rules.find((r) => r.name === e.rule)!.targets[0].backend;
  };
  assert.equal(svc("example.org"), `be_${NS}_v1_8080`);
  assert.equal(svc("second-example.org"), `be_${NS}_v2_8080`);
  assert.equal(svc("unknown-example.org"), null);
  assert.deepEqual(b.gateway.listeners.map((l) => l.attachedRoutes), [1, 1, 0, 0]);
});

Deno.test("hostname intersection end to end (conformance HTTPRouteHostnameIntersection)", () => {
  const gw = gateway([
    http("listener-1", 80, { hostname: "very.specific.com" }),
    http("listener-2", 80, { hostname: "*.wildcard.io" }),
    http("listener-3", 80, { hostname: "*.anotherwildcard.io" }),
  ]);
  const r = (name: string, hostnames: string[], path: string, svc: string) =>
    route(name, [{ matches: [{ path: { value: path } }], backendRefs: [{ name: svc, port: 8080 }] }], { hostnames });
  const routes = [
    r("s1", ["non.matching.com", "*.nonmatchingwildcard.io", "very.specific.com"], "/s1", "v1"),
    r(
      "s2",
      ["non.matching.com", "wildcard.io", "foo.wildcard.io", "bar.wildcard.io", "foo.bar.wildcard.io"],
      "/s2",
      "v2",
    ),
    r("s3", ["non.matching.com", "*.specific.com"], "/s3", "v3"),
    r("s4", ["*.anotherwildcard.io"], "/s4", "v1"),
    r("s5", ["specific.but.wrong.com", "wildcard.io"], "/s5", "v2"),
  ];
  const b = build(gw, { routes, ...backends("v1", "v2", "v3") });
  const port = b.proxy.ports[0];
  const hit = (host: string, path: string) => serve(port, { host, path })?.route.split("/")[1] ?? null;
  assert.equal(hit("very.specific.com", "/s1"), "s1");
  assert.equal(hit("very.specific.com:1234", "/s1"), "s1");
  assert.equal(hit("non.matching.com", "/s1"), null);
  assert.equal(hit("foo.nonmatchingwildcard.io", "/s1"), null);
  assert.equal(hit("foo.wildcard.io", "/s1"), null);
  assert.equal(hit("foo.bar.wildcard.io", "/s2"), "s2");
  assert.equal(hit("wildcard.io", "/s2"), null);
  assert.equal(hit("very.specific.com", "/s3"), "s3");
  assert.equal(hit("foo.specific.com", "/s3"), null);
  assert.equal(hit("foo.bar.anotherwildcard.io", "/s4"), "s4");
  assert.equal(hit("anotherwildcard.io", "/s4"), null);
  assert.equal(hit("wildcard.io", "/s5"), null);
  assert.equal(routeCondition(b, "s5", "Accepted")!.reason, "NoMatchingListenerHostname");
  assert.deepEqual(b.gateway.listeners.map((l) => l.attachedRoutes), [2, 1, 1]);
});

Deno.test("a rule backend's name depends on the route and the rule index only", () => {
  const before = build(gateway([http("a")]), { routes: [route("r", [toService("v1")])], ...backends("v1", "v2") });
  const edited = build(gateway([http("a")]), {
    routes: [
      route("r", [toService("v2", 8080, { matches: [{ path: { type: "Exact", value: "/new" } }] })], { generation: 2 }),
    ],
    ...backends("v1", "v2"),
  });
  assert.equal(before.proxy.rules[0].name, edited.proxy.rules[0].name);
  assert.equal(before.proxy.rules[0].name, ruleBackendName(`${NS}/r`, 0));
  assert.match(before.proxy.rules[0].name, /^gw_[0-9a-f]{12}$/);
  assert.notEqual(ruleBackendName(`${NS}/r`, 1), ruleBackendName(`${NS}/r`, 0));
  assert.notEqual(ruleBackendName(`${NS}/other`, 0), ruleBackendName(`${NS}/r`, 0));
});

Deno.test("a redirect rule: no targets, its redirect; entries carry route and rule", () => {
  const b = build(gateway([http("a")]), {
    routes: [
      route("r", [{
        filters: [{ type: "RequestRedirect", requestRedirect: { hostname: "example.org", statusCode: 301 } }],
      }]),
    ],
  });
  assert.deepEqual(b.proxy.rules[0].redirect, {
    scheme: null,
    hostname: "example.org",
    port: null,
    path: null,
    statusCode: 301,
  });
  assert.deepEqual(b.proxy.ports[0].routes, [{
    hostname: "",
    listenerHostname: "",
    path: { type: "PathPrefix", value: "/" },
    headers: [],
    queryParams: [],
    method: null,
    rule: b.proxy.rules[0].name,
    route: `${NS}/r`,
  }]);
  assert.deepEqual(b.proxy.backends, []);
});

Deno.test("one route on two listeners of one port gives each listener its entries; a second parentRef adds none twice", () => {
  const gw = gateway([http("a", 80, { hostname: "a.example" }), http("b", 80, { hostname: "b.example" })]);
  const b = build(gw, {
    routes: [route("r", [toService("v1")], { parentRefs: [{ name: "gw" }, { name: "gw", sectionName: "a" }] })],
    ...backends("v1"),
  });
  assert.deepEqual(b.proxy.ports[0].routes.map((e) => e.hostname), ["a.example", "b.example"]);
  assert.equal(b.proxy.rules.length, 1);
  assert.deepEqual(b.gateway.listeners.map((l) => l.attachedRoutes), [1, 1]);
});

Deno.test("route hostnames that are not hostnames are ignored (never widened to any host); none left refuses the route", () => {
  const gw = gateway([http("a")]);
  const some = build(gw, {
    routes: [route("r", [toService("v1")], { hostnames: ["ok.example", "BAD_HOST"] })],
    ...backends("v1"),
  });
  assert.deepEqual(some.proxy.ports[0].routes.map((e) => e.hostname), ["ok.example"]);
  assert.equal(routeCondition(some, "r", "PartiallyInvalid")!.status, "True");
  const none = build(gw, {
    routes: [route("r", [toService("v1")], { hostnames: ["BAD_HOST", "x'y"] })],
    ...backends("v1"),
  });
  assert.deepEqual([routeCondition(none, "r", "Accepted")!.status, routeCondition(none, "r", "Accepted")!.reason], [
    "False",
    "UnsupportedValue",
  ]);
  assert.deepEqual(none.proxy.ports[0].routes, []);
});

Deno.test("what the build read: Services and Secrets, sorted; problems name the object at fault", () => {
  const b = build(gateway([https("tls", "cert"), https("tls2", "missing", 8443)]), {
    routes: [route("r", [{ backendRefs: [{ name: "v1", port: 8080 }, { name: "gone", port: 8080 }] }])],
    secrets: [tlsSecret("cert", NS)],
    ...backends("v1"),
  });
  assert.deepEqual(b.refs, { services: [`${NS}/gone`, `${NS}/v1`], secrets: [`${NS}/cert`, `${NS}/missing`] });
  assert.ok(b.problems.some((p) => p.kind === "Gateway" && p.object === `${NS}/gw` && /listener tls2/.test(p.message)));
  assert.ok(b.problems.some((p) => p.kind === "HTTPRoute" && p.object === `${NS}/r` && p.reason === "BackendNotFound"));
});

Deno.test("rules with an unusable match are dropped, the others served: PartiallyInvalid names the field", () => {
  const b = build(gateway([http("a")]), {
    routes: [route("r", [
      toService("v1", 8080, { matches: [{ path: { type: "PathPrefix", value: "/a b" } }] }),
      toService("v1", 8080, { matches: [{ path: { value: "/ok" } }] }),
    ])],
    ...backends("v1"),
  });
  assert.deepEqual(b.proxy.ports[0].routes.map((e) => e.path.value), ["/ok"]);
  assert.equal(routeCondition(b, "r", "Accepted")!.status, "True");
  assert.match(routeCondition(b, "r", "PartiallyInvalid")!.message, /spec\.rules\[0\]\.matches\[0\]\.path\.value/);
});

Deno.test("a port's listener hostnames, most specific first (the 421 check on HTTPS compares SNI and Host by them)", () => {
  const gw = gateway([
    https("any", "cert"),
    https("wild", "cert", 443, { hostname: "*.example.com" }),
    https("exact", "cert", 443, { hostname: "a.example.com" }),
    http("plain", 80, { hostname: "b.test" }),
  ]);
  const b = build(gw, { secrets: [tlsSecret("cert", NS)] });
  assert.deepEqual(b.proxy.ports.map((p) => [p.port, p.listenerHostnames]), [
    [80, ["b.test"]],
    [443, ["a.example.com", "*.example.com"]],
  ]);
});
