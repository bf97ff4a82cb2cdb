import assert from "node:assert/strict";
import { desiredObjects, proxyObjects, sharedTarget } from "../../lib/controller/objects.ts";
import { conflictMessage, ownedBy } from "../../lib/controller/ownership.ts";
import { classGroup } from "../../lib/controller/groups.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
};
const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
const settings = { ...defaultSettings, controllerId: "default", rbac: true };
const ours = (): KubeObject[] => desiredObjects(ing, data, [], settings).map((d) => structuredClone(d.object));

Deno.test("ownership: every object the controller builds for an ingress is ours", () => {
  for (const o of ours()) assert.ok(ownedBy(o, "shop/web", "default"), `${o.kind} ${o.metadata.name}`);
});

Deno.test("ownership: a missing mark, another ingress, namespace or controller is foreign", () => {
  const cases: [string, (o: KubeObject) => void][] = [
    ["no managed-by label", (o) => delete o.metadata.labels!["app.kubernetes.io/managed-by"]],
    ["another controller", (o) => o.metadata.labels!["ingress-controller.io/controller"] = "other"],
    ["annotation of another ingress", (o) => o.metadata.annotations!["ingress-controller.io/ingress"] = "shop/api"],
    ["no ownerReference", (o) => delete o.metadata.ownerReferences],
    ["ownerReference to another Ingress", (o) => o.metadata.ownerReferences![0].name = "api"],
    ["ownerReference not controlling", (o) => o.metadata.ownerReferences![0].controller = false],
    ["ownerReference to another kind", (o) => o.metadata.ownerReferences![0].kind = "Deployment"],
    ["another namespace", (o) => o.metadata.namespace = "other"],
  ];
  for (const [what, spoil] of cases) {
    for (const o of ours()) {
      spoil(o);
      assert.equal(ownedBy(o, "shop/web", "default"), false, `${what}: ${o.kind} ${o.metadata.name}`);
    }
  }
  const plain: KubeObject = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "web-haproxy", namespace: "shop" },
  };
  assert.equal(ownedBy(plain, "shop/web", "default"), false);
});

Deno.test("ownership: objects of an earlier Ingress of the same name (another uid) stay ours", () => {
  for (const o of ours()) {
    o.metadata.ownerReferences![0].uid = "u-0";
    assert.ok(ownedBy(o, "shop/web", "default"));
  }
});

Deno.test("ownership: the conflict message names the object and says it is left alone", () => {
  const msg = conflictMessage("ConfigMap", { metadata: { name: "web-haproxy", namespace: "shop" } }, "shop/web", "x");
  assert.match(
    msg,
    /^ConfigMap shop\/web-haproxy already exists and was not created by this controller for this ingress/,
  );
  assert.match(msg, /left untouched/);
  const shared = { metadata: { name: "haproxy-shared", namespace: "ops" } };
  assert.match(
    conflictMessage("PodDisruptionBudget", shared, classGroup("edge"), "edge"),
    /^PodDisruptionBudget ops\/haproxy-shared already exists and was not created by this controller for the shared proxy of class "edge" \(it lacks the ingress-controller.io\/controller=edge label or the ingress-controller.io\/ingress-class annotation: another controller, or another --ingress-class, made it\); it is left untouched/,
  );
  assert.match(
    conflictMessage("Service", shared, classGroup(""), "default"),
    /for the shared proxy of ingresses without a class/,
  );
});

Deno.test("ownership: a class's shared proxy objects are ours for that class only", () => {
  const target = sharedTarget("edge", { metadata: { name: "edge", uid: "c-1" } }, "ops");
  const secrets = [{ namespace: "shop", name: "tls" }];
  const shared = proxyObjects(target, data, secrets, settings).map((d) => structuredClone(d.object));
  assert.ok(
    shared.some((o) => o.metadata.namespace === "shop" && o.kind === "Role"),
    "a Role for the Secret's namespace",
  );
  for (const o of shared) {
    assert.ok(ownedBy(o, "class:edge", "default"), `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`);
    assert.ok(!ownedBy(o, "class:web", "default"), "another class");
    assert.ok(!ownedBy(o, "ops/haproxy-class-edge", "default"), "an ingress's");
  }
  const cases: [string, (o: KubeObject) => void][] = [
    ["no managed-by label", (o) => delete o.metadata.labels!["app.kubernetes.io/managed-by"]],
    ["another controller", (o) => o.metadata.labels!["ingress-controller.io/controller"] = "other"],
    ["no class annotation", (o) => delete o.metadata.annotations!["ingress-controller.io/ingress-class"]],
    ["an ingress annotation too", (o) => o.metadata.annotations!["ingress-controller.io/ingress"] = "ops/x"],
    ["controlled by an Ingress", (o) => o.metadata.ownerReferences![0].kind = "Ingress"],
    ["controlled by another class", (o) => o.metadata.ownerReferences![0].name = "web"],
  ];
  for (const [what, change] of cases) {
    const o = structuredClone(shared[0]);
    change(o);
    assert.ok(!ownedBy(o, "class:edge", "default"), what);
  }
  // Without an IngressClass object there is no owner reference; the marks still decide.
  const ownerless = proxyObjects(sharedTarget("edge", undefined, "ops"), data, [], settings)[0].object;
  assert.equal(ownerless.metadata.ownerReferences, undefined);
  assert.ok(ownedBy(ownerless, "class:edge", "default"));
});
