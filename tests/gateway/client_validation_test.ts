/**
 * Frontend client-certificate validation in a Gateway's model (lib/gateway/client_validation.ts
 * through lib/gateway/listeners.ts and model.ts), from the words of the Gateway API
 * (FrontendTLSConfig, FrontendTLSValidation, the listener reasons InvalidCACertificateRef,
 * InvalidCACertificateKind, RefNotPermitted and NoValidCACertificate, the Gateway condition
 * InsecureFrontendValidationMode): perPort overrides default on HTTPS listeners of its port only;
 * an unusable CA leaves its listeners unresolved, unaccepted when no reference is usable, and
 * never served; HTTP and TLS listeners are untouched. Then the bind line and global section the
 * renderer writes for it.
 */
import assert from "node:assert/strict";
import type { Gateway, Listener, TLSConfig } from "../../lib/gateway/api.ts";
import type { GatewayBuild } from "../../lib/gateway/model_types.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { createCA } from "../../lib/pki/certs.ts";
import { build, gateway, grant, http, https, NS, tls, tlsSecret, type World } from "./fixtures.ts";

const CA = (await createCA({ commonName: "clients CA" })).certPem;

type Refs = NonNullable<NonNullable<TLSConfig["validation"]>["caCertificateRefs"]>;

const cm = (name: string, more: Partial<Refs[number]> = {}): Refs[number] => ({
  group: "",
  kind: "ConfigMap",
  name,
  ...more,
});

function withFrontend(
  listeners: Listener[],
  def: Refs | null,
  perPort: { port: number; refs: Refs | null; mode?: string }[] = [],
  mode?: string,
): Gateway {
  const gw = gateway(listeners);
  const validation = (refs: Refs | null, m?: string): TLSConfig =>
    refs ? { validation: { caCertificateRefs: refs, ...(m ? { mode: m } : {}) } } : {};
  gw.spec.tls = {
    frontend: {
      default: validation(def, mode),
      ...(perPort.length > 0
        ? { perPort: perPort.map((p) => ({ port: p.port, tls: validation(p.refs, p.mode) })) }
        : {}),
    },
  };
  return gw;
}

const world: World = {
  secrets: [tlsSecret("site", NS)],
  configMaps: {
    [`${NS}/ca`]: { "ca.crt": CA },
    [`${NS}/per-port-ca`]: { "ca.crt": CA },
    [`${NS}/not-pem`]: { "ca.crt": "hello" },
    [`${NS}/no-key`]: { "other.crt": CA },
    ["other/ca"]: { "ca.crt": CA },
  },
};

function listener(b: GatewayBuild, name: string) {
  const l = b.gateway.listeners.find((x) => x.name === name)!;
  const c = (type: string) => {
    const x = l.conditions.find((y) => y.type === type)!;
    return `${x.status}/${x.reason}`;
  };
  return { accepted: c("Accepted"), resolved: c("ResolvedRefs"), programmed: c("Programmed").split("/")[0] };
}

const port = (b: GatewayBuild, n: number) => b.proxy.ports.find((p) => p.port === n);

Deno.test("default applies to every HTTPS port, perPort overrides it on its port (AllowValidOnly by default)", () => {
  const b = build(
    withFrontend(
      [https("https", "site"), https("https-8443", "site", 8443, { hostname: "second.example" })],
      [cm("ca")],
      [{ port: 8443, refs: [cm("per-port-ca")] }],
    ),
    world,
  );
  assert.deepEqual(listener(b, "https"), {
    accepted: "True/Accepted",
    resolved: "True/ResolvedRefs",
    programmed: "True",
  });
  assert.deepEqual(port(b, 443)?.clientValidation, {
    mode: "AllowValidOnly",
    ca: { namespace: NS, name: "ca", file: `${NS}_ca_configmap_ca.pem` },
  });
  assert.equal(port(b, 8443)?.clientValidation?.ca.name, "per-port-ca");
  assert.deepEqual(b.refs.configMaps, [`${NS}/ca`, `${NS}/per-port-ca`]);
  assert.equal(b.gateway.conditions.find((c) => c.type === "InsecureFrontendValidationMode"), undefined);
});

Deno.test("a perPort entry without validation turns the check off on its port only", () => {
  const b = build(
    withFrontend([https("a", "site"), https("b", "site", 8443)], [cm("ca")], [{ port: 8443, refs: null }]),
    world,
  );
  assert.equal(port(b, 443)?.clientValidation?.ca.name, "ca");
  assert.equal(port(b, 8443)?.clientValidation, undefined);
});

Deno.test("unusable CA references: the listeners of their port are neither resolved, accepted nor served", () => {
  const gw = withFrontend(
    [
      https("https", "site"),
      https("https-unresolved", "site", 7443, { hostname: "first.example" }),
      https("https-invalid-kind", "site", 8443, { hostname: "second.example" }),
      https("https-grant-missing", "site", 6443, { hostname: "fourth.example" }),
      https("https-not-pem", "site", 5443),
      https("https-no-key", "site", 4443),
    ],
    [cm("ca")],
    [
      { port: 7443, refs: [cm("non-existing")] },
      { port: 8443, refs: [{ group: "", kind: "Service", name: "infra-backend-v2" }] },
      { port: 6443, refs: [cm("ca", { namespace: "other" })] },
      { port: 5443, refs: [cm("not-pem")] },
      { port: 4443, refs: [cm("no-key")] },
    ],
  );
  const b = build(gw, world);
  assert.deepEqual(listener(b, "https"), {
    accepted: "True/Accepted",
    resolved: "True/ResolvedRefs",
    programmed: "True",
  });
  const refused = (resolved: string) => ({
    accepted: "False/NoValidCACertificate",
    resolved: `False/${resolved}`,
    programmed: "False",
  });
  assert.deepEqual(listener(b, "https-unresolved"), refused("InvalidCACertificateRef"));
  assert.deepEqual(listener(b, "https-invalid-kind"), refused("InvalidCACertificateKind"));
  assert.deepEqual(listener(b, "https-grant-missing"), refused("RefNotPermitted"));
  assert.deepEqual(listener(b, "https-not-pem"), refused("InvalidCACertificateRef"));
  assert.deepEqual(listener(b, "https-no-key"), refused("InvalidCACertificateRef"));
  assert.deepEqual(b.proxy.ports.map((p) => p.port), [443], "the refused ports are closed");
  const message = b.gateway.listeners.find((l) => l.name === "https-unresolved")!.conditions
    .find((c) => c.type === "ResolvedRefs")!.message;
  assert.match(
    message,
    /perPort\[0\]\.tls\.validation\.caCertificateRefs\[0\]: ConfigMap infra\/non-existing not found/,
  );
  const gwAccepted = b.gateway.conditions.find((c) => c.type === "Accepted")!;
  assert.deepEqual([gwAccepted.status, gwAccepted.reason], ["True", "ListenersNotValid"]);
  assert.ok(b.problems.some((p) => p.kind === "Gateway" && /https-invalid-kind/.test(p.message)), "a Warning Event");
});

Deno.test("another namespace's CA ConfigMap is used when a ReferenceGrant there allows it", () => {
  const gw = withFrontend([https("https", "site")], [cm("ca", { namespace: "other" })]);
  const b = build(gw, {
    ...world,
    grants: [grant("other", { kind: "Gateway", namespace: NS }, { kind: "ConfigMap" })],
  });
  assert.deepEqual(listener(b, "https"), {
    accepted: "True/Accepted",
    resolved: "True/ResolvedRefs",
    programmed: "True",
  });
  assert.equal(port(b, 443)?.clientValidation?.ca.file, "other_ca_configmap_ca.pem");
});

Deno.test("an invalid default touches only HTTPS listeners: HTTP (even with a perPort entry) and TLS are served", () => {
  const gw = withFrontend(
    [https("https", "site"), http("http"), tls("tls", 8443)],
    [cm("does-not-exist")],
    [{ port: 80, refs: [cm("per-port-ca")] }],
  );
  const b = build(gw, world);
  assert.deepEqual(listener(b, "http"), {
    accepted: "True/Accepted",
    resolved: "True/ResolvedRefs",
    programmed: "True",
  });
  assert.deepEqual(listener(b, "tls"), {
    accepted: "True/Accepted",
    resolved: "True/ResolvedRefs",
    programmed: "True",
  });
  assert.deepEqual(listener(b, "https"), {
    accepted: "False/NoValidCACertificate",
    resolved: "False/InvalidCACertificateRef",
    programmed: "False",
  });
  assert.deepEqual(b.proxy.ports.map((p) => [p.port, p.clientValidation]), [[80, undefined], [8443, undefined]]);
});

Deno.test("two CA ConfigMaps for one port: unresolved (one CA file per port) but accepted, and not served", () => {
  const b = build(withFrontend([https("https", "site")], [cm("ca"), cm("per-port-ca")]), world);
  assert.deepEqual(listener(b, "https"), {
    accepted: "True/Accepted",
    resolved: "False/InvalidCACertificateRef",
    programmed: "False",
  });
  assert.equal(port(b, 443), undefined);
});

Deno.test("AllowInsecureFallback: the port's check says so, and the Gateway has InsecureFrontendValidationMode", () => {
  const b = build(
    withFrontend([https("a", "site"), https("b", "site", 8443)], [cm("ca")], [{
      port: 8443,
      refs: [cm("per-port-ca")],
      mode: "AllowInsecureFallback",
    }]),
    world,
  );
  assert.equal(port(b, 443)?.clientValidation?.mode, "AllowValidOnly");
  assert.equal(port(b, 8443)?.clientValidation?.mode, "AllowInsecureFallback");
  const c = b.gateway.conditions.find((x) => x.type === "InsecureFrontendValidationMode");
  assert.deepEqual([c?.status, c?.reason], ["True", "ConfigurationChanged"]);
});

Deno.test("an unknown mode refuses the listeners of its port", () => {
  const b = build(withFrontend([https("https", "site")], [cm("ca")], [], "Sometimes"), world);
  assert.deepEqual(listener(b, "https"), {
    accepted: "False/UnsupportedValue",
    resolved: "True/ResolvedRefs",
    programmed: "False",
  });
});

Deno.test("the HTTPS bind checks clients with the port's CA file; the proxy keeps no shared TLS session cache", async () => {
  const templates = await loadTemplates(null);
  const b = build(
    withFrontend([https("a", "site"), https("b", "site", 8443), http("web")], [cm("ca")], [{
      port: 8443,
      refs: [cm("per-port-ca")],
      mode: "AllowInsecureFallback",
    }]),
    world,
  );
  const rendered = renderGateway(b.proxy, templates);
  assert.deepEqual(rendered.secrets.filter((s) => s.kind === "configmap-ca"), [
    { kind: "configmap-ca", file: `${NS}_ca_configmap_ca.pem`, namespace: NS, name: "ca" },
    { kind: "configmap-ca", file: `${NS}_per-port-ca_configmap_ca.pem`, namespace: NS, name: "per-port-ca" },
  ], "the proxy reads the CA ConfigMaps");
  const config = rendered.config;
  const binds = config.split("\n").filter((l) => l.trim().startsWith("bind "));
  assert.ok(binds.some((l) => l.endsWith(`ca-file ${NS}_ca_configmap_ca.pem verify required`)), binds.join("\n"));
  assert.ok(
    binds.some((l) =>
      l.endsWith(`ca-file ${NS}_per-port-ca_configmap_ca.pem verify optional ca-ignore-err all crt-ignore-err all`)
    ),
    binds.join("\n"),
  );
  assert.match(config, /^ {4}tune\.ssl\.cachesize 0$/m);
  // the client's own headers are removed on every frontend, the HTTP one too
  assert.equal(config.match(/http-request del-header X-SSL-Client-Verify/g)?.length, 3);
  const plain = renderGateway(build(gateway([https("a", "site")]), world).proxy, templates).config;
  assert.doesNotMatch(plain, /ca-file|cachesize|X-SSL-Client/);
});
