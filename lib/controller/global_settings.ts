/**
 * @module controller/global_settings
 * The controller's global ConfigMap (`ingress-controller` in the controller's namespace; the Helm
 * chart creates it) and the proxy keys of a class's parameters ConfigMap, which override the
 * global values for the same keys (README "Global settings"): timeouts, `max-connections`,
 * `ssl-min-version`, `ssl-ciphers`, `ssl-ciphersuites`, `http2`, `access-log`,
 * `access-log-sample`, `default-certificate`, `accept-proxy-protocol`, `server-header`, `nginx-compat`,
 * `namespace-ownership`, `pinned-hosts`; in the global ConfigMap only, `annotation-risk-limit` and
 * `dedicated-proxies`. A key that names one of our annotations (bare, as `hsts`) is that
 * annotation's value at the global or class layer (annotations/resolve.ts). Every value is parsed
 * with an anchored pattern; a bad one is reported and that key keeps its lower layer's value, so
 * one bad key never affects another.
 */
import { annotationName, ANNOTATIONS, type Risk, RISKS, specOf } from "../annotations/table.ts";
import { riskDisabled, showValue } from "../annotations/resolve.ts";
import * as v from "../annotations/values.ts";
import { isDns1123Subdomain } from "../render/patterns.ts";
import {
  CIPHERS,
  DEFAULT_PROXY_OPTIONS,
  type ProxyOptions,
  SERVER_HEADER,
  SERVER_HEADER_MAX,
  type SslVersion,
} from "../render/proxy_options.ts";
import {
  DEFAULT_OWNERSHIP,
  NAMESPACE_OWNERSHIP,
  type NamespaceOwnership,
  type OwnershipPolicy,
  parsePins,
} from "../render/host_ownership.ts";
import { AUTH_URL_ALLOWED_HOSTS, parseHostPatterns } from "../annotations/auth_target.ts";

/** The name of the global ConfigMap in the controller's namespace. */
export const GLOBAL_CONFIGMAP = "ingress-controller";

export interface GlobalSettings {
  /** The proxy-wide options, with `defaultCertificate` unresolved (see `defaultCertificateRef`). */
  proxy: Omit<ProxyOptions, "defaultCertificate">;
  /** `namespace/name` of the default certificate Secret; null: none. */
  defaultCertificateRef: string | null;
  /** Translate `nginx.ingress.kubernetes.io/*` annotations (README "Migrating from ingress-nginx"). */
  nginxCompat: boolean;
  /** Annotations of this risk and above are disabled; null: none (global ConfigMap only). */
  annotationRiskLimit: Risk | null;
  /** Who may serve a host of a shared proxy (`namespace-ownership`, `pinned-hosts`; docs/host-ownership.md). */
  ownership: OwnershipPolicy;
  /**
   * Whether an Ingress may have a proxy of its own (`ingress-controller.io/proxy: dedicated`), which
   * the controller writes in the Ingress's namespace; false: such Ingresses join their class's
   * shared proxy (global ConfigMap only; the Helm chart writes it from `dedicatedProxies.enabled`,
   * with the RBAC to match).
   */
  dedicatedProxies: boolean;
  /** Bare annotation keys set at this layer (for resolveSetting's `global` / `class` layer). */
  annotations: Readonly<Record<string, string>>;
}

export const defaultGlobalSettings: GlobalSettings = Object.freeze({
  proxy: (({ defaultCertificate: _, ...rest }) => rest)(DEFAULT_PROXY_OPTIONS),
  defaultCertificateRef: null,
  nginxCompat: false,
  annotationRiskLimit: null,
  ownership: DEFAULT_OWNERSHIP,
  dedicatedProxies: true,
  annotations: Object.freeze({}),
});

export interface SettingsProblem {
  key: string;
  message: string;
}

type Layer = "global" | "class";

const TIMEOUT_KEYS = {
  "timeout-connect": "connect",
  "timeout-client": "client",
  "timeout-server": "server",
  "timeout-http-request": "httpRequest",
  "timeout-tunnel": "tunnel",
} as const;
const MAXCONN = /^[1-9][0-9]{0,6}$/;
const SSL_VERSION = /^TLSv1\.[0-3]$/;
const BOOL = /^(?:true|false)$/;
const ACCESS_LOG = /^(?:json|text|off)$/;
const PERCENT = /^(?:[1-9][0-9]?|100)$/;
const SECRET_REF = /^(?:([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\/)?([^/]+)$/;
const RISK = /^(?:low|medium|high|critical|none)$/;

/** The keys this module reads (class parameters leave them to it). */
export const PROXY_SETTING_KEYS: ReadonlySet<string> = new Set([
  ...Object.keys(TIMEOUT_KEYS),
  "max-connections",
  "ssl-min-version",
  "ssl-ciphers",
  "ssl-ciphersuites",
  "http2",
  "access-log",
  "access-log-sample",
  "default-certificate",
  "accept-proxy-protocol",
  "server-header",
  "nginx-compat",
  "annotation-risk-limit",
  "namespace-ownership",
  "pinned-hosts",
  AUTH_URL_ALLOWED_HOSTS,
  "dedicated-proxies",
]);

/** Whether a ConfigMap key is read by this module (a setting, or one of our annotations). */
export function isSettingKey(key: string): boolean {
  return PROXY_SETTING_KEYS.has(key) || specOf(key) !== undefined;
}

/**
 * The settings of a ConfigMap's `data` over `base` (the defaults for the global ConfigMap, the
 * global settings for a class). With `layer: "global"` unknown keys are reported; a class's other
 * keys belong to class_params.ts.
 */
export function parseGlobalSettings(
  data: Readonly<Record<string, string>> | undefined,
  base: GlobalSettings,
  layer: Layer,
  controllerNamespace: string,
): { settings: GlobalSettings; problems: SettingsProblem[] } {
  const problems: SettingsProblem[] = [];
  const bad = (key: string, value: string, why: string) =>
    problems.push({ key, message: `${key}: ${showValue(value)} ${why}` });
  const proxy = { ...base.proxy, timeouts: { ...base.proxy.timeouts } };
  let { defaultCertificateRef, nginxCompat, annotationRiskLimit, ownership, dedicatedProxies } = base;
  const annotations: Record<string, string> = {};
  for (const key of Object.keys(data ?? {}).sort()) {
    const value = data![key];
    const keeps = layer === "global" ? "the default applies" : "the global value applies";
    if (key in TIMEOUT_KEYS) {
      const p = v.duration.parse(value);
      if (p.ok) proxy.timeouts[TIMEOUT_KEYS[key as keyof typeof TIMEOUT_KEYS]] = value;
      else bad(key, value, `${p.reason}; ${keeps}`);
    } else if (key === "max-connections") {
      if (MAXCONN.test(value)) proxy.maxconn = Number(value);
      else bad(key, value, `is not a whole number from 1 to 9999999; ${keeps}`);
    } else if (key === "ssl-min-version") {
      if (SSL_VERSION.test(value)) proxy.sslMinVersion = value as SslVersion;
      else bad(key, value, `is not TLSv1.0, TLSv1.1, TLSv1.2 or TLSv1.3; ${keeps}`);
    } else if (key === "ssl-ciphers" || key === "ssl-ciphersuites") {
      if (CIPHERS.test(value)) proxy[key === "ssl-ciphers" ? "sslCiphers" : "sslCiphersuites"] = value;
      else bad(key, value, `is not a colon-separated OpenSSL cipher list; ${keeps}`);
    } else if (key === "http2") {
      if (BOOL.test(value)) proxy.http2 = value === "true";
      else bad(key, value, `is not "true" or "false"; ${keeps}`);
    } else if (key === "access-log") {
      if (ACCESS_LOG.test(value)) proxy.accessLog = value as ProxyOptions["accessLog"];
      else bad(key, value, `is not json, text or off; ${keeps}`);
    } else if (key === "access-log-sample") {
      if (PERCENT.test(value)) proxy.accessLogSample = Number(value);
      else bad(key, value, `is not a percentage from 1 to 100; ${keeps}`);
    } else if (key === "default-certificate") {
      const m = SECRET_REF.exec(value);
      if (m && isDns1123Subdomain(m[2])) defaultCertificateRef = `${m[1] ?? controllerNamespace}/${m[2]}`;
      else bad(key, value, `is not a Secret name or namespace/name; ${keeps}`);
    } else if (key === "accept-proxy-protocol") {
      // a frontend setting: the listeners are shared by every Ingress of the proxy (annotations/resolve.ts)
      const p = v.cidrList.parse(value);
      if (p.ok) proxy.acceptProxy = p.value;
      else bad(key, value, `${p.reason}; ${keeps}`);
    } else if (key === "server-header") {
      if (SERVER_HEADER.test(value) && value.length <= SERVER_HEADER_MAX) proxy.serverHeader = value;
      else {
        bad(
          key,
          value,
          `is not a Server header value (product tokens such as nginx or name/1.0, words separated by ` +
            `single spaces, at most ${SERVER_HEADER_MAX} characters, no % ' " or \\; empty: none); ${keeps}`,
        );
      }
    } else if (key === "nginx-compat") {
      if (BOOL.test(value)) nginxCompat = value === "true";
      else bad(key, value, `is not "true" or "false"; ${keeps}`);
    } else if (key === "annotation-risk-limit") {
      if (layer !== "global") bad(key, value, "is a setting of the controller's global ConfigMap only; ignored here");
      else if (RISK.test(value)) annotationRiskLimit = value === "none" ? null : value as Risk;
      else bad(key, value, `is not ${RISKS.join(", ")} or none; ${keeps}`);
    } else if (key === "namespace-ownership") {
      if ((NAMESPACE_OWNERSHIP as readonly string[]).includes(value)) {
        ownership = { ...ownership, mode: value as NamespaceOwnership };
      } else bad(key, value, `is not ${NAMESPACE_OWNERSHIP.join(" or ")}; ${keeps}`);
    } else if (key === "pinned-hosts") {
      const p = parsePins(value);
      // A class's pins replace the global ones for its proxy (a class names the hosts of its own tenants).
      if (p.ok) ownership = { ...ownership, pins: p.pins };
      else bad(key, value, `${p.reason}; ${keeps}`);
    } else if (key === AUTH_URL_ALLOWED_HOSTS) {
      // The hosts auth-url may name (render/features/ext_auth.ts reads it from this layer's values, so a
      // class's list replaces the global one); a bad list keeps the lower layer's.
      if (parseHostPatterns(value)) annotations[key] = value;
      else bad(key, value, `is not a comma-separated list of host names or *.domain patterns; ${keeps}`);
    } else if (key === "dedicated-proxies") {
      if (layer !== "global") bad(key, value, "is a setting of the controller's global ConfigMap only; ignored here");
      else if (BOOL.test(value)) dedicatedProxies = value === "true";
      else bad(key, value, `is not "true" or "false"; ${keeps}`);
    } else if (layer === "global" && !specOf(key)) {
      problems.push({ key, message: `key ${showValue(key)} is not a setting of this controller; ignored` });
    }
    // Our annotations at this layer (timeouts are both: the defaults section and the layer's value).
    const spec = specOf(key);
    if (spec?.ingressOnly) bad(key, value, "is set only on an Ingress (it says what that Ingress is); ignored here");
    else if (spec) {
      const p = spec.value.parse(value);
      if (p.ok) annotations[key] = value;
      else if (!(key in TIMEOUT_KEYS) && !PROXY_SETTING_KEYS.has(key)) bad(key, value, `${p.reason}; ${keeps}`);
    }
  }
  return {
    settings: {
      proxy,
      defaultCertificateRef,
      nginxCompat,
      annotationRiskLimit,
      ownership,
      dedicatedProxies,
      annotations,
    },
    problems,
  };
}

/**
 * The frontend settings an Ingress with a proxy of its own (`proxy: dedicated`) sets by annotation
 * (annotations/resolve.ts allows them there, and only there), as bare keys to read with
 * `parseGlobalSettings(data, global, "class", …)` over the global settings; keys disabled by the
 * global `annotation-risk-limit` are left out and reported.
 */
export function dedicatedFrontendData(
  annotations: Readonly<Record<string, string>> | undefined,
  riskLimit: Risk | null,
): { data: Record<string, string>; problems: SettingsProblem[] } {
  const data: Record<string, string> = {};
  const problems: SettingsProblem[] = [];
  for (const spec of ANNOTATIONS) {
    const value = annotations?.[annotationName(spec)];
    if (spec.scope !== "frontend" || !PROXY_SETTING_KEYS.has(spec.key) || value === undefined) continue;
    if (riskDisabled(spec.risk, riskLimit)) {
      problems.push({
        key: spec.key,
        message: `${spec.key} is disabled (risk ${spec.risk}) by the controller's annotation-risk-limit; ignored`,
      });
    } else data[spec.key] = value;
  }
  return { data, problems };
}
