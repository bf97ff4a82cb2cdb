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

/**
 * An Ingress as the API server sends it (less managedFields and the `kubectl apply` annotation),
 * with its status shared with every other Ingress showing the same: the Ingresses of one proxy all
 * show its address, 10,000 copies of one small tree otherwise. Cached objects are never changed in
 * place, and the shared status is frozen so that nothing can.
 */
export function cachedIngress(o: KubeObject): KubeObject {
  const ing = compactMetadata(o);
  if (ing.status) ing.status = sharedStatus(ing.status);
  return ing;
}

const statuses = new LRUCache<string, object>({ max: 1_024 });

function sharedStatus(status: unknown): unknown {
  const text = JSON.stringify(status);
  let shared = statuses.get(text);
  if (shared === undefined) statuses.set(text, shared = deepFreeze(JSON.parse(text)));
  return shared;
}

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** The metadata every cached kind keeps: identity, version, and what owners and settings are read from. */
function keptMetadata(o: KubeObject): KubeObject["metadata"] {
  const { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences, deletionTimestamp } =
    compactMetadata(o).metadata;
  return { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences, deletionTimestamp };
}

/** An object reduced to what the controller reads of the objects it owns (and a Deployment's availability). */
export function metadataOnly(o: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences } = compactMetadata(o).metadata;
  // Only Deployments have it (list items may lack `kind`).
  const availableReplicas = o.status?.availableReplicas;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences },
    ...(availableReplicas !== undefined ? { status: { availableReplicas } } : {}),
  };
}

/**
 * A Service as the model (type, ports, cluster IP for `service-upstream`) and the status of the
 * Ingresses (the proxy Service's load-balancer, else cluster IPs) read it. Owned proxy Services
 * are written by server-side apply from their desired object, never from this one.
 */
export function cachedService(o: KubeObject): KubeObject {
  const spec = o.spec ?? {};
  const loadBalancer = o.status?.loadBalancer;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: keptMetadata(o),
    spec: {
      type: spec.type,
      ports: spec.ports,
      clusterIP: spec.clusterIP,
      clusterIPs: spec.clusterIPs,
      externalName: spec.externalName,
    },
    status: loadBalancer?.ingress?.length ? { loadBalancer } : NO_STATUS,
  };
}

/** Most Services show no load-balancer: one status object for all of them (cached objects are never changed in place). */
const NO_STATUS = Object.freeze({});

/** The fields of an endpoint the model reads; the rest (targetRef, nodeName, zone, hints) is per Pod and large. */
const ENDPOINT_FIELDS = new Set(["addresses", "conditions"]);

/** An EndpointSlice as the model reads it: address type, ports and each endpoint's addresses and conditions. */
export function cachedSlice(o: KubeObject): KubeObject {
  const endpoints: KubeObject["endpoints"] = o.endpoints;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: keptMetadata(o),
    addressType: o.addressType,
    endpoints: Array.isArray(endpoints)
      ? endpoints.map((e) =>
        Object.keys(e).every((k) => ENDPOINT_FIELDS.has(k)) ? e : { addresses: e.addresses, conditions: e.conditions }
      )
      : endpoints,
    ports: o.ports,
  };
}
