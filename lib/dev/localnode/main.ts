/**
 * @module lib/dev/localnode/main
 * `deno task cluster`: starts the real single-node cluster (see mod.ts) in the foreground, with
 * every `dist/images/*.tar` imported. Once the node is Ready it writes an admin kubeconfig usable
 * from the host to `$KUBECONFIG_OUT` (and prints its path), and to `$CLUSTER_ENTER_OUT` one line:
 * the command prefix that runs a command inside the cluster's network namespace. Ctrl-C (or
 * SIGTERM) removes everything.
 */
import { startCluster } from "./mod.ts";

const t0 = performance.now();
const cluster = await startCluster().catch((err) => {
  console.error(`cluster: ${(err as Error).message}`);
  Deno.exit(1);
});
const out = Deno.env.get("KUBECONFIG_OUT");
if (out) await Deno.copyFile(cluster.kubeconfig, out);
const enterOut = Deno.env.get("CLUSTER_ENTER_OUT");
if (enterOut) await Deno.writeTextFile(enterOut, cluster.enter.join(" ") + "\n");
console.log(`cluster: node Ready after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`  kubectl --kubeconfig ${out ?? cluster.kubeconfig} get nodes,pods -A`);
console.log(`  inside the cluster's network: ${cluster.enter.join(" ")} <command>`);
console.log("Ctrl-C stops and removes it.");
await new Promise<void>((resolve) => {
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => resolve());
});
console.log("cluster: stopping");
await cluster.stop();
console.log("cluster: stopped, everything removed");
Deno.exit(0);
