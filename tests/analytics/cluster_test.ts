/**
 * Analytics against the real kube-apiserver (lib/localenv): the installation id from the kube-system
 * Namespace UID, the server's gitVersion, counts through lib/cluster's client, and no object name,
 * namespace, host or address in any body. Driven through the `run` part with parsed flags.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { startAnalytics } from "../../lib/analytics/analytics.ts";
import type { AnalyticsEvent } from "../../lib/analytics/event.ts";
import { runAnalytics } from "../../lib/analytics/run_part.ts";
import { loadKubeConfig } from "../../lib/cluster/access.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { Cluster, ingressObj, resources } from "../../lib/dev/localenv/harness.ts";
import { startReceiver } from "./receiver.ts";

const distinctiveName = "zq-distinctive-ingress-4711";
const namespace = "tenant-analytics-ns";
const privateHost = "very-private.tenant-analytics.example";

Deno.test("analytics against a real API server", async (t) => {
  const cluster = await Cluster.start();
  await using rx = startReceiver();
  try {
    await cluster.namespace(namespace);
    await cluster.apply(
      resources.ingresses,
      ingressObj(namespace, distinctiveName, [{ host: privateHost, service: "svc" }], {
        tls: [{ hosts: [privateHost], secretName: "tenant-tls" }],
      }),
    );
    await cluster.apply(
      resources.ingresses,
      ingressObj(namespace, "other-class-ingress", [{ host: privateHost, service: "svc" }], { className: "other" }),
    );
    await cluster.apply(
      resources.ingresses,
      ingressObj("default", "default-ns-ingress", [{ service: "svc" }], { className: "other" }),
    );
    const kubeSystem = await cluster.get(resources.namespaces, null, "kube-system");
    const uid = kubeSystem!.metadata.uid!;
    const gitVersion: string = (await cluster.client.request("GET", "/version")).gitVersion;
    const server = new URL(cluster.client.server).host;

    await t.step("the run part with parsed flags sends started and stopped with cluster facts", async () => {
      Deno.env.set("INGRESS_CONTROLLER_ANALYTICS_URL", rx.url);
      const stop = new AbortController();
      let part: Promise<void>;
      try {
        const config = parseRunFlags("A", ["--kubeconfig", cluster.kubeconfig, "--rbac"]);
        part = runAnalytics({ config, kubeConfig: loadKubeConfig(cluster.kubeconfig), signal: stop.signal });
        await rx.waitFor(1);
      } finally {
        Deno.env.delete("INGRESS_CONTROLLER_ANALYTICS_URL");
        stop.abort();
      }
      await part;
      const events = rx.received.map((r) => r.json as AnalyticsEvent);
      assert.deepEqual(events.map((e) => e.event), ["controller_started", "controller_stopped"]);
      const expectedId = createHash("sha256")
        .update(`ingress-controller/analytics/installation-id/v1\n${uid}`)
        .digest("hex");
      for (const e of events) {
        assert.equal(e.installationId, expectedId);
        assert.equal(e.kubernetesVersion, gitVersion);
        assert.match(e.kubernetesVersion!, /^v1\.\d+\.\d+/);
        // No --ingress-class: all three ingresses; one distinct TLS host.
        assert.deepEqual(e.counts, { ingresses: 3, proxies: 3, tlsHosts: 1 });
        assert.deepEqual(e.features, { audit: false, rbac: true, validateProxyConfig: true, customTemplates: false });
        assert.equal(e.release, "A");
      }
      for (const r of rx.received) {
        for (const leak of [distinctiveName, namespace, privateHost, "tenant", uid, server, "kube-system"]) {
          assert.ok(!r.body.includes(leak), `body leaks ${leak}: ${r.body}`);
        }
      }
    });

    await t.step("counts respect --ingress-class and the operator namespace, as the controller does", async () => {
      const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
      try {
        const before = rx.received.length;
        const h = await startAnalytics(
          {
            endpoint: rx.url,
            ingressClass: "other",
            restrictToOperatorNamespace: true,
            operatorNamespace: namespace,
          },
          { client },
        );
        try {
          await h.started;
        } finally {
          await h.stop();
        }
        const started = rx.received[before].json as AnalyticsEvent;
        assert.deepEqual(started.counts, { ingresses: 1, proxies: 1, tlsHosts: 0 });
      } finally {
        client.close();
      }
    });

    await t.step("an ingress without a class counts under --ingress-class when that class is the default", async () => {
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "other", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
        spec: { controller: "example.com/ingress-controller" },
      });
      const client = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
      try {
        const before = rx.received.length;
        const h = await startAnalytics({ endpoint: rx.url, ingressClass: "other" }, { client });
        try {
          await h.started;
        } finally {
          await h.stop();
        }
        const started = rx.received[before].json as AnalyticsEvent;
        assert.deepEqual(started.counts, { ingresses: 3, proxies: 3, tlsHosts: 1 });
      } finally {
        client.close();
      }
    });
  } finally {
    await cluster.stop();
  }
});
