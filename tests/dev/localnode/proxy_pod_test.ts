/**
 * The controller's proxy pod in the real single-node cluster (lib/localnode, images built here):
 * - it becomes Ready through its readiness probe (`/readyz` on the proxy's health port) and serves
 *   the ingress through the proxy Service's cluster IP (80 → the container's 8080);
 * - its PodDisruptionBudget (policy/v1) is accepted as written and the disruption controller
 *   counts the pod;
 * - both of its containers run as the non-root uid of the spec (checked on the live processes),
 *   with a read-only root filesystem; their resident memory is printed (the resource requests'
 *   basis);
 * - a rolling update of the proxy Deployment under steady load from inside the cluster's network
 *   loses no request, with 1 replica and with 2 (then the budget allows one disruption of two) (lib/dev/localnode/rollout.ts says exactly how requests are counted).
 */
import assert from "node:assert/strict";
import { buildImages } from "../../../lib/dev/images/build.ts";
import { type Cluster, startCluster } from "../../../lib/dev/localnode/mod.ts";
import { proxyUid } from "../../../lib/controller/proxy_pod.ts";
import { eventually } from "../../../lib/dev/localenv/harness.ts";
import { log } from "../../../lib/log/logger.ts";
import { proxiedEcho, rolloutRestart, startLoad } from "../../../lib/dev/localnode/rollout.ts";

const NS = "proxy-pod";
// containerd, runc and the kubelet need root.
const ignore = Deno.uid() !== 0;

/** The `name:` line of /proc/<pid>/status. */
const statusField = (status: string, name: string) => status.match(new RegExp(`^${name}:\\s*(.*)$`, "m"))?.[1] ?? "";

/** Whether `pid` is `root` or one of its descendants (other clusters may run on the same machine). */
async function descendsFrom(pid: number, root: number): Promise<boolean> {
  for (let p = pid; p > 1; p = Number(statusField(await Deno.readTextFile(`/proc/${p}/status`), "PPid"))) {
    if (p === root) return true;
  }
  return false;
}

/**
 * Host pids (the cluster's processes are visible from the host) under the cluster's PID 1 whose
 * command line has every part.
 */
async function processes(
  root: number,
  ...parts: string[]
): Promise<{ pid: number; uid: string; gid: string; rssKiB: number }[]> {
  const out = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).split("\0");
      if (!parts.every((p) => cmd.some((a) => a.includes(p)))) continue;
      if (!(await descendsFrom(Number(e.name), root))) continue;
      const status = await Deno.readTextFile(`/proc/${e.name}/status`);
      const field = (name: string) => statusField(status, name);
      out.push({
        pid: Number(e.name),
        uid: field("Uid"),
        gid: field("Gid"),
        rssKiB: parseInt(field("VmRSS")),
      });
    } catch {
      // gone
    }
  }
  return out;
}

Deno.test({
  name: "proxy pod: Ready through its probe, non-root, and a rolling update under load loses nothing",
  ignore,
}, async (t) => {
  log.configure({ level: "warn" });
  const dir = await Deno.makeTempDir({ prefix: "ic-proxy-pod-images-" });
  let cluster: Cluster | null = null;
  try {
    const images = await buildImages(dir, () => {});
    cluster = await startCluster({ images: images.map((i) => i.archive) });
    const c = cluster;
    await using proxied = await proxiedEcho(c, NS);
    const { name, clusterIP, pod } = proxied;
    await t.step("the proxy pod becomes Ready through its readiness probe and serves the ingress", () => {
      // proxiedEcho waited for the Ready condition and for answers of both echo pods through the Service.
      const proxy = pod.spec.containers.find((x: any) => x.name === "haproxy");
      assert.equal(proxy.readinessProbe.httpGet.path, "/readyz");
      assert.deepEqual(
        pod.status.containerStatuses.map((s: any) => [s.name, s.ready, s.restartCount]).sort(),
        [["exporter", true, 0], ["haproxy", true, 0]],
      );
    });

    /** The budget once the disruption controller counts `pods` healthy proxy pods. */
    const budget = (pods: number) =>
      eventually(`the proxy's budget counting ${pods} healthy pods`, async () => {
        const res = await c.adminFetch(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}`);
        const body = await res.json();
        return res.ok && body.status?.expectedPods === pods && body.status?.currentHealthy === pods ? body : undefined;
      }, 120_000);

    await t.step("its PodDisruptionBudget covers the proxy pod and allows one disruption", async () => {
      const pdb = await budget(1);
      assert.equal(pdb.spec.maxUnavailable, 1);
      assert.equal(pdb.spec.unhealthyPodEvictionPolicy, "AlwaysAllow", "kept by the API server");
      assert.equal(pdb.status.currentHealthy, 1);
      assert.equal(pdb.status.disruptionsAllowed, 1);
    });

    await t.step("both containers run as the non-root uid of the spec; their memory", async () => {
      const proxyProcs = await processes(c.pid, "/app/main.ts", "proxy", `--configmap=${name}`);
      const haproxyProcs = await processes(c.pid, "haproxy", "/var/run/ingress-controller/haproxy.cfg");
      const exporterProcs = await processes(c.pid, "/app/main.ts", "exporter", "--proxy.scrape-uri=");
      assert.equal(proxyProcs.length, 1, "one proxy process");
      assert.ok(haproxyProcs.length >= 2, "HAProxy's master and worker");
      assert.equal(exporterProcs.length, 1, "one exporter process");
      const ids = `${proxyUid}\t${proxyUid}\t${proxyUid}\t${proxyUid}`;
      for (const p of [...proxyProcs, ...haproxyProcs, ...exporterProcs]) {
        assert.equal(p.uid, ids, `uid of ${p.pid}`);
        assert.equal(p.gid, ids, `gid of ${p.pid}`);
      }
      const sum = (ps: { rssKiB: number }[]) => ps.reduce((n, p) => n + p.rssKiB, 0);
      console.log(`resident memory (MiB): ${
        JSON.stringify({
          proxy: +(sum(proxyProcs) / 1024).toFixed(1),
          haproxy: +(sum(haproxyProcs) / 1024).toFixed(1),
          exporter: +(sum(exporterProcs) / 1024).toFixed(1),
        })
      }`);
    });

    const rolloutUnderLoad = async (replicas: number) => {
      const load = await startLoad(c, `http://${clusterIP}/rollout`, { host: "web.example", maxMs: 300_000 });
      let result;
      try {
        const { oldPods, newPods } = await rolloutRestart(c, NS, name);
        assert.equal(newPods.length, replicas);
        assert.ok(newPods.every((p) => !oldPods.includes(p)), "every proxy pod was replaced");
      } finally {
        result = await load.stop();
      }
      console.log(`rolling update under load (${replicas} replicas): ${JSON.stringify(result)}`);
      assert.ok(result.sent > 100, `enough requests were sent (${result.sent})`);
      assert.equal(result.failed, 0, `failed requests: ${JSON.stringify(result.errors)}`);
      assert.equal(result.ok, result.sent);
    };

    await t.step("a rolling update of the proxy Deployment under steady load loses no request", async () => {
      await rolloutUnderLoad(1);
    });

    await t.step("with 2 replicas: the budget allows one disruption, and a rolling update loses nothing", async () => {
      const res = await c.adminFetch(`/apis/apps/v1/namespaces/${NS}/deployments/${name}`, {
        method: "PATCH",
        headers: { "content-type": "application/strategic-merge-patch+json" },
        body: JSON.stringify({ spec: { replicas: 2 } }),
      });
      assert.ok(res.ok, await res.text());
      const pdb = await budget(2);
      assert.equal(pdb.status.disruptionsAllowed, 1);
      await rolloutUnderLoad(2);
    });
  } finally {
    await cluster?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
