/**
 * @module tests/env/main
 * `deno task testenv`: runs the test control plane (etcd + kube-apiserver) in the foreground for
 * local work and the demo. Once the API server is ready it writes the admin kubeconfig (client
 * certificate, group system:masters) to a path it prints, and to `$KUBECONFIG_OUT` when set.
 * Ctrl-C (or SIGTERM) stops both processes and removes the temporary directory.
 */
import { startControlPlane } from "./control_plane.ts";
import { writeKubeConfig } from "./kubeconfig.ts";

const cp = await startControlPlane();
const out = Deno.env.get("KUBECONFIG_OUT");
if (out) {
  await writeKubeConfig(out, { server: cp.server, caPem: cp.caPem, user: "admin", credentials: cp.admin });
}
console.log(`control plane ready in ${(cp.startMs / 1000).toFixed(1)} s at ${cp.server}`);
console.log(`  etcd pid ${cp.pids.etcd}, kube-apiserver pid ${cp.pids.kubeApiserver}, files in ${cp.dir}`);
console.log(`  admin kubeconfig: ${cp.adminKubeConfigPath}${out ? ` (also ${out})` : ""}`);
console.log(`  try: kubectl --kubeconfig ${out ?? cp.adminKubeConfigPath} get namespaces`);
console.log("Ctrl-C stops it.");
// Runs until a signal (cleanup.ts then stops everything and ends this process) or a crash.
const why = await cp.unexpectedExit;
console.error(why);
await cp.stop();
Deno.exit(1);
