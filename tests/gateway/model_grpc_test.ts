/**
 * buildGateway with GRPCRoutes (lib/gateway/model.ts, grpc_matches.ts, precedence.ts), from the
 * GRPCRoute reference: method and header matches, an empty rule matching every call, the
 * GRPCRouteRule precedence (hostname, then characters of service, then of method, then header
 * matches, then the oldest route), weights, backends spoken to in h2c, ReferenceGrants from
 * GRPCRoutes, listeners' allowedRoutes kinds, an HTTPRoute and a GRPCRoute never sharing a hostname
 * on a listener (the older is served), status per kind. The conformance scenarios of GATEWAY-GRPC
 * core are among them.
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import type { GRPCRouteRule } from "../../lib/gateway/api.ts";
import { ruleBackendName } from "../../lib/gateway/rules.ts";
import {
  backends,
  build,
  gateway,
  grant,
  grpcRoute,
  grpcRouteCondition,
  http,
  NS,
  route,
  routeCondition,
  toService,
} from "./fixtures.ts";
import { serve } from "./serve.ts";
import type { GatewayBuild } from "../../lib/gateway/model_types.ts";

const SVC = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";

/** The Service backend (or "404", or "unusable") answering a call to `/<svc>/<method>` with `headers`. */
function call(b: GatewayBuild, path: string, headers: Record<string, string> = {}, host = "example.com"): string {
  const e = serve(b.proxy.ports[0], { host, path, method: "POST", headers });
  if (!e) return "404";
  const r = b.proxy.rules.find((x) => x.name === e.rule)!;
  return r.targets.length === 0 ? "unusable" : r.targets.map((t) => t.backend.split("_")[2]).join("+");
}

const toGrpc = (svc: string, more: Partial<GRPCRouteRule> = {}): GRPCRouteRule => ({
  backendRefs: [{ name: svc, port: 8080 }],
  ...more,
});

Deno.test("exact method matching (conformance GRPCExactMethodMatching): other methods get 404 (UNIMPLEMENTED)", () => {
  const r = grpcRoute("exact-matching", [
    toGrpc("v1", { matches: [{ method: { service: SVC, method: "Echo" } }] }),
    toGrpc("v2", { matches: [{ method: { service: SVC, method: "EchoTwo" } }] }),
  ]);
  const b = build(gateway([http("http")]), { grpcRoutes: [r], ...backends("v1", "v2") });
  assert.equal(grpcRouteCondition(b, "exact-matching", "Accepted")?.status, "True");
  assert.equal(grpcRouteCondition(b, "exact-matching", "ResolvedRefs")?.status, "True");
  assert.equal(call(b, `/${SVC}/Echo`), "v1");
  assert.equal(call(b, `/${SVC}/EchoTwo`), "v2");
  assert.equal(call(b, `/${SVC}/EchoThree`), "404");
  assert.deepEqual(b.gateway.listeners[0].attachedRoutes, 1);
  assert.equal(b.routes.size, 0, "no HTTPRoute status");
});

Deno.test("header matching (conformance GRPCRouteHeaderMatching): AND within a match, OR across, more headers first", () => {
  const h = (pairs: [string, string][]) => ({ headers: pairs.map(([name, value]) => ({ name, value })) });
  const r = grpcRoute("grpc-header-matching", [
    toGrpc("v1", { matches: [h([["version", "one"]])] }),
    toGrpc("v2", { matches: [h([["version", "two"]])] }),
    toGrpc("v1", { matches: [h([["version", "two"], ["color", "orange"]])] }),
    toGrpc("v1", { matches: [h([["color", "blue"]]), h([["color", "green"]])] }),
    toGrpc("v2", { matches: [h([["color", "red"]]), h([["color", "yellow"]])] }),
  ]);
  const b = build(gateway([http("http")]), { grpcRoutes: [r], ...backends("v1", "v2") });
  const echo = `/${SVC}/Echo`;
  assert.equal(call(b, echo, { Version: "one" }), "v1");
  assert.equal(call(b, echo, { version: "two" }), "v2");
  assert.equal(call(b, echo, { version: "two", color: "orange" }), "v1");
  assert.equal(call(b, echo, { version: "two", color: "blue" }), "v2");
  assert.equal(call(b, echo, { color: "orange" }), "404");
  assert.equal(call(b, echo, { "some-other-header": "one" }), "404");
  for (const c of ["blue", "green"]) assert.equal(call(b, echo, { color: c }), "v1");
  for (const c of ["red", "yellow"]) assert.equal(call(b, echo, { color: c }), "v2");
  assert.equal(call(b, echo, { color: "purple" }), "404");
});

Deno.test("listener hostnames (conformance GRPCRouteListenerHostnameMatching): the most specific listener serves", () => {
  const gw = gateway([
    http("listener-1", 80, { hostname: "bar.com" }),
    http("listener-2", 80, { hostname: "foo.bar.com" }),
    http("listener-3", 80, { hostname: "*.bar.com" }),
    http("listener-4", 80, { hostname: "*.foo.com" }),
  ]);
  const ref = (s: string) => ({ name: "gw", namespace: NS, sectionName: s });
  const grpcRoutes = [
    grpcRoute("backend-v1", [toGrpc("v1")], { parentRefs: [ref("listener-1")] }),
    grpcRoute("backend-v2", [toGrpc("v2")], { parentRefs: [ref("listener-2")] }),
    grpcRoute("backend-v3", [toGrpc("v3")], { parentRefs: [ref("listener-3"), ref("listener-4")] }),
  ];
  const b = build(gw, { grpcRoutes, ...backends("v1", "v2", "v3") });
  const echo = `/${SVC}/Echo`;
  assert.equal(call(b, echo, {}, "bar.com"), "v1");
  assert.equal(call(b, echo, {}, "foo.bar.com"), "v2");
  for (const host of ["baz.bar.com", "boo.bar.com", "multiple.prefixes.bar.com", "multiple.prefixes.foo.com"]) {
    assert.equal(call(b, echo, {}, host), "v3", host);
  }
  for (const host of ["foo.com", "no.matching.host"]) assert.equal(call(b, echo, {}, host), "404", host);
  assert.deepEqual(b.gateway.listeners.map((l) => l.attachedRoutes), [1, 1, 1, 1]);
});

Deno.test("weights (conformance GRPCRouteWeight): 70/30, a weight of 0 gets nothing", () => {
  const r = grpcRoute("weighted-backends", [{
    backendRefs: [{ name: "v1", port: 8080, weight: 70 }, { name: "v2", port: 8080, weight: 30 }, {
      name: "v3",
      port: 8080,
      weight: 0,
    }],
  }]);
  const b = build(gateway([http("http")]), { grpcRoutes: [r], ...backends("v1", "v2", "v3") });
  const rule = b.proxy.rules.find((x) => x.name === ruleBackendName(`GRPCRoute:${NS}/weighted-backends`, 0))!;
  assert.deepEqual(rule.targets.map((t) => [t.backend, t.weight]), [[`be_${NS}_v1_8080_h2c`, 70], [
    `be_${NS}_v2_8080_h2c`,
    30,
  ]]);
  assert.equal(rule.grpc, true);
});

Deno.test("precedence: service characters, then method characters, then header matches, then the oldest route", () => {
  const older = grpcRoute("older", [
    toGrpc("v1", { matches: [{ method: { method: "LongMethodName" } }] }),
    toGrpc("v3", { matches: [{ headers: [{ name: "a", value: "1" }, { name: "b", value: "2" }] }] }),
  ], { created: "2026-01-01T00:00:00Z" });
  const newer = grpcRoute("newer", [
    // service only: more service characters than a method-only match, so it comes first (an
    // HTTPRoute would put the regex the method-only match becomes before a prefix)
    toGrpc("v2", { matches: [{ method: { service: "pkg.Svc" } }] }),
    toGrpc("v4", { matches: [{ method: { method: "LongMethodName" } }] }),
  ], { created: "2026-02-01T00:00:00Z" });
  const b = build(gateway([http("http")]), { grpcRoutes: [newer, older], ...backends("v1", "v2", "v3", "v4") });
  assert.equal(call(b, "/pkg.Svc/LongMethodName"), "v2");
  assert.equal(call(b, "/other.Svc/LongMethodName"), "v1", "the older route wins a tie");
  assert.equal(call(b, "/other.Svc/LongMethodName", { a: "1", b: "2" }), "v1", "method characters before headers");
  assert.equal(call(b, "/other.Svc/X", { a: "1", b: "2" }), "v3");
});

Deno.test("an HTTPRoute and a GRPCRoute never share a hostname on a listener: the older is served", () => {
  const web = route("web", [toService("v1")], { created: "2026-01-01T00:00:00Z" });
  const rpc = grpcRoute("rpc", [toGrpc("v2")], { created: "2026-02-01T00:00:00Z" });
  const b = build(gateway([http("http")]), { routes: [web], grpcRoutes: [rpc], ...backends("v1", "v2") });
  assert.equal(routeCondition(b, "web", "Accepted")?.status, "True");
  const c = grpcRouteCondition(b, "rpc", "Accepted")!;
  assert.deepEqual([c.status, c.reason], ["False", "NotAllowedByListeners"]);
  assert.match(c.message, /already serves HTTPRoute infra\/web/);
  assert.equal(call(b, `/${SVC}/Echo`), "v1");
  assert.equal(b.gateway.listeners[0].attachedRoutes, 1);
  // the GRPCRoute older: it is served, the HTTPRoute is not
  const b2 = build(gateway([http("http")]), {
    routes: [{ ...web, metadata: { ...web.metadata, creationTimestamp: "2026-03-01T00:00:00Z" } }],
    grpcRoutes: [rpc],
    ...backends("v1", "v2"),
  });
  assert.equal(grpcRouteCondition(b2, "rpc", "Accepted")?.status, "True");
  assert.equal(routeCondition(b2, "web", "Accepted")?.status, "False");
  // hostnames apart: both served, each for its own
  const b3 = build(gateway([http("http")]), {
    routes: [route("web", [toService("v1")], { hostnames: ["www.example.com"] })],
    grpcRoutes: [grpcRoute("rpc", [toGrpc("v2")], { hostnames: ["rpc.example.com"] })],
    ...backends("v1", "v2"),
  });
  assert.equal(routeCondition(b3, "web", "Accepted")?.status, "True");
  assert.equal(grpcRouteCondition(b3, "rpc", "Accepted")?.status, "True");
  assert.equal(call(b3, `/${SVC}/Echo`, {}, "rpc.example.com"), "v2");
  assert.equal(call(b3, "/", {}, "www.example.com"), "v1");
  assert.equal(b3.gateway.listeners[0].attachedRoutes, 2);
});

Deno.test("a listener that allows only HTTPRoutes does not take GRPCRoutes (NotAllowedByListeners)", () => {
  const gw = gateway([http("http", 80, { allowedRoutes: { kinds: [{ kind: "HTTPRoute" }] } })]);
  const b = build(gw, { grpcRoutes: [grpcRoute("rpc", [toGrpc("v1")])], ...backends("v1") });
  const c = grpcRouteCondition(b, "rpc", "Accepted")!;
  assert.deepEqual([c.status, c.reason], ["False", "NotAllowedByListeners"]);
  assert.match(c.message, /allows GRPCRoutes/);
});

Deno.test("a backend in another namespace needs a ReferenceGrant from GRPCRoutes; one from HTTPRoutes does not count", () => {
  const r = grpcRoute("rpc", [{ backendRefs: [{ name: "api", namespace: "other", port: 8080 }] }]);
  const world = { grpcRoutes: [r], ...backends("other/api") };
  const fromHttp = build(gateway([http("http")]), {
    ...world,
    grants: [grant("other", { kind: "HTTPRoute", namespace: NS }, { kind: "Service" })],
  });
  const c = grpcRouteCondition(fromHttp, "rpc", "ResolvedRefs")!;
  assert.deepEqual([c.status, c.reason], ["False", "RefNotPermitted"]);
  assert.equal(call(fromHttp, `/${SVC}/Echo`), "unusable");
  const fromGrpc = build(gateway([http("http")]), {
    ...world,
    grants: [grant("other", { kind: "GRPCRoute", namespace: NS }, { kind: "Service" })],
  });
  assert.equal(grpcRouteCondition(fromGrpc, "rpc", "ResolvedRefs")?.status, "True");
  assert.equal(call(fromGrpc, `/${SVC}/Echo`), "api");
});

Deno.test("backends: h2c without appProtocol (gRPC is HTTP/2); an HTTP/1.1 appProtocol is UnsupportedProtocol", () => {
  const b = build(gateway([http("http")]), {
    grpcRoutes: [grpcRoute("rpc", [toGrpc("v1")], { hostnames: ["rpc.example.com"] })],
    routes: [route("web", [toService("v1")], { hostnames: ["www.example.com"] })],
    ...backends("v1"),
  });
  // one Service port, HTTP/1.1 to the HTTPRoute and h2c to the GRPCRoute
  assert.deepEqual(b.proxy.backends.map((x) => [x.name, x.proto]), [
    [`be_${NS}_v1_8080`, undefined],
    [`be_${NS}_v1_8080_h2c`, "h2"],
  ]);
  const h2c = backends("v1");
  (h2c.services![0] as V1Service).spec!.ports![0].appProtocol = "kubernetes.io/h2c";
  const declared = build(gateway([http("http")]), { grpcRoutes: [grpcRoute("rpc", [toGrpc("v1")])], ...h2c });
  assert.deepEqual(declared.proxy.backends.map((x) => [x.name, x.proto]), [[`be_${NS}_v1_8080`, "h2"]]);
  const world = backends("v1");
  const svc = world.services![0] as V1Service;
  svc.spec!.ports![0].appProtocol = "kubernetes.io/ws";
  const ws = build(gateway([http("http")]), { grpcRoutes: [grpcRoute("rpc", [toGrpc("v1")])], ...world });
  const c = grpcRouteCondition(ws, "rpc", "ResolvedRefs")!;
  assert.deepEqual([c.status, c.reason], ["False", "UnsupportedProtocol"]);
  assert.equal(call(ws, `/${SVC}/Echo`), "unusable");
});

Deno.test("unusable rules: a missing backend or an unserved filter answer UNAVAILABLE, never skipped", () => {
  const r = grpcRoute("rpc", [
    toGrpc("missing", { matches: [{ method: { service: "a.B" } }] }),
    toGrpc("v1", {
      matches: [{ method: { service: "c.D" } }],
      filters: [{ type: "RequestMirror", requestMirror: { backendRef: { name: "v1", port: 8080 } } }],
    }),
    toGrpc("v1"),
  ]);
  const b = build(gateway([http("http")]), { grpcRoutes: [r], ...backends("v1") });
  assert.deepEqual(
    [grpcRouteCondition(b, "rpc", "ResolvedRefs")?.reason, grpcRouteCondition(b, "rpc", "PartiallyInvalid")?.status],
    ["BackendNotFound", "True"],
  );
  assert.equal(call(b, "/a.B/M"), "unusable");
  assert.equal(call(b, "/c.D/M"), "unusable");
  assert.equal(call(b, "/e.F/M"), "v1");
  for (const rule of b.proxy.rules) assert.equal(rule.grpc, true);
  // a filter type GRPCRoute does not have (its CRD forbids it) is refused too
  const redirect = build(gateway([http("http")]), {
    grpcRoutes: [grpcRoute("rpc", [toGrpc("v1", { filters: [{ type: "RequestRedirect", requestRedirect: {} }] })])],
    ...backends("v1"),
  });
  assert.match(grpcRouteCondition(redirect, "rpc", "Accepted")!.message, /"RequestRedirect" is not a GRPCRoute filter/);
});

Deno.test("an HTTPRoute and a GRPCRoute of one name: statuses and rule backends of their own", () => {
  const b = build(gateway([http("http")]), {
    routes: [route("same", [toService("v1")], { hostnames: ["www.example.com"] })],
    grpcRoutes: [grpcRoute("same", [toGrpc("v2")], { hostnames: ["rpc.example.com"] })],
    ...backends("v1", "v2"),
  });
  assert.equal(routeCondition(b, "same", "Accepted")?.status, "True");
  assert.equal(grpcRouteCondition(b, "same", "Accepted")?.status, "True");
  assert.equal(new Set(b.proxy.ports[0].routes.map((e) => e.rule)).size, 2);
  assert.equal(call(b, "/x", {}, "www.example.com"), "v1");
  assert.equal(call(b, "/a.B/M", {}, "rpc.example.com"), "v2");
});
