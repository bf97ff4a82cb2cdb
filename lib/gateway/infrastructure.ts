/**
 * @module gateway/infrastructure
 * `spec.infrastructure` of a Gateway: the labels and annotations the objects made for it (its
 * proxy's Deployment, pods, Service and ServiceAccount) carry, plus the label
 * `gateway.networking.k8s.io/gateway-name` the Gateway API recommends (GEP-1762). Keys and values
 * are checked as Kubernetes checks them (qualified names; label values of 63 characters at most);
 * keys this controller uses itself (`app.kubernetes.io/name`, `-instance`, `-managed-by`,
 * `-component`, and every `ingress-controller.io/` key) are refused, so a Gateway cannot move its
 * proxy out of the selector or take another proxy's objects. A refused entry is left out and named
 * in a problem; the others apply.
 */
import { isDns1123Subdomain } from "../render/patterns.ts";
import { show } from "../render/show.ts";
import type { Gateway } from "./api.ts";

/** The label the Gateway API names for objects made for a Gateway. */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

export interface InfrastructureMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Why an entry was left out (`spec.infrastructure.labels["k"] …`). */
  problems: string[];
}

/** The name part of a qualified name: 1-63 alphanumerics, `-`, `_`, `.`, alphanumeric at both ends. */
const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** The API's bounds: at most 8 labels and 8 annotations; an annotation value of 4096 characters. */
const MAX_ENTRIES = 8;
const MAX_ANNOTATION_VALUE = 4096;
const RESERVED_KEYS: ReadonlySet<string> = new Set([
  "app.kubernetes.io/name",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/component",
  GATEWAY_NAME_LABEL,
]);

/** A Kubernetes qualified name: `[prefix/]name`, the prefix a DNS subdomain. */
export function isQualifiedName(s: unknown): s is string {
  if (typeof s !== "string") return false;
  const slash = s.indexOf("/");
  if (slash < 0) return NAME.test(s);
  return isDns1123Subdomain(s.slice(0, slash)) && NAME.test(s.slice(slash + 1));
}

function reserved(key: string): boolean {
  return RESERVED_KEYS.has(key) || key.startsWith("ingress-controller.io/") || key.includes(".ingress-controller.io/");
}

/** The labels and annotations of `spec.infrastructure`, checked, with the Gateway's name label. */
export function infrastructureMetadata(gw: Gateway): InfrastructureMetadata {
  const out: InfrastructureMetadata = { labels: {}, annotations: {}, problems: [] };
  const infra = gw.spec?.infrastructure;
  for (const field of ["labels", "annotations"] as const) {
    const entries = Object.entries(infra?.[field] ?? {});
    for (const [i, [key, value]] of entries.entries()) {
      const at = `spec.infrastructure.${field}[${show(key)}]`;
      if (i >= MAX_ENTRIES) {
        out.problems.push(`${at}: more than ${MAX_ENTRIES} ${field}; left out`);
      } else if (!isQualifiedName(key)) {
        out.problems.push(`${at}: not a qualified name ([prefix/]name); left out`);
      } else if (reserved(key)) {
        out.problems.push(`${at}: the controller sets this key itself; left out`);
      } else if (typeof value !== "string") {
        out.problems.push(`${at}: the value is not a string; left out`);
      } else if (field === "labels" && value !== "" && !NAME.test(value)) {
        out.problems.push(`${at}: ${show(value)} is not a label value (63 characters at most); left out`);
      } else if (field === "annotations" && value.length > MAX_ANNOTATION_VALUE) {
        out.problems.push(`${at}: the value is longer than ${MAX_ANNOTATION_VALUE} characters; left out`);
      } else out[field][key] = value;
    }
  }
  const name = gw.metadata?.name ?? "";
  // a Gateway name may be longer than a label value can be: then no label (the annotation names it)
  if (NAME.test(name)) out.labels[GATEWAY_NAME_LABEL] = name;
  return out;
}
