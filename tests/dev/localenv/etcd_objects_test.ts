import assert from "node:assert/strict";
import { Cluster, ingressObj, resources, serviceObj, sliceObj } from "../../../lib/dev/localenv/harness.ts";
import { overlay, storageKey, writeStoredObjects } from "../../../lib/dev/localenv/etcd_objects.ts";
import type { KubeObject, ResourceType } from "../../../lib/cluster/resources.ts";
import type { Backend } from "../../../lib/dev/localenv/backend.ts";

Deno.test("overlay: the value's fields over the base's defaults, arrays element by element", () => {
  assert.deepEqual(
    overlay({ a: 1, b: { c: 2, d: 3 }, e: [{ f: 1, g: 2 }] }, { b: { c: 5 }, e: [{ f: 7 }, { f: 8 }], h: "x" }),
    { a: 1, b: { c: 5, d: 3 }, e: [{ f: 7, g: 2 }, { f: 8, g: 2 }], h: "x" },
  );
  assert.deepEqual(overlay({ a: [1, 2] }, { a: [] }), { a: [] });
});

Deno.test("storageKey: the API server's etcd keys", () => {
  assert.equal(storageKey(resources.services, "ns", "s"), "/registry/services/specs/ns/s");
  assert.equal(storageKey(resources.ingresses, "ns", "i"), "/registry/ingress/ns/i");
  assert.equal(storageKey(resources.endpointSlices, "ns", "e"), "/registry/endpointslices/ns/e");
});

const headless = (ns: string, name: string): KubeObject => {
  const s = serviceObj(ns, name);
  return { ...s, spec: { ...s.spec, clusterIP: "None" } };
};
const backend = (n: number): Backend => ({ address: `10.1.0.${n}`, port: 8080 } as Backend);

/** What a reader compares: everything but the identity an object gets at its creation and its field owners. */
function comparable(o: KubeObject): unknown {
  const meta: Record<string, unknown> = { ...o.metadata };
  for (const k of ["uid", "creationTimestamp", "resourceVersion", "namespace", "managedFields"]) delete meta[k];
  return { ...o, metadata: meta };
}

Deno.test({
  name: "writeStoredObjects: objects written to etcd read back through the API server as POSTed ones do",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const cluster = await Cluster.start(["--storage-media-type=application/json"]);
    try {
      const w = await cluster.namespace("written");
      const p = await cluster.namespace("posted");
      const target = { etcdUrl: cluster.cp.etcdUrl, client: cluster.client };
      const n = 6;
      const kinds: [ResourceType, (ns: string, i: number) => KubeObject, string][] = [
        [resources.services, (ns, i) => headless(ns, `s${i}`), "s"],
        [
          resources.endpointSlices,
          (ns, i) => sliceObj(ns, `s${i}`, i ? [backend(i), backend(i + 100)] : [backend(0)]),
          "s",
        ],
        [
          resources.ingresses,
          (ns, i) =>
            ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i}` }, {
              host: `x${i}.example`,
              path: "/a",
              pathType: "Exact",
              service: `s${i}`,
              port: "http",
            }], {
              annotations: i % 2 ? { "haproxy.org/timeout-server": `${i}s` } : undefined,
            }),
          "i",
        ],
      ];
      for (const [r, make] of kinds) {
        const written = await writeStoredObjects(target, r, Array.from({ length: n }, (_, i) => make(w, i)), {
          batch: 2,
          width: 2,
        });
        assert.equal(written, n);
        for (let i = 0; i < n; i++) {
          await cluster.client.request(
            "POST",
            `${r.group ? `/apis/${r.group}` : "/api"}/${r.version}/namespaces/${p}/${r.plural}`,
            { body: make(p, i) },
          );
        }
        const listed = await cluster.list(r, w);
        assert.equal(listed.length, n);
        const uids = new Set(listed.map((o) => o.metadata.uid));
        assert.equal(uids.size, n);
        for (let i = 0; i < n; i++) {
          const name = make(w, i).metadata.name;
          const got = (await cluster.get(r, w, name))!;
          const want = (await cluster.get(r, p, name))!;
          assert.match(got.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
          assert.deepEqual(comparable(got), comparable(want), `${r.kind} ${name}`);
        }
      }
      // A create never overwrites.
      await assert.rejects(
        writeStoredObjects(target, resources.services, [headless(w, "t0"), headless(w, "s3")]),
        /exists already/,
      );
      // Cluster IPs belong to the API server's allocator.
      await assert.rejects(
        writeStoredObjects(target, resources.services, [serviceObj(w, "c0"), serviceObj(w, "c1")]),
        /cluster IP/,
      );
    } finally {
      await cluster.stop();
    }
  },
});
