/**
 * @module tests/render/settings_fixtures
 * A route that sets every feature of a backend variant: annotations of the Ingress and (the
 * backend-scoped keys) of its Service, and a Secret scope in which every Secret is usable.
 */
import type { SecretScope } from "../../lib/render/settings_reader.ts";

const A = "ingress-controller.io/";

export const FULL_INGRESS: Readonly<Record<string, string>> = {
  [`${A}timeout-connect`]: "2s",
  [`${A}timeout-server`]: "30s",
  [`${A}timeout-queue`]: "10s",
  [`${A}timeout-tunnel`]: "2h",
  [`${A}timeout-sse`]: "10m",
  [`${A}hsts`]: "true",
  [`${A}hsts-include-subdomains`]: "true",
  [`${A}redirect-to`]: "https://www.example.com/",
  [`${A}redirect-code`]: "301",
  [`${A}app-root`]: "/app",
  [`${A}max-body-size`]: "8m",
  [`${A}allow-list`]: "10.0.0.0/8, 2001:db8::/32",
  [`${A}deny-list`]: "192.0.2.0/24",
  [`${A}rate-limit-rpm`]: "300",
  [`${A}rate-limit-connections`]: "10",
  [`${A}rate-limit-allow-list`]: "10.1.0.0/16",
  [`${A}request-headers-set`]: "X-Env: prod",
  [`${A}request-headers-add`]: "X-Trace: on",
  [`${A}request-headers-delete`]: "X-Debug",
  [`${A}response-headers-set`]: "X-Frame-Options: DENY",
  [`${A}response-headers-add`]: "Cache-Control: no-store",
  [`${A}response-headers-delete`]: "Server",
  [`${A}cors-enable`]: "true",
  [`${A}cors-allow-origin`]: "https://app.example.com, https://*.example.org",
  [`${A}cors-expose-headers`]: "X-Request-Id",
  [`${A}sticky-cookie`]: "true",
  [`${A}sticky-cookie-max-age`]: "1h",
  [`${A}sticky-cookie-samesite`]: "Lax",
  [`${A}auth-url`]: "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth",
  [`${A}auth-signin`]: "/oauth2/start",
  [`${A}auth-basic-secret`]: "web-users",
  [`${A}client-cert-ca-secret`]: "clients-ca",
  [`${A}client-cert-header`]: "X-SSL-Client-Cert",
  [`${A}rewrite-target`]: "/",
  [`${A}default-backend`]: "error-pages:80",
  [`${A}error-codes`]: "404,503",
};

export const FULL_SERVICE: Readonly<Record<string, string>> = {
  [`${A}load-balance`]: "leastconn",
  [`${A}service-upstream`]: "true",
  [`${A}backend-protocol`]: "h2-tls",
  [`${A}backend-ca-secret`]: "backend-ca",
  [`${A}backend-sni`]: "api.internal.example",
  [`${A}backend-proxy-protocol`]: "v2",
};

/** Namespace `shop`, where every Secret holds a CA bundle and an htpasswd file with one user. */
export const usableSecrets: SecretScope = {
  namespace: "shop",
  secret: () => ({ tlsSummary: { valid: false, sha256: "0", ca: true, htpasswd: { users: 1, refused: [] } } }),
};
