/**
 * @module controller/objects
 * The objects of one proxy (a class's shared proxy in the controller's namespace, owned by the
 * IngressClass, or an ingress's dedicated proxy in its namespace, owned by the Ingress:
 * lib/controller/groups.ts): the configuration (lib/controller/transport.ts: a ConfigMap, contracts
 * §4), the proxy Deployment (haproxy image running `proxy`, exporter sidecar), the public Service
 * in front of it (http and https only), a ClusterIP stats Service (`<proxy name>-stats`: the
 * exporter's `metrics` only, never behind the public load balancer; HAProxy's stats page stays on
 * the pod's loopback) and, with `--rbac`, a
 * ServiceAccount, Role and RoleBinding that allow only reading that ConfigMap and the Secrets it
 * needs (a Role and RoleBinding in each namespace holding some of them); the IngressClass's
 * parameters (lib/controller/class_params.ts) set replicas, resources, node selector and the
 * Service's type and annotations; the platform (lib/controller/platform.ts) sets the public Service's type and annotations,
 * the proxy pods' API server env and, when the cluster serves it, adds a ServiceMonitor that
 * selects the stats Service's `metrics` port; a PodDisruptionBudget keeps voluntary disruptions
 * to one proxy pod at a time (lib/controller/proxy_pod.ts). Each carries a hash of its content so an unchanged
 * object is never written again.
 */
import {
  apiVersionOf,
  type KubeObject,
  type OwnerReference,
  resources,
  type ResourceType,
} from "../cluster/resources.ts";
import { serviceMonitorSpec } from "./monitoring.ts";
import { defaultPlatform, type Platform } from "./platform.ts";
import {
  defaultProxyResources,
  exporterPort,
  httpPort,
  httpsPort,
  proxyDeploymentSpec,
  proxyDisruptionBudgetSpec,
  type ProxyPodInput,
} from "./proxy_pod.ts";
import type { ControllerSettings } from "./settings.ts";
import { type ClassParams, defaultClassParams } from "./class_params.ts";
import { classGroup, gatewayGroup, gatewayOf, type GroupKey, sharedClassOf, sharedProxyName } from "./groups.ts";
import { configObjects, configReadRules, type ProxyConfigData } from "./transport.ts";
import { CONFIG_SHA_ANNOTATION, PART_SHA_ANNOTATION } from "../transport/parts.ts";
import { shortHash } from "./short_hash.ts";
import { endsLikeDerived } from "./proxy_names.ts";

export const managedByLabel = "app.kubernetes.io/managed-by";
export const managedByValue = "ingress-controller";
export const controllerLabel = "ingress-controller.io/controller";
export const ingressAnnotation = "ingress-controller.io/ingress";
/** Marks the objects of a class's shared proxy (value: the class name). */
export const classOwnerAnnotation = "ingress-controller.io/ingress-class";
/** Marks the objects of a Gateway's proxy (value: the Gateway's `namespace/name`). */
export const gatewayOwnerAnnotation = "ingress-controller.io/gateway";
export const hashAnnotation = "ingress-controller.io/hash";
export const fieldManager = "ingress-controller";

export { exporterPort, goDuration, httpPort, httpsPort, statsPort } from "./proxy_pod.ts";
const statsSuffix = "-stats";

/** Label that tells the stats Service (value `stats`) from the public one; the ServiceMonitor selects on it. */
export const componentLabel = "app.kubernetes.io/component";

export type { ProxyConfigData } from "./transport.ts";

/** One owned object to apply, with the resource it belongs to. */
export interface Desired {
  resource: ResourceType;
  object: KubeObject;
}

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

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

/**
 * The hashes of small objects by their plain JSON: a class of 10,000 Ingresses has about 130 part
 * ConfigMaps, whose canonical form (keys sorted at every level) cost milliseconds per reconcile.
 */
const hashMemo = new Map<string, string>();
/** Only objects this small are remembered, up to this many characters of JSON in all (oldest out first). */
const HASH_MEMO_TEXT = 4096;
const HASH_MEMO_CHARS = 1 << 20;
let hashMemoChars = 0;

/** Adds the hash annotation computed over everything else. */
export function withHash(obj: KubeObject, hashedBody?: Omit<KubeObject, "metadata">): KubeObject {
  // A part ConfigMap's content is named by its sha256 annotation already: hashing that instead of
  // up to 512 KiB of text (per part, per reconcile) identifies the object as well. `hashedBody`
  // stands for all of it, `data` and `binaryData` (a deflated part's content) alike.
  const hashed = hashedBody ? { ...obj, binaryData: undefined, ...hashedBody } : obj;
  const plain = JSON.stringify(hashed);
  let hash = hashMemo.get(plain);
  if (hash === undefined) {
    hash = shortHash(canonicalJson(hashed), 16);
    if (plain.length <= HASH_MEMO_TEXT) {
      for (const oldest of hashMemo.keys()) {
        if (hashMemoChars + plain.length <= HASH_MEMO_CHARS) break;
        hashMemo.delete(oldest);
        hashMemoChars -= oldest.length;
      }
      hashMemo.set(plain, hash);
      hashMemoChars += plain.length;
    }
  }
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

/** Whose proxy objects these are, where they live and what marks them as ours. */
export interface ProxyTarget {
  /** The proxy group (lib/controller/groups.ts): an ingress key, or `class:<name>`. */
  group: string;
  /** Name of the ConfigMap, Deployment, public Service (and RBAC objects). */
  name: string;
  statsName: string;
  namespace: string;
  /** The owner's mark: the ingress annotation (dedicated) or the class annotation (shared). */
  ownerAnnotations: Readonly<Record<string, string>>;
  ownerReferences: OwnerReference[];
  /**
   * The public Service's ports when they are not http (80) and https (443): a Gateway's listener
   * ports, each to the container port the proxy binds for it (lib/gateway/ports.ts).
   */
  ports?: readonly { port: number; containerPort: number }[];
  /**
   * Labels and annotations the proxy's Deployment, pods, public Service and ServiceAccount carry
   * besides the controller's own (a Gateway's `spec.infrastructure`: lib/gateway/infrastructure.ts).
   * The controller's labels and annotations win on a clash.
   */
  infrastructure?: { labels: Readonly<Record<string, string>>; annotations: Readonly<Record<string, string>> };
}

/** Where the proxy objects of a group live (without building them). */
export function proxyOf(group: GroupKey, settings: ControllerSettings): { name: string; namespace: string } {
  const gateway = gatewayOf(group);
  if (gateway !== null) return gatewayProxyPlace(gateway, settings);
  const cls = sharedClassOf(group);
  if (cls !== null) return { name: sharedProxyName(cls), namespace: settings.operatorNamespace };
  const slash = group.indexOf("/");
  return { name: proxyName(group.slice(slash + 1)), namespace: group.slice(0, slash) };
}

/** The dedicated proxy of `ingress`: its own objects in its namespace, owned by it. */
export function dedicatedTarget(ingress: KubeObject): ProxyTarget {
  const key = `${ingress.metadata.namespace}/${ingress.metadata.name}`;
  return {
    group: key,
    name: proxyName(ingress.metadata.name),
    statsName: statsServiceName(ingress.metadata.name),
    namespace: ingress.metadata.namespace!,
    ownerAnnotations: { [ingressAnnotation]: key },
    ownerReferences: [{
      apiVersion: apiVersionOf(resources.ingresses),
      kind: "Ingress",
      name: ingress.metadata.name,
      uid: ingress.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    }],
  };
}

/**
 * The shared proxy of the class `className` in the controller's namespace, owned by the
 * IngressClass when it exists (deleting the class lets the garbage collector remove it; the
 * controller also removes it once no handled ingress is left in the group).
 */
export function sharedTarget(className: string, ingressClass: KubeObject | undefined, namespace: string): ProxyTarget {
  const name = sharedProxyName(className);
  return {
    group: classGroup(className),
    name,
    statsName: `${name}${statsSuffix}`,
    namespace,
    ownerAnnotations: { [classOwnerAnnotation]: className },
    ownerReferences: ingressClass?.metadata.uid
      ? [{
        apiVersion: apiVersionOf(resources.ingressClasses),
        kind: "IngressClass",
        name: ingressClass.metadata.name,
        uid: ingressClass.metadata.uid,
        controller: true,
        blockOwnerDeletion: false,
      }]
      : [],
  };
}

/**
 * The name of a Gateway's proxy objects in the controller's namespace, where every tenant's Gateway
 * proxy lives, so no two Gateways may get names that meet (lib/controller/proxy_names.ts):
 * - `gw-<namespace>-<name>` when the namespace has no `-` (so the name reads back one way only: `a-b/c`
 *   and `a/b-c` would both give `gw-a-b-c`) and the name does not end like a derived object or a hash;
 * - else `gw-<namespace>-<name>-<8 hex digits of the key's sha256>`: two keys spelling the same text
 *   differ in it, and a tenant cannot choose a name that ends so (it takes this form itself);
 * - else (longer than 55 characters, room for `-stats`) `gw-<16 hex digits>`.
 */
export function gatewayProxyName(gatewayKey: string): string {
  const [ns, name] = gatewayKey.split("/");
  const plain = `gw-${ns}-${name}`;
  if (
    !ns.includes("-") && !endsLikeDerived(name) && !HASH_ENDING.test(name) && dns1035.test(plain) &&
    plain.length <= 55
  ) {
    return plain;
  }
  const marked = `${plain}-${shortHash(gatewayKey, 8)}`;
  if (dns1035.test(marked) && marked.length <= 55) return marked;
  return `gw-${shortHash(gatewayKey, 16)}`;
}

/** The ending of `gatewayProxyName`'s marked form. */
const HASH_ENDING = /(?:^|-)[0-9a-f]{8}$/;

/** Where a proxy's objects live: their name and namespace. */
export interface ProxyPlace {
  name: string;
  namespace: string;
}

/**
 * Where the proxy of the Gateway `gatewayKey` (`namespace/name`) lives. By default in the
 * controller's namespace as `gw-<namespace>-<name>` (gatewayProxyName), where tenants do not
 * write; with `--gateway-proxies-in-gateway-namespace` in the Gateway's own namespace, named after
 * the Gateway while its name is a DNS-1035 label short enough for the `-stats` Service that does
 * not end like another proxy's object (else `gw-<hash>`), as the Gateway API's GatewayInfrastructure
 * test expects to find them.
 */
export function gatewayProxyPlace(
  gatewayKey: string,
  settings: Pick<ControllerSettings, "operatorNamespace" | "gatewayProxiesInGatewayNamespace">,
): ProxyPlace {
  if (!settings.gatewayProxiesInGatewayNamespace) {
    return { name: gatewayProxyName(gatewayKey), namespace: settings.operatorNamespace };
  }
  const slash = gatewayKey.indexOf("/");
  const name = gatewayKey.slice(slash + 1);
  // Named after the Gateway unless that reads as another proxy's object or as a hashed name.
  const plain = dns1035.test(name) && name.length <= 55 && !endsLikeDerived(name) && !/^gw-[0-9a-f]{16}$/.test(name);
  return { name: plain ? name : `gw-${shortHash(gatewayKey, 16)}`, namespace: gatewayKey.slice(0, slash) };
}

/**
 * The proxy of a Gateway, at `place` (gatewayProxyPlace), marked with the Gateway's annotation and
 * no owner reference (a proxy in the controller's namespace cannot have one across namespaces, and
 * one rule for both places keeps an object's marks the same when the place changes); the
 * controller removes them when the Gateway goes. `ports`: its listener ports and the container
 * ports the proxy binds for them.
 */
export function gatewayTarget(
  gatewayKey: string,
  place: ProxyPlace,
  ports: readonly { port: number; containerPort: number }[],
  infrastructure?: ProxyTarget["infrastructure"],
): ProxyTarget {
  const [gwNs, gwName] = gatewayKey.split("/");
  return {
    group: gatewayGroup(gwNs, gwName),
    name: place.name,
    statsName: `${place.name}${statsSuffix}`,
    namespace: place.namespace,
    ownerAnnotations: { [gatewayOwnerAnnotation]: gatewayKey },
    ownerReferences: [],
    ports,
    ...(infrastructure ? { infrastructure } : {}),
  };
}

/** A Secret a proxy reads, or (`configMap`) a ConfigMap it reads a CA bundle from (`configmap-ca`). */
export interface SecretRef {
  namespace: string;
  name: string;
  configMap?: boolean;
}

/** Builds every object `ingress`'s dedicated proxy owns, each with its hash annotation. */
export function desiredObjects(
  ingress: KubeObject,
  data: ProxyConfigData,
  secretNames: readonly string[],
  settings: ControllerSettings,
  platform: Platform = defaultPlatform,
): Desired[] {
  const ns = ingress.metadata.namespace!;
  const secrets = secretNames.map((name) => ({ namespace: ns, name }));
  return proxyObjects(dedicatedTarget(ingress), data, secrets, settings, platform);
}

/** Builds every object of the proxy `target`, each with its hash annotation. */
export function proxyObjects(
  target: ProxyTarget,
  data: ProxyConfigData,
  secrets: readonly SecretRef[],
  settings: ControllerSettings,
  platform: Platform = defaultPlatform,
  params: ClassParams = defaultClassParams,
  previousParts: ReadonlyMap<string, string> = new Map(),
): Desired[] {
  const { name, namespace: ns } = target;
  const labels = {
    [managedByLabel]: managedByValue,
    [controllerLabel]: controllerLabelValue(settings.controllerId),
    "app.kubernetes.io/name": "haproxy",
    "app.kubernetes.io/instance": name,
  };
  const selector = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": name };
  // The pods' selector plus the component label: matches the stats Service and not the public one.
  const statsSelector = { ...selector, [componentLabel]: "stats" };
  const meta = (
    objName = name,
    annotations: Readonly<Record<string, string>> = {},
    extraLabels: Readonly<Record<string, string>> = {},
    objNamespace = ns,
  ) => ({
    name: objName,
    namespace: objNamespace,
    labels: { ...labels, ...extraLabels },
    annotations: { ...annotations, ...target.ownerAnnotations },
    ...(target.ownerReferences.length > 0 ? { ownerReferences: target.ownerReferences } : {}),
  });
  const obj = (
    r: ResourceType,
    body: Omit<KubeObject, "metadata">,
    objName?: string,
    annotations?: Readonly<Record<string, string>>,
    extraLabels?: Readonly<Record<string, string>>,
    objNamespace?: string,
    hashedBody?: Omit<KubeObject, "metadata">,
  ): Desired => ({
    resource: r,
    object: withHash({
      apiVersion: apiVersionOf(r),
      kind: r.kind,
      metadata: meta(objName, annotations, extraLabels, objNamespace),
      ...body,
    }, hashedBody),
  });
  const monitor = platform.serviceMonitor;
  const deploymentSpec = proxyDeploymentSpec({
    name,
    namespace: ns,
    labels,
    selector,
    serviceAccount: settings.rbac ? name : null,
    env: platform.proxyEnv,
    settings,
    ...podParams(params),
  });

  const infra = target.infrastructure;
  if (infra) {
    const template = deploymentSpec.template as { metadata: { labels: Record<string, string>; annotations?: object } };
    template.metadata.labels = { ...infra.labels, ...template.metadata.labels };
    if (Object.keys(infra.annotations).length > 0) template.metadata.annotations = { ...infra.annotations };
  }
  /** The objects a Gateway's infrastructure labels and annotations go to: Deployment, public Service, ServiceAccount. */
  const infraLabels = infra?.labels ?? {};
  const infraAnnotations = infra?.annotations ?? {};

  const carriers = configObjects(name, data, previousParts, settings.configSplit, target.namespace);
  const out: Desired[] = [
    ...carriers.map((t) => {
      // A carrier's content is named by its digest annotation: the hash need not read the data again.
      const digest = t.annotations?.[PART_SHA_ANNOTATION] ?? t.annotations?.[CONFIG_SHA_ANNOTATION];
      return obj(t.resource, t.body, t.name, t.annotations, t.labels, undefined, digest ? { data: {} } : undefined);
    }),
    obj(resources.deployments, { spec: deploymentSpec }, undefined, infraAnnotations, infraLabels),
    obj(
      resources.services,
      {
        spec: {
          // The proxy is what clients reach: a load balancer where the cluster has one (the ingress
          // status then shows its address; until it has one, the cluster IP), node ports on
          // providers without one (lib/cloud/providers.ts). Only traffic ports: the stats page
          // and the metrics must never be reachable through the load balancer.
          type: params.serviceType ?? platform.exposure.serviceType,
          selector,
          ports: target.ports
            ? target.ports.map((p) => ({
              name: `port-${p.port}`,
              port: p.port,
              targetPort: p.containerPort,
              protocol: "TCP",
            }))
            : [
              { name: "http", port: httpPort, targetPort: "http", protocol: "TCP" },
              { name: "https", port: httpsPort, targetPort: "https", protocol: "TCP" },
            ],
        },
      },
      undefined,
      { ...infraAnnotations, ...platform.exposure.annotations, ...params.serviceAnnotations },
      infraLabels,
    ),
    obj(
      resources.services,
      {
        spec: {
          // Inside the cluster only: the exporter sidecar, which the ServiceMonitor (when the
          // cluster has one) scrapes. Never the stats page: it lists every tenant's backends and
          // endpoints, and HAProxy serves it on the pod's loopback only (templates/stats.eta).
          type: "ClusterIP",
          selector,
          ports: [{ name: "metrics", port: exporterPort, targetPort: "metrics", protocol: "TCP" }],
        },
      },
      target.statsName,
      undefined,
      { [componentLabel]: "stats" },
    ),
  ];
  if (monitor) out.push(obj(monitor, { spec: serviceMonitorSpec(statsSelector, ns, "metrics") }));
  if (settings.rbac) {
    // Read access to the configuration and to the Secrets and CA ConfigMaps it lists, each by
    // name: a Role in each namespace holding some of them (a shared proxy serves ingresses of many
    // namespaces), bound to the proxy's ServiceAccount.
    const byNs = new Map<string, { secrets: string[]; configMaps: string[] }>([[ns, { secrets: [], configMaps: [] }]]);
    for (const s of secrets) {
      const names = byNs.get(s.namespace) ?? { secrets: [], configMaps: [] };
      (s.configMap ? names.configMaps : names.secrets).push(s.name);
      byNs.set(s.namespace, names);
    }
    out.push(obj(resources.serviceAccounts, {}, undefined, infraAnnotations, infraLabels));
    for (const [roleNs, names] of [...byNs].sort(([a], [b]) => a === ns ? -1 : b === ns ? 1 : a.localeCompare(b))) {
      const rules: unknown[] = roleNs === ns ? configReadRules(name, carriers) : [];
      for (const [resource, list] of [["secrets", names.secrets], ["configmaps", names.configMaps]] as const) {
        if (list.length === 0) continue;
        rules.push({
          apiGroups: [""],
          resources: [resource],
          resourceNames: [...new Set(list)].sort(),
          verbs: ["get", "list", "watch"],
        });
      }
      out.push(
        obj(resources.roles, { rules }, name, undefined, undefined, roleNs),
        obj(
          resources.roleBindings,
          {
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
            subjects: [{ kind: "ServiceAccount", name, namespace: ns }],
          },
          name,
          undefined,
          undefined,
          roleNs,
        ),
      );
    }
  }
  // Last, so that the indices of the objects above stay as they were before it existed.
  out.push(obj(resources.podDisruptionBudgets, { spec: proxyDisruptionBudgetSpec(selector) }));
  return out;
}

/**
 * The class's replicas, node selector and haproxy container resources (merged over the defaults:
 * a class that sets only limits keeps the default requests).
 */
function podParams(params: ClassParams): Partial<ProxyPodInput> {
  const { requests, limits } = params.resources;
  return {
    ...(params.replicas !== null ? { replicas: params.replicas } : {}),
    nodeSelector: params.nodeSelector,
    proxyResources: {
      requests: { ...defaultProxyResources.requests, ...requests },
      ...(Object.keys(limits).length > 0 ? { limits: { ...limits } } : {}),
    },
  };
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
