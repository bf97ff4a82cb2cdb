/**
 * @module controller/objects
 * The objects a handled ingress owns: the ConfigMap with its rendered configuration (contracts
 * §4), the proxy Deployment (haproxy image running `proxy`, exporter sidecar), the public Service
 * in front of it (http and https only), a ClusterIP stats Service (`<proxy name>-stats`: the stats
 * page and the exporter's `metrics`, never behind the public load balancer) and, with `--rbac`, a
 * ServiceAccount, Role and RoleBinding that allow only reading that ConfigMap and the Secrets it
 * needs; the platform (lib/controller/platform.ts) sets the public Service's type and annotations,
 * the proxy pods' API server env and, when the cluster serves it, adds a ServiceMonitor that
 * selects the stats Service's `metrics` port; a PodDisruptionBudget keeps voluntary disruptions
 * to one proxy pod at a time (lib/controller/proxy_pod.ts). Each carries a hash of its content so an unchanged
 * object is never written again.
 */
import { createHash } from "node:crypto";
import { apiVersionOf, type KubeObject, resources, type ResourceType } from "../cluster/resources.ts";
import { serviceMonitorSpec } from "./monitoring.ts";
import { defaultPlatform, type Platform } from "./platform.ts";
import {
  exporterPort,
  httpPort,
  httpsPort,
  proxyDeploymentSpec,
  proxyDisruptionBudgetSpec,
  statsPort,
} from "./proxy_pod.ts";
import type { ControllerSettings } from "./settings.ts";

export const managedByLabel = "app.kubernetes.io/managed-by";
export const managedByValue = "ingress-controller";
export const controllerLabel = "ingress-controller.io/controller";
export const ingressAnnotation = "ingress-controller.io/ingress";
export const hashAnnotation = "ingress-controller.io/hash";
export const fieldManager = "ingress-controller";

export { exporterPort, goDuration, httpPort, httpsPort, statsPort } from "./proxy_pod.ts";
const statsSuffix = "-stats";

/** Label that tells the stats Service (value `stats`) from the public one; the ServiceMonitor selects on it. */
export const componentLabel = "app.kubernetes.io/component";

/** The rendered configuration as published in the ConfigMap `data` (contracts §4). */
export interface ProxyConfigData {
  "haproxy.cfg": string;
  "crt-list": string;
  "secrets.json": string;
}

/** One owned object to apply, with the resource it belongs to. */
export interface Desired {
  resource: ResourceType;
  object: KubeObject;
}

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Short stable hash (hex) of a string. */
export function shortHash(s: string, len = 10): string {
  return createHash("sha256").update(s).digest("hex").slice(0, len);
}

/** Name of the proxy objects of an ingress: `<name>-haproxy` when that is a valid Service name, else a hash. */
export function proxyName(ingressName: string): string {
  if (dns1035.test(ingressName) && ingressName.length <= 55) return `${ingressName}-haproxy`;
  return `haproxy-${shortHash(ingressName)}`;
}

/**
 * Name of the ClusterIP stats Service of an ingress: `<proxy name>-stats` while that fits a
 * DNS-1035 label (63 characters), else the hashed form `haproxy-<hash>-stats`.
 */
export function statsServiceName(ingressName: string): string {
  const proxy = proxyName(ingressName);
  return proxy.length + statsSuffix.length <= 63
    ? `${proxy}${statsSuffix}`
    : `haproxy-${shortHash(ingressName)}${statsSuffix}`;
}

/** A label-safe form of the controller id. */
export function controllerLabelValue(id: string): string {
  return labelValue.test(id) && id.length <= 63 ? id : `h-${shortHash(id, 16)}`;
}

/** Label selector that finds the objects of this controller. */
export function ownedSelector(settings: ControllerSettings): string {
  return `${managedByLabel}=${managedByValue},${controllerLabel}=${controllerLabelValue(settings.controllerId)}`;
}

/** Adds the hash annotation computed over everything else. */
export function withHash(obj: KubeObject): KubeObject {
  const hash = shortHash(canonicalJson(obj), 16);
  obj.metadata.annotations = { ...obj.metadata.annotations, [hashAnnotation]: hash };
  return obj;
}

function canonicalJson(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, val) =>
      val && typeof val === "object" && !Array.isArray(val)
        ? Object.fromEntries(Object.entries(val).sort(([a], [b]) => a.localeCompare(b)))
        : val,
  );
}

/** Builds every object `ingress` owns, each with its hash annotation. */
export function desiredObjects(
  ingress: KubeObject,
  data: ProxyConfigData,
  secretNames: readonly string[],
  settings: ControllerSettings,
  platform: Platform = defaultPlatform,
): Desired[] {
  const ns = ingress.metadata.namespace!;
  const name = proxyName(ingress.metadata.name);
  const key = `${ns}/${ingress.metadata.name}`;
  const labels = {
    [managedByLabel]: managedByValue,
    [controllerLabel]: controllerLabelValue(settings.controllerId),
    "app.kubernetes.io/name": "haproxy",
    "app.kubernetes.io/instance": name,
  };
  const selector = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": name };
  // The pods' selector plus the component label: matches the stats Service and not the public one.
  const statsSelector = { ...selector, [componentLabel]: "stats" };
  const ownerReferences = [{
    apiVersion: apiVersionOf(resources.ingresses),
    kind: "Ingress",
    name: ingress.metadata.name,
    uid: ingress.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  }];
  const meta = (
    objName = name,
    annotations: Readonly<Record<string, string>> = {},
    extraLabels: Readonly<Record<string, string>> = {},
  ) => ({
    name: objName,
    namespace: ns,
    labels: { ...labels, ...extraLabels },
    annotations: { ...annotations, [ingressAnnotation]: key },
    ownerReferences,
  });
  const obj = (
    r: ResourceType,
    body: Omit<KubeObject, "metadata">,
    objName?: string,
    annotations?: Readonly<Record<string, string>>,
    extraLabels?: Readonly<Record<string, string>>,
  ): Desired => ({
    resource: r,
    object: withHash({
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      metadata: meta(objName, annotations, extraLabels),
      ...body,
    }),
  });
  const monitor = platform.serviceMonitor;

  const out: Desired[] = [
    obj(resources.configMaps, { data: { ...data } }),
    obj(resources.deployments, {
      spec: proxyDeploymentSpec({
        name,
        namespace: ns,
        labels,
        selector,
        serviceAccount: settings.rbac ? name : null,
        env: platform.proxyEnv,
        settings,
      }),
    }),
    obj(
      resources.services,
      {
        spec: {
          // The proxy is what clients reach: a load balancer where the cluster has one (the ingress
          // status then shows its address; until it has one, the cluster IP), node ports on
          // providers without one (lib/cloud/providers.ts). Only traffic ports: the stats page
          // and the metrics must never be reachable through the load balancer.
          type: platform.exposure.serviceType,
          selector,
          ports: [
            { name: "http", port: httpPort, targetPort: "http", protocol: "TCP" },
            { name: "https", port: httpsPort, targetPort: "https", protocol: "TCP" },
          ],
        },
      },
      undefined,
      platform.exposure.annotations,
    ),
    obj(
      resources.services,
      {
        spec: {
          // Inside the cluster only: the stats page and the exporter sidecar, which the
          // ServiceMonitor (when the cluster has one) scrapes.
          type: "ClusterIP",
          selector,
          ports: [
            { name: "stats", port: statsPort, targetPort: "stats", protocol: "TCP" },
            { name: "metrics", port: exporterPort, targetPort: "metrics", protocol: "TCP" },
          ],
        },
      },
      statsServiceName(ingress.metadata.name),
      undefined,
      { [componentLabel]: "stats" },
    ),
  ];
  if (monitor) out.push(obj(monitor, { spec: serviceMonitorSpec(statsSelector, ns, "metrics") }));
  if (settings.rbac) {
    const rules: unknown[] = [
      { apiGroups: [""], resources: ["configmaps"], resourceNames: [name], verbs: ["get", "list", "watch"] },
    ];
    if (secretNames.length > 0) {
      rules.push({
        apiGroups: [""],
        resources: ["secrets"],
        resourceNames: [...secretNames].sort(),
        verbs: ["get", "list", "watch"],
      });
    }
    out.push(
      obj(resources.serviceAccounts, {}),
      obj(resources.roles, { rules }),
      obj(resources.roleBindings, {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
      }),
    );
  }
  // Last, so that the indices of the objects above stay as they were before it existed.
  out.push(obj(resources.podDisruptionBudgets, { spec: proxyDisruptionBudgetSpec(selector) }));
  return out;
}

/** The kinds of owned objects, in the order they are deleted. */
export function ownedResources(rbac: boolean, serviceMonitor: ResourceType | null = null): ResourceType[] {
  const base = [
    ...(serviceMonitor ? [serviceMonitor] : []),
    resources.podDisruptionBudgets,
    resources.deployments,
    resources.services,
    resources.configMaps,
  ];
  return rbac ? [...base, resources.roleBindings, resources.roles, resources.serviceAccounts] : base;
}
