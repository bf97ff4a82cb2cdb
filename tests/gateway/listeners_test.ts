/**
 * Listener validation and status (Listener, ListenerStatus and listener condition docs): protocols,
 * TLS certificate references and ReferenceGrants, route kinds, conflicts, and the Gateway's own
 * Accepted and Programmed conditions.
 */
import assert from "node:assert/strict";
import type { V1Secret } from "@kubernetes/client-node";
import { build, gateway, gatewayCondition, grant, http, https, listenerCondition, NS, tlsSecret } from "./fixtures.ts";

const cert = tlsSecret("cert", NS);
const malformed: V1Secret = {
  metadata: { name: "bad", namespace: NS },
  type: "kubernetes.io/tls",
  data: { "tls.crt": btoa("Hello world\n"), "tls.key": btoa("Hello world\n") },
};

function cond(b: ReturnType<typeof build>, listener: string, type: string): [string, string] {
  const c = listenerCondition(b, listener, type)!;
  return [c.status, c.reason];
}

Deno.test("an HTTP listener is accepted, resolved, not conflicted and programmed, with HTTPRoute and GRPCRoute as its kinds", () => {
  const b = build(gateway([http("web")]));
  assert.deepEqual(b.gateway.listeners[0].supportedKinds, [
    { group: "gateway.networking.k8s.io", kind: "HTTPRoute" },
    { group: "gateway.networking.k8s.io", kind: "GRPCRoute" },
  ]);
  assert.deepEqual(cond(b, "web", "Accepted"), ["True", "Accepted"]);
  assert.deepEqual(cond(b, "web", "ResolvedRefs"), ["True", "ResolvedRefs"]);
  assert.deepEqual(cond(b, "web", "Conflicted"), ["False", "NoConflicts"]);
  assert.deepEqual(cond(b, "web", "Programmed"), ["True", "Programmed"]);
  assert.deepEqual(b.proxy.ports.map((p) => [p.port, p.protocol]), [[80, "HTTP"]]);
  assert.deepEqual([gatewayCondition(b, "Accepted")!.reason, gatewayCondition(b, "Programmed")!.reason], [
    "Accepted",
    "Programmed",
  ]);
});

Deno.test("an unsupported protocol: listener Accepted=False/UnsupportedProtocol, no kinds; Gateway accepted only with another listener", () => {
  const only = build(gateway([{ name: "invalid", port: 1111, protocol: "INVALID" }]));
  assert.deepEqual(cond(only, "invalid", "Accepted"), ["False", "UnsupportedProtocol"]);
  assert.deepEqual(only.gateway.listeners[0].supportedKinds, []);
  assert.deepEqual(cond(only, "invalid", "Programmed"), ["False", "Invalid"]);
  assert.equal(gatewayCondition(only, "Accepted")!.status, "False");
  assert.equal(gatewayCondition(only, "Accepted")!.reason, "ListenersNotValid");
  assert.equal(gatewayCondition(only, "Programmed")!.status, "False");
  assert.deepEqual(only.proxy.ports, []);

  const mixed = build(gateway([http("http"), { name: "invalid", port: 1111, protocol: "TCP" }]));
  assert.deepEqual([gatewayCondition(mixed, "Accepted")!.status, gatewayCondition(mixed, "Accepted")!.reason], [
    "True",
    "ListenersNotValid",
  ]);
  assert.match(gatewayCondition(mixed, "Accepted")!.message, /invalid/);
  assert.deepEqual(cond(mixed, "http", "Accepted"), ["True", "Accepted"]);
  assert.deepEqual(mixed.proxy.ports.map((p) => p.port), [80]);
});

Deno.test("HTTPS with a valid Secret of its namespace: programmed, the certificate served for its hostname", () => {
  const b = build(gateway([https("tls", "cert", 443, { hostname: "*.example.com" })]), { secrets: [cert] });
  assert.deepEqual(cond(b, "tls", "Programmed"), ["True", "Programmed"]);
  assert.deepEqual(b.proxy.ports[0].certs, [{
    file: `${NS}_cert.pem`,
    namespace: NS,
    name: "cert",
    hosts: ["*.example.com"],
  }]);
  assert.deepEqual(b.refs.secrets, [`${NS}/cert`]);
});

Deno.test("HTTPS certificate references that cannot be used: ResolvedRefs=False/InvalidCertificateRef, not programmed", () => {
  const cases = {
    missing: { name: "nonexistent" },
    group: { group: "wrong.group.company.io", kind: "Secret", name: "cert" },
    kind: { group: "", kind: "WrongKind", name: "cert" },
    malformed: { name: "bad" },
  };
  for (const [what, ref] of Object.entries(cases)) {
    const b = build(gateway([{ name: "https", port: 443, protocol: "HTTPS", tls: { certificateRefs: [ref] } }]), {
      secrets: [cert, malformed],
    });
    assert.deepEqual(cond(b, "https", "ResolvedRefs"), ["False", "InvalidCertificateRef"], what);
    assert.deepEqual(cond(b, "https", "Programmed"), ["False", "Invalid"], what);
    assert.deepEqual(cond(b, "https", "Accepted"), ["True", "Accepted"], what);
    assert.equal(b.gateway.listeners[0].supportedKinds.length, 2, what);
    assert.deepEqual(b.proxy.ports, [], what);
  }
  const none = build(gateway([{ name: "https", port: 443, protocol: "HTTPS" }]));
  assert.deepEqual(cond(none, "https", "ResolvedRefs"), ["False", "InvalidCertificateRef"]);
});

Deno.test("a certificate in another namespace: RefNotPermitted without a ReferenceGrant from Gateways of this namespace", () => {
  const other = tlsSecret("certificate", "web");
  const gw = gateway([{
    name: "https",
    port: 443,
    protocol: "HTTPS",
    tls: { certificateRefs: [{ group: "", kind: "Secret", name: "certificate", namespace: "web" }] },
  }]);
  const refused = [
    [],
    [grant("apps", { kind: "Gateway", namespace: NS }, { kind: "Secret", name: "certificate" })], // grant in the wrong namespace
    [grant("web", { kind: "HTTPRoute", namespace: NS }, { kind: "Secret", name: "certificate" })], // wrong from kind
    [grant("web", { kind: "Gateway", namespace: "elsewhere" }, { kind: "Secret", name: "certificate" })], // wrong from namespace
    [grant("web", { kind: "Gateway", namespace: NS }, { kind: "Secret", name: "other" })], // another Secret
    [grant("web", { kind: "Gateway", namespace: NS }, { kind: "Service", name: "certificate" })], // wrong to kind
  ];
  for (const grants of refused) {
    const b = build(gw, { secrets: [other], grants });
    assert.deepEqual(cond(b, "https", "ResolvedRefs"), ["False", "RefNotPermitted"], JSON.stringify(grants));
    assert.equal(cond(b, "https", "Programmed")[0], "False");
    assert.deepEqual(b.refs.secrets, [], "a Secret the Gateway may not use is not even read");
  }
  for (const to of [{ kind: "Secret", name: "certificate" }, { kind: "Secret" }]) {
    const b = build(gw, { secrets: [other], grants: [grant("web", { kind: "Gateway", namespace: NS }, to)] });
    assert.deepEqual(cond(b, "https", "ResolvedRefs"), ["True", "ResolvedRefs"], JSON.stringify(to));
    assert.deepEqual(cond(b, "https", "Programmed"), ["True", "Programmed"]);
    assert.equal(b.proxy.ports[0].certs[0].file, "web_certificate.pem");
  }
});

Deno.test("allowedRoutes.kinds: unsupported kinds are dropped with ResolvedRefs=False/InvalidRouteKinds", () => {
  const only = build(gateway([http("http", 80, { allowedRoutes: { kinds: [{ kind: "InvalidRoute" }] } })]));
  assert.deepEqual(only.gateway.listeners[0].supportedKinds, []);
  assert.deepEqual(cond(only, "http", "ResolvedRefs"), ["False", "InvalidRouteKinds"]);
  const mixed = build(gateway([
    http("http", 80, { allowedRoutes: { kinds: [{ kind: "InvalidRoute" }, { kind: "HTTPRoute" }] } }),
  ]));
  assert.deepEqual(mixed.gateway.listeners[0].supportedKinds, [{
    group: "gateway.networking.k8s.io",
    kind: "HTTPRoute",
  }]);
  assert.deepEqual(cond(mixed, "http", "ResolvedRefs"), ["False", "InvalidRouteKinds"]);
  const otherGroup = build(gateway([
    http("http", 80, { allowedRoutes: { kinds: [{ group: "example.com", kind: "HTTPRoute" }] } }),
  ]));
  assert.deepEqual(otherGroup.gateway.listeners[0].supportedKinds, []);
  // GRPCRoute is an HTTP listener's kind too: named alone it is the only one
  const grpc = build(gateway([http("http", 80, { allowedRoutes: { kinds: [{ kind: "GRPCRoute" }] } })]));
  assert.deepEqual(grpc.gateway.listeners[0].supportedKinds, [{
    group: "gateway.networking.k8s.io",
    kind: "GRPCRoute",
  }]);
  assert.deepEqual(cond(grpc, "http", "ResolvedRefs"), ["True", "ResolvedRefs"]);
});

Deno.test("a class without HTTP/2: HTTPS listeners admit HTTPRoutes only; one naming GRPCRoute is Accepted=False/UnsupportedProtocol", () => {
  const plain = build(gateway([https("https", "cert"), http("http")]), { secrets: [cert], http2: false });
  assert.deepEqual(plain.gateway.listeners[0].supportedKinds, [{
    group: "gateway.networking.k8s.io",
    kind: "HTTPRoute",
  }]);
  assert.deepEqual(cond(plain, "https", "Accepted"), ["True", "Accepted"]);
  assert.equal(plain.gateway.listeners[1].supportedKinds.length, 2, "HTTP listeners keep h2c with prior knowledge");
  const named = build(gateway([https("https", "cert", 443, { allowedRoutes: { kinds: [{ kind: "GRPCRoute" }] } })]), {
    secrets: [cert],
    http2: false,
  });
  assert.deepEqual(cond(named, "https", "Accepted"), ["False", "UnsupportedProtocol"]);
  assert.match(listenerCondition(named, "https", "Accepted")!.message, /http2: "false"/);
  assert.deepEqual(named.gateway.listeners[0].supportedKinds, []);
  const withH2 = build(gateway([https("https", "cert", 443, { allowedRoutes: { kinds: [{ kind: "GRPCRoute" }] } })]), {
    secrets: [cert],
  });
  assert.deepEqual(cond(withH2, "https", "Accepted"), ["True", "Accepted"]);
});

Deno.test("conflicts: same port with two protocols, or same port and hostname; all of them, no winner", () => {
  const proto = build(gateway([http("a", 8443), https("b", "cert", 8443), http("c", 80)]), { secrets: [cert] });
  for (const l of ["a", "b"]) {
    assert.deepEqual(cond(proto, l, "Conflicted"), ["True", "ProtocolConflict"], l);
    assert.equal(cond(proto, l, "Programmed")[0], "False");
    assert.equal(cond(proto, l, "Accepted")[0], "False");
  }
  assert.deepEqual(cond(proto, "c", "Conflicted"), ["False", "NoConflicts"]);
  assert.deepEqual(proto.proxy.ports.map((p) => p.port), [80]);
  assert.equal(gatewayCondition(proto, "Accepted")!.reason, "ListenersNotValid");

  const host = build(gateway([
    http("a", 80, { hostname: "x.example.com" }),
    http("b", 80, { hostname: "x.example.com" }),
    http("c", 80, { hostname: "y.example.com" }),
    http("d", 81),
    http("e", 81),
  ]));
  for (const l of ["a", "b", "d", "e"]) assert.deepEqual(cond(host, l, "Conflicted"), ["True", "HostnameConflict"], l);
  assert.deepEqual(cond(host, "c", "Conflicted"), ["False", "NoConflicts"]);
});

Deno.test("invalid listener values are refused with a message naming the field", () => {
  const b = build(gateway([
    http("badhost", 80, { hostname: "Not_A_Host" }),
    http("badport", 0),
    { name: "pass", port: 443, protocol: "HTTPS", tls: { mode: "Passthrough" } },
  ]));
  assert.deepEqual(cond(b, "badhost", "Accepted"), ["False", "UnsupportedValue"]);
  assert.match(listenerCondition(b, "badhost", "Accepted")!.message, /spec\.listeners\[0\]\.hostname/);
  assert.deepEqual(cond(b, "badport", "Accepted"), ["False", "PortUnavailable"]);
  assert.deepEqual(cond(b, "pass", "Accepted"), ["False", "UnsupportedValue"]);
  assert.match(listenerCondition(b, "pass", "Accepted")!.message, /tls\.mode/);
});

Deno.test("every Gateway and listener condition carries the Gateway's generation", () => {
  const b = build(gateway([http("a"), { name: "b", port: 1, protocol: "UDP" }], { generation: 7 }));
  const all = [...b.gateway.conditions, ...b.gateway.listeners.flatMap((l) => l.conditions)];
  assert.equal(all.length, 2 + 2 * 4);
  for (const c of all) assert.equal(c.observedGeneration, 7, c.type);
  for (const c of all) assert.ok(c.message.length > 0, c.type);
});

Deno.test("spec.addresses with a value is not supported: Accepted=False/UnsupportedAddress, nothing served", () => {
  const gw = gateway([http("a")]);
  gw.spec.addresses = [{ type: "IPAddress", value: "10.1.2.3" }];
  const b = build(gw);
  assert.deepEqual([gatewayCondition(b, "Accepted")!.status, gatewayCondition(b, "Accepted")!.reason], [
    "False",
    "UnsupportedAddress",
  ]);
  assert.deepEqual(cond(b, "a", "Programmed"), ["False", "Invalid"]);
  assert.match(listenerCondition(b, "a", "Programmed")!.message, /the Gateway is not accepted: spec\.addresses/);
  assert.deepEqual(b.proxy.ports, []);
});

Deno.test("spec.infrastructure.parametersRef not read: Accepted=False/InvalidParameters, nothing served", () => {
  const gw = gateway([http("a")]);
  gw.spec.infrastructure = { parametersRef: { group: "invalid.io", kind: "InvalidParameters", name: "invalid" } };
  const b = build(gw);
  assert.deepEqual([gatewayCondition(b, "Accepted")!.status, gatewayCondition(b, "Accepted")!.reason], [
    "False",
    "InvalidParameters",
  ]);
  assert.match(gatewayCondition(b, "Accepted")!.message, /parametersRef is not read here/);
  assert.deepEqual(cond(b, "a", "Programmed"), ["False", "Invalid"]);
  assert.deepEqual(b.proxy.ports, []);
  // labels and annotations alone are served
  const plain = gateway([http("a")]);
  plain.spec.infrastructure = { labels: { a: "b" } };
  assert.equal(gatewayCondition(build(plain), "Accepted")!.status, "True");
});

Deno.test("spec.addresses: an IPAddress entry without value asks for any address: accepted (GatewayAddressEmpty)", () => {
  for (const addresses of [[{ type: "IPAddress" }], [{}], [{ type: "IPAddress", value: "" }]]) {
    const gw = gateway([http("a")]);
    gw.spec.addresses = addresses;
    const b = build(gw);
    assert.equal(gatewayCondition(b, "Accepted")!.status, "True", JSON.stringify(addresses));
    assert.equal(b.proxy.ports.length, 1);
  }
  // a Hostname cannot be given: the proxy's address is its Service's IP
  const gw = gateway([http("a")]);
  gw.spec.addresses = [{ type: "Hostname" }];
  assert.equal(gatewayCondition(build(gw), "Accepted")!.reason, "UnsupportedAddress");
});
