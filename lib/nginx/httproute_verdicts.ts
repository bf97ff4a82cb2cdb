/**
 * @module nginx/httproute_verdicts
 * The migration preview's verdict on each annotation of an Ingress: the Gateway API form it becomes,
 * or why it stays an Ingress annotation (no form, a form not served here or not for its value, or a
 * restriction whose loss withholds the Ingress's route).
 */
import { readAnnotation } from "../annotations/resolve.ts";
import { PREFIX, specOf } from "../annotations/table.ts";
import { bool } from "../annotations/values.ts";
import { NGINX_PREFIX, NGINX_RULES } from "./table.ts";
import { checkIngress } from "./translate.ts";
import { convertedAnnotations } from "./convert.ts";
import { setting } from "./httproute_settings.ts";
import { CORS_KEYS } from "./httproute_cors.ts";
import { HTTP_PORT, type Reading } from "./httproute_types.ts";

/**
 * Keys of ours whose Ingress must not become an HTTPRoute here (what the route would lose): access
 * restrictions the Gateway API cannot express, and TLS towards the backend or passed through.
 */
export const WITHHOLDS: Readonly<Record<string, string>> = {
  "allow-list": "a source address allow-list",
  "deny-list": "a source address deny-list",
  "auth-url": "external authentication",
  "auth-signin": "external authentication",
  "auth-basic-secret": "basic authentication",
  "client-cert-ca-secret": "client certificate verification",
  "backend-ca-secret": "verification of the backend's certificate (BackendTLSPolicy is not served here yet)",
  "ssl-passthrough": "TLS passthrough (a TLSRoute's job, not an HTTPRoute's)",
};

/** Keys with a Gateway API form that the Gateways do not serve. */
function notServedYet(key: string): string | null {
  if (key.startsWith("sticky-cookie")) return "sessionPersistence is experimental and not served here";
  return null;
}

/** The Gateway API form of each key of ours that has one (the keys the preview maps). */
const FORMS: Readonly<Record<string, string>> = {
  "ssl-redirect": `an HTTPRoute on the HTTP listener (port ${HTTP_PORT}) with RequestRedirect scheme https`,
  "ssl-redirect-code": "the statusCode of the RequestRedirect to https",
  "ssl-redirect-trailing-slash": "the RequestRedirect to https, which keeps the path as sent, a / ending it too",
  "force-ssl-redirect": `an HTTPRoute on the HTTP listener (port ${HTTP_PORT}) with RequestRedirect scheme https`,
  "path-regex": "RegularExpression path matches",
  "rewrite-target": "URLRewrite path",
  "app-root": "a rule for Exact / with RequestRedirect (302, ReplaceFullPath)",
  "redirect-to": "RequestRedirect (scheme, hostname, port, ReplaceFullPath)",
  "redirect-code": "the statusCode of the RequestRedirect",
  "www-redirect": "an HTTPRoute for the www twin with RequestRedirect hostname (308)",
  "request-headers-set": "RequestHeaderModifier set (Host: URLRewrite hostname)",
  "request-headers-add": "RequestHeaderModifier add",
  "request-headers-delete": "RequestHeaderModifier remove",
  "response-headers-set": "ResponseHeaderModifier set",
  "response-headers-add": "ResponseHeaderModifier add",
  "response-headers-delete": "ResponseHeaderModifier remove",
  "canary": "a backendRef of the main Ingress's HTTPRoute",
  "canary-weight": "backendRef weights on the main Ingress's HTTPRoute",
  "canary-header": "a rule with a header match on the main Ingress's HTTPRoute",
  "canary-header-value": "the value of the canary's header match",
  "timeout-server": "rules[].timeouts.backendRequest (the Gateways' backend timeout, HAProxy's timeout server as here)",
  "hsts": "ResponseHeaderModifier set Strict-Transport-Security (its value replaces a response-headers-* edit of it, " +
    "as here)",
  "hsts-max-age": "the max-age of the Strict-Transport-Security set",
  "hsts-include-subdomains": "the includeSubDomains of the Strict-Transport-Security set",
  "hsts-preload": "the preload of the Strict-Transport-Security set",
  // the CORS filter: its verdicts depend on the values (nginx/httproute_cors.ts)
  ...Object.fromEntries(CORS_KEYS.map((k) => [k, "the rule's CORS filter"])),
};

/** The verdict of each annotation of the Ingress (ours and ingress-nginx's). */
export function verdicts(r: Reading): string[] {
  const out: string[] = [];
  const annotations = r.ing.metadata?.annotations ?? {};
  const rows = new Map(checkIngress(r.ing).map((row) => [row.annotation, row]));
  const ctx = { namespace: r.ns, annotations };
  const formOf = (ours: string[]) => {
    if (ours.every((k) => specOf(k)!.value === bool && readAnnotation(r.settings, k)?.raw === "false")) {
      return "nothing to carry over (false)";
    }
    const missing = ours.filter((k) => !FORMS[k] || r.unmapped.has(k));
    if (missing.length > 0) {
      const why = missing.map((k) => {
        const more = WITHHOLDS[k] ?? r.why.get(k) ?? notServedYet(k);
        return more ? `${k}: ${more}` : k;
      }).join(", ");
      return `no Gateway API form served here (${why}); stays an Ingress annotation`;
    }
    return [...new Set(ours.map((k) => r.forms.get(k) ?? FORMS[k]))].join("; ");
  };
  for (const ann of Object.keys(annotations).sort()) {
    if (ann.startsWith(NGINX_PREFIX)) {
      const row = rows.get(ann)!;
      if (row.verdict !== "supported" && row.verdict !== "translated") {
        out.push(`${ann}: ${row.verdict} by this controller (${row.note}); nothing to carry over`);
        continue;
      }
      const key = ann.slice(NGINX_PREFIX.length);
      const converted = Object.keys(convertedAnnotations([key], ctx)).map((k) => k.slice(PREFIX.length));
      // keys read by another key's conversion (auth-type, affinity-mode, …) answer for the keys they serve
      const ours = converted.length > 0 ? converted : [...(NGINX_RULES[key]?.to ?? [])];
      const backendProtocol = ours.includes("backend-protocol") ? backendProtocolVerdict(r) : null;
      if (backendProtocol) out.push(`${ann}: ${backendProtocol}`);
      else if (ours.length === 0) out.push(`${ann}: nothing to carry over (${row.note || "no effect alone"})`);
      else out.push(`${ann}: ${formOf(ours)}`);
    } else if (ann.startsWith(PREFIX) && specOf(ann.slice(PREFIX.length))) {
      const key = ann.slice(PREFIX.length);
      out.push(`${ann}: ${key === "backend-protocol" ? backendProtocolVerdict(r) : formOf([key])}`);
    } else if (ann.startsWith("cert-manager.io/")) {
      out.push(`${ann}: annotate the Gateway instead (cert-manager's gateway-shim issues the listeners' certificates)`);
    }
  }
  return out;
}

function backendProtocolVerdict(r: Reading): string {
  const p = setting<string>(r.settings, "backend-protocol");
  if (p === "h2") return "set appProtocol: kubernetes.io/h2c on the Service's port (the Gateway API form of h2c)";
  if (p === "h1") return "nothing to carry over (HTTP/1.1 is the default)";
  r.unmapped.add("backend-protocol");
  return "no Gateway API form served here for TLS to the backend (BackendTLSPolicy); stays an Ingress annotation";
}
