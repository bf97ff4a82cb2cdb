/**
 * @module render/features/error_pages
 * `default-backend` and `error-codes` (the table's "Errors"). `default-backend` names a Service of
 * the Ingress's namespace (its plain backend: render/backend_resolve.ts) that the frontends send a
 * route's requests to while the route's backend has no usable server (`fallbackLines`).
 *
 * Custom error pages (`error-codes` with `default-backend`, ingress-nginx's `custom-http-errors`):
 * the backend lines that run our Lua action `lua.ic_error_page` (templates/ic_error_pages.lua) and
 * the internal frontend `ic_error_pages` through which that action fetches the default backend's
 * page. HAProxy 2.6 cannot send a request again to another backend once a response has come; the
 * action fetches the page with HAProxy's httpclient instead, over a unix socket beside the Runtime
 * API socket (mode 600), and the frontend routes it by a header only the action sets to the
 * default backend's server slots (so endpoint changes still go through the Runtime API). Every
 * argument has passed an anchored pattern here and is single-quoted.
 */
import type { ServiceRef } from "../../annotations/values.ts";
import { isDns1123Label, isDns1123Subdomain, isPortName, isPortNumber, isProxyName } from "../patterns.ts";
import { quoted } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

/**
 * A route's fallback and error pages. `ingress` (sent as X-Ingress-Name) is filled in by
 * render/backend_resolve.ts, so each Ingress has its own variant.
 */
export interface Fallback {
  defaultBackend: ServiceRef | null;
  errorPages: { codes: number[]; ingress: string } | null;
}

/**
 * The fallback of a route (the frontends key it on the route's backend): none for
 * spec.defaultBackend itself (`path` null). `error-codes` without `default-backend` is reported
 * and ignored.
 */
export function readFallback(r: SettingsReader, path: { path: string } | null): Fallback {
  if (!path) return { defaultBackend: null, errorPages: null };
  const defaultBackend = r.set<ServiceRef>("default-backend");
  const codes = r.set<number[]>("error-codes");
  if (codes && !defaultBackend) {
    r.report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/error-codes has no effect without default-backend; ignored",
    );
  }
  return { defaultBackend, errorPages: codes && defaultBackend ? { codes, ingress: "" } : null };
}

/** What the action of one backend variant needs. */
export interface ErrorPages {
  /** The default backend's plain backend. */
  fallback: string;
  codes: readonly number[];
  namespace: string;
  ingress: string;
  service: string;
  port: number | string;
}

function checkName(name: string): string {
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${JSON.stringify(name)} in model`);
  return name;
}

/** A backend as fallbackLines reads it (a subset of model_types.ts's Backend). */
export interface FallbackSource {
  name: string;
  fallback?: string;
  namespace: string;
  service: string;
  port: number | string;
  settings?: { fallbackIngress?: string };
}

/**
 * The frontends' lines of `default-backend`, after the canary rules and before the routes'
 * `use_backend`: a request routed to a backend without usable server goes to its fallback, with
 * the headers ingress-nginx sends its custom default backend then (X-Code 503, X-Format from
 * Accept, X-Namespace, X-Ingress-Name, X-Service-Name, X-Service-Port of the route, X-Request-ID:
 * the client's, else a new one). The route's names go in one variable, `:`-separated (no name or
 * port has a `:`), which the header lines split.
 */
export function fallbackLines(backends: readonly FallbackSource[]): string[] {
  const fell = backends.filter((b) => b.fallback);
  if (fell.length === 0) return [];
  const when = (b: FallbackSource) => `{ var(txn.route) -m str ${checkName(b.name)} } !{ nbsrv(${b.name}) gt 0 }`;
  const found = "{ var(txn.ic_fb) -m found }";
  return [
    ...fell.map((b) => `http-request set-var(txn.ic_fb) str(${fallbackNames(b)}) if ${when(b)}`),
    `http-request set-header X-Code 503 if ${found}`,
    `http-request set-header X-Format %[req.fhdr(accept)] if ${found} { req.fhdr(accept) -m found }`,
    ...["X-Namespace", "X-Ingress-Name", "X-Service-Name", "X-Service-Port"].map((h, i) =>
      `http-request set-header ${h} %[var(txn.ic_fb),field(${i + 1},:)] if ${found}`
    ),
    `http-request set-header X-Request-ID %[uuid,regsub(-,,g)] if ${found} !{ req.hdr(x-request-id) -m found }`,
    ...fell.map((b) => `use_backend ${checkName(b.fallback!)} if ${when(b)}`),
  ];
}

/** `<namespace>:<ingress>:<service>:<port>` of a route with a fallback, each checked with its anchored pattern. */
function fallbackNames(b: FallbackSource): string {
  const ingress = b.settings?.fallbackIngress ?? "";
  const ok = isDns1123Label(b.namespace) && (ingress === "" || isDns1123Subdomain(ingress)) &&
    isDns1123Label(b.service) && (isPortNumber(b.port) || isPortName(b.port));
  if (!ok) throw new Error(`bug: unvalidated fallback route ${JSON.stringify(b)}`);
  return `${b.namespace}:${ingress}:${b.service}:${b.port}`;
}

/** The internal frontend's name; its backend of last resort is `${ERROR_PAGES_FRONTEND}_none`. */
export const ERROR_PAGES_FRONTEND = "ic_error_pages";

function check(e: ErrorPages): void {
  const ok = isProxyName(e.fallback) && e.codes.length > 0 &&
    e.codes.every((c) => Number.isInteger(c) && c >= 400 && c <= 599) && isDns1123Label(e.namespace) &&
    isDns1123Subdomain(e.ingress) && isDns1123Label(e.service) && (isPortNumber(e.port) || isPortName(e.port));
  if (!ok) throw new Error(`bug: unvalidated error pages ${JSON.stringify(e)}`);
}

/**
 * The backend lines: the request's URI, Accept and X-Request-ID kept before any rewrite (the page
 * is fetched at response time, when the request is gone), then the response action.
 */
export function errorPageLines(e: ErrorPages): string[] {
  check(e);
  const args = [e.fallback, e.codes.join(","), e.namespace, e.ingress, e.service, String(e.port)].map(quoted);
  return [
    "http-request set-var(txn.ic_ep_uri) pathq",
    "http-request set-var(txn.ic_ep_accept) req.fhdr(accept) if { req.fhdr(accept) -m found }",
    "http-request set-var(txn.ic_ep_id) req.fhdr(x-request-id) if { req.fhdr(x-request-id) -m found }",
    `http-response lua.ic_error_page ${args.join(" ")}`,
  ];
}

/**
 * The internal frontend's routing lines: the header names one of the fallbacks in use, which must
 * have a usable server; anything else gets 503 from a server-less backend (which, having no
 * X-IC-Error-Page mark, keeps the original response).
 */
export function errorPagesRouting(fallbacks: readonly string[]): string[] {
  return [...new Set(fallbacks)].sort().map((b) => {
    if (!isProxyName(b)) throw new Error(`bug: unsafe backend name ${JSON.stringify(b)}`);
    return `use_backend ${b} if { var(txn.ic_ep_backend) -m str ${b} } { nbsrv(${b}) gt 0 }`;
  });
}
