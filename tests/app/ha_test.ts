/**
 * Controller HA with two real `ingress-controller run` processes against the real kube-apiserver,
 * with the default election timings (15 s lease): one leads and writes, the other stands by
 * (Ready, writing nothing); after `kill -9` of the leader the standby takes over once the Lease
 * expired, never earlier, and serves the next Ingress change; on SIGTERM it hands the Lease back.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { leaseName, leases } from "../../lib/controller/leader.ts";
import { leaderElectionDefaults } from "../../lib/controller/leader_timing.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import { Cluster, dedicatedIngressObj, eventually, resources, serviceObj } from "../../lib/dev/localenv/harness.ts";
import { freePort } from "../../lib/dev/localenv/mod.ts";
import { request } from "../serving/helpers.ts";
import { collect, spawnRun } from "./spawn.ts";

interface Replica {
  name: string;
  port: number;
  child: Deno.ChildProcess;
  log: ReturnType<typeof collect>;
}

/** One sample of the process's metrics: `name{labels} value` summed over the matching lines. */
async function metric(r: Replica, name: string, labels = ""): Promise<number> {
  const res = await request({ port: r.port, path: "/metrics" });
  assert.equal(res.status, 200, res.body);
  let sum = 0;
  for (const line of res.body.split("\n")) {
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name && (m[2] ?? "").includes(labels)) sum += Number(m[3]);
  }
  return sum;
}

Deno.test({
  name: "run: two replicas, one writer; kill -9 of the leader: the standby takes over after the lease and serves",
  fn: async () => {
    const cluster = await Cluster.start();
    const dir = mkdtempSync(join(tmpdir(), "app-ha-"));
    const replicas: Replica[] = [];
    const start = (name: string): Replica => {
      const port = freePort();
      const child = spawnRun([
        `--kubeconfig=${cluster.kubeconfig}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${port}`,
        `--cert-dir=${join(dir, name)}`,
        `--authentication-kubeconfig=${cluster.kubeconfig}`,
        `--authorization-kubeconfig=${cluster.kubeconfig}`,
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        "--enable-analytics=false",
        "--validate-proxy-config=false",
      ], { POD_NAME: name });
      const r = { name, port, child, log: collect(child.stderr) };
      replicas.push(r);
      return r;
    };
    // Fail-safe: processes that do not end are killed and the test fails on their exit status.
    const failSafe = setTimeout(() => replicas.forEach((r) => r.child.kill("SIGKILL")), 180_000);
    try {
      const ns = await cluster.namespace("shop");
      await cluster.apply(resources.services, serviceObj(ns, "svc"));
      const lease = async () => (await cluster.get(leases, "default", leaseName("default")))!.spec;

      const a = start("replica-a");
      await a.log.waitFor(/INFO controller caches synced/);
      await eventually("replica-a leads", async () => await metric(a, "ingress_controller_leader") === 1);
      assert.match(
        a.log.text,
        /INFO leader election: became the leader lease="default\/ingress-controller-leader-default"/,
      );
      const b = start("replica-b");
      await b.log.waitFor(/INFO controller caches synced/);
      await b.log.waitFor(/INFO leader election: the Lease has a new holder .* holder="replica-a_[0-9a-f]{8}"/);

      await cluster.apply(
        resources.ingresses,
        dedicatedIngressObj(ns, "web", [{ host: "one.example", service: "svc" }]),
      );
      const name = proxyName("web");
      const served = (host: string) =>
        eventually(
          `the ConfigMap serving ${host}`,
          async () =>
            Object.values((await cluster.get(resources.configMaps, ns, name))?.data ?? {}).join("\n").includes(host),
        );
      await served("one.example");
      await eventually("the Ingress status", async () => {
        const ing = await cluster.get(resources.ingresses, ns, "web");
        return (ing?.status?.loadBalancer?.ingress ?? []).length > 0;
      });
      assert.equal(await metric(a, "ingress_controller_leader"), 1);
      assert.ok(await metric(a, "ingress_controller_object_writes_total") > 0);
      // The standby: Ready, warm, and no write of any kind (objects, status, Events).
      assert.equal(await metric(b, "ingress_controller_leader"), 0);
      assert.equal(await metric(b, "ingress_controller_object_writes_total"), 0);
      assert.equal(await metric(b, "ingress_controller_reconciles_total"), 0);
      assert.equal(await metric(b, "ingress_controller_cluster_api_requests_total", 'verb="create"'), 0);
      assert.equal(await metric(b, "ingress_controller_cluster_api_requests_total", 'verb="apply"'), 0);
      assert.equal(await metric(b, "ingress_controller_cluster_api_requests_total", 'verb="patch"'), 0);
      assert.equal(await metric(b, "ingress_controller_cluster_api_requests_total", 'verb="delete"'), 0);
      const ready = await request({ port: b.port, path: "/readyz" });
      assert.equal(ready.status, 200, ready.body);

      a.child.kill("SIGKILL");
      await a.child.status;
      const killedAt = performance.now();
      const last = await lease();
      assert.match(last.holderIdentity, /^replica-a_/);
      await b.log.waitFor(/INFO leader election: became the leader/);
      const takeoverMs = performance.now() - killedAt;
      const now = await lease();
      assert.match(now.holderIdentity, /^replica-b_/);
      assert.equal(now.leaseTransitions, 1);
      // Never before the dead leader's lease ran out (both clocks are this machine's).
      const waitedMs = Date.parse(now.acquireTime) - Date.parse(last.renewTime);
      assert.ok(waitedMs >= leaderElectionDefaults.leaseDurationMs, `took over ${waitedMs} ms after the last renew`);
      console.log(`takeover: ${Math.round(takeoverMs)} ms after kill -9; ${waitedMs} ms after the last renew`);

      await cluster.apply(
        resources.ingresses,
        dedicatedIngressObj(ns, "web", [{ host: "two.example", service: "svc" }]),
      );
      await served("two.example");
      assert.equal(await metric(b, "ingress_controller_leader"), 1);
      assert.ok(await metric(b, "ingress_controller_object_writes_total") > 0);

      b.child.kill("SIGTERM");
      const status = await b.child.status;
      await b.log.done;
      assert.equal(status.code, 0, b.log.text);
      assert.match(b.log.text, /INFO leader election: released the Lease/);
      assert.equal((await lease()).holderIdentity ?? "", "", "the Lease is handed back on SIGTERM");
    } finally {
      clearTimeout(failSafe);
      for (const r of replicas) {
        try {
          r.child.kill("SIGKILL");
        } catch {
          // already exited
        }
        await r.child.status;
        await r.log.done.catch(() => {});
      }
      rmSync(dir, { recursive: true, force: true });
      await cluster.stop();
    }
  },
});
