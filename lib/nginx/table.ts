/**
 * @module nginx/table
 * The ingress-nginx translation table: for each `nginx.ingress.kubernetes.io/<key>` annotation, the
 * keys of ours (lib/annotations/table.ts) it becomes, its verdict and what differs, following
 * ingress-nginx's documented semantics (its annotations reference and annotation risk table,
 * https://kubernetes.github.io/ingress-nginx/user-guide/nginx-configuration/annotations/). `check` reads the value (and, where ingress-nginx does, the Ingress's other annotations):
 * a value ingress-nginx would refuse or that cannot be translated safely returns `bad`.
 * Verdicts here describe the translation; annotations/… `status` decides whether it is served
 * today (nginx/translate.ts), so a key not rendered yet is never reported `supported`.
 */
import * as v from "../annotations/values.ts";
import type { ValueKind } from "../annotations/values.ts";

export const NGINX_PREFIX = "nginx.ingress.kubernetes.io/";

export type Verdict = "supported" | "translated" | "unsupported" | "refused";

/**
 * Why a difference is kept on purpose: `nginx-check`'s note and the README say so. A translated key
 * without one differs only because this proxy does not do it yet.
 */
export type Why = "security" | "haproxy";

const WHY: Readonly<Record<Why, string>> = {
  security: "deliberate, for security",
  haproxy: "deliberate: an HAProxy limit",
};

/** A note with the reason its difference is deliberate, as `nginx-check` and the README show it. */
export function withWhy(note: string, why: Why | undefined): string {
  return why ? `${note} (${WHY[why]})` : note;
}

/** What a check decides; fields left out keep the rule's. */
export interface Outcome {
  readonly verdict?: Verdict;
  readonly note?: string;
  /** Our keys (without prefix) the value becomes. */
  readonly to?: readonly string[];
  /** The value is invalid or unsafe: the reason (end of `"value" <reason>`). */
  readonly bad?: string;
  readonly why?: Why;
}

/** What a check may look at besides the value. */
export interface IngressContext {
  readonly namespace: string;
  /** All the Ingress's annotations. */
  readonly annotations: Readonly<Record<string, string>>;
}

/**
 * One key. `verdict` is the key's at its most common values: `supported` only where the behaviour is
 * ingress-nginx's (status codes, `Location` values, headers, which paths match), `translated` where it
 * works with a difference, which `note` says (the README's difference list is every `translated` rule's
 * note: lib/nginx/docs.ts); `check` refines both for one value.
 */
export interface NginxRule {
  readonly to: readonly string[];
  readonly verdict: Verdict;
  readonly note: string;
  /** The difference (or refusal) is deliberate. */
  readonly why?: Why;
  readonly check?: (raw: string, ctx: IngressContext) => Outcome | undefined;
  /**
   * A value that cannot be applied is still written as our key (whose parser then refuses it), so the
   * route answers 500 instead of going unprotected: external authentication never fails open.
   */
  readonly failClosed?: true;
}

const nginx = (ctx: IngressContext, key: string) => ctx.annotations[NGINX_PREFIX + key];

/** Checks with one of our value kinds. */
function valueOf(kind: ValueKind): (raw: string) => Outcome | undefined {
  return (raw) => {
    const p = kind.parse(raw);
    return p.ok ? undefined : { bad: p.reason };
  };
}

/** ingress-nginx booleans: Go's strconv.ParseBool. */
const GO_BOOL = /^(?:1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/;
const isTrue = (raw: string) => /^(?:1|t|T|TRUE|true|True)$/.test(raw);
function boolCheck(raw: string): Outcome | undefined {
  return GO_BOOL.test(raw) ? undefined : { bad: 'is not "true" or "false"' };
}

/** ingress-nginx timeouts: whole seconds, unitless. */
function seconds(raw: string): Outcome | undefined {
  return /^[1-9][0-9]{0,5}$/.test(raw) ? undefined : { bad: "is not a number of seconds" };
}

/** `name` or `namespace/name`; another namespace's Secret is never read (a tenant boundary). */
function secretRef(raw: string, ctx: IngressContext): Outcome | undefined {
  const m = /^(?:([a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)\/)?([\s\S]*)$/.exec(raw)!;
  if (m[1] !== undefined && m[1] !== ctx.namespace) {
    return {
      verdict: "refused",
      note: `names a Secret of namespace ${m[1]}: only Secrets of the Ingress's own namespace are read; copy it there`,
      why: "security",
    };
  }
  return valueOf(v.secretName)(m[2]);
}

/**
 * `auth-signin` without the nginx variables of the oauth2-proxy pattern
 * (`https://$host/oauth2/start?rd=$escaped_request_uri`): a path on the request's own host, to
 * which the proxy adds `rd` itself. Other variables stay (and make the value unsupported).
 */
export function signinWithoutVariables(raw: string): string {
  return raw.replace(/^https?:\/\/\$(?:host|http_host|server_name)(?=\/)/, "").replace(
    /\?rd=(?:\$scheme:\/\/\$(?:host|http_host))?\$(?:escaped_request_uri|request_uri)$/,
    "",
  );
}

/**
 * `cors-allow-origin` as ingress-nginx reads it: `*` anywhere means any origin; an origin that is not
 * valid is skipped, not the whole list. The value of ours ("" when no origin is left) and how many
 * were skipped.
 */
export function corsOrigins(raw: string): { value: string; skipped: number } {
  const items = raw.split(",").map((o) => o.trim()).filter((o) => o !== "");
  if (items.includes("*")) return { value: "*", skipped: 0 };
  const kept = items.filter((o) => v.origins.parse(o).ok);
  return { value: kept.join(", "), skipped: items.length - kept.length };
}

/** Snippets: never executed. */
function snippet(instead: string): NginxRule {
  return {
    to: [],
    verdict: "refused",
    why: "security",
    note: `raw configuration is never executed (CVE-2021-25742, CVE-2025-1974); use ${instead}`,
  };
}

function unsupported(note: string, why?: Why): NginxRule {
  return { to: [], verdict: "unsupported", note, why };
}

/** A rule whose verdict does not depend on the value beyond `check`. */
function supported(to: string | readonly string[], check: NginxRule["check"], note = ""): NginxRule {
  return { to: typeof to === "string" ? [to] : to, verdict: "supported", note, check };
}

function translated(
  to: string | readonly string[],
  check: NginxRule["check"],
  note: string,
  why?: Why,
): NginxRule {
  return { to: typeof to === "string" ? [to] : to, verdict: "translated", note, check, why };
}

/** A boolean whose false is ingress-nginx's behaviour (nothing happens) and whose true is the rule's. */
function boolOffSame(off: string): NginxRule["check"] {
  return (raw) => boolCheck(raw) ?? (isTrue(raw) ? undefined : { verdict: "supported", note: off });
}

const TRAILING_SLASH = "a / ending the path is dropped (GET / → https://<host>) unless preserve-trailing-slash is " +
  "true, the port too, as in ingress-nginx; the host in the Location is written in lower case (ingress-nginx keeps " +
  "the client's case)";

const CORS_PREFLIGHT = "sent on the preflight answer only (ingress-nginx: on every CORS answer, where browsers " +
  "ignore it)";
const CORS_EXACT = "origins are compared exactly (ingress-nginx: case-insensitively; browsers send them in lower " +
  "case); *.domain matches one label, as in ingress-nginx";
const CORS_ANY = "* with credentials (the default) sends the request's Origin back instead of * (ingress-nginx " +
  "sends *, which browsers refuse with credentials); without an Origin no CORS header is sent (ingress-nginx: *)";

const PER_REQUEST_503 = "ingress-nginx answers 503 (limit-req-status-code) by default, this proxy answers 429";

/** The translation table, by key without the prefix. */
export const NGINX_RULES: Readonly<Record<string, NginxRule>> = {
  // TLS and redirects
  "ssl-redirect": translated(
    "ssl-redirect",
    boolOffSame("no redirect to HTTPS, as in ingress-nginx"),
    `308 to HTTPS for TLS hosts, with the path and query as sent; ${TRAILING_SLASH}`,
  ),
  "force-ssl-redirect": translated(
    "force-ssl-redirect",
    boolOffSame("no redirect to HTTPS for hosts without TLS, as in ingress-nginx"),
    `308 to HTTPS, with the path and query as sent, also for hosts without TLS; ${TRAILING_SLASH}`,
  ),
  "preserve-trailing-slash": supported(
    "ssl-redirect-trailing-slash",
    boolCheck,
    "true: the redirect to HTTPS keeps a / ending the path; false (ingress-nginx's default, also without the key): " +
      "it is dropped, as in ingress-nginx",
  ),
  "ssl-passthrough": supported(
    "ssl-passthrough",
    boolCheck,
    "ingress-nginx needs --enable-ssl-passthrough, this proxy no flag; as there, TLS goes to the root path's Service " +
      "and the other annotations do not apply to it",
  ),
  // paths, rewrites, redirects
  "use-regex": translated(
    "path-regex",
    boolCheck,
    "every path of the Ingress (Exact, Prefix, ImplementationSpecific) and of every Ingress of the same host is a " +
      "regular expression matched from the start of the path, case-insensitively, longest first, as in " +
      "ingress-nginx; differences: a regex outside the supported subset (docs/routing-maps.md) is left out with a " +
      "Warning (ingress-nginx hands it to PCRE), and another Ingress's Prefix path ending in / loses that / " +
      "(/foo/ matches as ^/foo; ingress-nginx: ^/foo/)",
  ),
  "rewrite-target": {
    to: ["rewrite-target", "path-regex"],
    verdict: "translated",
    note: "every path of the host becomes a regex and the whole path is replaced by the target ($n from the " +
      "captures), on any path type, as in ingress-nginx; the differences of use-regex apply",
    check: (raw, ctx) => {
      const p = v.rewriteTarget.parse(raw);
      if (!p.ok) return { bad: p.reason };
      const regex = isTrue(nginx(ctx, "use-regex") ?? "false");
      return {
        note: (p.value.captures ? "$n are filled from the path's regex captures" : "the whole path is replaced") +
          "; every path of the host is a regex (path-regex: all" +
          (regex ? "" : ", as ingress-nginx does when rewrite-target is set without use-regex") +
          "), on any path type, as in ingress-nginx; the differences of use-regex apply",
      };
    },
  },
  "app-root": supported(
    "app-root",
    valueOf(v.path),
    "302 from / to <scheme>://<host>/<root>, the absolute URL ingress-nginx sends",
  ),
  "permanent-redirect": supported(
    ["redirect-to", "redirect-code"],
    valueOf(v.url),
    "301 unless permanent-redirect-code",
  ),
  "permanent-redirect-code": supported(
    "redirect-code",
    valueOf(v.redirectCode),
    "301, 302, 303, 307 or 308; ingress-nginx also takes 300, 304, 305 and 306, which are refused here (the " +
      "default 301 applies)",
  ),
  "temporal-redirect": supported(["redirect-to", "redirect-code"], valueOf(v.url), "302 unless temporal-redirect-code"),
  "temporal-redirect-code": supported(
    "redirect-code",
    valueOf(v.redirectCode),
    "301, 302, 303 or 307; ingress-nginx also takes 300, 304, 305 and 306, which are refused here (the default " +
      "302 applies)",
  ),
  "from-to-www-redirect": translated(
    "www-redirect",
    boolCheck,
    "the twin host is redirected with 308 to the same path and query; the Location has no port and keeps a " +
      "trailing / (ingress-nginx: http://<host>:80/path, trailing / stripped); for HTTPS its certificate must " +
      "cover both names, as in ingress-nginx",
  ),
  "x-forwarded-prefix": supported(
    "request-headers-set",
    // empty: ignored without a word, as ingress-nginx (no header is sent)
    (raw) =>
      raw === ""
        ? { to: [], note: "empty: no X-Forwarded-Prefix header, as in ingress-nginx" }
        : valueOf(v.headerValue)(raw),
    "the backend gets X-Forwarded-Prefix: <value>; an empty value sends no header, as in ingress-nginx",
  ),
  "upstream-vhost": {
    to: ["request-headers-set"],
    verdict: "supported",
    note: "the backend gets Host: <value>",
    check: (
      raw,
    ) => (/\$/.test(raw)
      ? { verdict: "unsupported", note: "nginx variables are not available" }
      : valueOf(v.hostName)(raw)),
  },
  // limits and access
  "proxy-body-size": translated(
    "max-body-size",
    valueOf(v.size),
    "413 when the body is over the limit, 0: no limit, as in ingress-nginx; a body without Content-Length " +
      "(chunked) is counted only for limits under 8 KiB (HAProxy holds one buffer of it): above that it passes " +
      "whatever its size (ingress-nginx answers 413 once it is over)",
    "haproxy",
  ),
  "whitelist-source-range": supported("allow-list", valueOf(v.cidrList), "403 for other clients"),
  "allowlist-source-range": supported("allow-list", valueOf(v.cidrList), "403 for other clients"),
  "denylist-source-range": supported("deny-list", valueOf(v.cidrList), "403 for these clients"),
  "limit-rps": {
    to: ["rate-limit-rps"],
    verdict: "translated",
    note:
      `counted per client address over a sliding second with no burst allowance (ingress-nginx allows 5x bursts); ${PER_REQUEST_503}`,
    check: valueOf(v.int(1, 1_000_000)),
  },
  "limit-rpm": translated(
    "rate-limit-rpm",
    valueOf(v.int(1, 60_000_000)),
    `counted per client address over a sliding minute with no burst allowance; ${PER_REQUEST_503}`,
  ),
  "limit-connections": translated(
    "rate-limit-connections",
    valueOf(v.int(1, 1_000_000)),
    "ingress-nginx answers 503 over the limit, this proxy answers 429",
  ),
  "limit-whitelist": supported("rate-limit-allow-list", valueOf(v.cidrList)),
  "limit-allowlist": supported("rate-limit-allow-list", valueOf(v.cidrList)),
  "limit-burst-multiplier": unsupported("bursts are not modelled: the limits count over a sliding window"),
  "limit-rate": unsupported("response bandwidth limits are not available"),
  "limit-rate-after": unsupported("response bandwidth limits are not available"),
  // timeouts and backends
  "proxy-connect-timeout": translated(
    "timeout-connect",
    seconds,
    "seconds; a connection not made in time is tried 3 more times, each with this timeout, then answered 503 " +
      "(ingress-nginx answers 504)",
  ),
  "proxy-read-timeout": translated(
    "timeout-server",
    seconds,
    "HAProxy has one server inactivity timeout for both directions: the larger of proxy-read-timeout and " +
      "proxy-send-timeout applies; it also bounds WebSocket idle time unless timeout-tunnel is set",
    "haproxy",
  ),
  "proxy-send-timeout": translated(
    "timeout-server",
    seconds,
    "HAProxy has one server inactivity timeout for both directions: the larger of proxy-read-timeout and " +
      "proxy-send-timeout applies",
    "haproxy",
  ),
  "backend-protocol": {
    to: ["backend-protocol"],
    verdict: "supported",
    note: "HTTP: h1, HTTPS: h1-tls, GRPC: h2, GRPCS: h2-tls; AJP and FCGI unsupported",
    check: (raw) => {
      const map: Record<string, { to: string; note: string }> = {
        HTTP: { to: "h1", note: "HTTP/1.1" },
        HTTPS: {
          to: "h1-tls",
          note: "HTTP/1.1 over TLS, certificate not verified unless backend-ca-secret (as ingress-nginx)",
        },
        GRPC: { to: "h2", note: "HTTP/2 cleartext" },
        GRPCS: {
          to: "h2-tls",
          note: "HTTP/2 over TLS, certificate not verified unless backend-ca-secret (as ingress-nginx)",
        },
      };
      const m = map[raw.toUpperCase()];
      if (m) return { note: `backend-protocol: ${m.to} (${m.note})` };
      if (/^(?:AJP|FCGI)$/i.test(raw)) {
        return { verdict: "unsupported", to: [], note: `${raw} backends are not available` };
      }
      return { bad: "is not one of HTTP,HTTPS,GRPC,GRPCS,AJP,FCGI" };
    },
  },
  "load-balance": {
    to: ["load-balance"],
    verdict: "translated",
    note: "ewma becomes leastconn (HAProxy has no EWMA); round_robin is roundrobin, the same",
    why: "haproxy",
    check: (raw) => {
      if (raw === "round_robin") return { verdict: "supported", note: "load-balance: roundrobin" };
      if (raw === "ewma") return { note: "load-balance: leastconn (HAProxy has no EWMA)" };
      return { bad: "is not round_robin or ewma" };
    },
  },
  "upstream-hash-by": unsupported(
    "hashing on nginx variables is not available; load-balance: source pins by client address",
    "haproxy",
  ),
  "service-upstream": supported(
    "service-upstream",
    boolCheck,
    "requests go to the Service's cluster IP; kube-proxy picks the endpoint",
  ),
  "proxy-ssl-secret": translated(
    "backend-ca-secret",
    (raw, ctx) =>
      secretRef(raw, ctx) ?? (nginx(ctx, "proxy-ssl-verify") === "on" ? undefined : {
        verdict: "unsupported",
        to: [],
        note: "with proxy-ssl-verify off (its default) ingress-nginx only presents the Secret's client " +
          "certificate to the backend, which this proxy does not",
      }),
    "its ca.crt verifies the backend (proxy-ssl-verify on); its tls.crt/tls.key client certificate is not " +
      "presented to the backend",
  ),
  "proxy-ssl-verify": {
    to: ["backend-ca-secret"],
    verdict: "translated",
    note: "on: the backend's certificate is verified against proxy-ssl-secret's ca.crt, its name only against " +
      "proxy-ssl-name when that is set (nginx always checks a name, the upstream's without proxy-ssl-name); off: " +
      "not verified, the same",
    check: (raw) => (/^(?:on|off)$/.test(raw) ? undefined : { bad: "is not on or off" }),
  },
  "proxy-ssl-name": translated(
    "backend-sni",
    (raw, ctx) =>
      valueOf(v.hostName)(raw) ??
        (nginx(ctx, "proxy-ssl-server-name") === "on"
          ? {
            verdict: "supported",
            note: "the SNI sent to the backend, as ingress-nginx with proxy-ssl-server-name on",
          }
          : undefined),
    "sent as SNI to the backend even without proxy-ssl-server-name: on (ingress-nginx sends no SNI then)",
  ),
  "proxy-ssl-server-name": {
    to: ["backend-sni"],
    verdict: "translated",
    note: "on: the same; off (ingress-nginx's default): SNI is still sent when proxy-ssl-name is set (ingress-nginx " +
      "sends none)",
    check: (raw) =>
      raw === "on"
        ? { verdict: "supported", note: "SNI from proxy-ssl-name, as in ingress-nginx" }
        : raw === "off"
        ? undefined
        : { bad: "is not on or off" },
  },
  // sessions
  "affinity": {
    to: ["sticky-cookie"],
    verdict: "translated",
    note: "cookie: a cookie (INGRESSCOOKIE) pins the client to a server; its Path is always / and it is Secure " +
      "only with session-cookie-secure (ingress-nginx: Path is the Ingress's path, e.g. Path=/something, and " +
      "Secure on every HTTPS answer)",
    check: (raw) => (raw === "cookie" ? undefined : { bad: "is not cookie" }),
  },
  "affinity-mode": {
    to: ["sticky-cookie"],
    verdict: "translated",
    note: "balanced (ingress-nginx's default) is served as persistent: a pinned client keeps its server after a " +
      "scale-up; persistent is the same",
    check: (raw) => {
      if (raw === "persistent") return { verdict: "supported", note: "" };
      if (raw === "balanced") return { note: "a pinned client keeps its server after a scale-up (as persistent)" };
      return { bad: "is not balanced or persistent" };
    },
  },
  "session-cookie-name": supported("sticky-cookie-name", valueOf(v.cookieName)),
  "session-cookie-max-age": supported("sticky-cookie-max-age", seconds, "seconds"),
  "session-cookie-expires": translated("sticky-cookie-max-age", seconds, "sent as Max-Age, not Expires"),
  "session-cookie-secure": translated(
    "sticky-cookie-secure",
    (raw) => boolCheck(raw) ?? (isTrue(raw) ? { verdict: "supported", note: "" } : undefined),
    "true: the same; false: the cookie is not Secure over HTTPS either (ingress-nginx sets Secure on every HTTPS " +
      "answer)",
  ),
  // as ingress-nginx: case-insensitive, spaces around ignored
  "session-cookie-samesite": supported(
    "sticky-cookie-samesite",
    (raw) => (/^\s*(?:none|lax|strict)\s*$/i.test(raw) ? undefined : { bad: "is not None, Lax or Strict" }),
  ),
  "session-cookie-path": unsupported("the sticky cookie's path is always /"),
  "session-cookie-domain": unsupported("the sticky cookie has no Domain attribute"),
  "session-cookie-change-on-failure": unsupported("a client whose server is down is sent to another server anyway"),
  "session-cookie-conditional-samesite-none": unsupported("SameSite is sent to every browser"),
  "affinity-canary-behavior": unsupported("canary and sticky cookies are independent"),
  // CORS
  "enable-cors": translated(
    "cors-enable",
    boolOffSame("no CORS headers, as in ingress-nginx"),
    "CORS headers only on answers to requests with an allowed Origin (ingress-nginx, with the default origin *: " +
      "on every answer); with the default origin * and credentials the request's Origin is sent back instead of *, " +
      "which browsers refuse with credentials; Allow-Methods, Allow-Headers and Max-Age only on the preflight " +
      "answer (ingress-nginx: on every answer, where browsers ignore them); a preflight is an OPTIONS with " +
      "Access-Control-Request-Method (ingress-nginx: any OPTIONS); the answers the proxy makes itself, such as the " +
      "401 of basic auth, carry no CORS headers (ingress-nginx's do)",
  ),
  "cors-allow-origin": translated(
    "cors-allow-origin",
    (raw) => {
      const { value, skipped } = corsOrigins(raw);
      if (value === "*") return { note: CORS_ANY };
      if (value === "" || !v.origins.parse(value).ok) return { bad: "has no valid origin" };
      return skipped
        ? { note: `${skipped} origin(s) that are not valid are skipped, as in ingress-nginx; ${CORS_EXACT}` }
        : undefined;
    },
    CORS_EXACT,
  ),
  "cors-allow-methods": translated("cors-allow-methods", valueOf(v.methods), CORS_PREFLIGHT),
  "cors-allow-headers": translated("cors-allow-headers", valueOf(v.headerNames), CORS_PREFLIGHT),
  "cors-expose-headers": translated(
    "cors-expose-headers",
    valueOf(v.headerNamesOrStar),
    "sent on the answers to allowed origins but not on the preflight answer (ingress-nginx: on both; browsers " +
      "read it on the answer)",
  ),
  "cors-allow-credentials": translated(
    "cors-allow-credentials",
    (raw) =>
      boolCheck(raw) ??
        (isTrue(raw)
          ? undefined
          : { verdict: "supported", note: "no Access-Control-Allow-Credentials, as in ingress-nginx" }),
    "true (the default): with the origin * the request's Origin is sent back instead of * (ingress-nginx sends *, " +
      "which browsers refuse with credentials)",
  ),
  "cors-max-age": translated("cors-max-age", valueOf(v.int(0, 2 ** 31 - 1)), CORS_PREFLIGHT),
  // authentication
  "auth-type": {
    to: ["auth-basic-secret"],
    verdict: "translated",
    note: "basic: htpasswd lines must be bcrypt (htpasswd -B), SHA-crypt or MD5-crypt ($1$), Apache's $apr1$ " +
      "(htpasswd's default) and {SHA} lines are ignored with a Warning Event (ingress-nginx reads them); digest " +
      "unsupported",
    why: "haproxy",
    check: (raw) => {
      if (raw === "basic") {
        return {
          note: "htpasswd lines must be bcrypt (htpasswd -B), SHA-crypt or MD5-crypt ($1$): HAProxy's crypt(3) " +
            "does not read Apache's $apr1$ (htpasswd's default) nor {SHA}",
          why: "haproxy",
        };
      }
      if (raw === "digest") return { verdict: "unsupported", to: [], note: "digest authentication is not available" };
      return { bad: "is not basic or digest" };
    },
  },
  "auth-secret": translated(
    "auth-basic-secret",
    (raw, ctx) =>
      secretRef(raw, ctx) ?? (nginx(ctx, "auth-type") === "basic" ? undefined : {
        verdict: "supported",
        to: [],
        note: "no effect without auth-type: basic (as in ingress-nginx)",
      }),
    "htpasswd in key auth; a missing or unreadable Secret answers 401 to everyone (ingress-nginx: 503)",
  ),
  "auth-secret-type": {
    to: ["auth-basic-secret"],
    verdict: "supported",
    note: "auth-file; auth-map unsupported",
    check: (raw) =>
      raw === "auth-file"
        ? { note: "htpasswd file in key auth" }
        : raw === "auth-map"
        ? { verdict: "unsupported", to: [], note: "only the htpasswd file form (key auth) is read" }
        : { bad: "is not auth-file or auth-map" },
  },
  "auth-realm": supported("auth-basic-realm", valueOf(v.realm)),
  "auth-url": {
    to: ["auth-url"],
    verdict: "translated",
    failClosed: true,
    why: "security",
    note: "the auth request is always a GET with the request's cookies, Authorization and the X-Original-*/" +
      "X-Forwarded-* headers (ingress-nginx sends every client header; list more in " +
      "ingress-controller.io/auth-request-headers), never the body, and ends in a 500 after about 5 s; a host " +
      "name is resolved through the proxy's resolv.conf name servers without search domains (write the full name, " +
      "e.g. oauth2-proxy.auth.svc.cluster.local); loopback, link-local and metadata addresses are refused",
    check: (raw) =>
      /\$/.test(raw)
        ? { verdict: "unsupported", to: [], note: "nginx variables are not available: give the auth service's own URL" }
        : valueOf(v.authUrl)(raw),
  },
  "auth-signin": {
    to: ["auth-signin"],
    verdict: "translated",
    note: "the sign-in Location is a path on the request's own scheme and host (https://$host/oauth2/start becomes " +
      "/oauth2/start; ingress-nginx sends the URL as written) and rd is the whole original URL with only its query " +
      "escaped (http://<host>/path%3Fq%3D1; ingress-nginx: what the value writes, $escaped_request_uri being the " +
      "escaped path and query, and without rd <scheme>://<host> then the escaped path and query): oauth2-proxy " +
      "follows an absolute rd only for a host in its --whitelist-domain",
    check: (raw) => {
      const stripped = signinWithoutVariables(raw);
      if (/\$/.test(stripped)) {
        return {
          verdict: "unsupported",
          to: [],
          note: "nginx variables other than $host and $escaped_request_uri are not available",
        };
      }
      return valueOf(v.authSignin)(stripped);
    },
  },
  "auth-response-headers": { ...supported("auth-response-headers", valueOf(v.headerNames)), failClosed: true },
  "auth-method": unsupported("the auth request is always a GET; X-Original-Method carries the request's method"),
  "auth-cache-key": unsupported("auth answers are not cached"),
  "auth-cache-duration": unsupported("auth answers are not cached"),
  "auth-proxy-set-headers": unsupported(
    "a ConfigMap of header values for the auth request is not read; to forward client headers to the auth " +
      "service, list them in ingress-controller.io/auth-request-headers",
  ),
  "auth-request-redirect": unsupported("X-Auth-Request-Redirect is always the request's path and query"),
  "auth-signin-redirect-param": unsupported("the original URL is always passed as rd"),
  "auth-always-set-cookie": unsupported(
    "the auth answer's Set-Cookie headers are added to 2xx and redirect answers only (ingress-nginx's default)",
  ),
  "enable-global-auth": unsupported("there is no global external authentication"),
  // client certificates
  "auth-tls-secret": translated(
    "client-cert-ca-secret",
    (raw, ctx) =>
      secretRef(raw, ctx) ??
        (nginx(ctx, "auth-tls-verify-client") === "off"
          ? { verdict: "supported", note: "no client certificate is asked for (auth-tls-verify-client off)" }
          : nginx(ctx, "auth-tls-verify-client") === "optional"
          ? {
            note: "its ca.crt, per host as in ingress-nginx; with auth-tls-verify-client optional a certificate not " +
              "signed by the CA is refused in the TLS handshake (ingress-nginx answers 400)",
          }
          : undefined),
    "its ca.crt, per host as in ingress-nginx; with auth-tls-verify-client on (the default) a client without a " +
      "valid certificate is refused in the TLS handshake (ingress-nginx answers 400)",
  ),
  "auth-tls-verify-client": {
    to: ["client-cert-verify"],
    verdict: "translated",
    note: "on: required, a client without a valid certificate is refused in the TLS handshake (ingress-nginx answers " +
      "400); optional: a certificate not signed by the CA is refused in the handshake too (ingress-nginx: 400), " +
      "none or a valid one is let through, the same; off: the same; optional_no_ca unsupported",
    check: (raw) => {
      if (raw === "on") {
        return {
          note: "client-cert-verify: required (HAProxy refuses the TLS handshake; ingress-nginx answers 400)",
          verdict: "translated",
        };
      }
      if (raw === "optional") {
        return {
          note: "client-cert-verify: optional; a certificate not signed by the CA is refused in the TLS handshake " +
            "(ingress-nginx answers 400)",
        };
      }
      if (raw === "off") return { verdict: "supported", to: [], note: "no client certificate is asked for" };
      if (raw === "optional_no_ca") {
        return { verdict: "unsupported", to: [], note: "certificates not signed by the CA are always refused" };
      }
      return { bad: "is not on, off, optional or optional_no_ca" };
    },
  },
  "auth-tls-verify-depth": unsupported(
    "HAProxy verifies the whole chain up to the CA bundle; the depth cannot be limited",
    "haproxy",
  ),
  "auth-tls-pass-certificate-to-upstream": {
    to: ["client-cert-header"],
    verdict: "translated",
    note: "true: client-cert-header ssl-client-cert, base64 DER (ingress-nginx: URL-encoded PEM)",
    check: (raw) => {
      const b = boolCheck(raw);
      if (b) return b;
      return isTrue(raw)
        ? {
          note:
            "client-cert-header: ssl-client-cert, with the certificate as base64 DER (ingress-nginx sends URL-encoded PEM)",
        }
        : { verdict: "supported", to: [], note: "nothing is passed" };
    },
  },
  "auth-tls-error-page": unsupported("a failed client certificate ends the TLS handshake; there is no error page"),
  "auth-tls-match-cn": unsupported("the client certificate's CN is not matched"),
  // canary
  "canary": supported("canary", boolCheck),
  "canary-weight": {
    to: ["canary-weight"],
    verdict: "supported",
    note: "",
    check: (raw, ctx) => {
      const total = nginx(ctx, "canary-weight-total") ?? "100";
      const p = v.int(0, Number(total) || 100).parse(raw);
      return p.ok ? undefined : { bad: p.reason };
    },
  },
  "canary-weight-total": {
    to: ["canary-weight"],
    verdict: "translated",
    note: "canary-weight is rounded to a whole percentage of this total (ingress-nginx splits by the exact share: " +
      "1 of 1000 is 0.1% there, 0% here)",
    check: (raw) => {
      const p = v.int(1, 1_000_000).parse(raw);
      if (!p.ok) return { bad: p.reason };
      return p.value === 100 ? { verdict: "supported", note: "" } : undefined;
    },
  },
  "canary-by-header": supported("canary-header", valueOf(v.headerName), "always / never"),
  "canary-by-header-value": supported("canary-header-value", valueOf(v.headerValue)),
  "canary-by-header-pattern": unsupported("header patterns (PCRE) are not matched; use canary-by-header-value"),
  "canary-by-cookie": supported("canary-cookie", valueOf(v.cookieName), "always / never"),
  // errors
  "custom-http-errors": {
    to: ["error-codes"],
    verdict: "translated",
    note: "needs default-backend on the Ingress (the controller-wide default backend is not used); only the " +
      "Service's own answers are replaced, not the proxy's (403 of allow-list, 503 without endpoints: that one goes " +
      "to default-backend anyway); the page is fetched as a GET of / with X-Code and the other headers, but without " +
      "the request's other headers; a page over 64 KiB or a default backend not answering within about 4 s keeps " +
      "the original answer; response header annotations do not apply to the page",
    check: valueOf(v.errorCodes),
  },
  "default-backend": {
    to: ["default-backend"],
    verdict: "translated",
    note: "first port of the Service, as in ingress-nginx; it answers while the path's Service has no ready " +
      "endpoint or does not exist, and gets ingress-nginx's headers then (X-Code: 503, X-Format, X-Namespace, " +
      "X-Ingress-Name, X-Service-Name, X-Service-Port, X-Request-ID); with custom-http-errors it answers for those " +
      "codes too; the route's own header annotations do not apply to the request sent to it",
    check: valueOf(v.serviceRef),
  },
  // snippets: refused
  "configuration-snippet": snippet("the request-headers-*/response-headers-* annotations, or ask for a typed key"),
  "server-snippet": snippet("typed annotations (redirects, headers, access lists); or ask for a typed key"),
  "auth-snippet": snippet("auth-url and auth-response-headers"),
  "stream-snippet": snippet("a Service of type LoadBalancer for TCP"),
  "modsecurity-snippet": snippet("a WAF in front of the proxy; ModSecurity is not available"),
  // other known keys, with what to do
  "server-alias": unsupported("list the extra host names as rules of the Ingress"),
  "mirror-target": unsupported("request mirroring is not available"),
  "mirror-host": unsupported("request mirroring is not available"),
  "mirror-request-body": unsupported("request mirroring is not available"),
  "enable-modsecurity": unsupported("ModSecurity is not available"),
  "enable-owasp-core-rules": unsupported("ModSecurity is not available"),
  "modsecurity-transaction-id": unsupported("ModSecurity is not available"),
  "proxy-buffering": unsupported("HAProxy streams responses; there is nothing to buffer or tune"),
  "proxy-buffer-size": unsupported("HAProxy streams responses; there is nothing to buffer or tune"),
  "proxy-buffers-number": unsupported("HAProxy streams responses; there is nothing to buffer or tune"),
  "proxy-max-temp-file-size": unsupported("HAProxy streams responses; there is nothing to buffer or tune"),
  "proxy-request-buffering": unsupported("HAProxy streams requests"),
  "client-body-buffer-size": unsupported("HAProxy streams requests"),
  "proxy-http-version": unsupported("use backend-protocol (h1 or h2)"),
  "proxy-next-upstream": unsupported("failed requests are not retried on another server"),
  "proxy-next-upstream-timeout": unsupported("failed requests are not retried on another server"),
  "proxy-next-upstream-tries": unsupported("failed requests are not retried on another server"),
  "proxy-redirect-from": unsupported("Location headers of responses are not rewritten"),
  "proxy-redirect-to": unsupported("Location headers of responses are not rewritten"),
  "proxy-cookie-domain": unsupported("Set-Cookie headers of responses are not rewritten"),
  "proxy-cookie-path": unsupported("Set-Cookie headers of responses are not rewritten"),
  "enable-access-log": unsupported("access logs are set per class"),
  "enable-rewrite-log": unsupported("there is no rewrite log"),
  "ssl-ciphers": unsupported("TLS ciphers are set per class"),
  "ssl-prefer-server-ciphers": unsupported("TLS ciphers are set per class"),
  "connection-proxy-header": unsupported("HAProxy manages the Connection header"),
  "custom-headers": unsupported("use response-headers-set"),
  "satisfy": unsupported("all configured authentication must pass"),
  "use-port-in-redirects": unsupported("redirects never add the port"),
  "http2-push-preload": unsupported("HTTP/2 server push is not available"),
};
