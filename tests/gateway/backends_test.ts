/**
 * backendRefs (HTTPBackendRef, BackendRef and HTTPRouteRule.backendRefs docs): Services and their
 * endpoints, weights, the 500 share of invalid references and their ResolvedRefs reasons.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import {
  backends,
  build,
  endpointSlice,
  gateway,
  grant,
  http,
  NS,
  route,
  routeCondition,
  toService,
} from "./fixtures.ts";
import type { HTTPBackendRef } from "../../lib/gateway/api.ts";

const gw = gateway([http("a")]);

function one(refs: HTTPBackendRef[], world: Parameters<typeof build>[1] = {}) {
  const b = build(gw, { routes: [route("r", [{ backendRefs: refs }])], ...world });
  return {
    b,
    rule: b.proxy.rules[0],
    resolved: routeCondition(b, "r", "ResolvedRefs")!,
    accepted: routeCondition(b, "r", "Accepted")!,
  };
}

Deno.test("a Service backendRef: be_<ns>_<svc>_<port> with the ready endpoints of the Service port's target", () => {
  const { b, rule, resolved } = one([{ name: "web", port: 8080 }], backends("web"));
  assert.deepEqual(rule.targets, [{ backend: `be_${NS}_web_8080`, weight: 1 }]);
  assert.equal(rule.invalidWeight, 0);
  assert.deepEqual(b.proxy.backends.map((x) => [x.name, x.servers, x.slots]), [
    [`be_${NS}_web_8080`, [{ address: "10.0.0.1", port: 3000 }], 1],
  ]);
  assert.deepEqual([resolved.status, resolved.reason], ["True", "ResolvedRefs"]);
  assert.deepEqual(b.refs.services, [`${NS}/web`]);
});

Deno.test("weights: default 1, 0 never, shares as written (70/30/0)", () => {
  const { rule } = one(
    [{ name: "v1", port: 8080, weight: 70 }, { name: "v2", port: 8080, weight: 30 }, {
      name: "v3",
      port: 8080,
      weight: 0,
    }],
    backends("v1", "v2", "v3"),
  );
  assert.deepEqual(rule.targets, [{ backend: `be_${NS}_v1_8080`, weight: 70 }, {
    backend: `be_${NS}_v2_8080`,
    weight: 30,
  }]);
  assert.equal(rule.invalidWeight, 0);
});

Deno.test("an unknown kind: ResolvedRefs=False/InvalidKind, its share answered 500", () => {
  const { rule, resolved, accepted } = one([{
    group: "unknown.example.com",
    kind: "NonExistent",
    name: "web",
    port: 8080,
  }]);
  assert.deepEqual([resolved.status, resolved.reason], ["False", "InvalidKind"]);
  assert.deepEqual([accepted.status, accepted.reason], ["True", "Accepted"]);
  assert.deepEqual(rule.targets, []);
  assert.equal(rule.invalidWeight, 1);
});

Deno.test("a missing Service or port: BackendNotFound; an ExternalName Service: InvalidKind", () => {
  const missing = one([{ name: "nope", port: 8080 }]);
  assert.deepEqual([missing.resolved.status, missing.resolved.reason], ["False", "BackendNotFound"]);
  assert.equal(missing.rule.invalidWeight, 1);
  assert.deepEqual(missing.b.refs.services, [`${NS}/nope`], "a missing Service is watched for");
  const port = one([{ name: "web", port: 9999 }], backends("web"));
  assert.deepEqual([port.resolved.status, port.resolved.reason], ["False", "BackendNotFound"]);
  const ext: V1Service = {
    metadata: { name: "ext", namespace: NS },
    spec: { type: "ExternalName", externalName: "x.example" },
  };
  const external = one([{ name: "ext", port: 80 }], { services: [ext] });
  assert.deepEqual([external.resolved.status, external.resolved.reason], ["False", "InvalidKind"]);
});

Deno.test("a Service in another namespace: RefNotPermitted (and not read) unless a ReferenceGrant there allows HTTPRoutes of ours", () => {
  const svc = backends("apps/web");
  const ref = { name: "web", namespace: "apps", port: 8080 };
  const denied = one([ref], svc);
  assert.deepEqual([denied.resolved.status, denied.resolved.reason], ["False", "RefNotPermitted"]);
  assert.deepEqual(denied.b.refs.services, []);
  assert.equal(denied.rule.invalidWeight, 1);
  const wrong = one([ref], {
    ...svc,
    grants: [grant("apps", { kind: "HTTPRoute", namespace: NS }, { kind: "Service", name: "other" })],
  });
  assert.equal(wrong.resolved.reason, "RefNotPermitted");
  const allowed = one([ref], {
    ...svc,
    grants: [grant("apps", { kind: "HTTPRoute", namespace: NS }, { kind: "Service", name: "web" })],
  });
  assert.deepEqual([allowed.resolved.status, allowed.rule.targets], ["True", [{
    backend: "be_apps_web_8080",
    weight: 1,
  }]]);
});

Deno.test("partially invalid: the valid share routes, the invalid share is answered 500, the route stays Accepted", () => {
  const { rule, resolved, accepted } = one(
    [{ name: "web", port: 8080, weight: 3 }, { name: "web", namespace: "apps", port: 8080, weight: 1 }],
    backends("web", "apps/web"),
  );
  assert.deepEqual(rule.targets, [{ backend: `be_${NS}_web_8080`, weight: 3 }]);
  assert.equal(rule.invalidWeight, 1);
  assert.deepEqual([accepted.status, resolved.status, resolved.reason], ["True", "False", "RefNotPermitted"]);
  assert.match(resolved.message, /spec\.rules\[0\]\.backendRefs\[1\]: Service apps\/web/);
});

Deno.test("no backendRefs (omitted or empty): no targets and no redirect, every request answered 500", () => {
  const b = build(gw, {
    routes: [route("r", [{ matches: [{ path: { type: "Exact", value: "/a" } }] }, { backendRefs: [] }])],
  });
  assert.deepEqual(b.proxy.rules.map((r) => [r.targets, r.invalidWeight, r.redirect]), [[[], 0, null], [[], 0, null]]);
  assert.equal(routeCondition(b, "r", "ResolvedRefs")!.status, "True");
});

Deno.test("headless Services and selector-less Services with manual EndpointSlices route to the slices' endpoints", () => {
  const headless: V1Service = {
    metadata: { name: "headless", namespace: NS },
    spec: { clusterIP: "None", ports: [{ port: 8080, targetPort: 3000 }] },
  };
  const manual: V1Service = { metadata: { name: "manual", namespace: NS }, spec: { ports: [{ port: 8080 }] } };
  const slices: V1EndpointSlice[] = [
    endpointSlice("headless", [{ port: 3000 }], [{ address: "10.0.0.5" }], { namespace: NS }),
    endpointSlice("manual", [{ port: 3000 }], [{ address: "10.0.0.7" }, { address: "10.0.0.8", ready: false }], {
      namespace: NS,
      name: "manual-v4",
    }),
    endpointSlice("manual", [{ port: 3000 }], [], { namespace: NS, name: "manual-v6", addressType: "IPv6" }),
  ];
  const b = build(gw, {
    routes: [route("r", [{ backendRefs: [{ name: "headless", port: 8080 }, { name: "manual", port: 8080 }] }])],
    services: [headless, manual],
    endpointSlices: slices,
  });
  assert.deepEqual(Object.fromEntries(b.proxy.backends.map((x) => [x.service, x.servers])), {
    headless: [{ address: "10.0.0.5", port: 3000 }],
    manual: [{ address: "10.0.0.7", port: 3000 }],
  });
  assert.equal(routeCondition(b, "r", "ResolvedRefs")!.status, "True");
});

Deno.test("loopback endpoints are refused unless allowed; IPv6 endpoints are written bracketed", () => {
  const svc: V1Service = { metadata: { name: "web", namespace: NS }, spec: { ports: [{ port: 8080 }] } };
  const slices = [
    endpointSlice("web", [{ port: 3000 }], [{ address: "127.0.0.1" }], { namespace: NS, name: "v4" }),
    endpointSlice("web", [{ port: 3000 }], [{ address: "fd00::1" }], {
      namespace: NS,
      name: "v6",
      addressType: "IPv6",
    }),
  ];
  const world = { routes: [route("r", [toService("web")])], services: [svc], endpointSlices: slices };
  const refused = build(gw, world);
  assert.deepEqual(refused.proxy.backends[0].servers, [{ address: "[fd00::1]", port: 3000 }]);
  assert.ok(refused.problems.some((p) => p.kind === "EndpointSlice" && /loopback/.test(p.message)));
  const allowed = build(gw, { ...world, allowLoopbackEndpoints: true });
  assert.deepEqual(allowed.proxy.backends[0].servers.map((s) => s.address), ["127.0.0.1", "[fd00::1]"]);
});

Deno.test("two references to one Service in a rule add their weights; Service backends are shared between rules", () => {
  const b = build(gw, {
    routes: [route("r", [
      { backendRefs: [{ name: "web", port: 8080, weight: 2 }, { name: "web", port: 8080, weight: 3 }] },
      toService("web"),
    ])],
    ...backends("web"),
  });
  assert.deepEqual(b.proxy.rules.map((r) => r.targets).sort((a, b) => a[0].weight - b[0].weight), [
    [{ backend: `be_${NS}_web_8080`, weight: 1 }],
    [{ backend: `be_${NS}_web_8080`, weight: 5 }],
  ]);
  assert.equal(b.proxy.backends.length, 1);
});

Deno.test("appProtocol (GEP-1911): kubernetes.io/h2c speaks HTTP/2 without TLS; ws and http HTTP/1.1; others UnsupportedProtocol", () => {
  const withApp = (appProtocol: string | undefined) => {
    const world = backends("web");
    world.services![0].spec!.ports![0].appProtocol = appProtocol;
    return one([{ name: "web", port: 8080 }], world);
  };
  assert.equal(withApp("kubernetes.io/h2c").b.proxy.backends[0].proto, "h2");
  for (const app of [undefined, "kubernetes.io/ws", "http", "HTTP"]) {
    const { b, resolved } = withApp(app);
    assert.equal(b.proxy.backends[0].proto, undefined, String(app));
    assert.equal(resolved.status, "True", String(app));
  }
  for (const app of ["kubernetes.io/wss", "https", "grpc", "tcp"]) {
    const { rule, resolved } = withApp(app);
    assert.deepEqual([resolved.status, resolved.reason], ["False", "UnsupportedProtocol"], app);
    assert.match(resolved.message, /port 8080 has appProtocol/);
    assert.deepEqual([rule.targets, rule.invalidWeight], [[], 1], "its share is answered 500");
  }
});
