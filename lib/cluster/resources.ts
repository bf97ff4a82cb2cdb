/**
 * @module cluster/resources
 * The resource types the controller and the proxy use, and their REST paths.
 */

export interface ResourceType {
  group: string; // "" for the core group
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** The parts of `metadata` this project reads. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Any cluster object as it comes from the API server (plain JSON). */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  // deno-lint-ignore no-explicit-any
  [field: string]: any;
}

const rt = (group: string, version: string, plural: string, kind: string, namespaced = true): ResourceType => ({
  group,
  version,
  plural,
  kind,
  namespaced,
});

export const resources = {
  ingresses: rt("networking.k8s.io", "v1", "ingresses", "Ingress"),
  ingressClasses: rt("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false),
  services: rt("", "v1", "services", "Service"),
  endpointSlices: rt("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice"),
  secrets: rt("", "v1", "secrets", "Secret"),
  configMaps: rt("", "v1", "configmaps", "ConfigMap"),
  namespaces: rt("", "v1", "namespaces", "Namespace", false),
  deployments: rt("apps", "v1", "deployments", "Deployment"),
  podDisruptionBudgets: rt("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
  serviceAccounts: rt("", "v1", "serviceaccounts", "ServiceAccount"),
  roles: rt("rbac.authorization.k8s.io", "v1", "roles", "Role"),
  roleBindings: rt("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
  events: rt("", "v1", "events", "Event"),
  gatewayClasses: rt("gateway.networking.k8s.io", "v1", "gatewayclasses", "GatewayClass", false),
  gateways: rt("gateway.networking.k8s.io", "v1", "gateways", "Gateway"),
  httpRoutes: rt("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute"),
  grpcRoutes: rt("gateway.networking.k8s.io", "v1", "grpcroutes", "GRPCRoute"),
  tlsRoutes: rt("gateway.networking.k8s.io", "v1", "tlsroutes", "TLSRoute"),
  backendTlsPolicies: rt("gateway.networking.k8s.io", "v1", "backendtlspolicies", "BackendTLSPolicy"),
  referenceGrants: rt("gateway.networking.k8s.io", "v1beta1", "referencegrants", "ReferenceGrant"),
} as const;

/** `apiVersion` as written in objects: `v1` or `group/version`. */
export function apiVersionOf(r: ResourceType): string {
  let v = apiVersions.get(r);
  if (v === undefined) apiVersions.set(r, v = r.group ? [r.group, r.version].join("/") : r.version);
  return v;
}
/** One string per resource type, so objects that carry it share it. */
const apiVersions = new WeakMap<ResourceType, string>();

/** The collection path, namespaced when `namespace` is given and the resource is namespaced. */
export function collectionPath(r: ResourceType, namespace?: string | null): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${r.plural}`;
}

/** The path of one object, optionally of a subresource (`status`). */
export function objectPath(r: ResourceType, namespace: string | null | undefined, name: string, sub?: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}${sub ? `/${sub}` : ""}`;
}

/** The store key of an object: `namespace/name`, or `name` for cluster-scoped ones. */
export function keyOf(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}
