/**
 * The informers' default transform: what it drops from cached objects (against the real API
 * server) and that the objects it leaves are compact (V8 fast properties, not dictionaries).
 */
import assert from "node:assert/strict";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { compactMetadata, Informer, LAST_APPLIED } from "../../lib/cluster/informer.ts";
import { collectionPath, resources } from "../../lib/cluster/resources.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";

Deno.test("informer cache: no managedFields, no kubectl last-applied annotation, the other annotations kept", async () => {
  await using cp = await startControlPlane();
  const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
  // A closed watch stream ends only at its next chunk (the server's end after 1 s here), so stop() waits for it.
  const informer = new Informer(client, resources.configMaps, { namespace: "default", watchTimeoutSeconds: 1 });
  try {
    const body = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "applied", namespace: "default", annotations: { keep: "me" } as Record<string, string> },
      data: { big: "x".repeat(1000) },
    };
    body.metadata.annotations[LAST_APPLIED] = JSON.stringify(body);
    await client.request("POST", collectionPath(resources.configMaps, "default"), {
      body,
      query: { fieldManager: "kubectl-client-side-apply" },
    });
    informer.start();
    await informer.waitForSync();
    const cached = informer.store.get("default/applied");
    assert.ok(cached, "listed");
    assert.ok(!("managedFields" in cached.metadata));
    assert.deepEqual(cached.metadata.annotations, { keep: "me" });
    assert.equal(cached.data.big.length, 1000);
  } finally {
    await informer.stop();
    client.close();
  }
});

Deno.test("compactMetadata leaves the metadata with fast properties (a delete would make it a dictionary)", async () => {
  // %HasFastProperties needs --allow-natives-syntax, so the check runs in a process of its own.
  const code = `
    import { compactMetadata } from ${JSON.stringify(new URL("../../lib/cluster/informer.ts", import.meta.url).href)};
    const obj = JSON.parse(${
    JSON.stringify(JSON.stringify({
      metadata: {
        name: "a",
        namespace: "n",
        uid: "u",
        resourceVersion: "1",
        creationTimestamp: "2026-01-01T00:00:00Z",
        annotations: { [LAST_APPLIED]: "{}", keep: "me" },
        managedFields: [{ manager: "m" }],
      },
    }))
  });
    const m = compactMetadata(obj).metadata;
    // Deno's parser refuses %-calls; V8 compiles the function body itself.
    const fast = new Function("o", "return %HasFastProperties(o)");
    console.log(JSON.stringify({ metadata: fast(m), annotations: fast(m.annotations) }));
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--allow-natives-syntax", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), { metadata: true, annotations: true });
  assert.deepEqual(compactMetadata({ metadata: { name: "a", annotations: { [LAST_APPLIED]: "{}" } } }).metadata, {
    name: "a",
    annotations: {},
  });
});
