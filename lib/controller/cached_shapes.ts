/**
 * @module controller/cached_shapes
 * What the controller's caches keep of each kind besides Ingresses (informer transforms): only
 * the fields something of the controller reads, in objects built anew, so that nothing else of
 * the API server's object stays reachable. At 10,000 Services and EndpointSlices every field
 * dropped here is 10,000 strings or arrays fewer (docs/controller-scale.md).
 */
import { LRUCache } from "lru-cache";
import { compactMetadata } from "../cluster/informer.ts";
import type { KubeObject } from "../cluster/resources.ts";
import { managedByLabel, managedByValue } from "./objects.ts";
import { SERVICE_NAME_LABEL } from "../render/backend_resolve.ts";
import { carriedDigests } from "./transport.ts";

/** The field of a cached owned ConfigMap holding the digests of its data (lib/controller/transport.ts). */
export const CARRIED_FIELD = "carriedDigests";

/**
 * An Ingress as the API server sends it (less managedFields and the `kubectl apply` annotation),
 * with its status shared with every other Ingress showing the same: the Ingresses of one proxy all
 * show its address, 10,000 copies of one small tree otherwise; and its backends' Service ports
 * shared likewise. Cached objects are never changed in place, and the shared values are frozen so
 * that nothing can.
 */
export function cachedIngress(o: KubeObject): KubeObject {
  const ing = compactMetadata(o);
  if (ing.status) ing.status = sharedValue(ing.status);
  if (ing.spec) sharePorts(ing.spec);
  // Creation times have a one-second grain: Ingresses created together share one string (each
  // parsed object has a copy of its own, 40 bytes, 10,000 of them in a class created by a script).
  const created = ing.metadata?.creationTimestamp;
  if (typeof created === "string") ing.metadata!.creationTimestamp = sharedTime(created);
  return ing;
}

/**
 * Each backend's Service port (`{number: 80}`, `{name: "http"}`) as one frozen value shared by every
 * Ingress naming the same: one object per path otherwise (32 bytes, 3 MB at 100,000 Ingresses).
 */
function sharePorts(spec: KubeObject["spec"]): void {
  const share = (backend: { service?: { port?: unknown } } | undefined) => {
    const service = backend?.service;
    if (service && typeof service.port === "object" && service.port !== null) service.port = sharedValue(service.port);
  };
  share(spec.defaultBackend);
  if (!Array.isArray(spec.rules)) return;
  for (const rule of spec.rules) {
    const paths = rule?.http?.paths;
    if (Array.isArray(paths)) { for (const p of paths) share(p?.backend); }
  }
}

/** The last creation times seen, each held once. */
const times = new LRUCache<string, string>({ max: 1_024 });

function sharedTime(t: string): string {
  const kept = times.get(t);
  if (kept !== undefined) return kept;
  times.set(t, t);
  return t;
}

/**
 * One frozen copy per distinct value of the small parts many objects repeat (an Ingress status,
 * a Service's ports, an endpoint's conditions): 10,000 Services on port 80 hold one ports list.
 */
const shared = new LRUCache<string, object>({ max: 4_096 });

function sharedValue<T>(value: T): T {
  const text = JSON.stringify(value);
  let kept = shared.get(text);
  if (kept === undefined) shared.set(text, kept = deepFreeze(JSON.parse(text)));
  return kept as T;
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * The metadata a cached Service or EndpointSlice keeps: what owners and settings are read from,
 * and the identity and version only of the controller's own objects (it updates and deletes them
 * by uid, lib/controller/owned_writes.ts); of a user's Service nothing reads them, and 20,000 of each
 * were 2 MB. Of a user's object's labels only an EndpointSlice's Service name is read (the
 * controller's own objects are told by theirs, lib/controller/ownership.ts): the EndpointSlice
 * controller copies every label of the Service onto its slices, a few hundred bytes each.
 */
function keptMetadata(o: KubeObject): KubeObject["metadata"] {
  const { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences, deletionTimestamp } =
    compactMetadata(o).metadata;
  if (labels?.[managedByLabel] === managedByValue) {
    return { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences, deletionTimestamp };
  }
  const service = labels?.[SERVICE_NAME_LABEL];
  const kept = service === undefined ? undefined : { [SERVICE_NAME_LABEL]: service };
  return { name, namespace, labels: kept, annotations, ownerReferences, deletionTimestamp };
}

/**
 * An object the controller owns, reduced to what it reads of it: identity, labels, annotations and
 * owners, every field it may have set (`spec`, `rules`, `roleRef`, `subjects`: compared with what
 * it should be, lib/controller/drift.ts), a Deployment's availability, and of a ConfigMap only the
 * digests of its data (lib/controller/transport.ts), never the data: a shared proxy's parts are
 * megabytes.
 */
export function ownedShape(o: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences } = compactMetadata(o).metadata;
  const { apiVersion, kind, metadata: _m, status, data, binaryData, ...body } = o;
  // Only Deployments have it (list items may lack `kind`).
  const availableReplicas = status?.availableReplicas;
  return {
    apiVersion,
    kind,
    metadata: { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences },
    ...body,
    ...(kind === "ConfigMap" ? { [CARRIED_FIELD]: carriedDigests(data, binaryData) } : {}),
    ...(availableReplicas !== undefined ? { status: { availableReplicas } } : {}),
  };
}

/**
 * A Service as the model (type, ports, cluster IP for `service-upstream`) and the status of the
 * Ingresses (the proxy Service's load-balancer, else cluster IPs) read it; the controller's own
 * Services also keep their selector (compared with what it should be, lib/controller/drift.ts).
 * Owned proxy Services are written by server-side apply from their desired object, never from this one.
 */
export function cachedService(o: KubeObject): KubeObject {
  const spec = o.spec ?? {};
  const loadBalancer = o.status?.loadBalancer;
  const own = o.metadata?.labels?.[managedByLabel] === managedByValue;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: keptMetadata(o),
    spec: {
      type: spec.type,
      ports: spec.ports && sharedValue(spec.ports),
      clusterIP: spec.clusterIP,
      // Read as `clusterIPs ?? [clusterIP]` (lib/controller/status.ts): the usual one-address list is not kept.
      clusterIPs: spec.clusterIPs?.length === 1 && spec.clusterIPs[0] === spec.clusterIP ? undefined : spec.clusterIPs,
      externalName: spec.externalName,
      // Last: a literal that starts with a spread keeps its fields in a separate array (40 bytes a Service).
      ...(own ? { selector: spec.selector } : {}),
    },
    status: loadBalancer?.ingress?.length ? { loadBalancer } : NO_STATUS,
  };
}

/** Most Services show no load-balancer: one status object for all of them (cached objects are never changed in place). */
const NO_STATUS = Object.freeze({});

/** An EndpointSlice as the model reads it: address type, ports and each endpoint's addresses and conditions. */
export function cachedSlice(o: KubeObject): KubeObject {
  const endpoints: KubeObject["endpoints"] = o.endpoints;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: keptMetadata(o),
    addressType: o.addressType,
    // Of an endpoint the model reads addresses and conditions; the rest (targetRef, nodeName,
    // zone, hints) is per Pod and large.
    endpoints: Array.isArray(endpoints)
      ? endpoints.map((e) => ({ addresses: e.addresses, conditions: e.conditions && sharedValue(e.conditions) }))
      : endpoints,
    ports: o.ports && sharedValue(o.ports),
  };
}
