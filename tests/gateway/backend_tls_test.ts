/**
 * BackendTLSPolicy verdicts and what a Service port gets (lib/gateway/backend_tls.ts), from the
 * v1 API reference (BackendTLSPolicySpec, BackendTLSPolicyValidation): conflicts (oldest, then
 * namespace/name), CA references (ConfigMap `ca.crt`; InvalidKind, InvalidCACertificateRef,
 * NoValidCACertificate), wellKnownCACertificates, subjectAltNames, and the server parameters.
 */
import assert from "node:assert/strict";
import { BackendTlsPolicies, type BackendTLSPolicy, tlsServerParams } from "../../lib/gateway/backend_tls.ts";
import { configMapCaFile } from "../../lib/render/configmap_ca.ts";
import { createCA } from "../../lib/pki/certs.ts";

const CA = (await createCA({ commonName: "test CA" })).certPem;

function policy(
  name: string,
  validation: NonNullable<BackendTLSPolicy["spec"]>["validation"],
  more: { created?: string; sectionName?: string; target?: string; kind?: string } = {},
): BackendTLSPolicy {
  return {
    metadata: { namespace: "ns", name, generation: 3, creationTimestamp: more.created ?? "2026-01-01T00:00:00Z" },
    spec: {
      targetRefs: [{
        group: "",
        kind: more.kind ?? "Service",
        name: more.target ?? "svc",
        ...more.sectionName ? { sectionName: more.sectionName } : {},
      }],
      validation,
    },
  };
}

const configMaps: Record<string, { data?: Record<string, unknown> }> = {
  "ns/ca": { data: { "ca.crt": CA } },
  "ns/no-key": { data: { "other": CA } },
  "ns/garbage": { data: { "ca.crt": "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n" } },
};
const lookup = (ns: string, name: string) => configMaps[`${ns}/${name}`];
const withCa = (name = "ca") => ({
  hostname: "backend.example",
  caCertificateRefs: [{ group: "", kind: "ConfigMap", name }],
});

function cond(p: BackendTlsPolicies, key: string, type: "accepted" | "resolvedRefs") {
  const v = p.verdicts.get(key)!;
  return { status: v[type].status, reason: v[type].reason };
}

Deno.test("a valid policy with a CA ConfigMap: Accepted, ResolvedRefs, and the port is checked against its CA", () => {
  const p = new BackendTlsPolicies([policy("good", withCa())], lookup, false);
  assert.deepEqual(cond(p, "ns/good", "accepted"), { status: "True", reason: "Accepted" });
  assert.deepEqual(cond(p, "ns/good", "resolvedRefs"), { status: "True", reason: "ResolvedRefs" });
  assert.equal(p.verdicts.get("ns/good")!.accepted.observedGeneration, 3);
  const port = p.forPort("ns", "svc", { name: "https" });
  assert.deepEqual(port, {
    ok: true,
    tls: {
      policy: "ns/good",
      ca: { namespace: "ns", name: "ca", file: "ns_ca_configmap_ca.pem" },
      sni: "backend.example",
      verifyHost: "backend.example",
    },
  });
  assert.equal(p.forPort("ns", "other", {}), null, "another Service is not targeted");
  assert.equal(p.forPort("other", "svc", {}), null, "nor a Service of the same name in another namespace");
});

Deno.test("CA references: unknown kind, missing ConfigMap, missing key and malformed PEM fail closed", () => {
  const cases: [string, BackendTLSPolicy, string][] = [
    [
      "kind",
      policy("p", { hostname: "b.example", caCertificateRefs: [{ group: "", kind: "Secret", name: "ca" }] }),
      "InvalidKind",
    ],
    ["missing", policy("p", withCa("absent")), "InvalidCACertificateRef"],
    ["no key", policy("p", withCa("no-key")), "InvalidCACertificateRef"],
    ["malformed", policy("p", withCa("garbage")), "InvalidCACertificateRef"],
  ];
  for (const [what, pol, reason] of cases) {
    const p = new BackendTlsPolicies([pol], lookup, false);
    assert.deepEqual(cond(p, "ns/p", "resolvedRefs"), { status: "False", reason }, what);
    assert.deepEqual(cond(p, "ns/p", "accepted"), { status: "False", reason: "NoValidCACertificate" }, what);
    const port = p.forPort("ns", "svc", {});
    assert.equal(port?.ok, false, `${what}: the port is held (never reached unverified)`);
  }
});

Deno.test("the oldest policy on a port wins, then namespace/name; the others are Conflicted", () => {
  const p = new BackendTlsPolicies(
    [
      policy("b-older", withCa(), { created: "2026-01-01T00:00:00Z" }),
      policy("a-newer", withCa(), { created: "2026-01-02T00:00:00Z" }),
      policy("c-same-time", withCa(), { created: "2026-01-01T00:00:00Z" }),
    ],
    lookup,
    false,
  );
  assert.deepEqual(cond(p, "ns/b-older", "accepted"), { status: "True", reason: "Accepted" });
  assert.deepEqual(cond(p, "ns/a-newer", "accepted"), { status: "False", reason: "Conflicted" });
  assert.deepEqual(cond(p, "ns/c-same-time", "accepted"), { status: "False", reason: "Conflicted" });
  const port = p.forPort("ns", "svc", {});
  assert.equal(port?.ok && port.tls.policy, "ns/b-older");
});

Deno.test("a policy on one port name (sectionName) does not conflict with one on the whole Service, and wins on its port", () => {
  const p = new BackendTlsPolicies(
    [
      policy("whole", withCa()),
      policy("named", { ...withCa(), hostname: "named.example" }, { sectionName: "https" }),
    ],
    lookup,
    false,
  );
  assert.deepEqual(cond(p, "ns/named", "accepted"), { status: "True", reason: "Accepted" });
  const named = p.forPort("ns", "svc", { name: "https" });
  const other = p.forPort("ns", "svc", { name: "admin" });
  assert.equal(named?.ok && named.tls.policy, "ns/named");
  assert.equal(other?.ok && other.tls.policy, "ns/whole");
});

Deno.test("wellKnownCACertificates: System uses the system bundle when the proxy has one, else is refused (Invalid)", () => {
  const pol = policy("sys", { hostname: "backend.example", wellKnownCACertificates: "System" });
  const yes = new BackendTlsPolicies([pol], lookup, true);
  const port = yes.forPort("ns", "svc", {});
  assert.equal(port?.ok && port.tls.ca, "system");
  const no = new BackendTlsPolicies([pol], lookup, false);
  assert.deepEqual(cond(no, "ns/sys", "accepted"), { status: "False", reason: "Invalid" });
  const other = new BackendTlsPolicies(
    [policy("x", { hostname: "b.example", wellKnownCACertificates: "example.com/bundle" })],
    lookup,
    true,
  );
  assert.deepEqual(cond(other, "ns/x", "accepted"), { status: "False", reason: "Invalid" });
});

Deno.test("subjectAltNames: one Hostname replaces hostname in the check (SNI stays); URIs and lists are refused", () => {
  const one = new BackendTlsPolicies(
    [policy("one", { ...withCa(), subjectAltNames: [{ type: "Hostname", hostname: "san.example" }] })],
    lookup,
    false,
  );
  const port = one.forPort("ns", "svc", {});
  assert.equal(port?.ok && `${port.tls.sni} ${port.tls.verifyHost}`, "backend.example san.example");
  for (
    const sans of [
      [{ type: "URI", uri: "spiffe://cluster/ns/sa" }],
      [{ type: "Hostname", hostname: "a.example" }, { type: "Hostname", hostname: "b.example" }],
    ]
  ) {
    const p = new BackendTlsPolicies([policy("p", { ...withCa(), subjectAltNames: sans })], lookup, false);
    assert.deepEqual(cond(p, "ns/p", "accepted"), { status: "False", reason: "Invalid" });
  }
});

Deno.test("invalid hostnames and targets are refused, never rendered", () => {
  for (const hostname of ["*.wild.example", "bad host", "x${HOME}", "10.0.0.1"]) {
    const p = new BackendTlsPolicies([policy("p", { ...withCa(), hostname })], lookup, false);
    assert.deepEqual(cond(p, "ns/p", "accepted"), { status: "False", reason: "Invalid" }, hostname);
  }
  const notService = new BackendTlsPolicies([policy("p", withCa(), { kind: "Pod" })], lookup, false);
  assert.deepEqual(cond(notService, "ns/p", "accepted"), { status: "False", reason: "Invalid" });
  assert.equal(notService.forPort("ns", "svc", {}), null);
});

Deno.test("server parameters: TLS, the CA file, SNI and the checked name", () => {
  const tls = {
    policy: "ns/p",
    ca: { namespace: "ns", name: "ca", file: configMapCaFile("ns", "ca") },
    sni: "backend.example",
    verifyHost: "san.example",
  };
  assert.equal(
    tlsServerParams(tls, false),
    "ssl verify required ca-file ns_ca_configmap_ca.pem sni str(backend.example) verifyhost san.example alpn http/1.1",
  );
  assert.match(tlsServerParams({ ...tls, ca: "system" }, true), /ca-file @system-ca .* alpn h2$/);
  assert.throws(() => tlsServerParams({ ...tls, sni: "a b" }, false), /bug/);
});
