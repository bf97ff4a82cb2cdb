/**
 * @module controller/class_params
 * Per-class proxy settings: an IngressClass's `spec.parameters` names a ConfigMap (apiGroup "",
 * kind ConfigMap, scope Namespace) in the controller's namespace whose keys set the class's
 * shared proxy: `replicas`, `service-type`, `service-annotations` (JSON object),
 * `resources.requests.cpu|memory`, `resources.limits.cpu|memory`, `node-selector` (JSON object).
 * Every value is checked with an anchored pattern; a bad one is reported (a Warning Event on the
 * IngressClass) and that key keeps its default. Unknown keys are reported too. The proxy settings
 * a class shares with the global ConfigMap (timeouts, TLS, access log, …) are read by
 * controller/global_settings.ts.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { isSettingKey } from "./global_settings.ts";
import { QUANTITY } from "../cluster/quantity.ts";

export interface ClassParams {
  /** null: the proxy pod spec's default. */
  replicas: number | null;
  /** null: the platform's Service type. */
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer" | null;
  /** Added to (and overriding) the platform's Service annotations. */
  serviceAnnotations: Readonly<Record<string, string>>;
  resources: { requests: Readonly<Record<string, string>>; limits: Readonly<Record<string, string>> };
  nodeSelector: Readonly<Record<string, string>>;
}

export const defaultClassParams: ClassParams = Object.freeze({
  replicas: null,
  serviceType: null,
  serviceAnnotations: Object.freeze({}),
  resources: Object.freeze({ requests: Object.freeze({}), limits: Object.freeze({}) }),
  nodeSelector: Object.freeze({}),
});

export interface ParamsProblem {
  key: string;
  message: string;
}

/** Where an IngressClass points for its parameters: `namespace/name`, or a problem, or null (none). */
export function parametersRef(
  ingressClass: KubeObject | undefined,
  controllerNamespace: string,
): { ref: string | null; problem: string | null } {
  const p = ingressClass?.spec?.parameters;
  if (!p) return { ref: null, problem: null };
  const ns = p.namespace ?? controllerNamespace;
  if ((p.apiGroup ?? "") !== "" || p.kind !== "ConfigMap" || p.scope !== "Namespace" || ns !== controllerNamespace) {
    return {
      ref: null,
      problem: `spec.parameters must name a ConfigMap (core API group, kind ConfigMap, scope Namespace) in the ` +
        `controller's namespace ${controllerNamespace}; the defaults apply`,
    };
  }
  return { ref: `${ns}/${p.name}`, problem: null };
}

const REPLICAS = /^(?:[0-9]|[1-9][0-9])$/;
const SERVICE_TYPE = /^(?:ClusterIP|NodePort|LoadBalancer)$/;
/** Kubernetes qualified name (annotation and label keys), optionally with a DNS prefix. */
const QUALIFIED = /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const ANNOTATION_VALUE = /^[\x20-\x7e]{0,1024}$/;
const RESOURCE_KEY = /^resources\.(requests|limits)\.(cpu|memory)$/;

/** The settings in a parameters ConfigMap's `data`; a bad key keeps its default and adds a problem. */
export function parseClassParams(data: Readonly<Record<string, string>> | undefined): {
  params: ClassParams;
  problems: ParamsProblem[];
} {
  const problems: ParamsProblem[] = [];
  const bad = (key: string, why: string) =>
    problems.push({ key, message: `parameter ${key}: ${JSON.stringify(String(data?.[key]).slice(0, 80))} ${why}` });
  let replicas: number | null = null;
  let serviceType: ClassParams["serviceType"] = null;
  let serviceAnnotations: Record<string, string> = {};
  let nodeSelector: Record<string, string> = {};
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    const res = RESOURCE_KEY.exec(key);
    if (key === "replicas") {
      if (REPLICAS.test(value)) replicas = Number(value);
      else bad(key, "is not a whole number from 0 to 99; the default applies");
    } else if (key === "service-type") {
      if (SERVICE_TYPE.test(value)) serviceType = value as ClassParams["serviceType"];
      else bad(key, "is not ClusterIP, NodePort or LoadBalancer; the default applies");
    } else if (key === "service-annotations") {
      const m = stringMap(value, QUALIFIED, ANNOTATION_VALUE);
      if (m) serviceAnnotations = m;
      else bad(key, "is not a JSON object of annotation names to printable strings; none are added");
    } else if (key === "node-selector") {
      const m = stringMap(value, QUALIFIED, LABEL_VALUE);
      if (m) nodeSelector = m;
      else bad(key, "is not a JSON object of label names to label values; no node selector");
    } else if (res) {
      if (QUANTITY.test(value)) (res[1] === "requests" ? requests : limits)[res[2]] = value;
      else bad(key, "is not a quantity like 250m, 1.5 or 128Mi; the default applies");
    } else if (!isSettingKey(key)) {
      // Proxy settings and annotation defaults are read by global_settings.ts.
      problems.push({ key, message: `parameter ${JSON.stringify(key.slice(0, 80))} is unknown; ignored` });
    }
  }
  return {
    params: { replicas, serviceType, serviceAnnotations, resources: { requests, limits }, nodeSelector },
    problems,
  };
}

function stringMap(json: string, keyPattern: RegExp, valuePattern: RegExp): Record<string, string> | null {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (!keyPattern.test(k) || typeof val !== "string" || !valuePattern.test(val)) return null;
    out[k] = val;
  }
  return out;
}
