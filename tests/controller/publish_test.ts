/**
 * The publisher against the real kube-apiserver.
 *
 * The publisher decides what is unchanged from the owned caches, which learn of the controller's own
 * writes through watch events that may come in later. A change published and then reverted before
 * those events arrive must still reach the API server: the cache shows the object as the revert
 * wants it, but the controller wrote something else since. Against the real kube-apiserver, with
 * owned caches that show the API server only when told to (a watch running behind), for a head
 * alone and for a configuration split into parts.
 *
 * With `--rbac`, the proxy's Role names the part slots in use (rounded up to a power of two): a
 * configuration that grows past them gets a Role granting more, written before the head that names
 * the new slots, so a proxy never reads a head whose parts it may not read yet.
 */
import assert from "node:assert/strict";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { collectionPath, keyOf, type KubeObject, resources, type ResourceType } from "../../lib/cluster/resources.ts";
import { defaultClassParams } from "../../lib/controller/class_params.ts";
import { ownedShape } from "../../lib/controller/cached_shapes.ts";
import { sharedTarget } from "../../lib/controller/objects.ts";
import { ownerGroupOf } from "../../lib/controller/ownership.ts";
import { defaultPlatform } from "../../lib/controller/platform.ts";
import { type PublishDeps, Publisher } from "../../lib/controller/publish.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { type ControlPlane, startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import type { Rendered } from "../../lib/render/mod.ts";
import { PartCache } from "../../lib/transport/part_cache.ts";
import { PARTS_KEY } from "../../lib/transport/parts.ts";
import { storedPartText } from "../../lib/transport/part_encoding.ts";

const NS = "ops";
const settings = { ...defaultSettings, operatorNamespace: NS };
const owned = (Object.values(resources) as ResourceType[]).filter((r) => r.namespaced);

/** Owned caches of the proxy's namespace that show the API server as of the last `sync()`. */
function laggingCaches(client: ClusterClient) {
  let snapshot: KubeObject[] = [];
  const ofKind = (r: ResourceType) => snapshot.filter((o) => o.kind === r.kind);
  return {
    async sync() {
      snapshot = [];
      for (const r of [resources.configMaps, resources.services, resources.deployments, resources.serviceAccounts]) {
        const list = await client.request("GET", collectionPath(r, NS));
        for (const o of list.items) snapshot.push(ownedShape({ ...o, kind: r.kind }));
      }
    },
    ownedKinds: owned,
    ownedCache: (r: ResourceType) => ({ store: { get: (k: string) => ofKind(r).find((o) => keyOf(o) === k) } }),
    madeBy: (r: ResourceType, g: string) => ofKind(r).filter((o) => ownerGroupOf(o) === g),
  };
}

const noMaps = Object.fromEntries(
  ["routes-exact", "routes-prefix", "redirect-hosts", "routes-regex", "passthrough", "owned-hosts"].map((m) => [
    `${m}.map`,
    "",
  ]),
);

/** A configuration of `n` backends, the 8th balanced by `balance`: `n` 20,000 is split into parts. */
function rendered(n: number, balance: string): Rendered {
  let config = "global\n    maxconn 100\n";
  for (let i = 0; i < n; i++) {
    config += `backend be_${i}\n    balance ${i === 7 ? balance : "roundrobin"}\n    server s1 10.0.${i >> 8}.${
      i & 255
    }:80\n\n`;
  }
  return { config, crtList: "", secrets: [], maps: { ...noMaps } } as unknown as Rendered;
}

/** The writes made so far (`METHOD path`), in order. */
const writes: string[] = [];
/** While set, writes are refused as at the end of a leader's term (lib/controller/leader.ts). */
let termEnded = false;

/**
 * A namespace for the proxy, lagging caches and a publisher of the shared proxy of class `web`
 * (`rbac`: with `--rbac`) whose writes are recorded in `writes`; `publish` publishes a configuration.
 */
async function setUp(cp: ControlPlane, rbac = false) {
  const client = await ClusterClient.create({
    kubeconfig: await cp.kubeConfig("admin", ["system:masters"]),
    qps: 0,
    burst: 1,
  });
  await client.request("POST", "/api/v1/namespaces", { body: { metadata: { name: NS } } });
  const caches = laggingCaches(client);
  const writer = {
    request: (method: string, path: string, opts?: Record<string, unknown>) => {
      if (termEnded && method !== "GET") return Promise.reject(new Error(`not the leader: ${method} ${path} refused`));
      if (method !== "GET") writes.push(`${method} ${path}`);
      return client.request(method, path, opts);
    },
  };
  const publisher = new Publisher({
    client,
    writer: writer as PublishDeps["writer"],
    settings: { ...settings, rbac },
    platform: defaultPlatform,
    caches: caches as unknown as PublishDeps["caches"],
    events: { record: () => Promise.resolve() } as unknown as PublishDeps["events"],
    counts: { reconciles: 0, renders: 0, writes: 0, validations: 0 },
    later: () => {},
  });
  const target = sharedTarget("web", undefined, NS);
  const publish = async (r: Rendered) => {
    const plan = publisher.plan(target.group, target, r, defaultClassParams);
    const current = await publisher.current(plan);
    assert.equal(publisher.conflicts(target.group, plan, current, []), null);
    await publisher.publish(target.group, plan, current, []);
  };
  return { client, caches, target, publish, publisher };
}

Deno.test("publish: a part creation refused while haproxy -c still runs fails the publish, not the process", async () => {
  await using cp = await startControlPlane();
  const { client, target, publisher } = await setUp(cp);
  try {
    termEnded = true;
    const plan = publisher.plan(target.group, target, rendered(20_000, "roundrobin"), defaultClassParams);
    // The creations are refused at once; the check answers later. A rejection nobody handled until
    // then would end the controller's process (and this test) with "Uncaught (in promise)".
    const check = () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300));
    await assert.rejects(publisher.whileChecking(target.group, plan, [], check), /not the leader/);
  } finally {
    termEnded = false;
    client.close();
  }
});

for (const n of [10, 20_000]) {
  Deno.test(`publish: a change reverted before the caches show it is written (${n} backends)`, async () => {
    await using cp = await startControlPlane();
    const { client, caches, target, publish } = await setUp(cp);
    try {
      const one = rendered(n, "roundrobin");
      await publish(one);
      await caches.sync(); // the watch caught up
      await publish(rendered(n, "leastconn")); // a change ...
      await publish(one); // ... and its revert, before the change's events came in

      // What a proxy reads from the API server: the head and the parts it names.
      const head = await client.request("GET", `${collectionPath(resources.configMaps, NS)}/${target.name}`);
      let config = head.data["haproxy.cfg"];
      if (n > 10) {
        assert.ok(PARTS_KEY in head.data, "split into parts");
        const parts = new PartCache(target.name, async (name) => {
          const cm = await client.request("GET", `${collectionPath(resources.configMaps, NS)}/${name}`);
          return storedPartText(cm.data, cm.binaryData);
        });
        const joined = await parts.assemble(head.data, undefined, head.binaryData);
        assert.ok(!("missing" in joined), "the head names parts that hold other content");
        config = joined.files["haproxy.cfg"];
      }
      assert.ok(config === one.config, "the API server still holds the reverted change");
    } finally {
      client.close();
    }
  });
}

Deno.test("publish: with --rbac, a Role granting new part slots is written before the head that names them", async () => {
  await using cp = await startControlPlane();
  const { client, caches, target, publish } = await setUp(cp, true);
  try {
    await publish(rendered(20_000, "roundrobin")); // a few dozen parts
    await caches.sync();
    const rolePath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles/${target.name}`;
    const granted = async () =>
      (await client.request("GET", rolePath)).rules.flatMap((r: { resourceNames: string[] }) => r.resourceNames)
        .length;
    const before = await granted();
    writes.length = 0;
    await publish(rendered(80_000, "roundrobin")); // four times the parts: more slots than granted
    assert.ok(await granted() > before, "the Role grants more part slots");
    const role = writes.findIndex((w) => w.endsWith(`/roles/${target.name}`));
    const head = writes.findIndex((w) => w.endsWith(`/configmaps/${target.name}`));
    assert.ok(role >= 0 && head >= 0, writes.join("\n"));
    assert.ok(role < head, `the Role is written after the head: ${writes.join(", ")}`);
  } finally {
    client.close();
  }
});
