/**
 * The informer and client against the real kube-apiserver of lib/localenv: list+watch, watch resume
 * without relist after the server ends a watch, 410 Gone → relist, periodic resync, and the token
 * bucket in front of every call.
 */
import assert from "node:assert/strict";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { Informer } from "../../lib/cluster/informer.ts";
import { Backoff } from "../../lib/cluster/backoff.ts";
import { collectionPath, type KubeObject, resources } from "../../lib/cluster/resources.ts";

async function until(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const cm = (ns: string, name: string, v: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: ns, labels: { test: "informer" } },
  data: { v },
});

Deno.test("informer and client against a real API server", async (t) => {
  await using cp = await startControlPlane();
  const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
  try {
    const ns = "informer-test";
    await client.request("POST", collectionPath(resources.namespaces), {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
    });
    const cms = collectionPath(resources.configMaps, ns);
    await client.request("POST", cms, { body: cm(ns, "a", "1") });

    await t.step(
      "lists, then follows adds, updates and deletes; resumes without relist when the server ends the watch",
      async () => {
        const seen: string[] = [];
        const inf = new Informer(client, resources.configMaps, {
          namespace: ns,
          labelSelector: "test=informer",
          watchTimeoutSeconds: 1,
          resyncMs: 0,
        }).on({
          onAdd: (o) => seen.push(`add ${o.metadata.name}=${o.data?.v}`),
          onUpdate: (_, o) => seen.push(`update ${o.metadata.name}=${o.data?.v}`),
          onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
        });
        inf.start();
        try {
          await inf.waitForSync();
          assert.deepEqual(seen, ["add a=1"]);
          await client.request("POST", cms, { body: cm(ns, "b", "1") });
          await until("watch add", () => seen.includes("add b=1"));
          // The server ends the 1 s watches; after each restart, change something.
          for (let i = 2; i <= 4; i++) {
            const starts = inf.watchStarts;
            await until(`watch restart ${i - 1}`, () => inf.watchStarts > starts);
            await client.request("PUT", `${cms}/b`, { body: cm(ns, "b", String(i)) });
          }
          await until("updates across watch restarts", () => seen.includes("update b=4"));
          await client.request("DELETE", `${cms}/a`);
          await until("delete", () => seen.includes("delete a"));
          assert.equal(inf.lists, 1, "a watch that ends normally resumes from its resourceVersion, no relist");
          assert.ok(inf.watchStarts >= 3, `watch restarted ${inf.watchStarts} times`);
          assert.deepEqual(inf.store.keys(), [`${ns}/b`]);
          assert.equal(inf.store.get(`${ns}/b`)?.data.v, "4");
        } finally {
          await inf.stop();
        }
      },
    );

    await t.step("resync relists and diffs against the store", async () => {
      const events: string[] = [];
      const inf = new Informer(client, resources.configMaps, { namespace: ns, labelSelector: "test=informer" })
        .on({
          onDelete: (o) => events.push(`delete ${o.metadata.name}`),
          onAdd: (o) => events.push(`add ${o.metadata.name}`),
        });
      inf.start();
      try {
        await inf.waitForSync();
        assert.equal(inf.lists, 1);
        inf.resync();
        await until("resync relist", () => inf.lists === 2);
        assert.ok(inf.store.get(`${ns}/b`));
      } finally {
        await inf.stop();
      }
      assert.deepEqual(events, ["add b"], "a resync of an unchanged state adds and deletes nothing");
    });

    await t.step("stop ends the watch at any moment, also while a resync is opening it again", async () => {
      for (let i = 0; i < 30; i++) {
        // Watches the server would keep open for an hour: only the stop can end them.
        const inf = new Informer(client, resources.configMaps, {
          namespace: ns,
          watchTimeoutSeconds: 3600,
          resyncMs: 3,
        }).start();
        await inf.waitForSync();
        await new Promise((r) => setTimeout(r, i % 10));
        let guard: ReturnType<typeof setTimeout> | undefined;
        const outcome = await Promise.race([
          inf.stop().then(() => "stopped"),
          new Promise((r) => guard = setTimeout(() => r("still watching after 10 s"), 10_000)),
        ]);
        clearTimeout(guard);
        assert.equal(outcome, "stopped", `round ${i}`);
      }
    });

    await t.step("errors carry the API status", async () => {
      await assert.rejects(
        client.request("GET", `${cms}/missing`),
        (e: any) => e.status === 404 && e.reason === "NotFound",
      );
    });
  } finally {
    client.close();
  }
});

Deno.test("an expired resourceVersion (410 Gone) leads to a relist", async () => {
  // Without the watch cache the API server watches etcd directly, so a compacted revision is 410 Gone.
  await using cp = await startControlPlane({ apiServerFlags: ["--watch-cache=false"] });
  const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
  const cms = collectionPath(resources.configMaps, "default");
  const inf = new Informer(client, resources.configMaps, { namespace: "default" });
  try {
    inf.start();
    await inf.waitForSync();
    const old = inf.resourceVersion;
    for (let i = 0; i < 3; i++) await client.request("POST", cms, { body: cm("default", `c${i}`, "x") });
    await until("watched adds", () => inf.store.size >= 3);
    const latest = (await client.request("GET", cms)).metadata.resourceVersion;
    const compact = await fetch(`${cp.etcdUrl}/v3/kv/compaction`, {
      method: "POST",
      body: JSON.stringify({ revision: latest, physical: true }),
    });
    assert.equal(compact.status, 200, await compact.text());
    assert.equal(inf.lists, 1);
    inf.restartWatch(old);
    await until("relist after 410", () => inf.lists === 2);
    assert.ok(inf.store.get("default/c2"));
  } finally {
    await inf.stop();
    client.close();
  }
});

Deno.test("an informer keeps retrying after errors other than 410 (403 here) and syncs once allowed", async () => {
  await using cp = await startControlPlane();
  const admin = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
  const limited = await ClusterClient.create({ kubeconfig: await cp.kubeConfig("limited"), qps: 0, burst: 1 });
  const inf = new Informer(limited, resources.configMaps, { namespace: "default", backoff: new Backoff(50, 400) });
  try {
    inf.start();
    await until("a few refused lists", () => limited.requestsSent >= 3);
    assert.equal(inf.hasSynced, false);
    assert.match(String((inf.lastError as Error)?.message), /403/);
    await admin.request("POST", collectionPath(resources.roles, "default"), {
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "read-cm", namespace: "default" },
        rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
      },
    });
    await admin.request("POST", collectionPath(resources.roleBindings, "default"), {
      body: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "read-cm", namespace: "default" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read-cm" },
        subjects: [{ kind: "User", name: "limited", apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
    await inf.waitForSync();
    await admin.request("POST", collectionPath(resources.configMaps, "default"), { body: cm("default", "late", "1") });
    await until("a watched add after recovery", () => !!inf.store.get("default/late"));
  } finally {
    await inf.stop();
    limited.close();
    admin.close();
  }
});

Deno.test("the token bucket spaces requests to the API server (qps 20, burst 1)", async () => {
  await using cp = await startControlPlane();
  const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 20, burst: 1 });
  try {
    const t0 = performance.now();
    for (let i = 0; i < 11; i++) await client.request("GET", "/api/v1/namespaces/default");
    const elapsed = performance.now() - t0;
    // 11 requests with one token up front and 20 per second: the last one cannot start before 500 ms.
    assert.ok(elapsed >= 480, `11 requests took ${elapsed.toFixed(0)} ms`);
  } finally {
    client.close();
  }
});
