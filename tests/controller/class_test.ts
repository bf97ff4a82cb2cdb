import assert from "node:assert/strict";
import {
  CONTROLLER_NAME,
  defaultIngressClass,
  handlesIngress,
  ingressClassOf,
  NGINX_CONTROLLER,
  servingClass,
  unservedClassMessage,
} from "../../lib/controller/class.ts";
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

const ingressClass = (name: string, controller: string): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "IngressClass",
  metadata: { name },
  spec: { controller },
});

Deno.test("class: unset, only this controller's IngressClasses (and ingress-nginx's) get a proxy of their own", () => {
  const classes = new Map([
    ["edge", ingressClass("edge", CONTROLLER_NAME)],
    ["nginx", ingressClass("nginx", NGINX_CONTROLLER)],
    ["traefik", ingressClass("traefik", "traefik.io/ingress-controller")],
  ]);
  const lookup = (n: string) => classes.get(n);
  assert.deepEqual(servingClass(ing(undefined, "edge"), null, null, lookup), { shared: "edge", unserved: null });
  assert.deepEqual(servingClass(ing("nginx"), null, null, lookup), { shared: "nginx", unserved: null });
  // An invented name, another controller's class: the class-less group, reported.
  assert.deepEqual(servingClass(ing("made-up"), null, null, lookup), { shared: "", unserved: "made-up" });
  assert.deepEqual(servingClass(ing(undefined, "traefik"), null, null, lookup), { shared: "", unserved: "traefik" });
  assert.deepEqual(servingClass(ing(), null, null, lookup), { shared: "", unserved: null });
  // The default class takes the class-less ingresses when it is ours, and then those of other names too.
  assert.deepEqual(servingClass(ing(), null, "edge", lookup), { shared: "edge", unserved: null });
  assert.deepEqual(servingClass(ing("made-up"), null, "edge", lookup), { shared: "edge", unserved: "made-up" });
  assert.deepEqual(servingClass(ing(), null, "traefik", lookup), { shared: "", unserved: null });
});

Deno.test("class: --ingress-class set, or IngressClasses not watched: every class name is its own group as before", () => {
  const none = () => undefined;
  assert.deepEqual(servingClass(ing("internal"), "internal", null, none), { shared: "internal", unserved: null });
  assert.deepEqual(servingClass(ing(), "internal", "internal", none), { shared: "internal", unserved: null });
  assert.deepEqual(servingClass(ing("made-up"), null, null, null), { shared: "made-up", unserved: null });
});

Deno.test("class: the Warning names the class, why it has no proxy, and the proxy serving the ingress", () => {
  assert.equal(
    unservedClassMessage("made-up", undefined, "", "haproxy-shared"),
    `ingress class "made-up" gets no proxy of its own: there is no IngressClass "made-up" (this controller forms one ` +
      `for IngressClasses with spec.controller ${CONTROLLER_NAME}); the ingress is served by the shared proxy of ` +
      `ingresses without a class (haproxy-shared)`,
  );
  assert.match(
    unservedClassMessage("traefik", ingressClass("traefik", "traefik.io/x"), "edge", "haproxy-class-edge"),
    /IngressClass "traefik" belongs to controller "traefik\.io\/x".*default IngressClass "edge" \(haproxy-class-edge\)$/,
  );
});
