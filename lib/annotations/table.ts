/**
 * @module annotations/table
 * The one declarative table of the controller's annotations (`ingress-controller.io/<key>`); nothing
 * else defines an annotation. Its columns, and where each is used:
 * - `key`: the annotation `ingress-controller.io/<key>` of an Ingress or Service, and the bare key of
 *   the global and class ConfigMaps (controller/global_settings.ts); the modules that read a key name it.
 * - `group`: the key's section of the README's reference (annotations/docs.ts).
 * - `scope`, `ingressOnly`: the layers that may set the key (annotations/resolve.ts `layersOf`), for the
 *   validation of the webhook and the controller and for the precedence of `resolveSetting`; the
 *   frontend keys of an Ingress with a proxy of its own go to that proxy (controller/global_settings.ts).
 * - `risk`: the global `annotation-risk-limit` (annotations/resolve.ts; nginx/translate.ts for the
 *   ingress-nginx keys that become ours).
 * - `value`: the parser of every read and check (annotations/values.ts; resolve.ts, the ConfigMap layers
 *   in controller/global_settings.ts, nginx/convert.ts); Secret-valued keys are the Secrets the controller
 *   watches (controller/refs.ts); its `syntax` is the README's Value column.
 * - `default`: the value when no layer sets one (`resolveSetting`); null: unset, the feature is off.
 * - `status`: what the proxy does with a key today: `served` keys are rendered into HAProxy;
 *   `validated` keys are parsed and validated (a bad value is refused by the webhook) but not yet
 *   rendered, so setting them changes nothing yet. The README and `nginx-check` (nginx/translate.ts)
 *   read it, so neither can claim more than the renderer does.
 * - `docs`, `example`: the README's reference (annotations/docs.ts).
 * - `aliases`: older full names read as the key (annotations/resolve.ts `readAnnotation`,
 *   render/settings_memo.ts).
 *
 * Where a key becomes HAProxy configuration (docs/annotations-rendering.md):
 * - The keys of a route's backend: one module per feature under lib/render/features/ reads its keys and
 *   writes their lines (timeouts.ts, hsts.ts, redirects.ts, access_limits.ts, headers.ts, cors.ts,
 *   sticky_cookie.ts, backend_protocol.ts, ext_auth.ts, basic_auth.ts, client_cert.ts, rewrite.ts,
 *   error_pages.ts); render/settings.ts reads them in turn (and `load-balance`, `service-upstream`),
 *   render/settings_lines.ts orders the lines of the backend.
 * - The keys that say how a whole Ingress is served (`ssl-redirect`, `ssl-redirect-code`,
 *   `ssl-redirect-trailing-slash`, `force-ssl-redirect`, `ssl-passthrough`, `www-redirect`, `path-regex`, `canary*`, and
 *   `client-cert-ca-secret` and `client-cert-verify` for the crt-list): render/ingress_settings.ts, then the
 *   model (the map files, the crt-list, render/canary.ts). `proxy` is applied by the controller's proxy
 *   groups (controller/groups.ts).
 * - The frontend keys (`accept-proxy-protocol`, `timeout-client`, `timeout-http-request`): the global and
 *   class ConfigMaps (controller/global_settings.ts, rendered by render/proxy_options.ts).
 */
import * as v from "./values.ts";
import type { ValueKind } from "./values.ts";

export const PREFIX = "ingress-controller.io/";

/** Where a key applies; decides where it may be set (annotations/resolve.ts). */
export type Scope = "global" | "frontend" | "host" | "backend" | "path";
/** As ingress-nginx's annotation risk table: what a user who may set the key can do with it. */
export const RISKS = ["low", "medium", "high", "critical"] as const;
export type Risk = typeof RISKS[number];
export type Status = "served" | "validated";

export interface AnnotationSpec {
  /** The key without the prefix. */
  readonly key: string;
  /** README section. */
  readonly group: string;
  readonly scope: Scope;
  readonly risk: Risk;
  readonly value: ValueKind;
  /** The default as an annotation would write it; null: unset (the feature is off). */
  readonly default: string | null;
  readonly status: Status;
  readonly docs: string;
  /** An example value. */
  readonly example: string;
  /** Older full keys read as this key (the new key wins when both are set). */
  readonly aliases?: readonly string[];
  /** Only an Ingress may set it: it says what that Ingress is (a canary, a dedicated proxy), never a default. */
  readonly ingressOnly?: boolean;
}

const SERVED = "served" as const;

/** Entries sharing their group's settings (`common`); the table lists each setting once per group. */
function inGroup<K extends keyof AnnotationSpec>(
  common: Pick<AnnotationSpec, K>,
  entries: readonly Omit<AnnotationSpec, K>[],
): AnnotationSpec[] {
  return entries.map((e) => ({ ...common, ...e }) as AnnotationSpec);
}

/** The table, in README order. */
export const ANNOTATIONS: readonly AnnotationSpec[] = [
  ...inGroup({ group: "TLS", scope: "host" }, [
    {
      key: "ssl-redirect",
      risk: "low",
      value: v.bool,
      default: "true",
      status: SERVED,
      aliases: ["ingress.kubernetes.io/ssl-redirect"],
      docs:
        "Redirect plain HTTP requests for the Ingress's TLS hosts to HTTPS (308). Hosts without TLS are never redirected.",
      example: "false",
    },
    {
      key: "ssl-redirect-code",
      risk: "low",
      value: v.redirectCode,
      default: "308",
      status: SERVED,
      docs: "Status code of the redirect to HTTPS.",
      example: "301",
    },
    {
      key: "ssl-redirect-trailing-slash",
      risk: "low",
      value: v.oneOf(["keep", "drop"]),
      default: "keep",
      status: SERVED,
      docs:
        'The redirect to HTTPS (`ssl-redirect`, `force-ssl-redirect`): `keep` sends the path and query as they came; `drop` removes one `/` that ends them, as ingress-nginx does without `preserve-trailing-slash` (`GET /` → `https://host`, `/docs/` → `https://host/docs`). The compatibility mode sets `drop` unless the Ingress sets `nginx.ingress.kubernetes.io/preserve-trailing-slash: "true"`.',
      example: "drop",
    },
    {
      key: "force-ssl-redirect",
      risk: "medium",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs:
        "Redirect plain HTTP requests for the Ingress's hosts to HTTPS (with `ssl-redirect-code`) even without a TLS section (TLS terminated in front of the proxy), and even when `ssl-redirect` is `false`. Host-wide: every path of the host is redirected. Behind a load balancer that terminates TLS and forwards to the proxy's HTTP port, every request is redirected again (a loop), as in ingress-nginx without `use-forwarded-headers`: forward HTTPS to the proxy's HTTPS port (its default certificate) instead.",
      example: "true",
    },
    {
      key: "hsts",
      risk: "low",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs: "Send `Strict-Transport-Security` on HTTPS responses.",
      example: "true",
    },
    {
      key: "hsts-max-age",
      risk: "low",
      value: v.int(0, 2 ** 31 - 1, "seconds"),
      default: "15768000",
      status: SERVED,
      docs: "`max-age` of the HSTS header, in seconds.",
      example: "31536000",
    },
    {
      key: "hsts-include-subdomains",
      risk: "low",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs: "Add `includeSubDomains` to the HSTS header.",
      example: "true",
    },
    {
      key: "hsts-preload",
      risk: "low",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs: "Add `preload` to the HSTS header.",
      example: "true",
    },
    {
      key: "ssl-passthrough",
      risk: "low",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs:
        "Pass TLS connections for the Ingress's hosts to the Service of their root path (`/`) undecrypted, routed by SNI; the HTTP settings do not apply to them (plain HTTP is routed as usual).",
      example: "true",
    },
  ]),
  ...inGroup({ group: "Client certificates" }, [
    {
      key: "client-cert-ca-secret",
      status: SERVED,
      scope: "host",
      risk: "medium",
      value: v.secretName,
      default: null,
      docs:
        "Ask TLS clients of the Ingress's TLS hosts for a certificate signed by the CA in this Secret (key `ca.crt`, same namespace). A request whose TLS name (SNI) is not its Host gets 421.",
      example: "clients-ca",
    },
    {
      key: "client-cert-verify",
      status: SERVED,
      scope: "host",
      risk: "medium",
      value: v.oneOf(["required", "optional"] as const),
      default: "required",
      docs:
        "`required`: a connection without a valid client certificate is refused; `optional`: a missing certificate is let through (an invalid one is still refused).",
      example: "optional",
    },
    {
      key: "client-cert-header",
      status: SERVED,
      scope: "path",
      risk: "low",
      value: v.headerName,
      default: null,
      docs:
        "Pass the verified client certificate (base64 DER) to the backend in this request header; a header of that name sent by the client is always removed.",
      example: "X-SSL-Client-Cert",
    },
  ]),
  ...inGroup({ group: "Backends" }, [
    {
      key: "backend-protocol",
      scope: "backend",
      risk: "low",
      value: v.oneOf(["h1", "h2", "h1-tls", "h2-tls"] as const),
      default: "h1",
      status: SERVED,
      docs:
        "How the proxy talks to the backend: HTTP/1.1, HTTP/2 cleartext (gRPC), or either over TLS (`h2-tls`: gRPC over TLS). Over TLS the backend's certificate is not verified unless `backend-ca-secret` is set (as ingress-nginx's default).",
      example: "h2",
    },
    {
      key: "backend-ca-secret",
      scope: "backend",
      risk: "medium",
      value: v.secretName,
      default: null,
      status: SERVED,
      docs:
        "With a TLS backend protocol: verify the backend's certificate against the CA in this Secret (key `ca.crt`, PEM certificates); while the Secret is missing or has no usable `ca.crt`, every request gets 503 (fails closed) with a Warning.",
      example: "backend-ca",
    },
    {
      key: "backend-sni",
      scope: "backend",
      risk: "high",
      value: v.hostName,
      default: null,
      status: SERVED,
      docs: "With a TLS backend protocol: the server name sent in SNI and checked in the backend's certificate.",
      example: "api.internal.example",
    },
    {
      key: "load-balance",
      scope: "backend",
      risk: "low",
      value: v.oneOf(["roundrobin", "leastconn", "source"] as const),
      default: "roundrobin",
      status: SERVED,
      aliases: ["ingress.kubernetes.io/load-balance"],
      docs: "Load-balancing algorithm among the Service's endpoints.",
      example: "leastconn",
    },
    {
      key: "service-upstream",
      scope: "backend",
      risk: "low",
      value: v.bool,
      default: "false",
      status: SERVED,
      docs:
        "Send requests to the Service's cluster IP (kube-proxy picks the endpoint) instead of its endpoints: endpoint changes never touch the proxy, and the proxy's own balancing, sticky cookies and retries to another endpoint do not apply. A headless or ExternalName Service gets a Warning and 503.",
      example: "true",
    },
    {
      key: "backend-proxy-protocol",
      scope: "backend",
      risk: "medium",
      value: v.oneOf(["none", "v1", "v2"] as const),
      default: "none",
      status: SERVED,
      docs: "Send a PROXY protocol header (v1 text, v2 binary) on each connection to the backend.",
      example: "v2",
    },
    {
      key: "accept-proxy-protocol",
      scope: "frontend",
      risk: "high",
      value: v.cidrList,
      default: null,
      status: SERVED,
      docs:
        "Connections from these addresses (the load balancer in front) must start with a PROXY protocol header (v1 or v2), whose client address the proxy then uses; from other addresses no header is read (one is a bad request).",
      example: "10.0.0.0/8",
    },
    {
      key: "proxy",
      scope: "frontend",
      ingressOnly: true,
      risk: "medium",
      value: v.oneOf(["shared", "dedicated"] as const),
      default: "shared",
      status: SERVED,
      docs:
        "`dedicated`: the Ingress gets a proxy of its own in its namespace (`<ingress>-haproxy`: its own Deployment, Service and address) instead of its class's shared one (docs/proxy-groups.md), unless the global setting `dedicated-proxies` is `\"false\"` (the Helm chart's default): then it joins the shared one with a Warning Event.",
      example: "dedicated",
    },
  ]),
  ...inGroup({ group: "Timeouts", risk: "low" }, [
    {
      key: "timeout-connect",
      scope: "backend",
      value: v.duration,
      default: "5s",
      status: SERVED,
      docs: "Time to establish a connection to a backend server.",
      example: "2s",
    },
    {
      key: "timeout-server",
      scope: "backend",
      value: v.legacyTimeout,
      default: null,
      status: SERVED,
      aliases: ["ingress.kubernetes.io/timeout-server"],
      docs: "Inactivity timeout on the backend side (unset: the proxy's default, 60s).",
      example: "30s",
    },
    {
      key: "timeout-client",
      scope: "frontend",
      value: v.duration,
      default: "60s",
      status: SERVED,
      docs: "Inactivity timeout on the client side.",
      example: "1m",
    },
    {
      key: "timeout-http-request",
      scope: "frontend",
      value: v.duration,
      default: "10s",
      status: SERVED,
      docs: "Time a client has to send the complete request headers (else 408).",
      example: "5s",
    },
    {
      key: "timeout-queue",
      scope: "backend",
      value: v.duration,
      default: "30s",
      status: SERVED,
      docs: "Time a request may wait for a free server slot before it gets 503.",
      example: "10s",
    },
    {
      key: "timeout-tunnel",
      scope: "backend",
      value: v.duration,
      default: "1h",
      status: SERVED,
      docs: "Inactivity timeout of WebSocket and other upgraded (tunnelled) connections.",
      example: "2h",
    },
    {
      key: "timeout-sse",
      scope: "backend",
      value: v.duration,
      default: null,
      status: SERVED,
      docs: "Server inactivity timeout for server-sent events requests (`Accept: text/event-stream`).",
      example: "10m",
    },
  ]),
  ...inGroup({ group: "Paths and redirects" }, [
    {
      key: "path-regex",
      status: SERVED,
      scope: "path",
      risk: "low",
      value: v.oneOf(["true", "false", "all"]),
      default: "false",
      docs:
        "`true`: the Ingress's `ImplementationSpecific` paths are regular expressions matched from the start of the path, case-insensitively (as ingress-nginx's `use-regex`), after the host's Exact paths and before its prefixes, the longest regex first. `all`: every path of the Ingress is such a regex, its `Exact` and `Prefix` paths too (`/api` matches `/api`, `/apis` and `/api/v1`), and so is every path of its hosts, other Ingresses' too, all in one longest-first order, as ingress-nginx does with `use-regex` or `rewrite-target` (the compatibility mode writes `all`); another Ingress's path that is no valid regex keeps its match, with a Warning. Syntax: literals of a path, `.`, `[…]`, `(…)`, `(?:…)`, `|`, `* + ?`, `{m,n}` after a single item, `\\d \\w \\s`-style escapes, `$` only before `)`, `|` or the end; at most 256 characters. An invalid regex drops that path with a Warning.",
      example: "true",
    },
    {
      key: "rewrite-target",
      status: SERVED,
      scope: "path",
      risk: "medium",
      value: v.rewriteTarget,
      default: null,
      docs:
        "Rewrite the path sent to the backend (the query string is kept). Prefix and Exact paths: the matched prefix is replaced (`/api` + `/`: `/api/users` → `/users`). Regex paths (`path-regex`): the whole path becomes the target, `$1`…`$9` filled from the regex's captures (`/something(/|$)(.*)` + `/$2`: `/something/foo` → `/foo`); on other paths a target with `$n` gets a Warning and is ignored.",
      example: "/$2",
    },
    {
      key: "app-root",
      status: SERVED,
      scope: "host",
      risk: "medium",
      value: v.path,
      default: null,
      docs:
        "Redirect requests for `/` to this path (302). The Location is absolute, the request's own scheme and `Host` before the path (`http://shop.example.com/app`), as ingress-nginx sends it.",
      example: "/app",
    },
    {
      key: "redirect-to",
      status: SERVED,
      scope: "path",
      risk: "medium",
      value: v.url,
      default: null,
      docs: "Answer every request of the Ingress's paths with a redirect to this URL instead of proxying it.",
      example: "https://www.example.com/",
    },
    {
      key: "redirect-code",
      status: SERVED,
      scope: "path",
      risk: "low",
      value: v.redirectCode,
      default: "302",
      docs: "Status code of `redirect-to`.",
      example: "301",
    },
    {
      key: "www-redirect",
      status: SERVED,
      scope: "host",
      risk: "low",
      value: v.bool,
      default: "false",
      docs:
        "Redirect the `www.` twin of each host to the host (or the bare twin of a `www.` host to it), keeping scheme, path and query (308). A twin some Ingress routes itself is not redirected.",
      example: "true",
    },
  ]),
  ...inGroup({ group: "CORS", scope: "path" }, [
    {
      key: "cors-enable",
      status: SERVED,
      risk: "low",
      value: v.bool,
      default: "false",
      docs: "Answer CORS preflight requests and add CORS headers to responses, with the `cors-*` settings below.",
      example: "true",
    },
    {
      key: "cors-allow-origin",
      status: SERVED,
      risk: "medium",
      value: v.origins,
      default: "*",
      docs: "Allowed origins; the request's `Origin` is echoed when it matches.",
      example: "https://app.example.com, https://*.example.org",
    },
    {
      key: "cors-allow-methods",
      status: SERVED,
      risk: "medium",
      value: v.methods,
      default: "GET, PUT, POST, DELETE, PATCH, OPTIONS",
      docs: "`Access-Control-Allow-Methods`.",
      example: "GET, POST",
    },
    {
      key: "cors-allow-headers",
      status: SERVED,
      risk: "medium",
      value: v.headerNames,
      default:
        "DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, Content-Type, Range, Authorization",
      docs: "`Access-Control-Allow-Headers`.",
      example: "Content-Type, Authorization",
    },
    {
      key: "cors-expose-headers",
      status: SERVED,
      risk: "medium",
      value: v.headerNamesOrStar,
      default: null,
      docs: "`Access-Control-Expose-Headers`.",
      example: "X-Request-Id",
    },
    {
      key: "cors-allow-credentials",
      status: SERVED,
      risk: "low",
      value: v.bool,
      default: "true",
      docs: "`Access-Control-Allow-Credentials: true`.",
      example: "false",
    },
    {
      key: "cors-max-age",
      status: SERVED,
      risk: "low",
      value: v.int(0, 2 ** 31 - 1, "seconds"),
      default: "1728000",
      docs: "`Access-Control-Max-Age` of preflight answers.",
      example: "600",
    },
  ]),
  ...inGroup({ group: "Authentication", scope: "path" }, [
    {
      key: "auth-basic-secret",
      status: SERVED,
      risk: "medium",
      value: v.secretName,
      default: null,
      docs:
        "Require HTTP basic authentication against the htpasswd file in this Secret (key `auth`; bcrypt, SHA-crypt or MD5-crypt lines as the proxy's crypt(3) reads them; `$apr1$` lines are refused: regenerate them with `htpasswd -B`). A missing or unusable Secret denies every request (401).",
      example: "web-users",
    },
    {
      key: "auth-basic-realm",
      status: SERVED,
      risk: "medium",
      value: v.realm,
      default: "Authentication Required",
      docs: "Realm of the basic-auth challenge.",
      example: "Staff only",
    },
    {
      key: "auth-url",
      status: SERVED,
      risk: "high",
      value: v.authUrl,
      default: null,
      docs:
        "External authentication: each request is first sent to this URL (a GET with the request's cookies, `Authorization`, the headers `auth-request-headers` names and the proxy's `X-Original-*`/`X-Forwarded-*` set; no body); 2xx lets it through, 401/403 are returned to the client, anything else (the service down, 5 s without an answer) is a 500. Loopback, link-local, cloud metadata and the proxy's own ports are refused, before and after name resolution, as are hosts outside the class's `auth-url-allowed-hosts` (README \"External authentication\"); a refused or invalid value makes every request of the route a 500, never an unauthenticated pass.",
      example: "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth",
    },
    {
      key: "auth-signin",
      status: SERVED,
      risk: "high",
      value: v.authSignin,
      default: null,
      docs:
        "With `auth-url`: a 401 becomes a redirect to this URL, with the original URL in the `rd` query parameter (the oauth2-proxy pattern). A URL's host follows `auth-url`'s address policy.",
      example: "/oauth2/start",
    },
    {
      key: "auth-response-headers",
      status: SERVED,
      risk: "medium",
      value: v.headerNames,
      default: null,
      docs: "With `auth-url`: copy these headers of the authentication response into the request sent to the backend.",
      example: "X-Auth-Request-User, X-Auth-Request-Email",
    },
    {
      key: "auth-request-headers",
      status: SERVED,
      risk: "medium",
      value: v.authRequestHeaders,
      default: null,
      docs:
        "With `auth-url`: these request headers of the client are sent to the authentication service too (by default only `Cookie` and `Authorization` are).",
      example: "X-Api-Key, Accept",
    },
  ]),
  ...inGroup({ group: "Access and limits", scope: "path" }, [
    {
      key: "allow-list",
      status: SERVED,
      risk: "medium",
      value: v.cidrList,
      default: null,
      docs: "Only clients from these addresses may use the Ingress's paths; others get 403.",
      example: "10.0.0.0/8, 2001:db8::/32",
    },
    {
      key: "deny-list",
      status: SERVED,
      risk: "medium",
      value: v.cidrList,
      default: null,
      docs: "Clients from these addresses get 403 (checked before `allow-list`).",
      example: "192.0.2.0/24",
    },
    {
      key: "rate-limit-rps",
      status: SERVED,
      risk: "low",
      value: v.int(1, 1_000_000, "requests per second"),
      default: null,
      docs: "Requests per second per client address; over it: 429.",
      example: "20",
    },
    {
      key: "rate-limit-rpm",
      status: SERVED,
      risk: "low",
      value: v.int(1, 60_000_000, "requests per minute"),
      default: null,
      docs:
        "Requests per minute per client address; over it: 429. Ignored (with a Warning) when `rate-limit-rps` is set too.",
      example: "300",
    },
    {
      key: "rate-limit-connections",
      status: SERVED,
      risk: "low",
      value: v.int(1, 1_000_000, "connections"),
      default: null,
      docs: "Concurrent connections per client address; over it: 429.",
      example: "10",
    },
    {
      key: "rate-limit-allow-list",
      status: SERVED,
      risk: "low",
      value: v.cidrList,
      default: null,
      docs: "Client addresses the rate limits do not apply to.",
      example: "10.0.0.0/8",
    },
    {
      key: "max-body-size",
      status: SERVED,
      risk: "medium",
      value: v.size,
      default: "0",
      docs:
        "Largest request body, checked on `Content-Length`; over it: 413. `0`: no limit. (A chunked body without length is not counted.)",
      example: "8m",
    },
  ]),
  ...inGroup({ group: "Sessions", scope: "backend" }, [
    {
      key: "sticky-cookie",
      status: SERVED,
      risk: "low",
      value: v.bool,
      default: "false",
      docs: "Pin each client to one server with a cookie the proxy sets.",
      example: "true",
    },
    {
      key: "sticky-cookie-name",
      status: SERVED,
      risk: "medium",
      value: v.cookieName,
      default: "INGRESSCOOKIE",
      docs: "Name of the sticky cookie.",
      example: "route",
    },
    {
      key: "sticky-cookie-max-age",
      status: SERVED,
      risk: "medium",
      value: v.duration,
      default: null,
      docs: "Lifetime of the sticky cookie (unset: a session cookie).",
      example: "1h",
    },
    {
      key: "sticky-cookie-secure",
      status: SERVED,
      risk: "low",
      value: v.bool,
      default: "false",
      docs: "Mark the sticky cookie `Secure`.",
      example: "true",
    },
    {
      key: "sticky-cookie-samesite",
      status: SERVED,
      risk: "low",
      value: v.oneOf(["None", "Lax", "Strict"] as const),
      default: null,
      docs: "`SameSite` attribute of the sticky cookie.",
      example: "Lax",
    },
  ]),
  ...inGroup({ group: "Canary", scope: "path", ingressOnly: true }, [
    {
      key: "canary",
      status: SERVED,
      risk: "low",
      value: v.bool,
      default: "false",
      docs:
        "This Ingress is the canary of the Ingress of the same namespace with the same host and path: it gets the requests the `canary-*` rules select (header, then cookie, then weight). It adds no route of its own; without such a route in its namespace it is ignored with a Warning (a canary never takes another namespace's traffic). A canary rule changes `haproxy.cfg` (a reload), unlike routes.",
      example: "true",
    },
    {
      key: "canary-weight",
      status: SERVED,
      risk: "low",
      value: v.int(0, 100, "percent"),
      default: "0",
      docs: "Percentage of the other requests sent to the canary.",
      example: "10",
    },
    {
      key: "canary-header",
      status: SERVED,
      risk: "medium",
      value: v.headerName,
      default: null,
      docs: "Requests whose header has the value `always` go to the canary, `never` never do.",
      example: "X-Canary",
    },
    {
      key: "canary-header-value",
      status: SERVED,
      risk: "medium",
      value: v.headerValue,
      default: null,
      docs: "With `canary-header`: this value (instead of `always`) selects the canary.",
      example: "beta-testers",
    },
    {
      key: "canary-cookie",
      status: SERVED,
      risk: "medium",
      value: v.cookieName,
      default: null,
      docs: "Requests whose cookie has the value `always` go to the canary, `never` never do.",
      example: "canary",
    },
  ]),
  ...inGroup({ group: "Headers", scope: "path", risk: "medium", default: null }, [
    {
      key: "request-headers-set",
      status: SERVED,
      value: v.headerLines,
      docs: "Set (replace) these request headers before the request goes to the backend.",
      example: "X-Env: prod",
    },
    {
      key: "request-headers-add",
      status: SERVED,
      value: v.headerLines,
      docs: "Add these request headers (existing ones are kept).",
      example: "X-Trace: on",
    },
    {
      key: "request-headers-delete",
      status: SERVED,
      value: v.headerNames,
      docs: "Remove these request headers.",
      example: "X-Debug",
    },
    {
      key: "response-headers-set",
      status: SERVED,
      value: v.headerLines,
      docs: "Set (replace) these response headers.",
      example: "X-Frame-Options: DENY",
    },
    {
      key: "response-headers-add",
      status: SERVED,
      value: v.headerLines,
      docs: "Add these response headers.",
      example: "Cache-Control: no-store",
    },
    {
      key: "response-headers-delete",
      status: SERVED,
      value: v.headerNames,
      docs: "Remove these response headers.",
      example: "Server, X-Powered-By",
    },
  ]),
  ...inGroup({ group: "Errors", scope: "path", risk: "low", default: null }, [
    {
      key: "error-codes",
      status: SERVED,
      value: v.errorCodes,
      docs:
        "With `default-backend`: an answer of the path's Service with one of these codes is replaced by the default backend's answer (its status, headers and body, as ingress-nginx) to a GET of `/` with `X-Code`, `X-Format` (the request's Accept), `X-Original-URI`, `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port` and `X-Request-ID` (when the request has one). A page over 64 KiB, or a default backend that is down or does not answer within about 4 s, keeps the original answer; the Ingress's response header annotations do not apply to the page.",
      example: "404,503",
    },
    {
      key: "default-backend",
      status: SERVED,
      value: v.serviceRef,
      docs:
        "A Service of the Ingress's namespace (first port when none is given) that answers the Ingress's requests while the path's Service has no ready endpoint (instead of 503); the Ingress's other annotations do not apply to it.",
      example: "error-pages:80",
    },
  ]),
];

const BY_KEY = new Map(ANNOTATIONS.map((s) => [s.key, s]));
const BY_ALIAS = new Map(ANNOTATIONS.flatMap((s) => (s.aliases ?? []).map((a) => [a, s] as const)));

/** The spec of a key (without prefix), or undefined. */
export function specOf(key: string): AnnotationSpec | undefined {
  return BY_KEY.get(key);
}

/** The spec a full annotation name belongs to (ours or a legacy alias), or undefined. */
export function specOfAnnotation(name: string): AnnotationSpec | undefined {
  return name.startsWith(PREFIX) ? BY_KEY.get(name.slice(PREFIX.length)) : BY_ALIAS.get(name);
}

/** The full annotation name of a key. */
export function annotationName(spec: AnnotationSpec): string {
  return PREFIX + spec.key;
}
