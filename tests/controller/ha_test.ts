/**
 * Two controllers of one controller id in one process, against the real kube-apiserver: only the
 * leader writes; the standby keeps its caches warm and writes nothing; when the leader stops it
 * hands the Lease over and the standby, after a full resync, serves the next change.
 */
import assert from "node:assert/strict";
import { leaseName, leases } from "../../lib/controller/leader.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj,
  eventually,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";

const quick = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 500, validateProxyConfig: false };

Deno.test("controller HA: one writer at a time, the standby takes over", async () => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("ha");
    await cluster.apply(resources.services, serviceObj(ns, "svc"));
    const a = await controller(cluster, { ...quick, controllerId: "ha" });
    let aStopped = false;
    try {
      await eventually("a leads", () => a.leadership.leading);
      const b = await controller(cluster, { ...quick, controllerId: "ha" });
      try {
        await b.synced;
        await cluster.apply(
          resources.ingresses,
          dedicatedIngressObj(ns, "web", [{ host: "one.example", service: "svc" }]),
        );
        const name = proxyName("web");
        await eventually(
          "the leader publishes",
          async () =>
            /one\.example/.test(
              Object.values((await cluster.get(resources.configMaps, ns, name))?.data ?? {}).join("\n"),
            ),
        );
        await a.idle();
        // The standby saw it all (warm caches) and did nothing with it.
        await eventually("the standby's cache has the ingress", () => b.cached(resources.ingresses).length === 1);
        await eventually("and the owned ConfigMap", () => b.cached(resources.configMaps).length === 1);
        assert.ok(!b.leadership.leading);
        assert.ok(a.stats().writes > 0);
        assert.equal(b.stats().writes, 0, "the standby writes nothing");
        assert.equal(b.stats().reconciles, 0, "the standby reconciles nothing");

        // The leader goes away gracefully: it hands the Lease over.
        await a.stop();
        aStopped = true;
        await eventually("b leads", () => b.leadership.leading);
        const lease = await cluster.get(leases, "default", leaseName("ha"));
        assert.equal(lease?.spec.leaseTransitions, 1);
        // A full resync: b looks at the ingress it never reconciled, and writes nothing new.
        await eventually("b reconciled the ingress", () => b.stats().reconciles > 0);
        await b.idle();
        assert.equal(b.stats().writes, 0, "nothing changed meanwhile: nothing to write");

        await cluster.apply(
          resources.ingresses,
          dedicatedIngressObj(ns, "web", [{ host: "two.example", service: "svc" }]),
        );
        await eventually(
          "the new leader serves the change",
          async () =>
            /two\.example/.test(
              Object.values((await cluster.get(resources.configMaps, ns, name))?.data ?? {}).join("\n"),
            ),
        );
        // The write is counted once its answer is read, which may come after the test's own GET sees it.
        await b.idle();
        assert.ok(b.stats().writes > 0);
      } finally {
        await b.stop();
      }
    } finally {
      if (!aStopped) await a.stop();
    }
  } finally {
    await cluster.stop();
  }
});

Deno.test("controller HA: a leader throttled by --qps keeps its Lease through a burst of writes", async () => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("burst");
    await cluster.apply(resources.services, serviceObj(ns, "svc"));
    for (let i = 0; i < 4; i++) {
      await cluster.apply(resources.ingresses, dedicatedIngressObj(ns, `i${i}`, [{ service: "svc" }]));
    }
    // About 50 requests at 3 a second, from 4 workers at once: in the controller's --qps bucket, a
    // renew (a read and a write every 500 ms) would wait longer than the 2 s renew deadline.
    const ctl = await controller(cluster, {
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
      validateProxyConfig: false,
      controllerId: "burst",
      qps: 3,
      burst: 1,
    });
    const changes: boolean[] = [];
    try {
      await eventually("leading", () => ctl.leadership.leading);
      ctl.leadership.onChange((leading) => changes.push(leading));
      const owned = () => cluster.list(resources.configMaps, ns, "app.kubernetes.io/managed-by=ingress-controller");
      await eventually("all 4 published", async () => (await owned()).length === 4, 60_000);
      await ctl.idle();
      assert.deepEqual(changes, [], "the term never ended");
      assert.ok(ctl.leadership.leading);
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});

Deno.test("controller HA: a leader that cannot renew stops writing; the standby takes over and serves", async () => {
  const cluster = await Cluster.start();
  const post = async (path: string, body: unknown) => {
    const res = await cluster.cp.adminFetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 201, await res.text());
  };
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  const subjects = [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "ctl-a" }];
  try {
    const ns = await cluster.namespace("cut");
    await cluster.apply(resources.services, serviceObj(ns, "svc"));
    // ctl-a may do all its work, and use the Lease only through a RoleBinding the test deletes.
    const work = ["", "apps", "networking.k8s.io", "discovery.k8s.io", "policy"];
    await post(`${rbac}/clusterroles`, {
      metadata: { name: "ctl-work" },
      rules: [{ apiGroups: work, resources: ["*"], verbs: ["*"] }],
    });
    await post(`${rbac}/clusterrolebindings`, {
      metadata: { name: "ctl-work" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ctl-work" },
      subjects,
    });
    await post(`${rbac}/namespaces/default/roles`, {
      metadata: { name: "ctl-lease" },
      rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] }],
    });
    await post(`${rbac}/namespaces/default/rolebindings`, {
      metadata: { name: "ctl-lease" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "ctl-lease" },
      subjects,
    });
    const a = await controller(cluster, {
      ...quick,
      controllerId: "cut",
      kubeconfig: await cluster.cp.kubeConfig("ctl-a"),
    });
    let b: Awaited<ReturnType<typeof controller>> | null = null;
    try {
      await eventually("a leads", () => a.leadership.leading);
      b = await controller(cluster, { ...quick, controllerId: "cut" });
      const seen: string[] = [];
      a.leadership.onChange((l) => seen.push(`a:${l}`));
      b.leadership.onChange((l) => seen.push(`b:${l}`));
      await cluster.apply(
        resources.ingresses,
        dedicatedIngressObj(ns, "one", [{ host: "one.example", service: "svc" }]),
      );
      await eventually("a publishes", () => cluster.get(resources.configMaps, ns, proxyName("one")));
      await a.idle();

      // a loses the right to renew: its term ends at the renew deadline, and it writes no more.
      await cluster.remove(resources.roleBindings, "default", "ctl-lease");
      await eventually("a stopped leading", () => !a.leadership.leading);
      const written = a.stats().writes;
      await cluster.apply(
        resources.ingresses,
        dedicatedIngressObj(ns, "two", [{ host: "two.example", service: "svc" }]),
      );
      await eventually("b serves the new ingress", () => cluster.get(resources.configMaps, ns, proxyName("two")));
      assert.deepEqual(seen, ["a:false", "b:true"], "a's term ended before b's began");
      assert.equal(a.stats().writes, written, "a wrote nothing after its term ended");
      // The ConfigMap can be read before b has handled the answer to its own POST.
      await b.idle();
      assert.ok(b.stats().writes > 0);
    } finally {
      await b?.stop();
      await a.stop();
    }
  } finally {
    await cluster.stop();
  }
});
