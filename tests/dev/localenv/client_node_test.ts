import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { clientNodeSettled, loadKubeConfig } from "../../../lib/dev/localenv/client_node.ts";
import { startControlPlane } from "../../../lib/dev/localenv/control_plane.ts";

const fixture = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "watch_abort.ts");

Deno.test("client-node over HTTP/1.1 survives an aborted watch and the API server's shutdown", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fixture],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, /listed \d+ namespaces\nclean/);
});

Deno.test("client-node over HTTP/1.1 authenticates with client certificates and tokens", async () => {
  await using cp = await startControlPlane();
  const core = loadKubeConfig(cp.adminKubeConfigPath).makeApiClient(k8s.CoreV1Api);
  const names = (await core.listNamespace()).items.map((n) => n.metadata?.name);
  assert.ok(names.includes("kube-system"));
  const token = await cp.mintToken({ serviceAccount: "reader" });
  const authn = loadKubeConfig(await cp.writeKubeConfig("reader", { token })).makeApiClient(k8s.AuthenticationV1Api);
  const who = await authn.createSelfSubjectReview({ body: {} });
  assert.equal(who.status?.userInfo?.username, "system:serviceaccount:default:reader");
  await cp.stop(); // closes client-node's connections
  await clientNodeSettled();
});
