/** The platform's effect on the proxy objects, with plain objects (no cluster). */
import assert from "node:assert/strict";
import { desiredObjects, exporterPort, ownedResources, statsServiceName } from "../../lib/controller/objects.ts";
import { defaultPlatform, type Platform, staticPlatform } from "../../lib/controller/platform.ts";
import { serviceMonitorNames } from "../../lib/controller/monitoring.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { resources, type ResourceType } from "../../lib/cluster/resources.ts";

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
};
const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
const aksServer = new URL("https://aks-shop-dns-1a2b3c.hcp.westeurope.azmk8s.io:443");

/** The objects by kind; the stats Service as `StatsService`, the public one as `Service`. */
const byKind = (platform: Platform, settings = defaultSettings) =>
  Object.fromEntries(
    desiredObjects(ing, data, [], settings, platform).map((d) => [
      d.object.metadata.name === statsServiceName("web") ? "StatsService" : d.object.kind,
      d.object,
    ]),
  );

Deno.test("platform: the Service type and annotations follow --cloud-provider", () => {
  const aws = byKind(staticPlatform({ ...defaultSettings, cloudProvider: "aws" }, aksServer));
  assert.equal(aws.Service.spec.type, "LoadBalancer");
  assert.equal(
    aws.Service.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-backend-protocol"],
    "tcp",
  );
  assert.equal(aws.Service.metadata.annotations["ingress-controller.io/ingress"], "shop/web");
  const metal = byKind(staticPlatform({ ...defaultSettings, cloudProvider: "baremetal" }, aksServer));
  assert.equal(metal.Service.spec.type, "NodePort");
  assert.deepEqual(Object.keys(metal.Service.metadata.annotations).sort(), [
    "ingress-controller.io/hash",
    "ingress-controller.io/ingress",
  ]);
  const unset = byKind(defaultPlatform);
  assert.equal(unset.Service.spec.type, "LoadBalancer");
  // The stats Service is never exposed, whatever the provider, and gets none of its annotations.
  for (const o of [aws, metal, unset]) {
    assert.equal(o.StatsService.spec.type, "ClusterIP");
    assert.deepEqual(Object.keys(o.StatsService.metadata.annotations).sort(), [
      "ingress-controller.io/hash",
      "ingress-controller.io/ingress",
    ]);
    assert.deepEqual(o.Service.spec.ports.map((p: { port: number }) => p.port), [80, 443]);
  }
  assert.notEqual(
    aws.Service.metadata.annotations["ingress-controller.io/hash"],
    unset.Service.metadata.annotations["ingress-controller.io/hash"],
    "a change of exposure is a change of the Service",
  );
});

Deno.test("platform: on aks the proxy containers get the API server's FQDN", () => {
  const aks = byKind(staticPlatform({ ...defaultSettings, cloudProvider: "aks" }, aksServer));
  for (const c of aks.Deployment.spec.template.spec.containers) {
    const env = Object.fromEntries((c.env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value]));
    assert.equal(env.KUBERNETES_SERVICE_HOST, "aks-shop-dns-1a2b3c.hcp.westeurope.azmk8s.io", c.name);
    assert.equal(env.KUBERNETES_SERVICE_PORT, "443", c.name);
  }
  assert.equal(aks.Deployment.spec.template.spec.containers[0].env[0].name, "POD_NAMESPACE", "kept");
  const off = byKind(
    staticPlatform({ ...defaultSettings, cloudProvider: "aks", useApiserverFqdnForManagedCluster: false }, aksServer),
  );
  const gke = byKind(staticPlatform({ ...defaultSettings, cloudProvider: "gke" }, aksServer));
  for (const o of [off, gke]) {
    const [proxy, exporter] = o.Deployment.spec.template.spec.containers;
    assert.deepEqual(proxy.env.map((e: { name: string }) => e.name), ["POD_NAMESPACE", "DENO_V8_FLAGS"]);
    assert.equal(exporter.env, undefined);
  }
});

Deno.test("platform: a ServiceMonitor resource adds the object, which selects the stats Service", () => {
  const sm: ResourceType = {
    group: "metrics.example.com",
    version: "v1",
    plural: "scrapers",
    kind: "Scraper",
    namespaced: true,
  };
  const withSm = byKind({ ...defaultPlatform, serviceMonitor: sm });
  const monitor = withSm.Scraper;
  assert.equal(monitor.apiVersion, "metrics.example.com/v1");
  assert.equal(monitor.metadata.name, "web-haproxy");
  assert.equal(monitor.metadata.ownerReferences[0].uid, "u-1");
  const selects = (labels: Record<string, string>) =>
    Object.entries(monitor.spec.selector.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);
  assert.equal(selects(withSm.StatsService.metadata.labels), true, "the stats Service");
  assert.equal(selects(withSm.Service.metadata.labels), false, "never the public Service");
  assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: ["shop"] });
  assert.deepEqual(monitor.spec.endpoints, [{ port: "metrics", path: "/metrics", scheme: "http" }]);
  assert.ok(!withSm.Service.spec.ports.some((p: { name: string }) => p.name === "metrics"));
  const metrics = withSm.StatsService.spec.ports.find((p: { name: string }) => p.name === "metrics");
  assert.deepEqual(metrics, { name: "metrics", port: exporterPort, targetPort: "metrics", protocol: "TCP" });
  const exporter = withSm.Deployment.spec.template.spec.containers[1];
  assert.ok(exporter.ports.some((p: { name: string }) => p.name === "metrics"), "the Service's port exists in the pod");
  const without = byKind(defaultPlatform);
  assert.equal(without.Scraper, undefined);
  assert.ok(!without.Service.spec.ports.some((p: { name: string }) => p.name === "metrics"));
  assert.deepEqual(without.StatsService.spec, withSm.StatsService.spec, "metrics on the stats Service either way");
  assert.deepEqual(ownedResources(false, sm)[0], sm, "deleted with the other owned objects");
  assert.deepEqual(ownedResources(false), [
    resources.podDisruptionBudgets,
    resources.deployments,
    resources.services,
    resources.configMaps,
  ]);
});

Deno.test("platform: --metrics-crd-kinds renames the ServiceMonitor", () => {
  assert.deepEqual(serviceMonitorNames(null), { kind: "ServiceMonitor", plural: "servicemonitors" });
  assert.deepEqual(serviceMonitorNames("prometheus=Prom:proms"), { kind: "ServiceMonitor", plural: "servicemonitors" });
  assert.deepEqual(serviceMonitorNames("prometheus=Prom:proms,servicemonitor=Scraper:scrapers"), {
    kind: "Scraper",
    plural: "scrapers",
  });
});
