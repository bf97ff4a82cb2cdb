/**
 * @module controller/refs
 * What an ingress uses (Services, their EndpointSlices, TLS Secrets and the Secrets its
 * annotations name) and the reverse index from each of those to the ingresses that use it, so a
 * change re-renders only those ingresses.
 */
import { type AnnotationSpec, specOf, specOfAnnotation } from "../annotations/table.ts";
import { secretName } from "../annotations/values.ts";
import type { KubeObject } from "../cluster/resources.ts";
import { NGINX_PREFIX } from "../nginx/table.ts";
import { translateIngress } from "../nginx/translate.ts";
import { addMember, membersOf, type OneOrMany, removeMember } from "../common/one_or_many.ts";

/** Reference keys: `service:<ns>/<name>` and `secret:<ns>/<name>`. */
export type RefKey = string;

export const serviceRef = (namespace: string, name: string): RefKey => `service:${namespace}/${name}`;
export const secretRef = (namespace: string, name: string): RefKey => `secret:${namespace}/${name}`;
/** A Secret of this name in whichever namespace reads it (a settings layer names one per Ingress namespace). */
export const anySecretRef = (name: string): RefKey => `secret:*/${name}`;

/** The Services and Secrets `ingress` names (backends, default backend, TLS, Secret-valued annotations). */
export function refsOf(ingress: KubeObject): RefKey[] {
  const ns = ingress.metadata.namespace ?? "default";
  const out = new Set<RefKey>();
  const addBackend = (b: any) => {
    const name = b?.service?.name;
    if (typeof name === "string" && name) out.add(serviceRef(ns, name));
  };
  addBackend(ingress.spec?.defaultBackend);
  for (const rule of ingress.spec?.rules ?? []) for (const p of rule?.http?.paths ?? []) addBackend(p?.backend);
  for (const tls of ingress.spec?.tls ?? []) {
    if (typeof tls?.secretName === "string" && tls.secretName) out.add(secretRef(ns, tls.secretName));
  }
  // ingress-nginx annotations as the compatibility mode converts them (the Secret of the Ingress's own namespace only).
  const annotations = ingress.metadata.annotations ?? {};
  const converted = Object.keys(annotations).some((k) => k.startsWith(NGINX_PREFIX))
    ? translateIngress(ingress).annotations
    : {};
  for (const ref of annotatedSecretRefs(ingress)) out.add(ref);
  for (const ref of secretRefsIn(ns, converted)) out.add(ref);
  return [...out].sort();
}

/**
 * The Secrets an object's annotations of this controller name (an Ingress's, or a Service's for
 * the settings it may carry), in the object's namespace.
 */
export function annotatedSecretRefs(o: KubeObject): RefKey[] {
  return secretRefsIn(o.metadata.namespace ?? "default", o.metadata.annotations ?? {});
}

function secretRefsIn(namespace: string, annotations: Readonly<Record<string, unknown>>): RefKey[] {
  return secretNamesIn(annotations, specOfAnnotation).map((name) => secretRef(namespace, name));
}

/**
 * The Secret names the values of a settings layer (the global ConfigMap's, a class's parameters;
 * bare keys) give Secret-valued annotations: each names a Secret in the namespace of every Ingress
 * the layer applies to.
 */
export function layerSecretNames(values: Readonly<Record<string, string>>): string[] {
  return secretNamesIn(values, specOf);
}

/** The values of the Secret-valued keys among `values` (`specFor` finds a key's annotation). */
function secretNamesIn(
  values: Readonly<Record<string, unknown>>,
  specFor: (key: string) => AnnotationSpec | undefined,
): string[] {
  const out: string[] = [];
  for (const [key, raw] of Object.entries(values)) {
    if (typeof raw !== "string" || specFor(key)?.value !== secretName) continue;
    const value = raw.trim();
    if (value) out.push(value);
  }
  return out;
}

/** The service reference an EndpointSlice belongs to (its `kubernetes.io/service-name` label). */
export function sliceServiceRef(slice: KubeObject): RefKey | null {
  const svc = slice.metadata.labels?.["kubernetes.io/service-name"];
  return svc ? serviceRef(slice.metadata.namespace ?? "default", svc) : null;
}

/** Reference → ingress keys that use it, kept in step as ingresses change. */
export class ReverseIndex {
  /** The one ingress key using a reference, or a Set of them when several do (most references have one user). */
  #byRef = new Map<RefKey, OneOrMany>();
  /** What each key uses: its one reference itself (most Ingresses name one Service), or a list. */
  #byIngress = new Map<string, RefKey | readonly RefKey[]>();

  /** Records that `ingressKey` uses exactly `refs` (replacing what it used before). */
  set(ingressKey: string, refs: readonly RefKey[]): void {
    this.delete(ingressKey);
    // The reference itself, not a list of one: 56 bytes an Ingress.
    this.#byIngress.set(ingressKey, refs.length === 1 ? refs[0] : refs);
    for (const r of refs) addMember(this.#byRef, r, ingressKey);
  }

  delete(ingressKey: string): void {
    for (const r of this.refs(ingressKey)) removeMember(this.#byRef, r, ingressKey);
    this.#byIngress.delete(ingressKey);
  }

  /** Whether any key uses `ref`. */
  used(ref: RefKey): boolean {
    return this.#byRef.has(ref);
  }

  /** Ingress keys using `ref`, sorted. */
  users(ref: RefKey): string[] {
    return [...membersOf(this.#byRef.get(ref))].sort();
  }

  refs(ingressKey: string): readonly RefKey[] {
    const refs = this.#byIngress.get(ingressKey);
    return refs === undefined ? [] : typeof refs === "string" ? [refs] : refs;
  }
}
