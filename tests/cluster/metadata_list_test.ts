import assert from "node:assert/strict";
import { Cluster } from "../../lib/dev/localenv/harness.ts";
import { listMetadata } from "../../lib/cluster/metadata_list.ts";
import { resources } from "../../lib/cluster/resources.ts";

Deno.test("listMetadata: every object of a kind in a namespace, by name, metadata only, across pages", async () => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("meta");
    const other = await cluster.namespace("meta-other");
    // More than one page of 500.
    const names = Array.from({ length: 520 }, (_, i) => `cm-${i}`);
    for (const name of names) {
      await cluster.client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
        body: {
          metadata: { name, labels: { l: name }, annotations: { a: "x" } },
          data: { big: "y".repeat(1000) },
        },
      });
    }
    await cluster.apply(resources.configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "elsewhere", namespace: other },
    });
    const byName = await listMetadata(cluster.client, resources.configMaps, ns);
    const ours = [...byName.keys()].filter((n) => n.startsWith("cm-"));
    assert.deepEqual(ours.sort(), [...names].sort());
    assert.equal(byName.has("elsewhere"), false, "another namespace's object");
    const one = byName.get("cm-7")!;
    assert.equal(one.kind, "PartialObjectMetadata");
    assert.equal(one.metadata.labels?.l, "cm-7");
    assert.equal(one.metadata.annotations?.a, "x");
    assert.ok(one.metadata.uid);
    assert.equal((one as { data?: unknown }).data, undefined, "no data");
    assert.equal((await listMetadata(cluster.client, resources.configMaps, "no-such-namespace")).size, 0);
  } finally {
    await cluster.stop();
  }
});
