import assert from "node:assert/strict";
import { defaultIngressClass, handlesIngress, ingressClassOf } from "../../lib/controller/class.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

const ing = (annotation?: string, className?: string): KubeObject => ({
  metadata: {
    name: "i",
    namespace: "n",
    annotations: annotation === undefined ? {} : { "kubernetes.io/ingress.class": annotation },
  },
  spec: className === undefined ? {} : { ingressClassName: className },
});

Deno.test("class: the annotation wins over spec.ingressClassName", () => {
  assert.equal(ingressClassOf(ing("a", "b")), "a");
  assert.equal(ingressClassOf(ing(undefined, "b")), "b");
  assert.equal(ingressClassOf(ing("", "b")), "b");
  assert.equal(ingressClassOf(ing()), null);
  assert.equal(ingressClassOf(ing(), "dflt"), "dflt");
});

Deno.test("class: unset handles every ingress, set handles only that class", () => {
  assert.equal(handlesIngress(ing(), null), true);
  assert.equal(handlesIngress(ing("x"), null), true);
  assert.equal(handlesIngress(ing("x"), "x"), true);
  assert.equal(handlesIngress(ing(undefined, "x"), "x"), true);
  assert.equal(handlesIngress(ing("y", "x"), "x"), false);
  assert.equal(handlesIngress(ing(), "x"), false);
  assert.equal(handlesIngress(ing(), "x", "x"), true);
  const deleting = ing("x");
  deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
  assert.equal(handlesIngress(deleting, "x"), false);
});

Deno.test("class: the oldest IngressClass marked default is the default", () => {
  const cls = (name: string, ts: string, dflt: boolean): KubeObject => ({
    metadata: {
      name,
      creationTimestamp: ts,
      annotations: dflt ? { "ingressclass.kubernetes.io/is-default-class": "true" } : {},
    },
  });
  assert.equal(defaultIngressClass([]), null);
  assert.equal(defaultIngressClass([cls("a", "2026-01-02T00:00:00Z", false)]), null);
  assert.equal(
    defaultIngressClass([cls("b", "2026-01-02T00:00:00Z", true), cls("c", "2026-01-01T00:00:00Z", true)]),
    "c",
  );
});
