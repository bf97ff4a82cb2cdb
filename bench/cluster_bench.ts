/**
 * `deno task bench cluster`: the images and the real single-node cluster.
 * - image build time and sizes (uncompressed archives);
 * - time from startCluster() to a Ready node, twice (the first after a cold containerd state and
 *   Deno cache of the node script, the second warm), and kubelet start → node Ready;
 * - time from applying a Deployment (server-side apply, as `kubectl apply --server-side`) to its
 *   pod being Ready, for the echo image;
 * - teardown time.
 * The cluster binaries must be built (lib/dev/localenv/build.sh); their cold build times are printed
 * by build.sh itself.
 */
import { buildImages } from "../lib/dev/images/build.ts";
import { startCluster } from "../lib/dev/localnode/mod.ts";
import { echoDeployment } from "../lib/dev/localnode/echo.ts";

interface Figure {
  name: string;
  unit: string;
  value: number;
}
const figures: Figure[] = [];
const fig = (name: string, unit: string, value: number) => {
  figures.push({ name, unit, value: Math.round(value * 1000) / 1000 });
  console.error(`bench: ${name} = ${value.toFixed(2)} ${unit}`);
};

const dir = await Deno.makeTempDir({ prefix: "ic-cluster-bench-" });
try {
  let t = performance.now();
  const images = await buildImages(dir, () => {});
  fig("images: build all four", "s", (performance.now() - t) / 1000);
  for (const i of images) fig(`image size: ${i.name}`, "MiB", i.bytes / 1048576);
  const archives = images.map((i) => i.archive);

  for (const round of ["first", "second"]) {
    t = performance.now();
    const cluster = await startCluster({ images: archives, say: () => {} });
    fig(`cluster: start to Ready node (${round})`, "s", (performance.now() - t) / 1000);
    fig(`cluster: kubelet start to Ready node (${round})`, "s", cluster.timings["kubelet start to node Ready"] / 1000);
    if (round === "second") {
      const ns = "bench";
      await cluster.adminFetch("/api/v1/namespaces", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ metadata: { name: ns } }),
      }).then((r) => r.body?.cancel());
      // The namespace's "default" service account must exist before a pod can be admitted.
      while (
        !(await cluster.adminFetch(`/api/v1/namespaces/${ns}/serviceaccounts/default`).then((r) => {
          r.body?.cancel();
          return r.ok;
        }))
      ) await new Promise((r) => setTimeout(r, 100));
      t = performance.now();
      const res = await cluster.adminFetch(
        `/apis/apps/v1/namespaces/${ns}/deployments/echo?fieldManager=bench&force=true`,
        {
          method: "PATCH",
          headers: { "content-type": "application/apply-patch+yaml" },
          body: JSON.stringify(echoDeployment(ns, 1)),
        },
      );
      if (!res.ok) throw new Error(`apply: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
      for (;;) {
        const list = await (await cluster.adminFetch(`/api/v1/namespaces/${ns}/pods?labelSelector=app%3Decho`)).json();
        const ready = list.items.some((p: any) =>
          (p.status?.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True")
        );
        if (ready) break;
        if (performance.now() - t > 180_000) throw new Error("the pod was not Ready within 180 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      fig("cluster: apply Deployment to Ready pod", "s", (performance.now() - t) / 1000);
    }
    t = performance.now();
    await cluster.stop();
    fig(`cluster: teardown (${round})`, "s", (performance.now() - t) / 1000);
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
console.log(JSON.stringify(figures));
