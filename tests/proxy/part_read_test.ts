/**
 * A part read not older than its head is answered from the API server's watch cache, with no read
 * from etcd (the API server's own `etcd_requests_total` for ConfigMap gets stays where it was), through
 * a Role that names the part; a version the cache does not reach within its wait falls back to a read
 * from etcd; an absent part is null either way. Against the real kube-apiserver and etcd.
 */
import assert from "node:assert/strict";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { readPartContent } from "../../lib/proxy/part_read.ts";
import { deflatedForm, PART_DATA_KEY, PART_DEFLATE_KEY } from "../../lib/transport/part_encoding.ts";
import { adminPost, roleUser } from "./fixtures.ts";

const NS = "part-read";

Deno.test("readPartContent: a read not older than the head comes from the watch cache; too new a version falls back to etcd", async () => {
  await using cp = await startControlPlane();
  await adminPost(cp, "/api/v1/namespaces", { metadata: { name: NS } });
  const content = "backend be_a\n    server s1 10.0.0.1:80\n".repeat(200);
  await adminPost(cp, `/api/v1/namespaces/${NS}/configmaps`, {
    metadata: { name: "p-part-1", namespace: NS },
    data: { [PART_DATA_KEY]: content },
  });
  // The same content deflated, as the controller stores a part that compresses.
  await adminPost(cp, `/api/v1/namespaces/${NS}/configmaps`, {
    metadata: { name: "p-part-3", namespace: NS },
    binaryData: { [PART_DEFLATE_KEY]: deflatedForm(content) },
  });
  // The head, written after its parts.
  const head = await cp.adminFetch(`/api/v1/namespaces/${NS}/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name: "p", namespace: NS }, data: {} }),
  });
  const headVersion: string = (await head.json()).metadata.resourceVersion;
  const kubeconfig = await roleUser(cp, NS, [{
    apiGroups: [""],
    resources: ["configmaps"],
    resourceNames: ["p", "p-part-1", "p-part-2", "p-part-3"],
    verbs: ["get", "list", "watch"],
  }]);
  const client = await ClusterClient.create({ kubeconfig, qps: 50, burst: 100 });
  /** ConfigMap reads the API server has made from etcd so far. */
  const etcdGets = async () => {
    const text = await (await cp.adminFetch("/metrics")).text();
    const m = /^etcd_requests_total\{group="",operation="get",resource="configmaps"\} (\d+)$/m.exec(text);
    return m ? Number(m[1]) : 0;
  };
  try {
    const before = await etcdGets();
    for (let i = 0; i < 5; i++) {
      assert.equal(await readPartContent(client, NS, "p-part-1", { first: true, notOlderThan: headVersion }), content);
    }
    assert.equal(await etcdGets(), before, "no read from etcd");
    assert.equal(await readPartContent(client, NS, "p-part-3", { first: true, notOlderThan: headVersion }), content);
    // Without the head's version, each read goes to etcd (what makes the figure above mean something).
    assert.equal(await readPartContent(client, NS, "p-part-1", { first: true }), content);
    assert.equal(await etcdGets(), before + 1);
    // Absent: null, from the cache or not.
    assert.equal(await readPartContent(client, NS, "p-part-2", { first: true, notOlderThan: headVersion }), null);
    assert.equal(await readPartContent(client, NS, "p-part-2", { first: true }), null);
    // A version the watch cache does not reach: it answers 504 after its wait, and the read goes to etcd.
    const ahead = String(Number(headVersion) + 1_000_000);
    assert.equal(await readPartContent(client, NS, "p-part-1", { first: true, notOlderThan: ahead }), content);
  } finally {
    client.close();
  }
});
