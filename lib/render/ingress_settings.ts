/**
 * @module render/ingress_settings
 * The settings that apply to a whole Ingress rather than to one backend: its redirects, `www`
 * twins, passthrough, client certificates, regex paths, whether it is a canary, and `proxy`. Each
 * is read as every other key is (annotations/resolve.ts): the global and class layers below the
 * annotation, and the `annotation-risk-limit`, so an administrator who turns a risk level off turns
 * these off too. (The keys of a route's backend are read by render/settings.ts, each feature's by
 * its module under render/features/, through the same resolution.)
 */
import { resolveSetting } from "../annotations/resolve.ts";
import type { CanarySettings } from "./canary.ts";
import type { ResolveContext, SettingReport } from "./settings_reader.ts";

export interface IngressSettings {
  sslRedirect: boolean;
  /** The redirect to HTTPS: its status code, then `s` when it drops the trailing slash (`ssl-redirect-trailing-slash`). */
  redirectCode: string;
  www: boolean;
  passthrough: boolean;
  forceRedirect: boolean;
  /** `path-regex`: which paths of the Ingress are regexes: none, the ImplementationSpecific ones, all. */
  regexPaths: "false" | "true" | "all";
  /** null: not a canary. */
  canary: CanarySettings | null;
  /** `client-cert-ca-secret` (a Secret of the Ingress's namespace) and `client-cert-verify`; null: none. */
  clientCert: { name: string; verify: "required" | "optional" } | null;
}

/** The settings of an Ingress with `annotations` (reported problems: values that were set but not used). */
export function ingressSettings(
  resolve: ResolveContext,
  annotations: Readonly<Record<string, string>>,
  report: SettingReport,
): IngressSettings {
  const layers = { ...resolve.layers, ingress: annotations };
  const get = <T>(key: string, tail: string): T | null => {
    const r = resolveSetting<T>(key, layers, { disableRiskAtOrAbove: resolve.disableRiskAtOrAbove });
    for (const p of r.problems) report("InvalidAnnotation", `${p.message}${tail}`);
    return r.value;
  };
  // Read for its problems only: the proxy group is decided before the model (lib/controller/groups.ts).
  get<string>("proxy", "; the Ingress is served by its class's shared proxy");
  // every canary key is read (a bad value is reported even when the Ingress is not a canary)
  const canary: CanarySettings = {
    weight: get<number>("canary-weight", "; ignored") ?? 0,
    header: get<string>("canary-header", "; ignored"),
    headerValue: get<string>("canary-header-value", "; ignored") ?? "always",
    cookie: get<string>("canary-cookie", "; ignored"),
  };
  const name = get<string>("client-cert-ca-secret", "; ignored");
  const verify = get<"required" | "optional">("client-cert-verify", "; ignored") ?? "required";
  return {
    sslRedirect: get<boolean>("ssl-redirect", "; using true") ?? true,
    redirectCode: (get<string>("ssl-redirect-code", "; using 308") ?? "308") +
      (get<string>("ssl-redirect-trailing-slash", "; using keep") === "drop" ? "s" : ""),
    www: get<boolean>("www-redirect", "; using false") ?? false,
    passthrough: get<boolean>("ssl-passthrough", "; using false") ?? false,
    forceRedirect: get<boolean>("force-ssl-redirect", "; using false") ?? false,
    regexPaths: get<"false" | "true" | "all">("path-regex", "; ignored") ?? "false",
    canary: get<boolean>("canary", "; ignored") ? canary : null,
    clientCert: name === null ? null : { name, verify },
  };
}
