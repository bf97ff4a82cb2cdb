import assert from "node:assert/strict";
import {
  classGroup,
  dedicatedRefused,
  GroupIndex,
  groupOf,
  isDedicated,
  sharedClassOf,
  sharedProxyName,
  withoutDedicated,
} from "../../lib/controller/groups.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

const ing = (
  name: string,
  spec: Record<string, unknown> = {},
  annotations: Record<string, string> = {},
): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name, namespace: "shop", annotations },
  spec,
});

Deno.test("groups: the shared group of the class that serves the ingress (lib/controller/class.ts)", () => {
  assert.equal(groupOf(ing("a", { ingressClassName: "edge" }), "edge"), "class:edge");
  assert.equal(groupOf(ing("d"), ""), "class:");
  assert.equal(sharedClassOf("class:edge"), "edge");
  assert.equal(sharedClassOf("class:"), "");
  assert.equal(sharedClassOf("shop/a"), null);
});

Deno.test("groups: `ingress-controller.io/proxy: dedicated` gives the ingress its own group (its key)", () => {
  const d = ing("api", { ingressClassName: "edge" }, { "ingress-controller.io/proxy": "dedicated" });
  assert.ok(isDedicated(d));
  assert.equal(groupOf(d, "edge"), "shop/api");
  // Any other value is not a request for a dedicated proxy.
  assert.equal(
    groupOf(ing("x", { ingressClassName: "edge" }, { "ingress-controller.io/proxy": "Dedicated" }), "edge"),
    "class:edge",
  );
});

Deno.test("groups: with dedicated proxies turned off, an ingress asking for one is refused and joins its shared group", () => {
  const ask = { "ingress-controller.io/proxy": "dedicated", "ingress-controller.io/hsts": "true" };
  const d = ing("api", { ingressClassName: "edge" }, ask);
  assert.equal(dedicatedRefused(d, true), false);
  assert.equal(dedicatedRefused(d, false), true);
  assert.equal(groupOf(withoutDedicated(d), "edge"), "class:edge");
  // Its other annotations stay; the cached object is not changed.
  assert.deepEqual(withoutDedicated(d).metadata.annotations, { "ingress-controller.io/hsts": "true" });
  assert.equal(d.metadata.annotations!["ingress-controller.io/proxy"], "dedicated");
  // Class-less: the default class's group, or the class-less one.
  const bare = withoutDedicated(ing("bare", {}, ask));
  assert.equal(groupOf(bare, "web"), "class:web");
  assert.equal(groupOf(bare, ""), "class:");
  // An ingress that asks for nothing is never refused.
  assert.equal(dedicatedRefused(ing("a", { ingressClassName: "edge" }), false), false);
});

Deno.test("groups: shared proxy names are DNS-1035 labels that leave room for -stats, apart from dedicated names", () => {
  assert.equal(sharedProxyName("edge"), "haproxy-class-edge");
  assert.equal(sharedProxyName(""), "haproxy-shared");
  assert.match(sharedProxyName("my.class"), /^haproxy-class-[0-9a-f]{10}$/);
  assert.match(sharedProxyName("x".repeat(60)), /^haproxy-class-[0-9a-f]{10}$/);
  assert.notEqual(sharedProxyName("edge"), proxyName("edge"));
  for (const c of ["edge", "", "my.class", "x".repeat(60)]) assert.ok(sharedProxyName(c).length <= 55);
});

Deno.test("groups: the index keeps both directions and reports the previous group", () => {
  const g = new GroupIndex();
  assert.equal(g.set("shop/a", classGroup("edge")), null);
  assert.equal(g.set("shop/b", classGroup("edge")), null);
  assert.deepEqual([...g.members("class:edge")].sort(), ["shop/a", "shop/b"]);
  assert.equal(g.set("shop/a", "shop/a"), "class:edge");
  assert.deepEqual([...g.members("class:edge")], ["shop/b"]);
  assert.equal(g.groupOf("shop/a"), "shop/a");
  assert.equal(g.set("shop/b", null), "class:edge");
  assert.deepEqual(g.groups(), ["shop/a"]);
  assert.equal(g.members("class:edge").size, 0);
});

Deno.test("groups: a group's version moves whenever a member joins or leaves it, and only then", () => {
  const g = new GroupIndex();
  const edge = classGroup("edge");
  assert.equal(g.version(edge), 0);
  g.set("shop/a", edge);
  const joined = g.version(edge);
  assert.notEqual(joined, 0);
  g.set("shop/a", edge); // no move
  assert.equal(g.version(edge), joined);
  g.set("shop/x", "shop/x"); // another group
  assert.equal(g.version(edge), joined);
  g.set("shop/a", "shop/a"); // leaves for its own group: both move
  assert.notEqual(g.version(edge), joined);
  assert.notEqual(g.version("shop/a"), 0);
  const left = g.version(edge);
  g.set("shop/a", edge); // a group that comes back goes on counting
  assert.ok(g.version(edge) > left);
});
