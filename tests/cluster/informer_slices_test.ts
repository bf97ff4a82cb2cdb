/**
 * A large list is read in pages and filed in slices: the informer lets the event loop turn while it tells its
 * handlers of 12,000 listed objects (timers, the leader's renewals run), and every object still
 * arrives, in the list's order, before the informer counts as synced.
 */
import assert from "node:assert/strict";
import { DATA_PAGE_SIZE, Informer, LIST_PAGE_SIZE } from "../../lib/cluster/informer.ts";
import { resources } from "../../lib/cluster/resources.ts";
import { Cluster } from "../../lib/dev/localenv/harness.ts";
import { writeStoredObjects } from "../../lib/dev/localenv/etcd_objects.ts";

/**
 * Waits (bounded) until the API server lists `count` objects of `plural` in `ns`: objects written
 * straight into etcd reach its watch cache a moment later, and a list in between misses some.
 */
async function visible(cluster: Cluster, ns: string, plural: string, count: number): Promise<void> {
  let seen = 0;
  for (let i = 0; i < 100; i++) {
    const list = await cluster.client.request("GET", `/api/v1/namespaces/${ns}/${plural}`);
    seen = (list.items ?? []).length;
    if (seen === count) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${plural}: ${seen} of ${count} listed after 100 tries`);
}

Deno.test({
  name: "informer: a list of 12,000 objects is filed with the event loop turning between slices",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cluster = await Cluster.start(["--storage-media-type=application/json"]);
    try {
      const ns = await cluster.namespace("many");
      // The limit each list asked for, by collection: the API server may answer from its watch cache
      // in fewer pages than asked, so the page size is checked where it is chosen.
      const limits = new Map<string, unknown[]>();
      const request = cluster.client.request.bind(cluster.client);
      cluster.client.request = ((method: string, path: string, opts?: { query?: Record<string, unknown> }) => {
        if (method === "GET" && opts?.query?.limit !== undefined) {
          const kind = path.slice(path.lastIndexOf("/") + 1);
          limits.set(kind, [...limits.get(kind) ?? [], opts.query.limit]);
        }
        return request(method as never, path, opts as never);
      }) as typeof cluster.client.request;
      const n = 12_000;
      const name = (i: number) => `cm${String(i).padStart(5, "0")}`;
      await writeStoredObjects(
        { etcdUrl: cluster.cp.etcdUrl, client: cluster.client },
        resources.configMaps,
        Array.from({ length: n }, (_, i) => ({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: name(i), namespace: ns },
          data: { v: String(i) },
        })),
      );
      await visible(cluster, ns, "configmaps", n);
      const added: string[] = [];
      /** How many objects had been filed at each turn of the event loop while filing. */
      const turns: number[] = [];
      const inf = new Informer(cluster.client, resources.configMaps, { namespace: ns, resyncMs: 0 }).on({
        onAdd: (o) => {
          if (added.length === 0) {
            const tick = () => {
              turns.push(added.length);
              if (added.length < n) setTimeout(tick, 0);
            };
            setTimeout(tick, 0);
          }
          added.push(o.metadata.name);
        },
      });
      const sent = cluster.client.requestsSent;
      inf.start();
      try {
        await inf.waitForSync();
        // ConfigMaps carry data: listed in pages of DATA_PAGE_SIZE (each after the first asks to
        // continue), then watched.
        const pages = Math.ceil(n / DATA_PAGE_SIZE);
        assert.ok(pages >= 2);
        const calls = cluster.client.requestsSent - sent;
        // The API server may answer from its watch cache in fewer pages than asked.
        assert.ok(calls >= 1 && calls <= pages + 1, `${calls} calls for ${pages} pages and a watch`);
        assert.ok(limits.get("configmaps")?.every((l) => l === DATA_PAGE_SIZE), `${limits.get("configmaps")}`);
        assert.equal(added.length, n);
        assert.deepEqual(added, Array.from({ length: n }, (_, i) => name(i)));
        assert.ok(turns.some((t) => t > 0 && t < n), `the loop turned while filing (${turns.join(",")})`);
      } finally {
        void inf.stop();
      }
      // Other kinds in pages of LIST_PAGE_SIZE.
      const services = LIST_PAGE_SIZE + 10;
      await writeStoredObjects(
        { etcdUrl: cluster.cp.etcdUrl, client: cluster.client },
        resources.services,
        Array.from({ length: services }, (_, i) => ({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: `s${i}`, namespace: ns },
          spec: { clusterIP: "None", ports: [{ port: 80 }] },
        })),
      );
      await visible(cluster, ns, "services", services);
      const svc = new Informer(cluster.client, resources.services, { namespace: ns, resyncMs: 0 });
      await svc.start().waitForSync();
      try {
        const asked = limits.get("services") ?? [];
        assert.ok(asked.length >= 1 && asked.every((l) => l === LIST_PAGE_SIZE), `limits asked: ${asked.join(",")}`);
        assert.equal(svc.store.size, services);
      } finally {
        void svc.stop(); // the cluster's stop below ends its watch
      }
    } finally {
      await cluster.stop();
    }
  },
});
