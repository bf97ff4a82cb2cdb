/**
 * Per-Gateway parameters (lib/controller/gateway_params.ts): the reference (the Gateway API's
 * LocalParametersReference: a ConfigMap of the Gateway's namespace), the keys and patterns of a
 * class's parameters, and the Gateway refused (Accepted=False, InvalidParameters) with a message
 * naming the key when they are missing or wrong.
 */
import assert from "node:assert/strict";
import {
  GATEWAY_SETTING_KEYS,
  gatewayParametersRef,
  gatewayParamsShape,
  MAX_CA_BUNDLE,
  MAX_PARAMETERS_DATA,
  parseGatewayParameters,
} from "../../lib/controller/gateway_params.ts";
import { defaultGlobalSettings, PROXY_SETTING_KEYS } from "../../lib/controller/global_settings.ts";
import { buildGateway } from "../../lib/gateway/model.ts";
import type { Gateway } from "../../lib/gateway/api.ts";
import { lookupFromLists } from "../../lib/render/model.ts";

const gw = (parametersRef?: unknown): Gateway => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { name: "edge", namespace: "apps", generation: 1 },
  spec: {
    gatewayClassName: "ours",
    listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
    ...(parametersRef === undefined ? {} : { infrastructure: { parametersRef } }),
  },
} as Gateway);
const cm = (data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "edge-params", namespace: "apps" },
  data,
});
const parse = (data: Record<string, string> | undefined, inGatewayNamespace = true) =>
  parseGatewayParameters(
    "apps/edge-params",
    data === undefined ? undefined : cm(data),
    defaultGlobalSettings,
    inGatewayNamespace,
    "ops",
  );

Deno.test("gateway params: the reference is a ConfigMap of the Gateway's own namespace", () => {
  assert.deepEqual(gatewayParametersRef(gw()), { ref: null, problem: null });
  assert.deepEqual(gatewayParametersRef(gw({ group: "", kind: "ConfigMap", name: "edge-params" })), {
    ref: "apps/edge-params",
    problem: null,
  });
  // a namespace in the reference is not part of the API (LocalParametersReference): never read
  assert.equal(
    gatewayParametersRef(gw({ group: "", kind: "ConfigMap", name: "p", namespace: "other" })).ref,
    "apps/p",
  );
  for (
    const bad of [{ group: "invalid.io", kind: "InvalidParameters", name: "x" }, {
      group: "",
      kind: "Secret",
      name: "x",
    }]
  ) {
    const r = gatewayParametersRef(gw(bad));
    assert.equal(r.ref, null);
    assert.match(r.problem!, /must name a ConfigMap \(group "", kind ConfigMap\) in the Gateway's namespace/);
  }
});

Deno.test("gateway params: valid keys apply, with the class parameters' patterns", () => {
  const p = parse({
    "replicas": "3",
    "service-type": "NodePort",
    "service-annotations": '{"example.com/lb":"internal"}',
    "node-selector": '{"pool":"edge"}',
    "resources.limits.cpu": "2",
    "resources.requests.memory": "128Mi",
    "timeout-server": "5s",
    "ssl-min-version": "TLSv1.3",
    "http2": "false",
  });
  assert.equal(p.problem, null);
  assert.equal(p.params.replicas, 3);
  assert.equal(p.params.serviceType, "NodePort");
  assert.deepEqual(p.params.serviceAnnotations, { "example.com/lb": "internal" });
  assert.deepEqual(p.params.nodeSelector, { pool: "edge" });
  assert.deepEqual(p.params.resources, { requests: { memory: "128Mi" }, limits: { cpu: "2" } });
  assert.equal(p.settings.proxy.timeouts.server, "5s");
  assert.equal(p.settings.proxy.sslMinVersion, "TLSv1.3");
  assert.equal(p.settings.proxy.http2, false);
  // an empty ConfigMap is valid: the defaults
  assert.equal(parse({}).problem, null);
});

Deno.test("gateway params: a missing ConfigMap or a bad, unknown or foreign key refuses, naming the key", () => {
  assert.match(parse(undefined).problem!, /ConfigMap apps\/edge-params not found/);
  const cases: [Record<string, string>, RegExp][] = [
    [{ replicas: "lots" }, /parameter replicas: "lots" is not a whole number/],
    [{ "service-type": "ExternalName" }, /parameter service-type: "ExternalName" is not ClusterIP/],
    [{ "timeout-server": "5 s" }, /parameter timeout-server: /],
    [{ "resources.limits.cpu": "a lot" }, /parameter resources\.limits\.cpu: /],
    [{ colour: "blue" }, /parameter "colour" is not a per-Gateway parameter/],
    // beyond the Gateway's own proxy: a Secret of any namespace, Ingress-only and global keys
    [{ "default-certificate": "other/tls" }, /parameter "default-certificate" is not a per-Gateway parameter/],
    [{ "nginx-compat": "true" }, /parameter "nginx-compat" is not a per-Gateway parameter/],
    [{ "dedicated-proxies": "true" }, /parameter "dedicated-proxies" is not a per-Gateway parameter/],
  ];
  for (const [data, want] of cases) {
    const p = parse(data);
    assert.match(p.problem ?? "(none)", want, JSON.stringify(data));
    assert.match(p.problem!, /^spec\.infrastructure\.parametersRef: ConfigMap apps\/edge-params /);
    assert.equal(p.params.replicas, null, "nothing of wrong parameters applies");
  }
});

Deno.test("gateway params: pods' placement and resources only with the proxy in the Gateway's namespace", () => {
  for (const key of ["replicas", "node-selector", "resources.requests.cpu"]) {
    const value = key === "node-selector" ? '{"pool":"edge"}' : "1";
    assert.equal(parse({ [key]: value }, true).problem, null, key);
    assert.match(parse({ [key]: value }, false).problem!, new RegExp(`parameter ${key.replaceAll(".", "\\.")} needs`));
  }
  assert.equal(parse({ "timeout-client": "30s", "service-type": "ClusterIP" }, false).problem, null);
});

Deno.test("gateway params: the cache keeps small data only; a large ConfigMap refuses", () => {
  const small = gatewayParamsShape({ ...cm({ replicas: "2" }), metadata: { ...cm({}).metadata, labels: { a: "b" } } });
  assert.deepEqual(small.data, { replicas: "2" });
  assert.equal(small.metadata.labels, undefined);
  const large = gatewayParamsShape(cm({ blob: "x".repeat(MAX_PARAMETERS_DATA + 1) }));
  assert.equal(large.data, undefined);
  const p = parseGatewayParameters("apps/edge-params", large, defaultGlobalSettings, true, "ops");
  assert.match(p.problem!, /more than 16384 characters of data/);
});

Deno.test("gateway params: a large ConfigMap keeps its ca.crt alone (a CA bundle for client validation), up to a limit", () => {
  const bundle = "x".repeat(MAX_PARAMETERS_DATA + 1);
  const large = gatewayParamsShape(cm({ "ca.crt": bundle, other: "y" }));
  assert.deepEqual(large.data, { "ca.crt": bundle });
  const p = parseGatewayParameters("apps/edge-params", large, defaultGlobalSettings, true, "ops");
  assert.match(p.problem!, /more than 16384 characters of data/, "still no parameters");
  assert.equal(gatewayParamsShape(cm({ "ca.crt": "x".repeat(MAX_CA_BUNDLE + 1) })).data, undefined);
});

Deno.test("gateway params: the model refuses the Gateway with the problem (Accepted=False, InvalidParameters)", () => {
  const build = (parametersProblem?: string | null) =>
    buildGateway({
      gateway: gw({ group: "", kind: "ConfigMap", name: "edge-params" }),
      gatewayClass: {
        metadata: { name: "ours" },
        spec: { controllerName: "ingress-controller.io/gateway-controller" },
      },
      routes: [],
      grants: [],
      namespaceLabels: () => ({}),
      lookup: lookupFromLists({}),
      parametersProblem,
    });
  const accepted = (b: ReturnType<typeof build>) => b.gateway.conditions.find((c) => c.type === "Accepted")!;
  assert.equal(accepted(build(null)).status, "True");
  assert.deepEqual(build(null).proxy.ports.map((p) => p.port), [80]);
  const refused = build("spec.infrastructure.parametersRef: ConfigMap apps/edge-params not found");
  assert.deepEqual([accepted(refused).status, accepted(refused).reason], ["False", "InvalidParameters"]);
  assert.match(accepted(refused).message, /ConfigMap apps\/edge-params not found/);
  assert.deepEqual(refused.proxy.ports, []);
  // not read at all (no caller said): refused too
  assert.equal(accepted(build(undefined)).reason, "InvalidParameters");
});

Deno.test("gateway params: the per-Gateway settings are an allowlist of the proxy settings, without the far-reaching ones", () => {
  for (const key of GATEWAY_SETTING_KEYS) assert.ok(PROXY_SETTING_KEYS.has(key), key);
  for (
    const key of ["default-certificate", "nginx-compat", "annotation-risk-limit", "namespace-ownership", "pinned-hosts"]
  ) {
    assert.ok(!GATEWAY_SETTING_KEYS.has(key), key);
  }
});
