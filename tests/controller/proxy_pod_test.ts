import assert from "node:assert/strict";
import { desiredObjects, ownedResources } from "../../lib/controller/objects.ts";
import {
  containerHttpPort,
  containerHttpsPort,
  defaultExporterResources,
  defaultProxyResources,
  healthPort,
  proxyDeploymentSpec,
  proxyUid,
  shutdownDrainSeconds,
  shutdownTimeoutSeconds,
} from "../../lib/controller/proxy_pod.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { resources } from "../../lib/cluster/resources.ts";
import { parseProxyFlags, type ProxySettings } from "../../lib/flags/proxy_settings.ts";

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "web", namespace: "shop", uid: "u-1" },
};
const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
const selector = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": "web-haproxy" };
const input = {
  name: "web-haproxy",
  namespace: "shop",
  labels: { ...selector, "app.kubernetes.io/managed-by": "ingress-controller" },
  selector,
  serviceAccount: null,
  env: [],
  settings: defaultSettings,
};

type Container = Record<string, any>;
const containers = (spec: Record<string, any>) => {
  const list = spec.template.spec.containers as Container[];
  return { proxy: list.find((c) => c.name === "haproxy")!, exporter: list.find((c) => c.name === "exporter")! };
};

Deno.test("proxy pod: unprivileged ports behind the Service's 80/443, probes on the proxy's health port", () => {
  const objs = desiredObjects(ing, data, [], defaultSettings);
  const deployment = objs.find((d) => d.object.kind === "Deployment")!.object;
  const service = objs.find((d) => d.object.kind === "Service")!.object;
  const { proxy } = containers(deployment.spec);
  const settings = parseProxyFlags(proxy.args.slice(1)) as ProxySettings;
  assert.equal(settings.httpPort, containerHttpPort);
  assert.equal(settings.httpsPort, containerHttpsPort);
  assert.equal(settings.healthPort, healthPort);
  assert.ok(containerHttpPort >= 1024 && containerHttpsPort >= 1024, "no privileged port: no capability needed");
  // The Service's 80/443 reach the container ports by name.
  const named = new Map((proxy.ports as { name: string; containerPort: number }[]).map((p) => [p.name, p]));
  for (const p of service.spec.ports as { port: number; targetPort: string }[]) {
    assert.equal(named.get(p.targetPort)?.containerPort, p.port === 80 ? containerHttpPort : containerHttpsPort);
  }
  assert.equal(named.get("health")?.containerPort, healthPort);
  assert.deepEqual(proxy.readinessProbe.httpGet, { path: "/readyz", port: "health", scheme: "HTTP" });
  assert.deepEqual(proxy.livenessProbe.httpGet, { path: "/livez", port: "health", scheme: "HTTP" });
  assert.deepEqual(proxy.startupProbe.httpGet, { path: "/livez", port: "health", scheme: "HTTP" });
});

Deno.test("proxy pod: restricted security context with a numeric non-root user; writable only its emptyDirs", () => {
  const spec = proxyDeploymentSpec(input) as Record<string, any>;
  const pod = spec.template.spec;
  assert.deepEqual(pod.securityContext, {
    runAsNonRoot: true,
    runAsUser: proxyUid,
    runAsGroup: proxyUid,
    fsGroup: proxyUid,
    seccompProfile: { type: "RuntimeDefault" },
  });
  assert.ok(proxyUid > 0);
  const volumes = new Map((pod.volumes as { name: string; emptyDir?: unknown }[]).map((v) => [v.name, v]));
  for (const c of Object.values(containers(spec))) {
    assert.deepEqual(c.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    }, c.name);
    assert.ok(c.volumeMounts.some((m: { mountPath: string }) => m.mountPath === "/tmp"), `${c.name}: /tmp`);
    for (const m of c.volumeMounts) assert.ok(volumes.get(m.name)?.emptyDir, `${c.name}: ${m.name} is an emptyDir`);
  }
  const { proxy } = containers(spec);
  const workDir = (parseProxyFlags(proxy.args.slice(1)) as ProxySettings).workDir;
  assert.ok(proxy.volumeMounts.some((m: { mountPath: string }) => m.mountPath === workDir), "the work dir");
});

Deno.test("proxy pod: rolling updates add before they remove; the grace period covers drain and soft stop", () => {
  const spec = proxyDeploymentSpec(input) as Record<string, any>;
  assert.equal(spec.replicas, 1);
  assert.deepEqual(spec.strategy, { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
  const { proxy } = containers(spec);
  const settings = parseProxyFlags(proxy.args.slice(1)) as ProxySettings;
  assert.equal(settings.shutdownDrainMs, shutdownDrainSeconds * 1000);
  assert.equal(settings.shutdownTimeoutMs, shutdownTimeoutSeconds * 1000);
  assert.ok(
    spec.template.spec.terminationGracePeriodSeconds * 1000 > settings.shutdownDrainMs! + settings.shutdownTimeoutMs!,
    "the kubelet's SIGKILL comes after the drain and the soft stop's bound",
  );
  // The readiness probe notices a failing /readyz within the drain.
  const r = proxy.readinessProbe;
  assert.ok(r.periodSeconds * r.failureThreshold < shutdownDrainSeconds);
  assert.deepEqual(spec.template.spec.topologySpreadConstraints, [{
    maxSkew: 1,
    topologyKey: "kubernetes.io/hostname",
    whenUnsatisfiable: "ScheduleAnyway",
    labelSelector: { matchLabels: selector },
    matchLabelKeys: ["pod-template-hash"],
  }]);
});

Deno.test("proxy pod: replicas and resources are inputs with measured defaults", () => {
  const plain = containers(proxyDeploymentSpec(input) as Record<string, any>);
  assert.deepEqual(plain.proxy.resources, { requests: defaultProxyResources.requests });
  assert.deepEqual(plain.exporter.resources, { requests: defaultExporterResources.requests });
  const big = proxyDeploymentSpec({
    ...input,
    replicas: 3,
    proxyResources: { requests: { cpu: "1", memory: "512Mi" }, limits: { memory: "1Gi" } },
  }) as Record<string, any>;
  assert.equal(big.replicas, 3);
  assert.deepEqual(containers(big).proxy.resources, {
    requests: { cpu: "1", memory: "512Mi" },
    limits: { memory: "1Gi" },
  });
});

Deno.test("proxy pod: a PodDisruptionBudget owned by the ingress selects exactly the proxy pods", () => {
  const objs = desiredObjects(ing, data, [], defaultSettings);
  const pdb = objs.find((d) => d.object.kind === "PodDisruptionBudget")!;
  assert.equal(pdb.resource, resources.podDisruptionBudgets);
  assert.equal(pdb.object.apiVersion, "policy/v1");
  assert.equal(pdb.object.metadata.name, "web-haproxy");
  assert.equal(pdb.object.metadata.ownerReferences?.[0]?.uid, "u-1");
  assert.equal(pdb.object.metadata.labels?.["app.kubernetes.io/managed-by"], "ingress-controller");
  const deployment = objs.find((d) => d.object.kind === "Deployment")!.object;
  assert.deepEqual(pdb.object.spec.selector, deployment.spec.selector);
  assert.deepEqual(pdb.object.spec.maxUnavailable, 1);
  assert.equal(pdb.object.spec.unhealthyPodEvictionPolicy, "AlwaysAllow");
  // Deleted with the other owned objects, before the Deployment it guards.
  for (const rbac of [false, true]) {
    const order = ownedResources(rbac);
    assert.ok(order.indexOf(resources.podDisruptionBudgets) >= 0);
    assert.ok(order.indexOf(resources.podDisruptionBudgets) < order.indexOf(resources.deployments));
  }
  // The proxy's Role still reads only its ConfigMap and Secrets (nothing of the PDB).
  const role = desiredObjects(ing, data, ["tls"], { ...defaultSettings, rbac: true }).find((d) =>
    d.object.kind === "Role"
  )!;
  assert.deepEqual(role.object.rules.map((r: { resources: string[] }) => r.resources[0]), ["configmaps", "secrets"]);
});
