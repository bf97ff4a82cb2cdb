/**
 * A call whose signal is aborted before its request goes out (while it waited for the rate
 * limiter or for credentials) is not sent: an informer stopped while it was opening a watch used
 * to get an open watch anyway and stop only when the server ended it (minutes later).
 */
import assert from "node:assert/strict";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { collectionPath, resources } from "../../lib/cluster/resources.ts";

Deno.test("cluster client: a watch or request aborted before it is sent is refused, not sent", async () => {
  await using cp = await startControlPlane();
  const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
  try {
    const path = collectionPath(resources.configMaps, "default");
    const sent = client.requestsSent;
    const stopped = AbortSignal.abort(new Error("informer stopped"));
    await assert.rejects(client.watch(path, { timeoutSeconds: 60 }, stopped), /informer stopped/);
    await assert.rejects(client.request("GET", path, { signal: stopped }), /informer stopped/);
    assert.equal(client.requestsSent, sent);
  } finally {
    client.close();
  }
});
