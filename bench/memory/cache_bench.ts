/**
 * @module bench/memory/cache_bench
 * `deno run -A --v8-flags=--expose-gc bench/memory/cache_bench.ts`: the heap that the informer
 * caches hold per Ingress + Service + EndpointSlice, as the scale bench creates them
 * (BENCH_OBJECTS of each, default 2,000), listed from the real API server by the real Informer:
 * without any transform (`raw`), with `delete metadata.managedFields` (the default transform until
 * it rebuilt the metadata) and with the informers' default transform (`default`).
 * BENCH_LAST_APPLIED=1 gives every object the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation `kubectl apply` writes (its own JSON). Prints a JSON array of {name, unit, value} last.
 */
import { ClusterClient } from "../../lib/cluster/client.ts";
import { collectionPath, type KubeObject, resources, type ResourceType } from "../../lib/cluster/resources.ts";
import { Informer, type InformerOptions } from "../../lib/cluster/informer.ts";
import type { Backend } from "../../lib/dev/localenv/backend.ts";
import { Cluster, ingressObj, serviceObj, sliceObj } from "../../lib/dev/localenv/harness.ts";
import { figureList } from "../figures.ts";

const N = Number(Deno.env.get("BENCH_OBJECTS") ?? 2_000);
const lastApplied = Deno.env.get("BENCH_LAST_APPLIED") === "1";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const { figures, fig } = figureList();

const withLastApplied = (o: KubeObject): KubeObject =>
  lastApplied
    ? {
      ...o,
      metadata: {
        ...o.metadata,
        annotations: {
          ...o.metadata.annotations,
          "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify(o) + "\n",
        },
      },
    }
    : o;

// sliceObj reads only the address and port of a backend: no server is needed to list slices.
const endpoint = { address: "10.1.0.1", port: 8080 } as Backend;

const cluster = await Cluster.start(["--service-cluster-ip-range=10.0.0.0/16"]);
try {
  const ns = await cluster.namespace("apps");
  const post = (r: ResourceType, o: KubeObject) =>
    cluster.client.request("POST", collectionPath(r, ns), { body: withLastApplied(o) });
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < N) {
      const i = next++;
      await post(resources.services, serviceObj(ns, `s${i}`));
      await post(resources.endpointSlices, sliceObj(ns, `s${i}`, [endpoint]));
      await post(resources.ingresses, ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i}` }]));
    }
  }));

  const variants: Record<string, Partial<InformerOptions>> = {
    raw: { transform: (o) => o },
    // The default transform until it rebuilt the metadata (a delete makes it a V8 dictionary).
    delete_managed_fields: {
      transform: (o) => {
        delete (o.metadata as { managedFields?: unknown }).managedFields;
        return o;
      },
    },
    default: {},
  };
  for (const [variant, extra] of Object.entries(variants)) {
    const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
    const informers = [resources.ingresses, resources.services, resources.endpointSlices].map((r) =>
      new Informer(client, r, { namespace: ns, ...extra })
    );
    gc();
    const before = Deno.memoryUsage().heapUsed;
    for (const i of informers) i.start();
    await Promise.all(informers.map((i) => i.waitForSync()));
    gc();
    const bytes = (Deno.memoryUsage().heapUsed - before) / N;
    fig(`cache.bytes_per_set.${variant}${lastApplied ? ".last_applied" : ""}`, "bytes", Math.round(bytes));
    for (const i of informers) await i.stop();
    client.close();
  }
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(figures));
