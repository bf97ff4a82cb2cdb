/**
 * @module lib/dev/localenv/main
 * `deno task testenv`: runs the test control plane (etcd + kube-apiserver) in the foreground for
 * local work and the demo. Once the API server is ready it writes the admin kubeconfig (client
 * certificate, group system:masters) to a path it prints, and to `$KUBECONFIG_OUT` when set.
 * Ctrl-C (or SIGTERM) stops both processes and removes the temporary directory.
 * With `TESTENV_EXIT_ON_STDIN_EOF=1` it also stops when its stdin reaches end of file, so a test
 * that runs it with a piped stdin cannot leave it behind even if the test process dies.
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
// Runs until a signal (cleanup.ts then stops everything and ends this process), a crash, or
// (when asked) the end of stdin.
const stdinClosed = Deno.env.get("TESTENV_EXIT_ON_STDIN_EOF") === "1"
  ? (async () => {
    for await (const _ of Deno.stdin.readable) { /* ignore input */ }
    return "stdin closed: stopping";
  })()
  : new Promise<string>(() => {});
const why = await Promise.race([cp.unexpectedExit, stdinClosed]);
const crashed = why !== "stdin closed: stopping";
console.error(why);
await cp.stop();
Deno.exit(crashed ? 1 : 0);
