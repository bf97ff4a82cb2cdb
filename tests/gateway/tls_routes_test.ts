/**
 * TLSRoutes in the model (lib/gateway/tls_routes.ts, lib/gateway/listeners.ts), from the words of
 * the Gateway API reference (apis/v1 tlsroute_types.go, gateway_types.go): "A TLSRoute MUST be
 * attached to a Listener of protocol TLS", Passthrough is core and Terminate extended (the listener
 * decrypts with its certificateRefs, "Terminate" being the default mode), hostnames intersect as for
 * HTTPRoutes, a rule whose backends are invalid "must actively reject … by rejecting the connection",
 * "rejections must respect weight", and a connection belongs to the listener whose hostname matches
 * its SNI most specifically (listener isolation: a stop for each listener hostname).
 */
import assert from "node:assert/strict";
import type { V1Service } from "@kubernetes/client-node";
import type { GatewayBuild } from "../../lib/gateway/model_types.ts";
import type { Gateway } from "../../lib/gateway/api.ts";
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

/** Where a connection with `sni` on `port` goes: the rule's targets, [] when refused (a stop), null when no entry. */
function connect(b: GatewayBuild, port: number, sni: string): { backend: string; weight: number }[] | null {
  const p = b.proxy.ports.find((x) => x.port === port);
  const entries = p?.sni ?? [];
  const hit = entries.find((e) =>
    e.hostname === sni ||
    (e.hostname.startsWith("*.") && sni.endsWith(e.hostname.slice(1)) && sni.length > e.hostname.length - 1) ||
    e.hostname === ""
  );
  if (!hit) return null;
  if (hit.rule === null) return [];
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
  // the listener's hostname without a route of its own: a stop
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => [e.hostname, e.rule !== null]), [
    ["abc.example.com", true],
    ["*.example.com", false],
  ]);
  assert.deepEqual(connect(b, 443, "abc.example.com"), [{ backend: svc, weight: 1 }]);
  assert.deepEqual(connect(b, 443, "other.example.com"), []);
  assert.equal(connect(b, 443, "other.example.org"), null);
  assert.deepEqual(b.proxy.ports[0].tlsModes, ["Passthrough"]);
  const be = b.proxy.backends.find((x) => x.name === svc)!;
  assert.equal(be.mode, "tcp");
  assert.deepEqual(be.servers.map((s) => `${s.address}:${s.port}`), ["10.0.1.1:8443"]);
  // the HTTP copy of the Service backend is not rendered: nothing routes HTTP to it
  assert.ok(!b.proxy.backends.some((x) => x.name === `be_${NS}_svc_443`));
  assert.deepEqual(b.refs.services, [`${NS}/svc`]);
});

Deno.test("TLS Terminate (explicit or the API's default mode): TLSRoute kinds, the certificate served, entries marked", () => {
  for (const mode of ["Terminate", null] as const) {
    const gw = gateway([tls("tls-terminate", 8443, {
      hostname: "terminate.example.com",
      tls: { ...(mode ? { mode } : {}), certificateRefs: [{ name: "cert" }] },
    })]);
    const b = build(gw, {
      tlsRoutes: [tlsRoute("r", ["terminate.example.com"])],
      secrets: [tlsSecret("cert", NS)],
      ...tlsBackends("svc"),
    });
    assert.deepEqual(listenerCondition(b, "tls-terminate", "Accepted")?.reason, "Accepted");
    assert.equal(listenerCondition(b, "tls-terminate", "Programmed")?.status, "True");
    assert.deepEqual(b.gateway.listeners[0].supportedKinds, [{ group: "gateway.networking.k8s.io", kind: "TLSRoute" }]);
    assert.equal(b.gateway.listeners[0].attachedRoutes, 1);
    assert.equal(tlsRouteCondition(b, "r", "Accepted")?.status, "True");
    const p = b.proxy.ports[0];
    assert.deepEqual(p.tlsModes, ["Terminate"]);
    assert.deepEqual(p.certs, [{
      file: `${NS}_cert.pem`,
      namespace: NS,
      name: "cert",
      hosts: ["terminate.example.com"],
    }]);
    assert.deepEqual(p.sni?.map((e) => [e.hostname, e.terminate]), [["terminate.example.com", true]]);
    // the plain stream goes to the same mode tcp copy of the Service backend as a passthrough one
    assert.deepEqual(connect(b, 8443, "terminate.example.com"), [{ backend: svc, weight: 1 }]);
    assert.deepEqual(b.refs.secrets, [`${NS}/cert`]);
  }
});

Deno.test("TLS Terminate certificates: the same verdicts as HTTPS; an unusable one is never served (fail closed)", () => {
  const listener = (refs: { name: string; namespace?: string }[]) =>
    gateway([tls("t", 443, { hostname: "a.example.com", tls: { mode: "Terminate", certificateRefs: refs } })]);
  const world = { tlsRoutes: [tlsRoute("r", ["a.example.com"])], ...tlsBackends("svc") };
  const cases: [string, Gateway, string][] = [
    ["none", listener([]), "InvalidCertificateRef"],
    ["missing", listener([{ name: "missing" }]), "InvalidCertificateRef"],
    ["other namespace without grant", listener([{ name: "cert", namespace: "web" }]), "RefNotPermitted"],
  ];
  for (const [what, gw, reason] of cases) {
    const b = build(gw, { ...world, secrets: [tlsSecret("cert", "web")] });
    assert.equal(listenerCondition(b, "t", "ResolvedRefs")?.reason, reason, what);
    assert.equal(listenerCondition(b, "t", "Programmed")?.status, "False", what);
    assert.deepEqual(b.proxy.ports, [], what);
  }
  const b = build(listener([]), world);
  assert.match(listenerCondition(b, "t", "ResolvedRefs")!.message, /TLS in Terminate mode needs one/);
  // an unknown mode is refused on its own
  const odd = build(gateway([tls("t", 443, { tls: { mode: "Reencrypt" as "Terminate" } })]), world);
  assert.equal(listenerCondition(odd, "t", "Accepted")?.reason, "UnsupportedValue");
  assert.deepEqual(odd.gateway.listeners[0].supportedKinds, []);
});

Deno.test("mixed (TLSRouteModeMixed): Passthrough and Terminate listeners on one port are both served, entries marked", () => {
  const gw = gateway([
    tls("tls-terminate", 8883, {
      hostname: "tls.example.com",
      tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] },
    }),
    tls("tls-passthrough", 8883, { hostname: "abc.example.com" }),
  ]);
  const b = build(gw, {
    tlsRoutes: [tlsRoute("pass", ["abc.example.com"]), tlsRoute("term", ["tls.example.com"])],
    secrets: [tlsSecret("cert", NS)],
    ...tlsBackends("svc"),
  });
  for (const name of ["tls-terminate", "tls-passthrough"]) {
    assert.equal(listenerCondition(b, name, "Accepted")?.reason, "Accepted", name);
    assert.equal(listenerCondition(b, name, "Conflicted")?.status, "False", name);
  }
  assert.deepEqual(b.gateway.listeners.map((l) => l.attachedRoutes), [1, 1]);
  const p = b.proxy.ports[0];
  assert.deepEqual(p.tlsModes, ["Passthrough", "Terminate"]);
  assert.deepEqual(p.sni?.map((e) => [e.hostname, e.terminate ?? false]), [
    ["abc.example.com", false],
    ["tls.example.com", true],
  ]);
  assert.deepEqual(p.certs.map((c) => c.hosts), [["tls.example.com"]]);
});

Deno.test("listener isolation on a TLS port: a name under a more specific listener is only that listener's", () => {
  // *.example.com (Passthrough, route *.example.com) and tls.example.com (Terminate, no route):
  // tls.example.com is the Terminate listener's, which has no route: closed, never passed through
  const gw = gateway([
    tls("wide", 443, { hostname: "*.example.com" }),
    tls("narrow", 443, {
      hostname: "tls.example.com",
      tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] },
    }),
  ]);
  const b = build(gw, {
    tlsRoutes: [
      tlsRoute("wide", ["*.example.com", "tls.example.com"], { parentRefs: [{ name: "gw", sectionName: "wide" }] }),
    ],
    secrets: [tlsSecret("cert", NS)],
    ...tlsBackends("svc"),
  });
  const p = b.proxy.ports[0];
  assert.deepEqual(p.sni?.map((e) => [e.hostname, e.rule !== null, e.terminate ?? false]), [
    ["tls.example.com", false, true],
    ["*.example.com", true, false],
  ]);
  assert.deepEqual(connect(b, 443, "tls.example.com"), []);
  assert.deepEqual(connect(b, 443, "a.example.com"), [{ backend: svc, weight: 1 }]);
  // a route of a hostname-less listener for a name a listener with a hostname has: that listener's stop
  const c = build(gateway([tls("any", 443), tls("abc", 443, { hostname: "*.abc.example.com" })]), {
    tlsRoutes: [
      tlsRoute("r", ["x.abc.example.com", "other.example.com"], { parentRefs: [{ name: "gw", sectionName: "any" }] }),
    ],
    ...tlsBackends("svc"),
  });
  assert.deepEqual(c.proxy.ports[0].sni?.map((e) => [e.hostname, e.rule !== null]), [
    ["other.example.com", true],
    ["*.abc.example.com", false],
  ]);
  // an exact listener takes its one name, never the wildcard a less specific listener's route has
  const d = build(
    gateway([tls("wide", 443, { hostname: "*.example.com" }), tls("x", 443, { hostname: "x.example.com" })]),
    {
      tlsRoutes: [tlsRoute("r", ["*.example.com"], { parentRefs: [{ name: "gw", sectionName: "wide" }] })],
      ...tlsBackends("svc"),
    },
  );
  assert.deepEqual(d.proxy.ports[0].sni?.map((e) => [e.hostname, e.rule !== null]), [
    ["x.example.com", false],
    ["*.example.com", true],
  ]);
  assert.deepEqual(connect(d, 443, "y.example.com"), [{ backend: svc, weight: 1 }]);
  assert.deepEqual(connect(d, 443, "x.example.com"), []);
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
  // the listener's stop only
  assert.deepEqual(b.proxy.ports[0].sni?.map((e) => [e.hostname, e.rule]), [["www.example.com", null]]);
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

Deno.test("TLS and HTTPS (or HTTP) on one port conflict: ProtocolConflict", () => {
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

Deno.test("a Passthrough and a Terminate listener with one hostname on one port conflict: HostnameConflict, neither served", () => {
  const gw = gateway([
    tls("term", 443, { hostname: "a.example.com", tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] } }),
    tls("pass", 443, { hostname: "a.example.com" }),
  ]);
  const b = build(gw, { tlsRoutes: [tlsRoute("r", ["a.example.com"])], secrets: [tlsSecret("cert", NS)] });
  for (const name of ["term", "pass"]) {
    assert.equal(listenerCondition(b, name, "Conflicted")?.reason, "HostnameConflict", name);
    assert.equal(listenerCondition(b, name, "Programmed")?.status, "False", name);
  }
  assert.deepEqual(b.proxy.ports, []);
});
