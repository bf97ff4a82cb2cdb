/**
 * @module admission/settings
 * The validating webhook's settings as plain data, and the adapter from the parsed command line.
 * `INGRESS_CONTROLLER_WEBHOOK_URL` (environment) replaces the Service reference of the registration
 * with a URL, for tests and controllers run outside the cluster (the API server must reach it).
 */
import { operatorNamespace } from "../cluster/access.ts";

export const WEBHOOK_URL_ENV = "INGRESS_CONTROLLER_WEBHOOK_URL";

export interface AdmissionSettings {
  /** `--enable-validating-webhook` (A only; false in B and C). */
  readonly enabled: boolean;
  /** `--bypass-validating-webhook-xray`: only the static checks run. */
  readonly bypassXray: boolean;
  readonly operatorService: string;
  readonly operatorNamespace: string;
  /** The Service port the API server calls: `--secure-port`. */
  readonly securePort: number;
  readonly ingressClass: string | null;
  readonly restrictToOperatorNamespace: boolean;
  readonly customTemplates: string | null;
  readonly haproxy: string;
  /** The registration's timeoutSeconds; each review is answered before it (admission/handler.ts). */
  readonly timeoutSeconds: number;
  /** Registration target override (`INGRESS_CONTROLLER_WEBHOOK_URL`); null: the operator Service. */
  readonly url: string | null;
  readonly qps: number;
  readonly burst: number;
}

export const defaultAdmissionSettings: AdmissionSettings = Object.freeze({
  enabled: false,
  bypassXray: false,
  operatorService: "ingress-controller-operator",
  operatorNamespace: "default",
  securePort: 443,
  ingressClass: null,
  restrictToOperatorNamespace: false,
  customTemplates: null,
  haproxy: "haproxy",
  timeoutSeconds: 10,
  url: null,
  qps: 1e6,
  burst: 1_000_000,
});

/** What the adapter needs from `Config` (lib/flags/config.ts). */
export interface ConfigLike {
  has(name: string): boolean;
  get(name: string): unknown;
}

export function settingsFromConfig(
  config: ConfigLike,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): AdmissionSettings {
  const str = (name: string): string | null => {
    const v = config.has(name) ? config.get(name) as string | null : null;
    return v === null || v === undefined || v.trim() === "" ? null : v;
  };
  const bool = (name: string) => config.has(name) && config.get(name) === true;
  const url = env(WEBHOOK_URL_ENV)?.trim() || null;
  return Object.freeze({
    ...defaultAdmissionSettings,
    enabled: bool("enable-validating-webhook"),
    bypassXray: bool("bypass-validating-webhook-xray"),
    operatorService: str("operator-service") ?? defaultAdmissionSettings.operatorService,
    operatorNamespace: operatorNamespace(),
    securePort: config.get("secure-port") as number,
    ingressClass: str("ingress-class"),
    restrictToOperatorNamespace: bool("restrict-to-operator-namespace"),
    customTemplates: str("custom-templates"),
    url,
    qps: config.get("qps") as number,
    burst: config.get("burst") as number,
  });
}
