/**
 * @module analytics/settings
 * The analytics part's settings as plain data (tests start it programmatically) and the adapter
 * from the parsed command line: `--enable-analytics` (A, B) / `--analytics` (C), the endpoint from
 * `INGRESS_CONTROLLER_ANALYTICS_URL` (no endpoint is compiled in), and which optional features are on.
 */
import { settingsFromConfig as auditSettingsFromConfig } from "../audit/settings_from_config.ts";
import { operatorNamespace } from "../cluster/access.ts";

/** The environment variable that holds the analytics endpoint. */
export const endpointVariable = "INGRESS_CONTROLLER_ANALYTICS_URL";

/** Which optional features are on (booleans only: never paths or names). */
export interface FeatureFlags {
  audit: boolean;
  rbac: boolean;
  validateProxyConfig: boolean;
  customTemplates: boolean;
}

export interface AnalyticsSettings {
  /** `--enable-analytics` / `--analytics`. */
  enabled: boolean;
  /** Value of INGRESS_CONTROLLER_ANALYTICS_URL; null or empty: nothing is sent. */
  endpoint: string | null;
  release: "A" | "B" | "C";
  version: string;
  /** `--ingress-class` (null: every ingress is handled). */
  ingressClass: string | null;
  /** `--restrict-to-operator-namespace` and the namespace it restricts to. */
  restrictToOperatorNamespace: boolean;
  operatorNamespace: string;
  features: FeatureFlags;
  qps: number;
  burst: number;
  /** Time between heartbeats; one hour (no flag sets it; tests inject a short one). */
  heartbeatMs: number;
  /** Bound of one POST. */
  sendTimeoutMs: number;
  /** Bound of the `controller_stopped` POST at stop. */
  stopTimeoutMs: number;
}

export const defaultAnalyticsSettings: AnalyticsSettings = {
  enabled: true,
  endpoint: null,
  release: "A",
  version: "9.0.0",
  ingressClass: null,
  restrictToOperatorNamespace: false,
  operatorNamespace: "default",
  features: { audit: false, rbac: false, validateProxyConfig: true, customTemplates: false },
  qps: 1e6,
  burst: 1_000_000,
  heartbeatMs: 3_600_000,
  sendTimeoutMs: 5_000,
  stopTimeoutMs: 2_000,
};

/** What the adapter needs from `Config` (lib/flags/config.ts). */
export interface ConfigLike {
  readonly release: "A" | "B" | "C";
  readonly version: string;
  has(name: string): boolean;
  get(name: string): unknown;
}

/** Settings from the parsed command line and the environment. */
export function settingsFromConfig(
  config: ConfigLike,
  env: { get(name: string): string | undefined } = Deno.env,
): AnalyticsSettings {
  const val = (name: string): unknown => (config.has(name) ? config.get(name) : undefined);
  const text = (name: string): string | null => {
    const v = val(name);
    return typeof v === "string" && v !== "" ? v : null;
  };
  const flag = (name: string, d: boolean): boolean => {
    const v = val(name);
    return typeof v === "boolean" ? v : d;
  };
  const num = (name: string, d: number): number => {
    const v = val(name);
    return typeof v === "number" ? v : d;
  };
  const audit = auditSettingsFromConfig(config);
  return {
    ...defaultAnalyticsSettings,
    // The option is named --enable-analytics in A and B, --analytics in C; both default to true.
    enabled: config.has("enable-analytics") ? flag("enable-analytics", true) : flag("analytics", true),
    endpoint: env.get(endpointVariable)?.trim() || null,
    release: config.release,
    version: config.version,
    ingressClass: text("ingress-class"),
    restrictToOperatorNamespace: flag("restrict-to-operator-namespace", false),
    operatorNamespace: operatorNamespace(),
    features: {
      audit: audit.policyFile !== null && (audit.log !== null || audit.webhook !== null),
      rbac: flag("rbac", false),
      // Release C has no --validate-proxy-config and never validates (as lib/controller/settings.ts).
      validateProxyConfig: config.release !== "C" && flag("validate-proxy-config", true),
      customTemplates: text("custom-templates") !== null,
    },
    qps: num("qps", defaultAnalyticsSettings.qps),
    burst: num("burst", defaultAnalyticsSettings.burst),
  };
}
