import assert from "node:assert/strict";
import {
  componentLabel,
  desiredObjects,
  exporterPort,
  gatewayProxyPlace,
  gatewayTarget,
  goDuration,
  hashAnnotation,
  proxyName,
  proxyObjects,
  proxyOf,
  sharedTarget,
  statsPort,
  statsServiceName,
  withHash,
} from "../../lib/controller/objects.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { defaultPlatform } from "../../lib/controller/platform.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";

type Port = { name: string; port: number; targetPort: string; protocol: string };

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
};
const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };

Deno.test("objects: ConfigMap, Deployment, public and stats Services owned by the ingress; RBAC only with --rbac", () => {
  const plain = desiredObjects(ing, data, [], defaultSettings);
  assert.deepEqual(plain.map((d) => d.object.kind), [
    "ConfigMap",
    "Deployment",
    "Service",
    "Service",
    "PodDisruptionBudget",
  ]);
  assert.deepEqual(plain.map((d) => d.object.metadata.name), [
    "web-haproxy",
    "web-haproxy",
    "web-haproxy",
    "web-haproxy-stats",
    "web-haproxy",
  ]);
  for (const d of plain) {
    assert.deepEqual(d.object.metadata.ownerReferences?.[0]?.uid, "u-1");
    assert.equal(d.object.metadata.ownerReferences?.[0]?.controller, true);
    assert.match(d.object.metadata.annotations![hashAnnotation], /^[0-9a-f]{16}$/);
  }
  assert.deepEqual(plain[0].object.data, data);
  const [proxy, exporter] = plain[1].object.spec.template.spec.containers;
  assert.equal(proxy.image, "docker.io/ingresscontroller/haproxy:1.9.2-9.0.0-alpine");
  assert.equal(proxy.args[0], "proxy");
  assert.ok(proxy.args.includes("--configmap=web-haproxy"));
  assert.equal(exporter.image, "docker.io/ingresscontroller/ingress-controller:9.0.0");
  assert.ok(exporter.args.includes(`--proxy.server-metric-fields=${defaultSettings.proxyServerMetricFields}`));
  assert.ok(exporter.args.includes("--proxy.timeout=5s"));
  // The public Service carries traffic only; the metrics sit on a ClusterIP Service, and HAProxy's
  // stats page (every tenant's backends) on no Service at all: it listens on the pod's loopback.
  const [pub, stats] = [plain[2].object, plain[3].object];
  assert.equal(pub.spec.type, "LoadBalancer");
  assert.deepEqual(pub.spec.ports.map((p: Port) => [p.name, p.port, p.targetPort]), [
    ["http", 80, "http"],
    ["https", 443, "https"],
  ]);
  assert.equal(pub.metadata.labels![componentLabel], undefined);
  assert.equal(stats.spec.type, "ClusterIP");
  assert.deepEqual(stats.spec.ports.map((p: Port) => [p.name, p.port, p.targetPort, p.protocol]), [
    ["metrics", exporterPort, "metrics", "TCP"],
  ]);
  assert.deepEqual(stats.spec.selector, pub.spec.selector);
  assert.equal(stats.metadata.labels![componentLabel], "stats");
  assert.deepEqual(stats.metadata.annotations!["ingress-controller.io/ingress"], "shop/web");
  // The pods expose the ports the stats Service targets.
  const podPorts = plain[1].object.spec.template.spec.containers.flatMap((c: { ports: Port[] }) => c.ports);
  for (const p of stats.spec.ports) assert.ok(podPorts.some((c: { name: string }) => c.name === p.targetPort));
  assert.ok(!podPorts.some((c: { containerPort: number }) => c.containerPort === statsPort), "no stats port");

  const rbac = desiredObjects(ing, data, ["tls-b", "tls-a"], { ...defaultSettings, rbac: true });
  assert.deepEqual(rbac.map((d) => d.object.kind), [
    "ConfigMap",
    "Deployment",
    "Service",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "PodDisruptionBudget",
  ]);
  const role = rbac[5].object;
  assert.deepEqual(role.rules, [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["web-haproxy"], verbs: ["get", "list", "watch"] },
    { apiGroups: [""], resources: ["secrets"], resourceNames: ["tls-a", "tls-b"], verbs: ["get", "list", "watch"] },
  ]);
  assert.equal(rbac[1].object.spec.template.spec.serviceAccountName, "web-haproxy");
});

Deno.test("objects: the ServiceMonitor selects the stats Service, not the public one", () => {
  const monitor = { group: "monitoring.coreos.com", version: "v1", plural: "servicemonitors", kind: "ServiceMonitor" };
  const objs = desiredObjects(ing, data, [], defaultSettings, {
    ...defaultPlatform,
    serviceMonitor: { ...monitor, namespaced: true },
  });
  assert.deepEqual(objs.map((d) => d.object.kind), [
    "ConfigMap",
    "Deployment",
    "Service",
    "Service",
    "ServiceMonitor",
    "PodDisruptionBudget",
  ]);
  const [pub, stats, sm] = [objs[2].object, objs[3].object, objs[4].object];
  // Same Services with or without a ServiceMonitor: metrics is always on the stats Service only.
  assert.deepEqual(pub.spec.ports.map((p: Port) => p.port), [80, 443]);
  assert.deepEqual(stats.spec.ports.map((p: Port) => p.port), [exporterPort]);
  const matches = (labels: Record<string, string>) =>
    Object.entries(sm.spec.selector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);
  assert.equal(matches(stats.metadata.labels!), true);
  assert.equal(matches(pub.metadata.labels!), false);
  assert.deepEqual(sm.spec.endpoints, [{ port: "metrics", path: "/metrics", scheme: "http" }]);
});

Deno.test("objects: the hash changes with the content and only then", () => {
  const a = desiredObjects(ing, data, [], defaultSettings)[0].object.metadata.annotations![hashAnnotation];
  const b = desiredObjects(ing, data, [], defaultSettings)[0].object.metadata.annotations![hashAnnotation];
  const c = desiredObjects(ing, { ...data, "haproxy.cfg": "global\n#x\n" }, [], defaultSettings)[0].object.metadata
    .annotations![hashAnnotation];
  assert.equal(a, b);
  assert.notEqual(a, c);
});

Deno.test("objects: a part's hash covers its sha256 annotation, not its content, stored as text or deflated", () => {
  const cfg = Array.from({ length: 100 }, (_, i) => `backend be_${i}\n    server s1 10.0.0.1:80\n\n`).join("");
  const settings = { ...defaultSettings, configSplit: { inline: 2048, fileInline: 256, targetPart: 512 } };
  const parts = proxyObjects(sharedTarget("web", undefined, "ops"), { ...data, "haproxy.cfg": cfg }, [], settings)
    .map((d) => d.object).filter((o) => o.binaryData);
  assert.ok(parts.length > 1, "parts of backends are stored deflated");
  const hashOf = (o: KubeObject) => o.metadata.annotations![hashAnnotation];
  for (const p of parts) {
    const { [hashAnnotation]: _, ...annotations } = p.metadata.annotations!;
    // The same part with other content as text: hashed without reading either (a reconcile hashes every part).
    const asText = { ...p, binaryData: undefined, data: { part: "other" }, metadata: { ...p.metadata, annotations } };
    assert.equal(hashOf(withHash(asText, { data: {} })), hashOf(p));
  }
  assert.equal(new Set(parts.map(hashOf)).size, parts.length, "each part's hash is its own");
});

Deno.test("objects: names are valid service names whatever the ingress name", () => {
  assert.equal(proxyName("web"), "web-haproxy");
  assert.match(proxyName("a.b.example"), /^haproxy-[0-9a-f]{10}$/);
  assert.match(proxyName("9start"), /^haproxy-[0-9a-f]{10}$/);
  assert.match(proxyName("x".repeat(60)), /^haproxy-[0-9a-f]{10}$/);
  assert.equal(statsServiceName("web"), "web-haproxy-stats");
  assert.equal(statsServiceName("x".repeat(49)), `${"x".repeat(49)}-haproxy-stats`);
  assert.equal(statsServiceName("x".repeat(49)).length, 63);
  const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
  const names = new Set<string>();
  for (const n of ["web", "x".repeat(50), "x".repeat(55), "x".repeat(56), "a.b.example", "9start", "y".repeat(253)]) {
    const s = statsServiceName(n);
    assert.match(s, dns1035, n);
    assert.ok(s.length <= 63, `${s} is ${s.length} characters`);
    assert.notEqual(s, proxyName(n));
    names.add(s);
  }
  assert.equal(names.size, 7, "distinct ingress names get distinct stats Services");
  assert.match(statsServiceName("x".repeat(50)), /^haproxy-[0-9a-f]{10}-stats$/);
  assert.equal(goDuration(5000), "5s");
  assert.equal(goDuration(1500), "1500ms");
  assert.equal(goDuration(600_000), "10m0s");
});

Deno.test("objects: a Gateway's infrastructure labels and annotations on its Deployment, pods, public Service and ServiceAccount", () => {
  const infra = {
    labels: { key2: "value2", "gateway.networking.k8s.io/gateway-name": "gw" },
    annotations: { key1: "value1" },
  };
  const target = gatewayTarget(
    "apps/gw",
    { name: "gw-apps-gw", namespace: "ops" },
    [{ port: 80, containerPort: 8080 }],
    infra,
  );
  const list = proxyObjects(target, data, [], { ...defaultSettings, rbac: true }, defaultPlatform);
  const of = (kind: string, name = "gw-apps-gw") =>
    list.find((d) => d.object.kind === kind && d.object.metadata.name === name)!.object;
  for (const kind of ["Deployment", "Service", "ServiceAccount"]) {
    const o = of(kind);
    assert.equal(o.metadata.labels!.key2, "value2", kind);
    assert.equal(o.metadata.labels!["gateway.networking.k8s.io/gateway-name"], "gw", kind);
    assert.equal(o.metadata.annotations!.key1, "value1", kind);
    // the controller's own marks stay
    assert.equal(o.metadata.labels!["app.kubernetes.io/instance"], "gw-apps-gw", kind);
    assert.equal(o.metadata.annotations!["ingress-controller.io/gateway"], "apps/gw", kind);
  }
  const pod = of("Deployment").spec.template.metadata;
  assert.deepEqual([pod.labels.key2, pod.annotations.key1], ["value2", "value1"]);
  assert.equal(pod.labels["app.kubernetes.io/instance"], "gw-apps-gw");
  // the selector is the controller's alone
  assert.deepEqual(of("Deployment").spec.selector.matchLabels, {
    "app.kubernetes.io/name": "haproxy",
    "app.kubernetes.io/instance": "gw-apps-gw",
  });
  // the stats Service and the configuration are not the Gateway's infrastructure
  assert.equal(of("Service", "gw-apps-gw-stats").metadata.labels!.key2, undefined);
  // a change of them is a change of the objects
  const other = proxyObjects(
    gatewayTarget("apps/gw", { name: "gw-apps-gw", namespace: "ops" }, [{ port: 80, containerPort: 8080 }], {
      ...infra,
      annotations: { key1: "v2" },
    }),
    data,
    [],
    { ...defaultSettings, rbac: true },
    defaultPlatform,
  );
  const hash = (l: typeof list) =>
    l.find((d) => d.object.kind === "Deployment")!.object.metadata.annotations![hashAnnotation];
  assert.notEqual(hash(list), hash(other));
});

Deno.test("objects: a Gateway's proxy lives in the controller's namespace by default, in the Gateway's with the option", () => {
  const ops = { operatorNamespace: "ops", gatewayProxiesInGatewayNamespace: false };
  const own = { operatorNamespace: "ops", gatewayProxiesInGatewayNamespace: true };
  assert.deepEqual(gatewayProxyPlace("apps/web", ops), { name: "gw-apps-web", namespace: "ops" });
  assert.deepEqual(gatewayProxyPlace("apps/web", own), { name: "web", namespace: "apps" });
  // a Gateway name that is no DNS-1035 label (a dot, a leading digit) or too long for `<name>-stats`: hashed
  for (const name of ["web.example", "1web", "w".repeat(56)]) {
    const place = gatewayProxyPlace(`apps/${name}`, own);
    assert.equal(place.namespace, "apps");
    assert.match(place.name, /^gw-[0-9a-f]+$/, name);
    assert.ok(`${place.name}-stats`.length <= 63);
  }
  assert.equal(gatewayProxyPlace(`apps/${"w".repeat(55)}`, own).name, "w".repeat(55));
  // every other part of the controller finds it where the target puts it
  for (const settings of [ops, own]) {
    const s = { ...defaultSettings, ...settings };
    assert.deepEqual(proxyOf("gateway:apps/web", s), gatewayProxyPlace("apps/web", s));
  }
});

Deno.test("objects: in the Gateway's namespace every object of its proxy is there, named after it, with its labels", () => {
  const settings = { ...defaultSettings, operatorNamespace: "ops", gatewayProxiesInGatewayNamespace: true, rbac: true };
  const infra = {
    labels: { key2: "value2", "gateway.networking.k8s.io/gateway-name": "web" },
    annotations: { key1: "value1" },
  };
  const target = gatewayTarget("apps/web", gatewayProxyPlace("apps/web", settings), [
    { port: 8080, containerPort: 8080 },
  ], infra);
  // a certificate Secret of another namespace (a ReferenceGrant allows it): a Role there
  const list = proxyObjects(target, data, [{ namespace: "certs", name: "tls" }], settings, defaultPlatform);
  for (const d of list) {
    const m = d.object.metadata;
    const where = d.object.kind === "Role" || d.object.kind === "RoleBinding" ? ["apps", "certs"] : ["apps"];
    assert.ok(where.includes(m.namespace!), `${d.object.kind} ${m.namespace}/${m.name}`);
    assert.ok(m.name === "web" || m.name === "web-stats", m.name);
    assert.equal(m.annotations!["ingress-controller.io/gateway"], "apps/web");
    assert.equal(m.ownerReferences, undefined);
  }
  const carriers = list.filter((d) =>
    ["Deployment", "ServiceAccount"].includes(String(d.object.kind)) || (
      d.object.kind === "Service" && d.object.metadata.name === "web"
    )
  );
  assert.equal(carriers.length, 3);
  for (const { object: o } of carriers) {
    assert.equal(o.metadata.labels!["gateway.networking.k8s.io/gateway-name"], "web", String(o.kind));
    assert.equal(o.metadata.labels!.key2, "value2", String(o.kind));
    assert.equal(o.metadata.annotations!.key1, "value1", String(o.kind));
  }
  const deployment = list.find((d) => d.object.kind === "Deployment")!.object;
  assert.equal(deployment.spec.template.metadata.labels["gateway.networking.k8s.io/gateway-name"], "web");
  assert.equal(deployment.spec.template.metadata.annotations.key1, "value1");
  assert.equal(deployment.spec.template.spec.serviceAccountName, "web");
  // the stats Service (not the Gateway's entry point) does not answer the Gateway's label selector
  const stats = list.find((d) => d.object.metadata.name === "web-stats")!.object;
  assert.equal(stats.metadata.labels!["gateway.networking.k8s.io/gateway-name"], undefined);
});

Deno.test("objects: a proxy's Role names the CA ConfigMaps it reads beside its Secrets, in each namespace, by name only", () => {
  const target = gatewayTarget("apps/gw", { name: "gw-apps-gw", namespace: "ops" }, [{
    port: 80,
    containerPort: 8080,
  }]);
  const list = proxyObjects(
    target,
    data,
    [
      { namespace: "apps", name: "tls" },
      { namespace: "apps", name: "backend-ca", configMap: true },
      // a Secret and a ConfigMap of one name are two objects, each granted on its own resource
      { namespace: "apps", name: "tls", configMap: true },
      { namespace: "ops", name: "ops-ca", configMap: true },
    ],
    { ...defaultSettings, rbac: true },
    defaultPlatform,
  );
  const role = (ns: string) =>
    list.find((d) => d.object.kind === "Role" && d.object.metadata.namespace === ns)!.object.rules as unknown[];
  const read = ["get", "list", "watch"];
  assert.deepEqual(role("apps"), [
    { apiGroups: [""], resources: ["secrets"], resourceNames: ["tls"], verbs: read },
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["backend-ca", "tls"], verbs: read },
  ]);
  // the proxy's own namespace: its configuration, then the CA ConfigMap there
  assert.deepEqual(role("ops").at(-1), {
    apiGroups: [""],
    resources: ["configmaps"],
    resourceNames: ["ops-ca"],
    verbs: read,
  });
  assert.deepEqual((role("ops")[0] as { resourceNames: string[] }).resourceNames, ["gw-apps-gw"]);
});
