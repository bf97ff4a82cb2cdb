/**
 * @module render/settings_reader
 * How the settings of a route are read from its annotations: each key of the table
 * (lib/annotations/table.ts) through its parser and the layers' precedence and the risk limit
 * (lib/annotations/resolve.ts: global < class < Ingress < Service), a refused value reported once
 * per read and left out. The features of a backend variant (lib/render/features/) read their keys
 * through one SettingsReader; the Ingress-wide settings (render/ingress_settings.ts) use the same
 * context.
 */
import { type LayerValues, resolveSetting } from "../annotations/resolve.ts";
import type { Risk } from "../annotations/table.ts";
import { type SecretLike, tlsSummaryOf } from "./tls_secret.ts";

/** A refused value: the annotation and its one-line message. */
export type SettingReport = (reason: string, message: string) => void;

type Ann = Readonly<Record<string, string>>;

/** The layers below the Ingress (global, per class: bare keys) and the risk cut-off of the annotations. */
export interface ResolveContext {
  layers: { global?: Ann; class?: Ann };
  disableRiskAtOrAbove: Risk | null;
}

/** A Secret of the Ingress's namespace that the proxy writes (contracts.md §4). */
export interface SecretId {
  namespace: string;
  name: string;
}

/** The Ingress's namespace and its Secrets (as the controller caches them: summaries, no data). */
export interface SecretScope {
  namespace: string;
  secret(name: string): SecretLike | undefined;
}

/** What a feature reads its keys with (see the module header). */
export interface SettingsReader {
  /** Every layer, the Ingress's and the Service's annotations included. */
  readonly layers: LayerValues;
  readonly risk: { disableRiskAtOrAbove: Risk | null };
  readonly report: SettingReport;
  /** The Ingress's namespace and Secrets; null: the keys naming a Secret render nothing. */
  readonly secrets: SecretScope | null;
  /** The key's value: the highest layer's valid one, else the table's default. */
  get<T>(key: string): T | null;
  /** Only a value some layer set (null at the default, which leaves the `defaults` section in charge). */
  set<T>(key: string): T | null;
}

/** A reader of the layers below and the Ingress's and Service's annotations. */
export function settingsReader(
  ingress: Ann,
  service: Ann,
  context: ResolveContext,
  report: SettingReport,
  secrets: SecretScope | null,
): SettingsReader {
  const layers = { ...context.layers, ingress, service };
  const risk = { disableRiskAtOrAbove: context.disableRiskAtOrAbove };
  const read = <T>(key: string) => {
    const r = resolveSetting<T>(key, layers, risk);
    for (const p of r.problems) report("InvalidAnnotation", `${p.message}; ignored`);
    return r;
  };
  return {
    layers,
    risk,
    report,
    secrets,
    get: <T>(key: string) => read<T>(key).value,
    set: <T>(key: string) => {
      const r = read<T>(key);
      return r.source === "default" ? null : r.value;
    },
  };
}

/**
 * Checks the Secret `name` the annotation `key` names for `kind` (summary verdicts only) and
 * reports why it is unusable (`fallback`: what happens then); the Secret when usable, else null.
 */
export function usableSecret(
  r: SettingsReader,
  key: string,
  name: string,
  kind: "ca" | "htpasswd",
  fallback: string,
): SecretId | null {
  const secrets = r.secrets;
  if (!secrets) return null;
  const where = `annotation ingress-controller.io/${key}: Secret ${secrets.namespace}/${name}`;
  const secret = secrets.secret(name);
  const summary = secret && tlsSummaryOf(secret);
  let why: string | null = null;
  if (!summary) why = "not found";
  else if (kind === "ca" && !summary.ca) why = `is unusable: ${summary.caReason}`;
  else if (kind === "htpasswd" && !summary.htpasswd) why = "has no auth key (htpasswd file)";
  else if (kind === "htpasswd" && summary.htpasswd!.refused.length > 0) {
    r.report("InvalidSecret", `${where}: ${summary.htpasswd!.refused.join("; ")}; those lines are ignored`);
  }
  if (why === null) return { namespace: secrets.namespace, name };
  r.report("InvalidSecret", `${where} ${why}; ${fallback}`);
  return null;
}
