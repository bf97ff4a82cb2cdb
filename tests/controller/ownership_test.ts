import assert from "node:assert/strict";
import { desiredObjects } from "../../lib/controller/objects.ts";
import { conflictMessage, ownedBy } from "../../lib/controller/ownership.ts";
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
  const msg = conflictMessage("ConfigMap", { metadata: { name: "web-haproxy", namespace: "shop" } });
  assert.match(msg, /^ConfigMap shop\/web-haproxy already exists and was not created by this controller/);
  assert.match(msg, /left untouched/);
});
