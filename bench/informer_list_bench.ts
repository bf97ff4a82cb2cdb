/**
 * @module bench/informer_list_bench
 * `deno task bench informer_list`: the controller's first lists at scale. BENCH_INGRESSES (default
 * 100,000) Ingresses, Services and EndpointSlices (the scale bench's shapes, written into etcd), then
 * the three informers the controller starts for them, listing at once as at its start, once per page
 * size in BENCH_PAGE_SIZES (default 500,2000,5000,10000), each with a client of its own. Figures per
 * page size: `informer_list.synced_s_<size>` (start → all three synced), `…cpu_s_<size>` (this
 * process's CPU meanwhile: reading, parsing, filing), `…apiserver_cpu_s_<size>` and
 * `…etcd_cpu_s_<size>`. And `informer_list.rv0_ingresses_mb` and `…rv0_ingresses_s`: one list of
 * the Ingresses with `resourceVersion=0` (served whole from the API server's watch cache, which ignores
 * `limit` there: what client-go's first list gets), its body's size and time.
 */
import process from "node:process";
import { ClusterClient } from "../lib/cluster/client.ts";
import { Informer } from "../lib/cluster/informer.ts";
import { collectionPath, type KubeObject, resources } from "../lib/cluster/resources.ts";
import { Cluster, ingressObj, serviceObj, sliceObj } from "../lib/dev/localenv/harness.ts";
import type { Backend } from "../lib/dev/localenv/backend.ts";
import { writeStoredObjects } from "../lib/dev/localenv/etcd_objects.ts";
import { log } from "../lib/log/logger.ts";
import { figureList } from "./figures.ts";

const N = Number(Deno.env.get("BENCH_INGRESSES") ?? 100_000);
const SIZES = (Deno.env.get("BENCH_PAGE_SIZES") ?? "500,2000,5000,10000").split(",").map(Number);
log.configure({ level: "warn" });
const { figures, fig } = figureList();

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuOf(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

function* objects(n: number, make: (i: number) => KubeObject): Generator<KubeObject> {
  for (let i = 0; i < n; i++) yield make(i);
}

const cluster = await Cluster.start(["--storage-media-type=application/json"]);
try {
  const ns = await cluster.namespace("apps");
  const target = { etcdUrl: cluster.cp.etcdUrl, client: cluster.client };
  const headless = (i: number) => {
    const s = serviceObj(ns, `s${i}`);
    return { ...s, spec: { ...s.spec, clusterIP: "None" } };
  };
  // The scale bench's slices, without its backends (nothing is served here).
  const address = (i: number) => ({ name: `b${i % 4}`, port: 50 + (i % 4), address: "10.0.0.1" }) as Backend;
  await writeStoredObjects(target, resources.services, objects(N, headless));
  await writeStoredObjects(target, resources.endpointSlices, objects(N, (i) => sliceObj(ns, `s${i}`, [address(i)])));
  await writeStoredObjects(
    target,
    resources.ingresses,
    objects(N, (i) => ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i}` }])),
  );
  // Until the API server's watch cache holds them all.
  const path = collectionPath(resources.ingresses, ns);
  const rv = (await cluster.client.request("GET", path, { query: { limit: "1" } })).metadata.resourceVersion;
  await cluster.client.request("GET", path, {
    query: { limit: "1", resourceVersion: rv, resourceVersionMatch: "NotOlderThan" },
  });
  fig("informer_list.objects", "objects", 3 * N);

  const { etcd, kubeApiserver } = cluster.cp.pids;
  for (const size of SIZES) {
    const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
    const informers = [resources.ingresses, resources.services, resources.endpointSlices].map((r) =>
      new Informer(client, r, { namespace: ns, resyncMs: 0, pageSize: size })
    );
    const [api0, etcd0, self0, t0] = [cpuOf(kubeApiserver), cpuOf(etcd), process.cpuUsage(), performance.now()];
    await Promise.all(informers.map((i) => i.start().waitForSync()));
    const self = process.cpuUsage(self0);
    fig(`informer_list.synced_s_${size}`, "s", (performance.now() - t0) / 1000);
    fig(`informer_list.cpu_s_${size}`, "s", (self.user + self.system) / 1e6);
    fig(`informer_list.apiserver_cpu_s_${size}`, "s", cpuOf(kubeApiserver) - api0);
    fig(`informer_list.etcd_cpu_s_${size}`, "s", cpuOf(etcd) - etcd0);
    await Promise.all(informers.map((i) => i.stop()));
    client.close();
  }

  const t0 = performance.now();
  const res = await cluster.cp.adminFetch(`${path}?resourceVersion=0&limit=500`);
  const body = new Uint8Array(await res.arrayBuffer());
  fig("informer_list.rv0_ingresses_s", "s", (performance.now() - t0) / 1000);
  fig("informer_list.rv0_ingresses_mb", "MB", body.length / 1e6);
  fig(
    "informer_list.rv0_ingresses_paged",
    "bool",
    JSON.parse(new TextDecoder().decode(body)).metadata?.continue ? 1 : 0,
  );
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(figures));
