/**
 * @module gateway/render_cors
 * The CORS filter of an HTTPRoute rule as lines of the rule's backend (the Fetch standard's CORS
 * protocol, as the Gateway API's HTTPCORSFilter describes it):
 * - the request's `Origin`, compared lower-cased, is allowed when it equals a listed origin, when
 *   it matches a listed `scheme://*.suffix` (one or more labels in front of the suffix), or for any
 *   origin when `*` is listed; the allowed origin is kept in `txn.cors`;
 * - a preflight (OPTIONS with `Access-Control-Request-Method`) from an allowed origin is answered
 *   by the proxy: 204 with `Access-Control-Allow-Origin` (the origin itself, with `Vary: Origin`:
 *   valid with or without credentials), `-Allow-Methods` and `-Allow-Headers` (the lists, or what
 *   the preflight asks for where the list has `*`), `-Expose-Headers`, `-Max-Age` and, with
 *   allowCredentials, `-Allow-Credentials: true`; a preflight from another origin is answered 204
 *   without them (the browser then refuses the request it asked about; the backend never sees it);
 * - the answers to other requests from an allowed origin get `Access-Control-Allow-Origin`,
 *   `-Allow-Credentials`, `-Expose-Headers` and `Vary: Origin`; requests from other origins pass
 *   untouched (the browser then refuses the answer).
 * Every value was checked by the model (lib/gateway/filters.ts); it is checked again here.
 */
import type { CorsPolicy } from "./model_types.ts";
import { checked, isFieldName, logFormatWord, word } from "./render_checks.ts";
import { CORS_METHODS, isCorsOrigin } from "./validate.ts";

const ALLOWED = "{ var(txn.cors) -m found }";

function bug(message: string): never {
  throw new Error(`bug: ${message} in the Gateway model`);
}

/** Dots as `[.]` and `+` as `[+]`: the other characters an origin may have mean themselves in a regex. */
function literal(s: string): string {
  return s.replaceAll(".", "[.]").replaceAll("+", "[+]");
}

/** An origin as a regex alternative (a leading `*.` of the host: one or more labels). */
function originRegex(origin: string): string {
  const lower = checked(isCorsOrigin, "CORS origin", origin).toLowerCase();
  const [scheme, rest] = lower.split("://");
  const host = rest.startsWith("*.") ? `[a-z0-9-]+(?:[.][a-z0-9-]+)*${literal(rest.slice(1))}` : literal(rest);
  return `${literal(scheme)}://${host}`;
}

/** A list header's value as one word: the names as written, or (with `*` listed) what the preflight asks for. */
function listValue(list: readonly string[], asked: string): string | null {
  if (list.includes("*")) return `'%[req.fhdr(${asked})]'`;
  return list.length === 0 ? null : logFormatWord(list.join(", "));
}

/** The lines of a rule's CORS filter (none without one). */
export function corsLines(c: CorsPolicy | null): string[] {
  if (c === null) return [];
  for (const m of c.allowMethods) if (!CORS_METHODS.has(m)) bug(`CORS method ${JSON.stringify(m)}`);
  for (const h of [...c.allowHeaders, ...c.exposeHeaders]) {
    if (h !== "*") checked(isFieldName, "CORS header name", h);
  }
  if (!Number.isInteger(c.maxAge) || c.maxAge < 1 || c.maxAge > 2147483647) bug(`CORS maxAge ${c.maxAge}`);
  const lines: string[] = [];
  if (c.allowOrigins.includes("*")) {
    lines.push("http-request set-var(txn.cors) req.fhdr(origin) if { req.fhdr(origin) -m found }");
  } else if (c.allowOrigins.length > 0) {
    const re = `^(?:${c.allowOrigins.map(originRegex).join("|")})$`;
    lines.push(`http-request set-var(txn.cors) req.fhdr(origin) if { req.fhdr(origin),lower -m reg ${word(re)} }`);
  }
  // an exposed `*` means every header only without credentials; the list is sent as written
  const expose = c.exposeHeaders.length > 0 ? logFormatWord(c.exposeHeaders.join(", ")) : null;
  const preflight = [
    "hdr Access-Control-Allow-Origin '%[var(txn.cors)]'",
    "hdr Vary 'Origin'",
  ];
  const methods = listValue(c.allowMethods, "access-control-request-method");
  if (methods !== null) preflight.push(`hdr Access-Control-Allow-Methods ${methods}`);
  const headers = listValue(c.allowHeaders, "access-control-request-headers");
  if (headers !== null) preflight.push(`hdr Access-Control-Allow-Headers ${headers}`);
  if (expose !== null) preflight.push(`hdr Access-Control-Expose-Headers ${expose}`);
  preflight.push(`hdr Access-Control-Max-Age '${c.maxAge}'`);
  if (c.allowCredentials) preflight.push("hdr Access-Control-Allow-Credentials 'true'");
  lines.push(
    `http-request return status 204 ${preflight.join(" ")} if { method OPTIONS } ${ALLOWED} ` +
      "{ req.fhdr(access-control-request-method) -m found }",
  );
  lines.push(
    "http-request return status 204 if { method OPTIONS } { req.fhdr(origin) -m found } " +
      "{ req.fhdr(access-control-request-method) -m found }",
  );
  lines.push(`http-response set-header Access-Control-Allow-Origin '%[var(txn.cors)]' if ${ALLOWED}`);
  if (c.allowCredentials) lines.push(`http-response set-header Access-Control-Allow-Credentials 'true' if ${ALLOWED}`);
  if (expose !== null) lines.push(`http-response set-header Access-Control-Expose-Headers ${expose} if ${ALLOWED}`);
  lines.push(`http-response add-header Vary 'Origin' if ${ALLOWED}`);
  return lines;
}
