/**
 * TLSRoutes in the model (lib/gateway/tls_routes.ts, lib/gateway/listeners.ts), from the words of
 * the Gateway API reference (apis/v1 tlsroute_types.go, gateway_types.go): "A TLSRoute MUST be
 * attached to a Listener of protocol TLS", Passthrough is core and Terminate extended (not served
 * here: the listener is refused with UnsupportedValue), hostnames intersect as for HTTPRoutes, a
 * rule whose backends are invalid "must actively reject … by rejecting the connection", and
 * "rejections must respect weight".
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import type { GatewayBuild } from "../../lib/gateway/model_types.ts";
import {
  backendService,
  build,
  gateway,
  grant,
  http,
  https,
  listenerCondition,
  NS,
  route,
  routeCondition,
  tls,
  tlsRoute,
  tlsRouteCondition,
  tlsSecret,
  toService,
  type World,
} from "./fixtures.ts";

/** Services `names` (port 443 → 8443, one ready endpoint each), `ns/name` for another namespace. */
function tlsBackends(...names: string[]): Pick<World, "services" | "endpointSlices"> {
  const made = names.map((n, i) => {
    const [ns, name] = n.includes("/") ? n.split("/") : [NS, n];
    const m = backendService(name, ns, `10.0.1.${i + 1}`);
    m.service.spec!.ports = [{ name: "tls", port: 443, targetPort: 8443 }];
    m.slice.ports = [{ name: "tls", port: 8443 }];
    return m;
  });
  return { services: made.map((m) => m.service), endpointSlices: made.map((m) => m.slice) };
}

/** Where a connection with `sni` on `port` goes: the rule's targets, [] when refused, null when no entry. */
function connect(b: GatewayBuild, port: number, sni: string): { backend: string; weight: number }[] | null {
  const p = b.proxy.ports.find((x) => x.port === port);
  const entries = p?.sni ?? [];
  const hit = entries.find((e) =>
    e.hostname === sni ||
    (e.hostname.startsWith("*.") && sni.endsWith(e.hostname.slice(1)) && sni.length > e.hostname.length - 1) ||
    e.hostname === ""
  );
  if (!hit) return null;
  const rule = b.proxy.tlsRules?.find((r) => r.name === hit.rule);
  assert.ok(rule, `rule ${hit.rule}`);
  return rule.targets;
}

const svc = `be_${NS}_svc_443_tcp`;

Deno.test("a TLS listener in Passthrough mode admits TLSRoutes: SNI names to a mode tcp copy of the Service backend", () => {
  const gw = gateway([tls("tls", 443, { hostname: "*.example.com" })]);
  const b = build(gw, { tlsRoutes: [tlsRoute("r", ["abc.example.com"])], ...tlsBackends("svc") });
  const l = b.gateway.listeners[0];
  assert.deepEqual(l.supportedKinds, [{ group: "gateway.networking.k8s.io", kind: "TLSRoute" }]);
  assert.equal(l.attachedRoutes, 1);
  assert.equal(listenerCondition(b, "tls", "Programmed")?.status, "True");
  assert.equal(tlsRouteCondition(b, "r", "Accepted")?.status, "True");
  assert.equal(tlsRouteCondition(b, "r", "ResolvedRefs")?.status, "True");
  assert.equal(b.proxy.ports[0].protocol, "TLS");
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => e.hostname), ["abc.example.com"]);
  assert.deepEqual(connect(b, 443, "abc.example.com"), [{ backend: svc, weight: 1 }]);
  assert.equal(connect(b, 443, "other.example.com"), null);
  const be = b.proxy.backends.find((x) => x.name === svc)!;
  assert.equal(be.mode, "tcp");
  assert.deepEqual(be.servers.map((s) => `${s.address}:${s.port}`), ["10.0.1.1:8443"]);
  // the HTTP copy of the Service backend is not rendered: nothing routes HTTP to it
  assert.ok(!b.proxy.backends.some((x) => x.name === `be_${NS}_svc_443`));
  assert.deepEqual(b.refs.services, [`${NS}/svc`]);
});

Deno.test("TLS Terminate (explicit or the API's default mode) is not served: Accepted=False/UnsupportedValue, no kinds", () => {
  for (const mode of ["Terminate", null] as const) {
    const gw = gateway([tls("tls-terminate", 8443, { hostname: "terminate.example.com" }, mode)]);
    const b = build(gw, { tlsRoutes: [tlsRoute("r", ["terminate.example.com"])], ...tlsBackends("svc") });
    const accepted = listenerCondition(b, "tls-terminate", "Accepted");
    assert.equal(accepted?.status, "False");
    assert.equal(accepted?.reason, "UnsupportedValue");
    assert.match(accepted!.message, /tls\.mode "Terminate" is not supported for TLS; use Passthrough/);
    assert.deepEqual(b.gateway.listeners[0].supportedKinds, []);
    assert.equal(b.gateway.listeners[0].attachedRoutes, 0);
    assert.equal(tlsRouteCondition(b, "r", "Accepted")?.reason, "NotAllowedByListeners");
    assert.deepEqual(b.proxy.ports, []);
  }
});

Deno.test("allowedRoutes kinds on a TLS listener: TLSRoute kept, TCPRoute refused with InvalidRouteKinds", () => {
  const gw = gateway([tls("tls-passthrough", 443, {
    allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "TCPRoute" }, { kind: "TLSRoute" }] },
  })]);
  const b = build(gw);
  assert.deepEqual(b.gateway.listeners[0].supportedKinds, [{ group: "gateway.networking.k8s.io", kind: "TLSRoute" }]);
  const resolved = listenerCondition(b, "tls-passthrough", "ResolvedRefs");
  assert.equal(resolved?.status, "False");
  assert.equal(resolved?.reason, "InvalidRouteKinds");
  // an HTTP listener that lists TLSRoute refuses it the same way
  const h = build(gateway([http("http", 80, { allowedRoutes: { kinds: [{ kind: "TLSRoute" }] } })]));
  assert.deepEqual(h.gateway.listeners[0].supportedKinds, []);
  assert.equal(listenerCondition(h, "http", "ResolvedRefs")?.reason, "InvalidRouteKinds");
});

Deno.test("a TLSRoute on an HTTP or HTTPS listener, an HTTPRoute on a TLS one: NotAllowedByListeners, nothing attached", () => {
  for (const listener of [http("http"), https("https", "cert")]) {
    const b = build(gateway([listener]), {
      tlsRoutes: [tlsRoute("r", ["tls.example.com"])],
      secrets: [tlsSecret("cert", NS)],
      ...tlsBackends("svc"),
    });
    const accepted = tlsRouteCondition(b, "r", "Accepted");
    assert.equal(accepted?.status, "False");
    assert.equal(accepted?.reason, "NotAllowedByListeners");
    assert.match(accepted!.message, /allows TLSRoutes/);
    assert.equal(b.gateway.listeners[0].attachedRoutes, 0);
    assert.ok(!b.proxy.ports.some((p) => (p.sni ?? []).length > 0));
  }
  const v1 = backendService("v1");
  const b = build(gateway([tls("tls")]), {
    routes: [route("h", [toService("v1")])],
    services: [v1.service],
    endpointSlices: [v1.slice],
  });
  assert.equal(routeCondition(b, "h", "Accepted")?.reason, "NotAllowedByListeners");
  assert.equal(routeCondition(b, "h", "ResolvedRefs")?.status, "True");
  assert.equal(b.gateway.listeners[0].attachedRoutes, 0);
  assert.deepEqual(b.proxy.ports[0].routes, []);
});

Deno.test("a sectionName naming no listener: NoMatchingParent", () => {
  const b = build(gateway([tls("tls-passthrough")]), {
    tlsRoutes: [tlsRoute("r", ["tls.example.com"], { parentRefs: [{ name: "gw", sectionName: "nonexistent" }] })],
  });
  assert.equal(tlsRouteCondition(b, "r", "Accepted")?.reason, "NoMatchingParent");
});

Deno.test("hostname intersection: exact, wildcard and no listener hostname; the names that do not intersect are ignored", () => {
  const routes = (gwName: string) => [
    tlsRoute("exact", ["abc.example.com"], {
      parentRefs: [{ name: gwName }],
      backendRefs: [{ name: "tls-backend", port: 443 }],
    }),
    tlsRoute("wide", ["*.com"], {
      parentRefs: [{ name: gwName }],
      backendRefs: [{ name: "tls-backend-2", port: 443 }],
    }),
  ];
  const one = `be_${NS}_tls-backend_443_tcp`;
  const two = `be_${NS}_tls-backend-2_443_tcp`;
  // listener *.example.com: the route's *.com narrows to *.example.com
  let b = build(gateway([tls("l", 443, { hostname: "*.example.com" })], { name: "g2" }), {
    tlsRoutes: routes("g2"),
    ...tlsBackends("tls-backend", "tls-backend-2"),
  });
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => e.hostname), ["abc.example.com", "*.example.com"]);
  assert.equal(connect(b, 443, "abc.example.com")?.[0].backend, one);
  assert.equal(connect(b, 443, "other.example.com")?.[0].backend, two);
  assert.equal(connect(b, 443, "non.matching.com"), null);
  // no listener hostname: the routes' own names
  b = build(gateway([tls("l", 443)], { name: "g4" }), {
    tlsRoutes: routes("g4"),
    ...tlsBackends("tls-backend", "tls-backend-2"),
  });
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => e.hostname), ["abc.example.com", "*.com"]);
  assert.equal(connect(b, 443, "non.matching.org"), null);
  // listener abc.example.com and a route for *.example.com: only abc.example.com
  b = build(gateway([tls("l", 443, { hostname: "abc.example.com" })], { name: "g1" }), {
    tlsRoutes: [tlsRoute("r", ["*.example.com"], { parentRefs: [{ name: "g1" }] })],
    ...tlsBackends("svc"),
  });
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => e.hostname), ["abc.example.com"]);
  // none intersects: NoMatchingListenerHostname, not counted
  b = build(gateway([tls("tls", 443, { hostname: "www.example.com" })]), {
    tlsRoutes: [tlsRoute("r", ["www.nomatch.com", "*.nomatch.com"])],
    ...tlsBackends("svc"),
  });
  assert.equal(tlsRouteCondition(b, "r", "Accepted")?.reason, "NoMatchingListenerHostname");
  assert.equal(b.gateway.listeners[0].attachedRoutes, 0);
  assert.deepEqual(b.proxy.ports[0].sni, []);
});

Deno.test("invalid backendRefs: the route is Accepted, ResolvedRefs=False with the reason, and its connections are refused", () => {
  const cases: [string, NonNullable<Parameters<typeof tlsRoute>[2]>["backendRefs"]][] = [
    ["BackendNotFound", [{ name: "nonexistent", port: 443 }]],
    ["InvalidKind", [{ group: "unknownkind.example.com", kind: "NonExistent", name: "svc", port: 443 }]],
    ["RefNotPermitted", [{ name: "svc", namespace: "other", port: 443 }]],
  ];
  for (const [reason, backendRefs] of cases) {
    const b = build(gateway([tls("tls")]), {
      tlsRoutes: [tlsRoute("r", ["example.com"], { backendRefs })],
      ...tlsBackends("svc", "other/svc"),
    });
    assert.equal(tlsRouteCondition(b, "r", "Accepted")?.status, "True", reason);
    const resolved = tlsRouteCondition(b, "r", "ResolvedRefs");
    assert.equal(resolved?.status, "False", reason);
    assert.equal(resolved?.reason, reason);
    // an entry that closes the connection: never a less specific route's backend
    assert.deepEqual(connect(b, 443, "example.com"), [], reason);
    assert.equal(b.proxy.tlsRules?.[0].invalidWeight, 1);
  }
});

Deno.test("ReferenceGrant: from TLSRoutes of the route's namespace; one for HTTPRoutes or from elsewhere does not count", () => {
  const ref = [{ name: "tls-backend", namespace: "apps", port: 443 }];
  const world = (grants: ReturnType<typeof grant>[]) => ({
    tlsRoutes: [tlsRoute("r", ["abc.example.com"], { backendRefs: ref })],
    grants,
    ...tlsBackends("apps/tls-backend"),
  });
  const refused = [
    grant("apps", { kind: "HTTPRoute", namespace: NS }, { kind: "Service", name: "tls-backend" }),
    grant("apps", { kind: "TLSRoute", namespace: "elsewhere" }, { kind: "Service", name: "tls-backend" }),
    grant("apps", { kind: "TLSRoute", namespace: NS }, { kind: "Service", name: "another" }),
    grant(NS, { kind: "TLSRoute", namespace: NS }, { kind: "Service", name: "tls-backend" }),
  ];
  for (const g of refused) {
    const b = build(gateway([tls("tls")]), world([g]));
    assert.equal(tlsRouteCondition(b, "r", "ResolvedRefs")?.reason, "RefNotPermitted", JSON.stringify(g.spec));
  }
  const b = build(
    gateway([tls("tls")]),
    world([grant("apps", { kind: "TLSRoute", namespace: NS }, { kind: "Service", name: "tls-backend" })]),
  );
  assert.equal(tlsRouteCondition(b, "r", "ResolvedRefs")?.status, "True");
  assert.deepEqual(connect(b, 443, "abc.example.com"), [{ backend: "be_apps_tls-backend_443_tcp", weight: 1 }]);
});

Deno.test("weights: targets by weight, the invalid references' share refused, weight 0 never chosen", () => {
  const b = build(gateway([tls("tls")]), {
    tlsRoutes: [tlsRoute("r", ["example.com"], {
      backendRefs: [
        { name: "a", port: 443, weight: 3 },
        { name: "b", port: 443, weight: 1 },
        { name: "gone", port: 443, weight: 1 },
        { name: "c", port: 443, weight: 0 },
      ],
    })],
    ...tlsBackends("a", "b", "c"),
  });
  const rule = b.proxy.tlsRules![0];
  assert.deepEqual(rule.targets, [{ backend: `be_${NS}_a_443_tcp`, weight: 3 }, {
    backend: `be_${NS}_b_443_tcp`,
    weight: 1,
  }]);
  assert.equal(rule.invalidWeight, 1);
  assert.ok(!b.proxy.backends.some((x) => x.name.includes("_c_")));
});

Deno.test("two TLSRoutes for one name on a port: the oldest wins; both are Accepted", () => {
  const b = build(gateway([tls("tls")]), {
    tlsRoutes: [
      tlsRoute("newer", ["a.example.com"], {
        created: "2026-02-01T00:00:00Z",
        backendRefs: [{ name: "b", port: 443 }],
      }),
      tlsRoute("older", ["a.example.com"], {
        created: "2026-01-01T00:00:00Z",
        backendRefs: [{ name: "a", port: 443 }],
      }),
    ],
    ...tlsBackends("a", "b"),
  });
  assert.deepEqual(connect(b, 443, "a.example.com"), [{ backend: `be_${NS}_a_443_tcp`, weight: 1 }]);
  assert.equal(tlsRouteCondition(b, "newer", "Accepted")?.status, "True");
  assert.equal(b.gateway.listeners[0].attachedRoutes, 2);
});

Deno.test("TLS and HTTPS (or HTTP) on one port conflict: mixed termination is not served", () => {
  const b = build(gateway([tls("tls", 443), https("https", "cert", 443)]), { secrets: [tlsSecret("cert", NS)] });
  for (const name of ["tls", "https"]) {
    assert.equal(listenerCondition(b, name, "Conflicted")?.reason, "ProtocolConflict");
  }
  assert.deepEqual(b.proxy.ports, []);
});

Deno.test("a TLSRoute's backend is reached as it comes: the Service port's appProtocol is not read", () => {
  const world = tlsBackends("svc");
  (world.services![0] as V1Service).spec!.ports![0].appProtocol = "kubernetes.io/h2c";
  const b = build(gateway([tls("tls")]), { tlsRoutes: [tlsRoute("r", ["a.example.com"])], ...world });
  assert.equal(tlsRouteCondition(b, "r", "ResolvedRefs")?.status, "True");
  const be = b.proxy.backends.find((x) => x.name === svc)!;
  assert.equal(be.mode, "tcp");
  assert.equal((be as { proto?: string }).proto, undefined);
});

Deno.test("hostile hostnames never reach the model's SNI entries: UnsupportedValue", () => {
  const b = build(gateway([tls("tls")]), {
    tlsRoutes: [tlsRoute("r", ["a.example.com x", "${HOME}.example.com", "10.0.0.1"])],
    ...tlsBackends("svc"),
  });
  const accepted = tlsRouteCondition(b, "r", "Accepted");
  assert.equal(accepted?.status, "False");
  assert.equal(accepted?.reason, "UnsupportedValue");
  assert.deepEqual(b.proxy.ports[0].sni, []);
  const partly = build(gateway([tls("tls")]), {
    tlsRoutes: [tlsRoute("r", ["a.example.com", "bad name"])],
    ...tlsBackends("svc"),
  });
  assert.equal(tlsRouteCondition(partly, "r", "PartiallyInvalid")?.status, "True");
  assert.deepEqual(partly.proxy.ports[0].sni?.map((e) => e.hostname), ["a.example.com"]);
});
