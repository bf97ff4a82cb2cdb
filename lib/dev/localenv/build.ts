/**
 * @module lib/dev/localenv/build
 * `deno run -A lib/dev/localenv/build.ts`: builds (or finds cached, or takes from `$KUBEBUILDER_ASSETS`)
 * kube-apiserver and etcd, printing progress and the time taken; prints the binary directory.
 */
import { ensureBinaries } from "./binaries.ts";

const t0 = performance.now();
try {
  const bins = await ensureBinaries();
  console.error(`[testenv build] done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(bins.dir);
} catch (err) {
  console.error((err as Error).message);
  Deno.exit(1);
}
