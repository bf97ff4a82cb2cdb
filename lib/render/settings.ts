/**
 * @module render/settings
 * The per-backend settings annotations change (docs/annotations-rendering.md), read: each feature
 * of a backend variant (lib/render/features/) reads its keys of the annotation table from the
 * Ingress's and (for backend-scoped keys) the Service's annotations over the global and class
 * layers, within the risk limit (render/settings_reader.ts); this module puts them together in the
 * order they are read, which is the order their problems are reported in. The lines they become
 * are written by render/settings_lines.ts, each feature's by its own module.
 */
import { createHash } from "node:crypto";
import type { ServiceRef } from "../annotations/values.ts";
import { type AccessLimits, readAccessLimits } from "./features/access_limits.ts";
import { type BackendProtocol, type BackendTls, readBackendConnection } from "./features/backend_protocol.ts";
import { type BasicAuth, readBasicAuth } from "./features/basic_auth.ts";
import { type ClientCert, readClientCert } from "./features/client_cert.ts";
import { type Cors, readCors } from "./features/cors.ts";
import { readFallback } from "./features/error_pages.ts";
import { type ExtAuth, readExtAuth } from "./features/ext_auth.ts";
import { type HeaderEdits, readHeaderEdits } from "./features/headers.ts";
import { type Hsts, readHsts } from "./features/hsts.ts";
import { readRedirects, type Redirects } from "./features/redirects.ts";
import { readRewrite, type Rewrite } from "./features/rewrite.ts";
import { readStickyCookie, type StickyCookie } from "./features/sticky_cookie.ts";
import { readTimeouts, type Timeouts } from "./features/timeouts.ts";
import { type ResolveContext, type SecretScope, type SettingReport, settingsReader } from "./settings_reader.ts";

export type Balance = "roundrobin" | "leastconn" | "source";

/**
 * What the annotations of one route set for its backend; `null`/empty: the defaults section
 * applies. The order of the fields is part of the variant's name (settingsHash hashes their JSON).
 */
export interface BackendSettings {
  /** `load-balance`: the backend's `balance` line (templates/backends.eta). */
  balance: Balance;
  timeouts: Timeouts;
  hsts: Hsts | null;
  redirectTo: Redirects["redirectTo"];
  appRoot: Redirects["appRoot"];
  maxBody: AccessLimits["maxBody"];
  allow: AccessLimits["allow"];
  deny: AccessLimits["deny"];
  rate: AccessLimits["rate"];
  request: HeaderEdits;
  response: HeaderEdits;
  cors: Cors | null;
  sticky: StickyCookie | null;
  proxyProtocol: "v1" | "v2" | null;
  /** `service-upstream`: one server, the Service's cluster IP (absent: its endpoints; render/backend_resolve.ts). */
  serviceUpstream?: true;
  protocol: BackendProtocol;
  /**
   * With a TLS protocol: the SNI sent and checked; `verify`: the backend certificate is checked,
   * against the CA bundle of the Secret `ca` (written by the proxy); without a usable `ca` the
   * backend is not reached at all (503: fails closed, never unverified).
   */
  backendTls: BackendTls | null;
  /** HTTP basic authentication against the htpasswd Secret's userlist (written by the proxy). */
  basicAuth?: BasicAuth | null;
  /**
   * The Ingress asks its TLS hosts for client certificates (the crt-list checks them): `required`
   * refuses requests without a verified certificate for this host; `header` carries it to the backend.
   */
  clientCert?: ClientCert | null;
  /** A `www-redirect` twin host's backend: every request goes to this host, same scheme, path and query (308). */
  wwwRedirectTo: string | null;
  /**
   * Prefix rewrite: the route's path prefix and what replaces it; regex rewrite (a regex path): the
   * route's regex and the path that replaces the whole path, `$1`…`$9` from its captures.
   */
  rewrite: Rewrite | null;
  /** `default-backend`: the Service answering while the route's Service has no ready endpoint. */
  defaultBackend: ServiceRef | null;
  /**
   * `error-codes` (with `default-backend`): answers with these codes are replaced by the default
   * backend's page (lib/render/features/error_pages.ts). `ingress` (sent as X-Ingress-Name) is
   * filled in by the model, so each Ingress has its own variant.
   */
  errorPages?: { codes: number[]; ingress: string } | null;
  /**
   * With `default-backend`: the route's Ingress, sent to the default backend as X-Ingress-Name while
   * it stands in (lib/render/features/error_pages.ts `fallbackLines`); filled in by the model, so
   * each Ingress has its own variant.
   */
  fallbackIngress?: string;
  /** External authentication (lib/render/features/ext_auth.ts). */
  extAuth: ExtAuth | null;
}

export const DEFAULT_SETTINGS: BackendSettings = {
  balance: "roundrobin",
  timeouts: { connect: null, server: null, queue: null, tunnel: null, sse: null },
  hsts: null,
  redirectTo: null,
  appRoot: null,
  maxBody: null,
  allow: null,
  deny: null,
  rate: null,
  request: { set: [], add: [], del: [] },
  response: { set: [], add: [], del: [] },
  cors: null,
  sticky: null,
  proxyProtocol: null,
  protocol: "h1",
  backendTls: null,
  rewrite: null,
  wwwRedirectTo: null,
  defaultBackend: null,
  extAuth: null,
};

/**
 * The settings of a route of `ingress` (its annotations) to a Service (its annotations), for the
 * route's `path` (`null`: the default backend). Invalid values are reported and ignored.
 * `secrets`: the Ingress's namespace and Secrets, which the keys naming a Secret need (without
 * them, as for the baseline of a route without annotations, those keys render nothing).
 */
export function resolveBackendSettings(
  ingress: Readonly<Record<string, string>>,
  service: Readonly<Record<string, string>>,
  path: { path: string; match: "exact" | "prefix" | "regex" } | null,
  report: SettingReport,
  context: ResolveContext = { layers: {}, disableRiskAtOrAbove: null },
  secrets: SecretScope | null = null,
): BackendSettings {
  const r = settingsReader(ingress, service, context, report, secrets);
  // The optional fields are added in this order when set: it is part of the settings' JSON.
  const s: BackendSettings = structuredClone(DEFAULT_SETTINGS);
  s.balance = r.get<Balance>("load-balance") ?? "roundrobin";
  s.timeouts = readTimeouts(r);
  s.hsts = readHsts(r);
  ({ redirectTo: s.redirectTo, appRoot: s.appRoot } = readRedirects(r));
  ({ maxBody: s.maxBody, allow: s.allow, deny: s.deny, rate: s.rate } = readAccessLimits(r));
  ({ request: s.request, response: s.response } = readHeaderEdits(r));
  s.cors = readCors(r);
  s.sticky = readStickyCookie(r);
  if (r.get<boolean>("service-upstream")) s.serviceUpstream = true;
  ({ proxyProtocol: s.proxyProtocol, protocol: s.protocol, backendTls: s.backendTls } = readBackendConnection(r));
  s.extAuth = readExtAuth(r);
  const basicAuth = readBasicAuth(r);
  if (basicAuth) s.basicAuth = basicAuth;
  const clientCert = readClientCert(r);
  if (clientCert) s.clientCert = clientCert;
  s.rewrite = readRewrite(r, path);
  const fallback = readFallback(r, path);
  s.defaultBackend = fallback.defaultBackend;
  if (fallback.errorPages) s.errorPages = fallback.errorPages;
  return s;
}

/** Whether a route with these settings can use the plain backend `be_<ns>_<svc>_<port>`. */
export function isDefaultSettings(s: BackendSettings): boolean {
  return JSON.stringify(s) === JSON.stringify(DEFAULT_SETTINGS);
}

/** The variant suffix of settings: 10 hex digits of their SHA-256 (stable across runs and processes). */
export function settingsHash(s: BackendSettings): string {
  return createHash("sha256").update(JSON.stringify(s)).digest("hex").slice(0, 10);
}
