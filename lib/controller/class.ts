/**
 * @module controller/class
 * Which ingresses this controller handles (spec §1 rule 6): an ingress's class is its
 * `kubernetes.io/ingress.class` annotation, else `spec.ingressClassName`, else the IngressClass
 * marked as the cluster default. `--ingress-class` unset: every ingress is handled; set: only
 * ingresses whose class equals it. And which class's shared proxy serves a handled ingress
 * ({@link servingClass}): with `--ingress-class` unset, only IngressClass objects of this
 * controller get a proxy of their own, so a class name anyone can write into an Ingress never
 * creates one (docs/proxy-groups.md).
 */
import type { KubeObject } from "../cluster/resources.ts";

export const classAnnotation = "kubernetes.io/ingress.class";
export const defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class";

/** `spec.controller` of this controller's IngressClasses (the Helm chart's `ingressClass.controller`). */
export const CONTROLLER_NAME = "ingress-controller.io/ingress-controller";
/** The controller name of ingress-nginx's IngressClasses: served in compatibility mode. */
export const NGINX_CONTROLLER = "k8s.io/ingress-nginx";

/**
 * Whether `ic` is an IngressClass this controller serves with a shared proxy of its own: ours, or
 * ingress-nginx's (taken over in compatibility mode, README "Migrating from ingress-nginx").
 */
export function isServedClass(ic: KubeObject | undefined): boolean {
  const controller = ic?.spec?.controller;
  return controller === CONTROLLER_NAME || controller === NGINX_CONTROLLER;
}

/** Where a handled ingress's class sends it (a dedicated ingress aside: lib/controller/groups.ts). */
export interface ClassChoice {
  /** The class whose shared proxy serves it; `""`: the proxy of class-less ingresses without a default class. */
  shared: string;
  /** The class it names that gets no proxy here (it joins `shared` instead), or null. */
  unserved: string | null;
}

/**
 * The class whose shared proxy serves the handled `ingress`. With `--ingress-class` (`wanted`) set,
 * that class. Unset: the class it names when that IngressClass exists and {@link isServedClass};
 * else, as a class-less ingress, the default IngressClass when that is served, else `""`.
 * `classes` looks IngressClasses up by name; null when they are not watched
 * (`--restrict-to-operator-namespace`: only the operator's own namespace is read): then every
 * class name keeps a proxy of its own.
 */
export function servingClass(
  ingress: KubeObject,
  wanted: string | null,
  defaultClass: string | null,
  classes: ((name: string) => KubeObject | undefined) | null,
): ClassChoice {
  if ((wanted !== null && wanted !== "") || classes === null) {
    return { shared: ingressClassOf(ingress, defaultClass) ?? "", unserved: null };
  }
  const classless = defaultClass !== null && isServedClass(classes(defaultClass)) ? defaultClass : "";
  const named = ingressClassOf(ingress);
  if (named === null) return { shared: classless, unserved: null };
  if (isServedClass(classes(named))) return { shared: named, unserved: null };
  return { shared: classless, unserved: named };
}

/** The Warning for an ingress whose class `named` got it no proxy of its own; `proxy`: the one serving it. */
export function unservedClassMessage(named: string, ic: KubeObject | undefined, shared: string, proxy: string): string {
  const why = ic
    ? `IngressClass ${JSON.stringify(named)} belongs to controller ${JSON.stringify(ic.spec?.controller ?? "")}`
    : `there is no IngressClass ${JSON.stringify(named)}`;
  const where = shared === ""
    ? `the shared proxy of ingresses without a class (${proxy})`
    : `the shared proxy of the default IngressClass ${JSON.stringify(shared)} (${proxy})`;
  return `ingress class ${JSON.stringify(named)} gets no proxy of its own: ${why} (this controller forms ` +
    `one for IngressClasses with spec.controller ${CONTROLLER_NAME}); the ingress is served by ${where}`;
}

/** The class of `ingress`, or null when it names none and there is no default class. */
export function ingressClassOf(ingress: KubeObject, defaultClass: string | null = null): string | null {
  const annotated = ingress.metadata.annotations?.[classAnnotation];
  if (annotated !== undefined && annotated !== "") return annotated;
  const named = ingress.spec?.ingressClassName;
  if (typeof named === "string" && named !== "") return named;
  return defaultClass;
}

/** Whether a controller started with `--ingress-class wanted` handles `ingress`. */
export function handlesIngress(
  ingress: KubeObject,
  wanted: string | null,
  defaultClass: string | null = null,
): boolean {
  if (ingress.metadata.deletionTimestamp) return false;
  if (wanted === null || wanted === "") return true;
  return ingressClassOf(ingress, defaultClass) === wanted;
}

/** The name of the IngressClass marked default (the oldest, if several), or null. */
export function defaultIngressClass(classes: readonly KubeObject[]): string | null {
  const defaults = classes
    .filter((c) => c.metadata.annotations?.[defaultClassAnnotation] === "true")
    .sort((a, b) =>
      (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") ||
      a.metadata.name.localeCompare(b.metadata.name)
    );
  return defaults[0]?.metadata.name ?? null;
}
