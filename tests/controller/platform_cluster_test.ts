/**
 * The platform options against the real kube-apiserver. The proxy Service's type and annotations
 * follow --cloud-provider, also when it changes. ServiceMonitors: discovered through the API group the options
 * name (with --metrics-crd-kinds renaming kind and plural), one per handled ingress owned by it and
 * removed with it; nothing when the cluster does not serve the resource.
 */
import assert from "node:assert/strict";
import { ClusterClient, isStatus } from "../../lib/cluster/client.ts";
import type { ResourceType } from "../../lib/cluster/resources.ts";
import { discoverServiceMonitor } from "../../lib/controller/monitoring.ts";
import { exporterPort, proxyName, statsServiceName } from "../../lib/controller/objects.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj as ingressObj,
  eventually,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";

const crds: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};

/** A minimal structural CRD: any spec is kept. */
function crdObj(group: string, kind: string, plural: string) {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [{
        name: "v1",
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
      }],
    },
  };
}

const metricsPorts = (svc: { spec: { ports: { name: string; port: number }[] } }) =>
  svc.spec.ports.filter((p) => p.name === "metrics").map((p) => p.port);
const ports = (svc: { spec: { ports: { name: string; port: number }[] } }) =>
  svc.spec.ports.map((p) => [p.name, p.port]);

Deno.test("cloud exposure and ServiceMonitors against a real API server", async (t) => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("monitoring");
    await cluster.apply(resources.services, serviceObj(ns, "svc"));

    await t.step("without the CRD nothing is created; metrics only on the stats Service", async () => {
      await assert.rejects(cluster.client.request("GET", "/apis/monitoring.coreos.com/v1"), (e) => isStatus(e, 404));
      await cluster.apply(resources.ingresses, ingressObj(ns, "plain", [{ host: "plain.example", service: "svc" }]));
      const ctl = await controller(cluster, { validateProxyConfig: false, controllerId: "no-crd" });
      try {
        const svc = await eventually(
          "the proxy Service",
          () => cluster.get(resources.services, ns, proxyName("plain")),
        );
        await ctl.idle();
        assert.deepEqual(ports(svc as never), [["http", 80], ["https", 443]]);
        const stats = (await cluster.get(resources.services, ns, statsServiceName("plain")))!;
        assert.equal(stats.spec.type, "ClusterIP");
        assert.deepEqual(ports(stats as never), [["metrics", exporterPort]]);
        assert.equal(ctl.stats().reconciles > 0, true);
      } finally {
        await ctl.stop();
      }
      await cluster.remove(resources.ingresses, ns, "plain");
    });

    await t.step("the proxy Service follows --cloud-provider", async () => {
      await cluster.apply(resources.ingresses, ingressObj(ns, "edge", [{ host: "edge.example", service: "svc" }]));
      const name = proxyName("edge");
      const awsAnnotation = "service.beta.kubernetes.io/aws-load-balancer-backend-protocol";
      for (
        const [provider, type, annotation] of [["aws", "LoadBalancer", "tcp"], ["baremetal", "NodePort", undefined]]
      ) {
        const ctl = await controller(cluster, {
          validateProxyConfig: false,
          controllerId: "cloud",
          cloudProvider: provider,
        });
        try {
          const svc = await eventually(`a ${type} Service for ${provider}`, async () => {
            const s = await cluster.get(resources.services, ns, name);
            return s && s.spec.type === type && s.metadata.annotations?.[awsAnnotation] === annotation ? s : null;
          });
          // Both kinds get node ports from the API server: the proxy is reachable on every node.
          assert.ok(svc.spec.ports.every((p: { nodePort?: number }) => (p.nodePort ?? 0) > 0));
          // ... on http and https only: the stats Service stays ClusterIP without node ports.
          assert.deepEqual(ports(svc as never), [["http", 80], ["https", 443]]);
          // The two Services are separate writes: wait for the stats one instead of assuming it came first.
          const stats = await eventually(
            "the stats Service",
            () => cluster.get(resources.services, ns, statsServiceName("edge")),
          );
          assert.equal(stats.spec.type, "ClusterIP");
          assert.equal(stats.metadata.annotations?.[awsAnnotation], undefined);
          assert.ok(stats.spec.ports.every((p: { nodePort?: number }) => p.nodePort === undefined));
        } finally {
          await ctl.stop();
        }
      }
      await cluster.remove(resources.ingresses, ns, "edge");
    });

    const group = "metrics.example.test";
    const scrapers: ResourceType = { group, version: "v1", plural: "scrapers", kind: "Scraper", namespaced: true };
    await cluster.apply(crds, crdObj(group, "Scraper", "scrapers"));
    await eventually("the CRD is served and listed", async () => {
      const list = await cluster.client.request("GET", `/apis/${group}/v1`);
      if (!list.resources?.some((r: { name: string }) => r.name === "scrapers")) return false;
      return Array.isArray((await cluster.client.request("GET", `/apis/${group}/v1/scrapers`)).items);
    });

    await t.step("discovery: a resource the controller may not list is not used", async () => {
      const kinds = "servicemonitor=Scraper:scrapers";
      assert.deepEqual(await discoverServiceMonitor(cluster.client, group, kinds), scrapers);
      const limited = await ClusterClient.create({
        kubeconfig: await cluster.cp.kubeConfig("no-rights", []),
        qps: 0,
        burst: 1,
      });
      try {
        assert.equal(await discoverServiceMonitor(limited, group, kinds), null);
      } finally {
        limited.close();
      }
    });

    await t.step("with the CRD under the renamed kind, each handled ingress owns one, removed with it", async (t2) => {
      await cluster.apply(resources.ingresses, ingressObj(ns, "web", [{ host: "web.example", service: "svc" }]));
      const ctl = await controller(cluster, {
        validateProxyConfig: false,
        controllerId: "with-crd",
        metricsCrdApiGroup: group,
        metricsCrdKinds: "prometheus=Prom:proms,servicemonitor=Scraper:scrapers",
      });
      try {
        const name = proxyName("web");
        const sm = await eventually("the Scraper", () => cluster.get(scrapers, ns, name));
        const ing = await cluster.get(resources.ingresses, ns, "web");
        assert.equal(sm.apiVersion, `${group}/v1`);
        assert.equal(sm.kind, "Scraper");
        assert.deepEqual(
          sm.metadata.ownerReferences?.map((o) => [o.kind, o.uid]),
          [["Ingress", ing!.metadata.uid]],
        );
        assert.deepEqual(sm.spec.endpoints, [{ port: "metrics", path: "/metrics", scheme: "http" }]);
        assert.deepEqual(sm.spec.namespaceSelector, { matchNames: [ns] });
        const svc = await eventually("the proxy Service", () => cluster.get(resources.services, ns, name));
        assert.deepEqual(metricsPorts(svc as never), []);
        const statsName = statsServiceName("web");
        const stats = await eventually("the stats Service", () => cluster.get(resources.services, ns, statsName));
        assert.deepEqual(metricsPorts(stats as never), [exporterPort]);
        // The ServiceMonitor's selector picks exactly the stats Service, never the public one.
        const selector = Object.entries(sm.spec.selector.matchLabels as Record<string, string>)
          .map(([k, v]) => `${k}=${v}`).join(",");
        const picked = await cluster.list(resources.services, ns, selector);
        assert.deepEqual(picked.map((s) => s.metadata.name), [statsName]);

        await t2.step("a deleted ServiceMonitor is recreated", async () => {
          await cluster.remove(scrapers, ns, name);
          await eventually("the Scraper again", () => cluster.get(scrapers, ns, name));
        });

        await cluster.remove(resources.ingresses, ns, "web");
        await eventually("the Scraper removed", async () => (await cluster.get(scrapers, ns, name)) === null);
        await eventually("the Service removed", async () => (await cluster.get(resources.services, ns, name)) === null);
        await eventually(
          "the stats Service removed",
          async () => (await cluster.get(resources.services, ns, statsName)) === null,
        );
      } finally {
        await ctl.stop();
      }
    });

    await t.step("the group served but not the kind the options name: nothing is created", async () => {
      await cluster.apply(resources.ingresses, ingressObj(ns, "other", [{ host: "other.example", service: "svc" }]));
      const ctl = await controller(cluster, {
        validateProxyConfig: false,
        controllerId: "default-kinds",
        metricsCrdApiGroup: group,
      });
      try {
        const svc = await eventually(
          "the proxy Service",
          () => cluster.get(resources.services, ns, proxyName("other")),
        );
        await ctl.idle();
        assert.deepEqual(metricsPorts(svc as never), []);
        assert.deepEqual(await cluster.list(scrapers, ns), []);
      } finally {
        await ctl.stop();
      }
    });
  } finally {
    await cluster.stop();
  }
});
