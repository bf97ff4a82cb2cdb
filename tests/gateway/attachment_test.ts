/**
 * Route attachment (ParentReference, AllowedRoutes, HTTPRouteSpec.hostnames and ListenerStatus
 * docs): which listeners a parentRef attaches a route to, the reasons it is not accepted, the
 * parent statuses, and the listeners' attachedRoutes.
 */
import assert from "node:assert/strict";
import { backends, build, gateway, http, https, NS, route, routeCondition, tlsSecret, toService } from "./fixtures.ts";

const svc = backends("web", "apps/app");

function attached(b: ReturnType<typeof build>): Record<string, number> {
  return Object.fromEntries(b.gateway.listeners.map((l) => [l.name, l.attachedRoutes]));
}

function accepted(b: ReturnType<typeof build>, r: string, parent = 0): [string, string] {
  const c = routeCondition(b, r, "Accepted", parent)!;
  return [c.status, c.reason];
}

Deno.test("a parentRef without sectionName attaches to every listener that admits the route", () => {
  const b = build(gateway([http("a", 80), http("b", 8080)]), { routes: [route("r", [toService("web")])], ...svc });
  assert.deepEqual(accepted(b, "r"), ["True", "Accepted"]);
  assert.deepEqual(attached(b), { a: 1, b: 1 });
  assert.deepEqual(b.proxy.ports.map((p) => p.routes.length), [1, 1]);
});

Deno.test("parent status: one per parentRef naming this Gateway, written by our controller, the parentRef as written", () => {
  const refs = [
    { name: "gw", namespace: NS, sectionName: "a" },
    { name: "other-gateway", namespace: NS },
    { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", sectionName: "b" },
  ];
  const b = build(gateway([http("a", 80), http("b", 8080)]), {
    routes: [route("r", [toService("web")], { parentRefs: refs })],
    ...svc,
  });
  const parents = b.routes.get(`${NS}/r`)!;
  assert.deepEqual(parents.map((p) => p.parentRef), [refs[0], refs[2]]);
  assert.ok(parents.every((p) => p.controllerName === "ingress-controller.io/gateway-controller"));
  assert.deepEqual(attached(b), { a: 1, b: 1 });
});

Deno.test("sectionName and port select listeners; naming none: Accepted=False/NoMatchingParent", () => {
  const gw = gateway([http("a", 80), http("b", 8080)]);
  const routes = [
    route("by-name", [toService("web")], { parentRefs: [{ name: "gw", sectionName: "b" }] }),
    route("by-port", [toService("web")], { parentRefs: [{ name: "gw", port: 80 }] }),
    route("both", [toService("web")], { parentRefs: [{ name: "gw", sectionName: "a", port: 80 }] }),
    route("no-name", [toService("web")], { parentRefs: [{ name: "gw", sectionName: "nope" }] }),
    route("no-port", [toService("web")], { parentRefs: [{ name: "gw", port: 9999 }] }),
    route("mismatch", [toService("web")], { parentRefs: [{ name: "gw", sectionName: "a", port: 8080 }] }),
  ];
  const b = build(gw, { routes, ...svc });
  assert.deepEqual(accepted(b, "by-name"), ["True", "Accepted"]);
  assert.deepEqual(accepted(b, "by-port"), ["True", "Accepted"]);
  assert.deepEqual(accepted(b, "both"), ["True", "Accepted"]);
  for (const r of ["no-name", "no-port", "mismatch"]) {
    assert.deepEqual(accepted(b, r), ["False", "NoMatchingParent"], r);
  }
  assert.match(routeCondition(b, "no-name", "Accepted")!.message, /sectionName "nope"/);
  assert.deepEqual(attached(b), { a: 2, b: 1 });
});

Deno.test("allowedRoutes namespaces: Same by default, All, Selector with matchLabels and matchExpressions", () => {
  const namespaces = {
    [NS]: { "kubernetes.io/metadata.name": NS },
    apps: { "kubernetes.io/metadata.name": "apps", team: "blue" },
    other: { "kubernetes.io/metadata.name": "other", team: "red" },
  };
  const parentRefs = (sectionName: string) => [{ name: "gw", namespace: NS, sectionName }];
  const gw = gateway([
    http("same", 80, { hostname: "same.example" }),
    http("all", 80, { hostname: "all.example", allowedRoutes: { namespaces: { from: "All" } } }),
    http("labels", 80, {
      hostname: "labels.example",
      allowedRoutes: { namespaces: { from: "Selector", selector: { matchLabels: { team: "blue" } } } },
    }),
    http("exprs", 80, {
      hostname: "exprs.example",
      allowedRoutes: {
        namespaces: {
          from: "Selector",
          selector: {
            matchExpressions: [{ key: "team", operator: "NotIn", values: ["blue"] }, {
              key: "team",
              operator: "Exists",
            }],
          },
        },
      },
    }),
  ]);
  const routes = ["same", "all", "labels", "exprs"].flatMap((l) =>
    ["apps", "other"].map((ns) => route(`${l}-${ns}`, [toService("app")], { namespace: ns, parentRefs: parentRefs(l) }))
  );
  const b = build(gw, { routes, namespaces, ...backends("apps/app", "other/app") });
  const verdict = (r: string, ns: string) => accepted(b, `${ns}/${r}-${ns}`)[1];
  assert.equal(verdict("same", "apps"), "NotAllowedByListeners");
  assert.equal(verdict("all", "apps"), "Accepted");
  assert.equal(verdict("all", "other"), "Accepted");
  assert.equal(verdict("labels", "apps"), "Accepted");
  assert.equal(verdict("labels", "other"), "NotAllowedByListeners");
  assert.equal(verdict("exprs", "apps"), "NotAllowedByListeners");
  assert.equal(verdict("exprs", "other"), "Accepted");
  assert.deepEqual(attached(b), { same: 0, all: 2, labels: 1, exprs: 1 });
});

Deno.test("a route from a namespace the listener does not allow: NotAllowedByListeners, no traffic, not counted", () => {
  const b = build(gateway([http("a")]), {
    routes: [route("r", [toService("app")], { namespace: "apps", parentRefs: [{ name: "gw", namespace: NS }] })],
    ...svc,
  });
  assert.deepEqual(accepted(b, "apps/r"), ["False", "NotAllowedByListeners"]);
  assert.deepEqual(attached(b), { a: 0 });
  assert.deepEqual(b.proxy.ports[0].routes, []);
});

Deno.test("hostnames that intersect no listener: NoMatchingListenerHostname, not counted; accepted on some listeners only is Accepted", () => {
  const gw = gateway([
    http("l1", 80, { hostname: "very.specific.com" }),
    http("l2", 80, { hostname: "*.wildcard.io" }),
  ]);
  const routes = [
    route("none", [toService("web")], { hostnames: ["specific.but.wrong.com", "wildcard.io"] }),
    route("some", [toService("web")], { hostnames: ["non.matching.com", "foo.wildcard.io", "foo.bar.wildcard.io"] }),
  ];
  const b = build(gw, { routes, ...svc });
  assert.deepEqual(accepted(b, "none"), ["False", "NoMatchingListenerHostname"]);
  assert.deepEqual(accepted(b, "some"), ["True", "Accepted"]);
  assert.deepEqual(attached(b), { l1: 0, l2: 1 });
  assert.deepEqual(b.proxy.ports[0].routes.map((e) => e.hostname), ["foo.bar.wildcard.io", "foo.wildcard.io"]);
});

Deno.test("attachedRoutes counts accepted routes even on a listener with unresolved references, once per route", () => {
  const gw = gateway([{
    name: "tls",
    port: 443,
    protocol: "HTTPS",
    tls: { certificateRefs: [{ name: "does-not-exist" }] },
  }]);
  const routes = [
    route("r", [toService("does-not-exist")], {
      parentRefs: [{ name: "gw", sectionName: "tls" }, { name: "gw", port: 443 }],
    }),
  ];
  const b = build(gw, { routes });
  assert.deepEqual(accepted(b, "r"), ["True", "Accepted"]);
  assert.equal(routeCondition(b, "r", "ResolvedRefs")!.status, "False");
  assert.deepEqual(attached(b), { tls: 1 });
  assert.deepEqual(b.proxy.ports, [], "the listener is not programmed: nothing is served");
});

Deno.test("a listener whose kinds exclude HTTPRoute admits no route: NotAllowedByListeners", () => {
  const gw = gateway([http("a", 80, { allowedRoutes: { kinds: [{ kind: "TLSRoute" }] } })]);
  const b = build(gw, { routes: [route("r", [toService("web")])], ...svc });
  assert.deepEqual(accepted(b, "r"), ["False", "NotAllowedByListeners"]);
});

Deno.test("only HTTPRoutes count, and only parentRefs of kind Gateway in our group", () => {
  const grpc = { ...route("g", [toService("web")]), kind: "GRPCRoute" };
  const svcParent = route("s", [toService("web")], { parentRefs: [{ group: "", kind: "Service", name: "gw" }] });
  const b = build(gateway([http("a")]), { routes: [grpc, svcParent], ...svc });
  assert.equal(b.routes.size, 0);
  assert.deepEqual(attached(b), { a: 0 });
});

Deno.test("route conditions carry the route's generation, Gateway conditions the Gateway's", () => {
  const b = build(gateway([https("a", "cert")], { generation: 3 }), {
    routes: [route("r", [toService("web")], { generation: 9 })],
    secrets: [tlsSecret("cert", NS)],
    ...svc,
  });
  for (const c of b.routes.get(`${NS}/r`)![0].conditions) assert.equal(c.observedGeneration, 9, c.type);
  for (const c of b.gateway.conditions) assert.equal(c.observedGeneration, 3, c.type);
});
