import assert from "node:assert/strict";
import { Store } from "../../lib/cluster/store.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

const slice = (name: string, svc: string): KubeObject => ({
  metadata: { name, namespace: "ns", labels: { "kubernetes.io/service-name": svc } },
});

Deno.test("store indexes objects and follows updates and deletes", () => {
  const s = new Store();
  s.set(slice("a", "web"));
  s.addIndexer("svc", (o) => [`${o.metadata.namespace}/${o.metadata.labels!["kubernetes.io/service-name"]}`]);
  s.set(slice("b", "web"));
  s.set(slice("c", "api"));
  assert.deepEqual(s.byIndex("svc", "ns/web").map((o) => o.metadata.name).sort(), ["a", "b"]);
  s.set(slice("b", "api")); // moved to another service
  assert.deepEqual(s.byIndex("svc", "ns/web").map((o) => o.metadata.name), ["a"]);
  assert.deepEqual(s.byIndex("svc", "ns/api").map((o) => o.metadata.name).sort(), ["b", "c"]);
  assert.equal(s.delete("ns/a")?.metadata.name, "a");
  assert.deepEqual(s.byIndex("svc", "ns/web"), []);
  assert.equal(s.size, 2);
  assert.equal(s.get("ns/c")?.metadata.name, "c");
});

Deno.test("an index value goes from one object to several and back, and the same object set again stays one", () => {
  const s = new Store();
  s.addIndexer("svc", (o) => [o.metadata.labels!["kubernetes.io/service-name"]]);
  const names = () => s.byIndex("svc", "web").map((o) => o.metadata.name).sort();
  s.set(slice("a", "web"));
  s.set(slice("a", "web"));
  assert.deepEqual(names(), ["a"]);
  s.set(slice("b", "web"));
  s.set(slice("c", "web"));
  assert.deepEqual(names(), ["a", "b", "c"]);
  s.delete("ns/b");
  s.delete("ns/a");
  assert.deepEqual(names(), ["c"]);
  s.set(slice("d", "web"));
  assert.deepEqual(names(), ["c", "d"]);
  s.delete("ns/c");
  s.delete("ns/d");
  assert.deepEqual(names(), []);
  s.set(slice("e", "web"));
  assert.deepEqual(names(), ["e"]);
});
