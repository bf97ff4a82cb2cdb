/**
 * @module controller/class
 * Which ingresses this controller handles (spec §1 rule 6): an ingress's class is its
 * `kubernetes.io/ingress.class` annotation, else `spec.ingressClassName`, else the IngressClass
 * marked as the cluster default. `--ingress-class` unset: every ingress is handled; set: only
 * ingresses whose class equals it.
 */
import type { KubeObject } from "../cluster/resources.ts";

export const classAnnotation = "kubernetes.io/ingress.class";
export const defaultClassAnnotation = "ingressclass.kubernetes.io/is-default-class";

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
