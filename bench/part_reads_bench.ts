/**
 * @module bench/part_reads_bench
 * `deno task bench part_reads`: how fast a proxy reads the part ConfigMaps of a configuration it
 * starts with (docs/config-transport.md), and what the reads cost the API server and etcd.
 * BENCH_PARTS (default 443) ConfigMaps of BENCH_PART_KB (default
 * 32) KiB each are created, then read by name, 8 at a time as lib/transport/part_cache.ts reads
 * them, in alternating rounds (BENCH_ROUNDS, default 4) of two ways: `quorum`, a plain GET (read
 * from etcd), and `cache`, a GET not older than the head's resourceVersion (served from the API
 * server's watch cache). Figures per way (median of the rounds): `part_reads.<way>_s`,
 * `part_reads.<way>_apiserver_cpu_s`, `part_reads.<way>_etcd_cpu_s`.
 */
import { ClusterClient } from "../lib/cluster/client.ts";
import { collectionPath, objectPath, resources } from "../lib/cluster/resources.ts";
import { Cluster } from "../lib/dev/localenv/harness.ts";
import { forEachLimit } from "../lib/runtime/concurrency.ts";
import { log } from "../lib/log/logger.ts";
import { figureList } from "./figures.ts";

const PARTS = Math.min(Number(Deno.env.get("BENCH_PARTS") ?? 443), 5_000);
const PART_KB = Math.min(Number(Deno.env.get("BENCH_PART_KB") ?? 32), 512);
const ROUNDS = Math.min(Number(Deno.env.get("BENCH_ROUNDS") ?? 4), 20);
const CONCURRENCY = 8;
log.configure({ level: "warn" });
const { figures, fig } = figureList();

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuOf(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cluster = await Cluster.start();
try {
  const ns = await cluster.namespace("ops");
  const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
  const names = Array.from({ length: PARTS }, (_, i) => `haproxy-shared-part-${i}`);
  const line = "    server s1 10.255.255.50:8080\n";
  const text = line.repeat(Math.ceil((PART_KB * 1024) / line.length)).slice(0, PART_KB * 1024);
  let headRv = "";
  await forEachLimit(names, CONCURRENCY, async (name) => {
    await client.request("POST", collectionPath(resources.configMaps, ns), {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: ns }, data: { part: text } },
    });
  });
  // The head, written after its parts.
  const head = await client.request("POST", collectionPath(resources.configMaps, ns), {
    body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "haproxy-shared", namespace: ns }, data: {} },
  });
  headRv = head.metadata.resourceVersion!;
  const { etcd, kubeApiserver } = cluster.cp.pids;
  const ways = {
    quorum: {},
    cache: { resourceVersion: headRv, resourceVersionMatch: undefined },
  } as const;
  const runs = new Map<string, { s: number[]; api: number[]; etcd: number[] }>(
    Object.keys(ways).map((w) => [w, { s: [], api: [], etcd: [] }]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(ways) : Object.keys(ways).reverse();
    for (const way of order) {
      const query = ways[way as keyof typeof ways];
      const [api0, etcd0, t0] = [cpuOf(kubeApiserver), cpuOf(etcd), performance.now()];
      await forEachLimit(names, CONCURRENCY, async (name) => {
        const cm = await client.request("GET", objectPath(resources.configMaps, ns, name), { query });
        if (cm.data?.part?.length !== text.length) throw new Error(`${way}: ${name} read back other content`);
      });
      const r = runs.get(way)!;
      r.s.push((performance.now() - t0) / 1000);
      r.api.push(cpuOf(kubeApiserver) - api0);
      r.etcd.push(cpuOf(etcd) - etcd0);
      console.error(`bench: ${way}: ${PARTS} parts read in ${r.s.at(-1)!.toFixed(3)} s`);
    }
  }
  for (const [way, r] of runs) {
    fig(`part_reads.${way}_s`, "s", median(r.s));
    fig(`part_reads.${way}_apiserver_cpu_s`, "s", median(r.api));
    fig(`part_reads.${way}_etcd_cpu_s`, "s", median(r.etcd));
  }
  client.close();
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(figures));
