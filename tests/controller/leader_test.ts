/**
 * Leader election (lib/controller/leader.ts) against the real kube-apiserver: two electors in one
 * process, each with its own client, on one Lease. Short timings keep the tests quick; waits are
 * event-driven, bounded by `eventually`'s fail-safe timeout.
 */
import assert from "node:assert/strict";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { collectionPath, resources } from "../../lib/cluster/resources.ts";
import {
  gatedWriter,
  holderIdentity,
  LeaderElector,
  type Leadership,
  leaseName,
  leases,
} from "../../lib/controller/leader.ts";
import type { LeaderElectionTiming } from "../../lib/controller/leader_timing.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { Cluster, eventually } from "../../lib/dev/localenv/harness.ts";

const quick: LeaderElectionTiming = { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 500 };

interface Lease {
  spec: { holderIdentity?: string; renewTime?: string; acquireTime?: string; leaseTransitions?: number };
}

Deno.test("leader election on a Lease against a real API server", async (t) => {
  const cluster = await Cluster.start();
  const clients: ClusterClient[] = [];
  const electors: LeaderElector[] = [];
  const elector = async (name: string, identity: string, timing: Partial<LeaderElectionTiming> = quick) => {
    const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
    clients.push(client);
    const e = new LeaderElector(client, { namespace: "default", name, identity, ...timing });
    electors.push(e);
    return e;
  };
  /** Every change of leadership of the given electors, in order. */
  const transitions = (...es: LeaderElector[]) => {
    const seen: string[] = [];
    for (const e of es) e.onChange((leading) => seen.push(`${e.identity}:${leading ? "leads" : "stopped"}`));
    return seen;
  };
  /** `a` leads the Lease `name`, `b` has seen it and stands by. */
  const leaderAndStandby = async (name: string, timing: Partial<LeaderElectionTiming> = quick) => {
    const [a, b] = [await elector(name, "a", timing), await elector(name, "b", timing)];
    const seen = transitions(a, b);
    a.start();
    await eventually("a leads", () => a.leading);
    b.start();
    await eventually("b sees a as the holder", () => b.holder === "a");
    return { a, b, seen };
  };
  const lease = (name: string) => cluster.get(leases, "default", name) as Promise<Lease | null>;
  try {
    await t.step("the first acquires an absent Lease and renews it; the second stands by", async () => {
      const a = await elector("renew", "a");
      const b = await elector("renew", "b");
      const seen = transitions(a, b);
      a.start();
      await eventually("a leads", () => a.leading);
      assert.ok(a.term && !a.term.aborted);
      b.start();
      await eventually("b sees a as the holder", () => b.holder === "a");
      const first = (await lease("renew"))!.spec;
      assert.equal(first.holderIdentity, "a");
      assert.equal(first.leaseTransitions, 0);
      // Two renewals later, still a's term, b never led.
      let renewals = 0;
      let last = first.renewTime;
      await eventually("two renewals", async () => {
        const now = (await lease("renew"))!.spec.renewTime;
        if (now !== last) [renewals, last] = [renewals + 1, now];
        return renewals >= 2;
      });
      assert.equal((await lease("renew"))!.spec.acquireTime, first.acquireTime);
      assert.deepEqual(seen, ["a:leads"]);
      assert.ok(!b.leading);
      assert.match(await registry.getSingleMetricAsString("ingress_controller_leader"), /ingress_controller_leader 1/);
    });

    await t.step(
      "a leader that cannot renew ends its term at the renew deadline; the standby takes over after expiry",
      async () => {
        const { a, b, seen } = await leaderAndStandby("expiry");
        const term = a.term!;
        const writer = gatedWriter(a.client, a);
        // a's API connection breaks: it can renew no more (a crash without release, seen from b).
        a.client.close();
        await eventually("a's term ended", () => term.aborted);
        assert.match(String(term.reason), /no renew succeeded within the renew deadline \(4000 ms\)/);
        await eventually("b leads", () => b.leading, 15_000);
        // a stopped before b started: never two terms at once.
        assert.deepEqual(seen, ["a:leads", "a:stopped", "b:leads"]);
        const spec = (await lease("expiry"))!.spec;
        assert.equal(spec.holderIdentity, "b");
        assert.equal(spec.leaseTransitions, 1);
        await assert.rejects(
          () => writer.request("POST", collectionPath(resources.configMaps, "default"), { body: {} }),
          /not the leader: POST/,
        );
      },
    );

    await t.step("a leader that stops hands the Lease over at once (no wait for expiry)", async () => {
      // A minute-long lease: without the release, b could not lead within eventually's 30 s.
      const long = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 250 };
      const { a, b, seen } = await leaderAndStandby("release", long);
      const term = a.term!;
      await a.stop();
      assert.ok(term.aborted, "the term ends before the Lease is handed back");
      await eventually("b leads", () => b.leading);
      assert.deepEqual(seen, ["a:leads", "a:stopped", "b:leads"]);
      assert.equal((await lease("release"))!.spec.holderIdentity, "b");
    });

    await t.step("two electors starting at once: exactly one wins, the other gets a 409", async () => {
      const conflicts = async () => {
        const text = await registry.getSingleMetricAsString("ingress_controller_cluster_api_requests_total");
        return [...text.matchAll(/verb="(?:create|update)",code="409"} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
      };
      const before = await conflicts();
      for (const round of [1, 2, 3]) {
        const name = `race-${round}`;
        const [a, b] = [await elector(name, "a"), await elector(name, "b")];
        a.start();
        b.start();
        await eventually("both agree on a holder", () => a.holder !== "" && a.holder === b.holder);
        assert.equal([a, b].filter((e) => e.leading).length, 1, `round ${round}: one leader`);
        assert.equal((await lease(name))!.spec.holderIdentity, [a, b].find((e) => e.leading)!.identity);
        await Promise.all([a.stop(), b.stop()]);
      }
      assert.ok(await conflicts() > before, "the losing create or update was refused with 409");
    });

    await t.step("a write in flight when the term ends is never sent", async () => {
      const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
      clients.push(client);
      const term = new AbortController();
      const leadership: Leadership = { leading: true, term: term.signal, onChange: () => () => {} };
      const writer = gatedWriter(client, leadership);
      const body = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "late-write", namespace: "default" } };
      const write = writer.request("POST", collectionPath(resources.configMaps, "default"), { body });
      term.abort(new Error("leadership lost: test"));
      await assert.rejects(write, /leadership lost: test/);
      assert.equal(await cluster.get(resources.configMaps, "default", "late-write"), null);
    });

    await t.step("names: the Lease follows the controller id; the identity is the pod name and a suffix", () => {
      assert.equal(leaseName("default"), "ingress-controller-leader-default");
      assert.equal(leaseName("edge.example"), "ingress-controller-leader-edge.example");
      assert.match(leaseName("Edge_Class"), /^ingress-controller-leader-[0-9a-f]{16}$/);
      assert.match(holderIdentity("pod-7"), /^pod-7_[0-9a-f]{8}$/);
      assert.notEqual(holderIdentity("pod-7"), holderIdentity("pod-7"));
      assert.throws(
        () => new LeaderElector(clients[0], { namespace: "x", name: "y", identity: "z", renewDeadlineMs: 20_000 }),
        /renew deadline \(20000 ms\) < lease duration \(15000 ms\)/,
      );
    });
  } finally {
    await Promise.all(electors.map((e) => e.stop()));
    for (const c of clients) c.close();
    await cluster.stop();
  }
});
