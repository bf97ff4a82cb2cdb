/**
 * @module controller/gateway_params
 * Per-Gateway proxy settings: a Gateway's `spec.infrastructure.parametersRef` (a
 * LocalParametersReference: group, kind, name) names a ConfigMap in the Gateway's namespace with
 * the keys of a class's parameters ConfigMap (lib/controller/class_params.ts, the same patterns):
 * the proxy pod's `replicas`, `service-type`, `service-annotations`, `node-selector` and
 * `resources.*`, and the proxy settings that concern that proxy alone (timeouts,
 * `max-connections`, TLS versions and ciphers, `http2`, the access log, `accept-proxy-protocol`,
 * `server-header`). Keys that reach beyond the Gateway's own proxy (`default-certificate` names a
 * Secret of any namespace; the Ingress-only and global keys) are refused. `replicas`, `resources.*`
 * and `node-selector` need the proxy in the Gateway's namespace
 * (`--gateway-proxies-in-gateway-namespace`): in the controller's namespace its pods would be
 * outside the quotas of the namespace that asked for them.
 *
 * Unlike a class's parameters (a bad key keeps its default), anything wrong refuses the Gateway:
 * the Gateway API asks for `Accepted=False` with the reason `InvalidParameters` when the referent
 * is missing, of an unsupported kind, or malformed, and a Gateway served without what it asked for
 * would be served wrongly.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { show } from "../render/show.ts";
import type { Gateway } from "../gateway/api.ts";
import { type ClassParams, defaultClassParams, parseClassParams } from "./class_params.ts";
import { type GlobalSettings, parseGlobalSettings } from "./global_settings.ts";

/** The proxy settings a Gateway's parameters may set. */
export const GATEWAY_SETTING_KEYS: ReadonlySet<string> = new Set([
  "timeout-connect",
  "timeout-client",
  "timeout-server",
  "timeout-http-request",
  "timeout-tunnel",
  "max-connections",
  "ssl-min-version",
  "ssl-ciphers",
  "ssl-ciphersuites",
  "http2",
  "access-log",
  "access-log-sample",
  "accept-proxy-protocol",
  "server-header",
]);
/** The proxy pod's keys that place pods or claim resources: only in the Gateway's own namespace. */
const OWN_NAMESPACE_KEYS = /^(?:replicas|node-selector|resources\.(?:requests|limits)\.(?:cpu|memory))$/;
const POD_KEYS =
  /^(?:replicas|service-type|service-annotations|node-selector|resources\.(?:requests|limits)\.(?:cpu|memory))$/;
/** Beyond this many characters of data the ConfigMap is not per-Gateway settings (the cache keeps no more). */
export const MAX_PARAMETERS_DATA = 16_384;

/** The ConfigMap a Gateway's parametersRef names (`namespace/name`), a problem with the reference, or neither. */
export function gatewayParametersRef(gw: Gateway): { ref: string | null; problem: string | null } {
  const p = gw.spec?.infrastructure?.parametersRef as { group?: unknown; kind?: unknown; name?: unknown } | undefined;
  if (p === undefined || p === null) return { ref: null, problem: null };
  if ((p.group ?? "") !== "" || p.kind !== "ConfigMap" || typeof p.name !== "string" || p.name === "") {
    return {
      ref: null,
      problem: `spec.infrastructure.parametersRef must name a ConfigMap (group "", kind ConfigMap) in the Gateway's ` +
        `namespace; got group ${show(String(p.group ?? ""))}, kind ${show(String(p.kind ?? ""))}`,
    };
  }
  return { ref: `${gw.metadata?.namespace ?? ""}/${p.name}`, problem: null };
}

export interface GatewayParameters {
  params: ClassParams;
  settings: GlobalSettings;
  /** Why the Gateway is refused (InvalidParameters), naming the key; null: the parameters apply. */
  problem: string | null;
}

/**
 * The settings of the parameters ConfigMap `cm` (`ref`: its `namespace/name`; undefined: not found)
 * over `global`. `inGatewayNamespace`: the proxy runs in the Gateway's namespace.
 */
export function parseGatewayParameters(
  ref: string,
  cm: KubeObject | undefined,
  global: GlobalSettings,
  inGatewayNamespace: boolean,
  operatorNamespace: string,
): GatewayParameters {
  const refused = (why: string): GatewayParameters => ({
    params: defaultClassParams,
    settings: global,
    problem: `spec.infrastructure.parametersRef: ConfigMap ${ref} ${why}`,
  });
  if (!cm) return refused("not found");
  if (cm[TOO_LARGE] === true) {
    return refused(`holds more than ${MAX_PARAMETERS_DATA} characters of data: not per-Gateway settings`);
  }
  const data: Record<string, string> = cm.data ?? {};
  const problems: string[] = [];
  for (const key of Object.keys(data).sort()) {
    if (!POD_KEYS.test(key) && !GATEWAY_SETTING_KEYS.has(key)) {
      problems.push(`parameter ${show(key.slice(0, 80))} is not a per-Gateway parameter`);
    } else if (!inGatewayNamespace && OWN_NAMESPACE_KEYS.test(key)) {
      problems.push(
        `parameter ${key} needs the Gateway's proxy in its own namespace (--gateway-proxies-in-gateway-namespace)`,
      );
    }
  }
  const pod = parseClassParams(Object.fromEntries(Object.entries(data).filter(([k]) => POD_KEYS.test(k))));
  const proxy = parseGlobalSettings(
    Object.fromEntries(Object.entries(data).filter(([k]) => GATEWAY_SETTING_KEYS.has(k))),
    global,
    "class",
    operatorNamespace,
  );
  problems.push(...pod.problems.map((p) => p.message), ...proxy.problems.map((p) => `parameter ${p.message}`));
  if (problems.length > 0) return refused(problems.join("; "));
  return { params: pod.params, settings: proxy.settings, problem: null };
}

/** Marks a cached ConfigMap whose data was too large to keep (gatewayParamsShape); not an API field. */
const TOO_LARGE = "dataTooLarge";

/** Beyond this many characters a ConfigMap's `ca.crt` is no CA bundle a Gateway's clients are checked against. */
export const MAX_CA_BUNDLE = 262_144;

/**
 * What the cache keeps of a ConfigMap: its name and, while small, its data; of a larger one its
 * `ca.crt` alone (a CA bundle spec.tls.frontend may name, lib/gateway/client_validation.ts), up to
 * MAX_CA_BUNDLE characters.
 */
export function gatewayParamsShape(cm: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = cm.metadata;
  const data: Record<string, string> = cm.data ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(data)) size += k.length + String(v).length;
  const small = size <= MAX_PARAMETERS_DATA;
  const ca = data["ca.crt"];
  const bundle = !small && typeof ca === "string" && ca.length <= MAX_CA_BUNDLE ? { data: { "ca.crt": ca } } : {};
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, uid, resourceVersion },
    ...(small ? { data } : { [TOO_LARGE]: true, ...bundle }),
  };
}
