import assert from "node:assert/strict";
import { desiredObjects, goDuration, hashAnnotation, proxyName } from "../../lib/controller/objects.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
};
const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };

Deno.test("objects: ConfigMap, Deployment, Service owned by the ingress; RBAC only with --rbac", () => {
  const plain = desiredObjects(ing, data, [], defaultSettings);
  assert.deepEqual(plain.map((d) => d.object.kind), ["ConfigMap", "Deployment", "Service"]);
  for (const d of plain) {
    assert.equal(d.object.metadata.name, "web-haproxy");
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
  assert.deepEqual(plain[2].object.spec.ports.map((p: { port: number }) => p.port), [80, 443, 56789]);

  const rbac = desiredObjects(ing, data, ["tls-b", "tls-a"], { ...defaultSettings, rbac: true });
  assert.deepEqual(rbac.map((d) => d.object.kind), [
    "ConfigMap",
    "Deployment",
    "Service",
    "ServiceAccount",
    "Role",
    "RoleBinding",
  ]);
  const role = rbac[4].object;
  assert.deepEqual(role.rules, [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["web-haproxy"], verbs: ["get", "list", "watch"] },
    { apiGroups: [""], resources: ["secrets"], resourceNames: ["tls-a", "tls-b"], verbs: ["get", "list", "watch"] },
  ]);
  assert.equal(rbac[1].object.spec.template.spec.serviceAccountName, "web-haproxy");
});

Deno.test("objects: the hash changes with the content and only then", () => {
  const a = desiredObjects(ing, data, [], defaultSettings)[0].object.metadata.annotations![hashAnnotation];
  const b = desiredObjects(ing, data, [], defaultSettings)[0].object.metadata.annotations![hashAnnotation];
  const c = desiredObjects(ing, { ...data, "haproxy.cfg": "global\n#x\n" }, [], defaultSettings)[0].object.metadata
    .annotations![hashAnnotation];
  assert.equal(a, b);
  assert.notEqual(a, c);
});

Deno.test("objects: names are valid service names whatever the ingress name", () => {
  assert.equal(proxyName("web"), "web-haproxy");
  assert.match(proxyName("a.b.example"), /^haproxy-[0-9a-f]{10}$/);
  assert.match(proxyName("9start"), /^haproxy-[0-9a-f]{10}$/);
  assert.match(proxyName("x".repeat(60)), /^haproxy-[0-9a-f]{10}$/);
  assert.equal(goDuration(5000), "5s");
  assert.equal(goDuration(1500), "1500ms");
  assert.equal(goDuration(600_000), "10m0s");
});
