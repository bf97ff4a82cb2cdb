/**
 * `deno run -A bench/install_bench.ts` (root: the real node needs it): the time from `helm install`
 * of the chart (defaults, images already on the node) to the first request answered through the
 * proxy of an Ingress that was waiting for the controller, and to the controller pod being Ready.
 * Prints `install.first_request_s` and `install.controller_ready_s` as its last line.
 */
import { join } from "node:path";
import { buildImages } from "../lib/dev/images/build.ts";
import { startCluster } from "../lib/dev/localnode/mod.ts";
import { eventually } from "../lib/dev/localenv/harness.ts";
import { chartDir, helm, NAMESPACE, RELEASE_NAME } from "../lib/dev/deploy/manifests.ts";
import { answering, CONTROLLER_LABELS, createEchoApp, proxyService, readyPods } from "../lib/dev/deploy/in_cluster.ts";

if (Deno.uid() !== 0) {
  console.error("install bench: needs root (containerd, runc and the kubelet)");
  Deno.exit(1);
}
const figures: { name: string; unit: string; value: number }[] = [];
const dir = await Deno.makeTempDir({ prefix: "ic-install-bench-" });
try {
  const images = await buildImages(join(dir, "images"), () => {});
  await using cluster = await startCluster({ images: images.map((i) => i.archive) });
  await createEchoApp(cluster, "bench", "web", ["web.example"]);
  const t0 = performance.now();
  const controllerReady = (async () => {
    await readyPods(cluster, CONTROLLER_LABELS, 1, { ns: NAMESPACE });
    return (performance.now() - t0) / 1000;
  })();
  await helm([
    "install",
    RELEASE_NAME,
    chartDir,
    "-n",
    NAMESPACE,
    "--create-namespace",
    "--kubeconfig",
    cluster.kubeconfig,
  ], {
    HELM_CACHE_HOME: join(dir, "helm/cache"),
    HELM_CONFIG_HOME: join(dir, "helm/config"),
    HELM_DATA_HOME: join(dir, "helm/data"),
  });
  await eventually("the first request through the proxy", async () => {
    const svc = await proxyService(cluster);
    return svc && (await answering(cluster, svc.spec.clusterIP, "web.example", 1)).size === 1;
  }, 300_000);
  figures.push({ name: "install.first_request_s", unit: "s", value: (performance.now() - t0) / 1000 });
  figures.push({ name: "install.controller_ready_s", unit: "s", value: await controllerReady });
} finally {
  await Deno.remove(dir, { recursive: true });
}
console.log(JSON.stringify(figures));
