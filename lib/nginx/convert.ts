/**
 * @module nginx/convert
 * ingress-nginx compatibility mode: the values of `nginx.ingress.kubernetes.io/*` annotations
 * written as our keys (lib/annotations/table.ts), so a translated key takes effect exactly as if
 * the user had written ours. Only annotations listed in `CONVERTERS` are applied; nginx/translate.ts
 * reports every other one `unsupported`, so `nginx-check` never claims more than is applied. Each
 * converted value is parsed again by our key's own parser, and a key the user set in our prefix
 * (or its legacy alias) wins over the translation.
 */
import { readAnnotation } from "../annotations/resolve.ts";
import { annotationName, specOf } from "../annotations/table.ts";
import { corsOrigins, type IngressContext, NGINX_PREFIX, NGINX_RULES, signinWithoutVariables } from "./table.ts";

type Converter = (raw: string, ctx: IngressContext) => Readonly<Record<string, string>>;

const isTrue = (raw: string) => /^(?:1|t|T|TRUE|true|True)$/.test(raw);
const nginx = (ctx: IngressContext, key: string): string | undefined => ctx.annotations[NGINX_PREFIX + key];

const bool = (to: string): Converter => (raw) => ({ [to]: isTrue(raw) ? "true" : "false" });
const same = (to: string): Converter => (raw) => ({ [to]: raw });
const seconds = (to: string): Converter => (raw) => ({ [to]: `${raw}s` });
/** `name` or `namespace/name` (translate.ts refuses another namespace): the name. */
const secretName = (to: string): Converter => (raw) => ({ [to]: raw.slice(raw.indexOf("/") + 1) });

/** By nginx key (without the prefix): our keys and values. */
export const CONVERTERS: Readonly<Record<string, Converter>> = {
  "ssl-redirect": bool("ssl-redirect"),
  "force-ssl-redirect": bool("force-ssl-redirect"),
  "ssl-passthrough": bool("ssl-passthrough"),
  "app-root": same("app-root"),
  "service-upstream": same("service-upstream"),
  "from-to-www-redirect": bool("www-redirect"),
  // Without it (COMPAT_DEFAULTS) or false, the redirect to HTTPS drops a trailing slash.
  "preserve-trailing-slash": (raw) => ({ "ssl-redirect-trailing-slash": isTrue(raw) ? "keep" : "drop" }),
  // As ingress-nginx (enforceRegexModifier, buildLocation): with use-regex or rewrite-target every
  // path is a regex `~* ^<path>`, whatever its pathType.
  "use-regex": (raw, ctx) => ({
    "path-regex": isTrue(raw) || other(ctx, "rewrite-target", true) !== undefined ? "all" : "false",
  }),
  "rewrite-target": (raw) => ({ "rewrite-target": raw, "path-regex": "all" }),
  "default-backend": same("default-backend"),
  "custom-http-errors": same("error-codes"),
  "permanent-redirect": (raw, ctx) => ({
    "redirect-to": raw,
    "redirect-code": other(ctx, "permanent-redirect-code") ?? "301",
  }),
  "temporal-redirect": (raw, ctx) => ({
    "redirect-to": raw,
    "redirect-code": other(ctx, "temporal-redirect-code") ?? "302",
  }),
  "proxy-body-size": same("max-body-size"),
  "whitelist-source-range": same("allow-list"),
  "allowlist-source-range": same("allow-list"),
  "denylist-source-range": same("deny-list"),
  "limit-whitelist": same("rate-limit-allow-list"),
  "limit-allowlist": same("rate-limit-allow-list"),
  "proxy-connect-timeout": seconds("timeout-connect"),
  // One server timeout for both directions: the larger of the two.
  "proxy-read-timeout": (raw, ctx) => ({ "timeout-server": `${maxSeconds(raw, other(ctx, "proxy-send-timeout"))}s` }),
  "proxy-send-timeout": (raw, ctx) => ({ "timeout-server": `${maxSeconds(raw, other(ctx, "proxy-read-timeout"))}s` }),
  "load-balance": (raw) => ({ "load-balance": raw === "ewma" ? "leastconn" : "roundrobin" }),
  "backend-protocol": (raw) => {
    const to =
      ({ HTTP: "h1", HTTPS: "h1-tls", GRPC: "h2", GRPCS: "h2-tls" } as Record<string, string>)[raw.toUpperCase()];
    return to ? { "backend-protocol": to } : {} as Record<string, string>;
  },
  "proxy-ssl-name": same("backend-sni"),
  // As ingress-nginx: the session-cookie-* annotations take effect only with affinity: cookie.
  "affinity": (raw): Record<string, string> => raw === "cookie" ? { "sticky-cookie": "true" } : {},
  // persistent, or balanced kept as persistent (nginx/table.ts)
  "affinity-mode": () => ({}),
  "session-cookie-name": same("sticky-cookie-name"),
  "session-cookie-max-age": seconds("sticky-cookie-max-age"),
  // Sent as Max-Age; session-cookie-max-age wins when both are set, as in ingress-nginx.
  "session-cookie-expires": (raw, ctx): Record<string, string> =>
    other(ctx, "session-cookie-max-age") === undefined ? seconds("sticky-cookie-max-age")(raw, ctx) : {},
  "session-cookie-secure": bool("sticky-cookie-secure"),
  // None, Lax or Strict in any case (ingress-nginx's check is case-insensitive)
  "session-cookie-samesite": (raw) => {
    const v = raw.trim().toLowerCase();
    return { "sticky-cookie-samesite": v.charAt(0).toUpperCase() + v.slice(1) };
  },
  "enable-cors": bool("cors-enable"),
  // `*` anywhere means any origin; invalid origins are skipped (as ingress-nginx)
  "cors-allow-origin": (raw) => ({ "cors-allow-origin": corsOrigins(raw).value }),
  "cors-allow-methods": same("cors-allow-methods"),
  "cors-allow-headers": same("cors-allow-headers"),
  "cors-expose-headers": same("cors-expose-headers"),
  "cors-allow-credentials": bool("cors-allow-credentials"),
  "cors-max-age": same("cors-max-age"),
  // As ingress-nginx: basic auth needs auth-type basic, and only the htpasswd-file form is read.
  "auth-secret": (raw, ctx) => basicAuth(ctx) ? secretName("auth-basic-secret")(raw, ctx) : {},
  "auth-type": () => ({}),
  "auth-secret-type": () => ({}),
  "auth-realm": same("auth-basic-realm"),
  "auth-url": same("auth-url"),
  "auth-signin": (raw) => ({ "auth-signin": signinWithoutVariables(raw) }),
  "auth-response-headers": same("auth-response-headers"),
  // off: no certificate is asked for; optional_no_ca (not translated): neither
  "auth-tls-secret": (raw, ctx) =>
    /^(?:on|optional)$/.test(other(ctx, "auth-tls-verify-client") ?? "on")
      ? secretName("client-cert-ca-secret")(raw, ctx)
      : {},
  "auth-tls-verify-client": (raw): Record<string, string> =>
    raw === "on"
      ? { "client-cert-verify": "required" }
      : raw === "optional"
      ? { "client-cert-verify": "optional" }
      : {},
  "auth-tls-pass-certificate-to-upstream": (raw): Record<string, string> =>
    isTrue(raw) ? { "client-cert-header": "ssl-client-cert" } : {},
  // ingress-nginx verifies the backend only with proxy-ssl-verify on (default off)
  "proxy-ssl-secret": (raw, ctx) =>
    other(ctx, "proxy-ssl-verify") === "on" ? secretName("backend-ca-secret")(raw, ctx) : {},
  "proxy-ssl-verify": () => ({}),
  // SNI is sent whenever proxy-ssl-name gives backend-sni.
  "proxy-ssl-server-name": () => ({}),
  "canary": bool("canary"),
  "canary-by-header": same("canary-header"),
  "canary-by-header-value": same("canary-header-value"),
  "canary-by-cookie": same("canary-cookie"),
  // A share of canary-weight-total (default 100), as a percentage.
  "canary-weight": (raw, ctx): Record<string, string> => {
    const total = Number(other(ctx, "canary-weight-total") ?? "100");
    const weight = Number(raw);
    if (!Number.isInteger(weight) || !Number.isInteger(total) || total <= 0) return {};
    return { "canary-weight": String(Math.round((Math.min(weight, total) * 100) / total)) };
  },
  "limit-rps": same("rate-limit-rps"),
  "limit-rpm": same("rate-limit-rpm"),
  "limit-connections": same("rate-limit-connections"),
  // Both become request headers; one request-headers-set value carries every line.
  "upstream-vhost": (raw, ctx) => ({ "request-headers-set": headerSet(ctx, { Host: raw }) }),
  // empty: no header, as ingress-nginx (its e2e xforwardedprefix.go)
  "x-forwarded-prefix": (raw, ctx): Record<string, string> =>
    raw === "" ? {} : { "request-headers-set": headerSet(ctx, { "X-Forwarded-Prefix": raw }) },
  // Read by the permanent-/temporal-redirect converters above.
  "permanent-redirect-code": () => ({}),
  "canary-weight-total": () => ({}),
  "temporal-redirect-code": () => ({}),
};

/**
 * What every Ingress of the compatibility mode gets where ingress-nginx's default differs from ours,
 * whatever its annotations (our key written on the Ingress, or a converted nginx annotation, wins):
 * the redirect to HTTPS drops a trailing slash (`preserve-trailing-slash` false).
 */
export const COMPAT_DEFAULTS: Readonly<Record<string, string>> = { "ssl-redirect-trailing-slash": "drop" };

/** COMPAT_DEFAULTS as full annotation names, without those the Ingress or `converted` set. */
export function compatDefaults(
  ctx: IngressContext,
  converted: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [ours, value] of Object.entries(COMPAT_DEFAULTS)) {
    const name = annotationName(specOf(ours)!);
    if (readAnnotation(ctx.annotations, ours) === undefined && converted[name] === undefined) out[name] = value;
  }
  return out;
}

/**
 * Another nginx annotation of the Ingress, as a converter reads it beside its own: absent when
 * nginx-check refuses its value (an invalid value is ignored, as if not written, so the defaults
 * apply); with `appliedOnly` also when it is not applied (unsupported).
 */
function other(ctx: IngressContext, key: string, appliedOnly = false): string | undefined {
  const raw = nginx(ctx, key);
  const rule = NGINX_RULES[key];
  if (raw === undefined || !rule) return raw;
  const out = rule.check?.(raw, ctx) ?? {};
  const verdict = out.verdict ?? rule.verdict;
  if (out.bad !== undefined || verdict === "refused") return undefined;
  return !appliedOnly || verdict === "supported" || verdict === "translated" ? raw : undefined;
}

/** ingress-nginx's basic auth is on: auth-type basic, the htpasswd-file form of the Secret. */
function basicAuth(ctx: IngressContext): boolean {
  return other(ctx, "auth-type") === "basic" && (other(ctx, "auth-secret-type") ?? "auth-file") === "auth-file";
}

/**
 * The request headers upstream-vhost and x-forwarded-prefix set together, as `Name: value` lines:
 * the other one's only when it is applied itself (a value it cannot take must not reach the proxy,
 * nor cost this one its header).
 */
function headerSet(ctx: IngressContext, mine: Record<string, string>): string {
  const all: Record<string, string> = {};
  const vhost = other(ctx, "upstream-vhost", true);
  const prefix = other(ctx, "x-forwarded-prefix", true);
  if (vhost !== undefined) all.Host = vhost;
  if (prefix !== undefined && prefix !== "") all["X-Forwarded-Prefix"] = prefix;
  return Object.entries({ ...all, ...mine }).map(([k, v]) => `${k}: ${v}`).join("\n");
}

function maxSeconds(a: string, b: string | undefined): number {
  const n = (s: string | undefined) => /^[1-9][0-9]{0,5}$/.test(s ?? "") ? Number(s) : 0;
  return Math.max(n(a), n(b));
}

/**
 * Our annotations for the nginx annotations whose verdict is `supported` or `translated` (`keys`,
 * without the prefix): full annotation name → value. Values our parser refuses are left out, except
 * for the keys of `unparsed` (external authentication: written so that our resolution refuses them
 * and the route fails closed); a key the Ingress sets itself is left out too (its own value wins).
 */
export function convertedAnnotations(
  keys: readonly string[],
  ctx: IngressContext,
  unparsed: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) {
    const convert = CONVERTERS[key];
    const raw = ctx.annotations[NGINX_PREFIX + key];
    if (!convert || raw === undefined) continue;
    for (const [ours, value] of Object.entries(convert(raw, ctx))) {
      const spec = specOf(ours);
      if (!spec || (!unparsed.includes(key) && !spec.value.parse(value).ok)) continue;
      if (readAnnotation(ctx.annotations, ours) !== undefined) continue;
      out[annotationName(spec)] = value;
    }
  }
  return out;
}
