/**
 * @module gateway/validate
 * Anchored patterns for every Gateway API value that may reach the proxy's configuration or its
 * map files. The CRDs validate most of these already; the model checks again because a value that
 * slipped through (an older CRD, a hand-written object) must be refused with a condition naming
 * its field, never written. Host, path and name patterns are the program's own
 * (lib/render/patterns.ts); the regex subset is the one Ingress path regexes use
 * (lib/annotations/values.ts `pathRegexProblem`), which PCRE2 and JavaScript read alike.
 */
import { pathRegexProblem } from "../annotations/values.ts";
import { isHost, isIPv4, isPath } from "../render/patterns.ts";

export { isDns1123Label, isDns1123Subdomain, isPortNumber } from "../render/patterns.ts";

/**
 * RFC 7230 `token`: header names (and query parameter names, which the API types the same way),
 * less `#` (a comment outside quotes), `$` (an expansion outside single quotes) and `'` (ends a
 * single-quoted word), which no real header name uses.
 */
const TOKEN = /^[!%&*+.^_`|~0-9A-Za-z-]{1,256}$/;
/**
 * A header value as the proxy may write or compare it: printable ASCII, inner spaces and tabs, no
 * leading or trailing blank (RFC 7230 field-value), and no `'`: values are placed in single quotes.
 */
const HEADER_VALUE = /^[!-&(-~](?:[\t !-&(-~]{0,4094}[!-&(-~])?$/;
/** A query parameter value compared as sent (not decoded): printable ASCII without blanks or `'`. */
const QUERY_VALUE = /^[!-&(-~]{1,1024}$/;

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"] as const;
/** The methods a CORS filter may allow: the HTTP methods, and `*` for any. */
export const CORS_METHODS: ReadonlySet<string> = new Set([...HTTP_METHODS, "*"]);
export const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;
export const MAX_VALUE_REGEX_LENGTH = 256;

/** A Gateway API `Hostname`: RFC 1123, lower case, optionally `*.` + name; not an IP address. */
export function isGatewayHostname(s: unknown): s is string {
  return isHost(s) && !isIPv4(s);
}

/** A `PreciseHostname` (redirect and rewrite hostnames): a Hostname without wildcard. */
export function isPreciseHostname(s: unknown): s is string {
  return isGatewayHostname(s) && !s.startsWith("*");
}

export function isHeaderName(s: unknown): s is string {
  return typeof s === "string" && TOKEN.test(s);
}

export function isHeaderValue(s: unknown): s is string {
  return typeof s === "string" && HEADER_VALUE.test(s);
}

export function isQueryValue(s: unknown): s is string {
  return typeof s === "string" && QUERY_VALUE.test(s);
}

export function isHttpMethod(s: unknown): s is string {
  return typeof s === "string" && (HTTP_METHODS as readonly string[]).includes(s);
}

/** An Exact or PathPrefix path (and a path a redirect or rewrite writes): see lib/render/patterns.ts isPath. */
export function isMatchPath(s: unknown): s is string {
  return isPath(s);
}

/** Why `re` is not a RegularExpression path this program places in the proxy, or null. */
export function pathRegexValueProblem(re: unknown): string | null {
  if (typeof re !== "string") return "is not a string";
  return pathRegexProblem(re);
}

/**
 * Why `re` is not a RegularExpression header or query value this program places in the proxy, or
 * null: the path regex subset (no blanks, quotes, `%`, `#`, back-references or `(?` other than
 * `(?:`), without the leading `/`.
 */
export function valueRegexProblem(re: unknown): string | null {
  if (typeof re !== "string" || re === "") return "is empty";
  if (re.length > MAX_VALUE_REGEX_LENGTH) return `is longer than ${MAX_VALUE_REGEX_LENGTH} characters`;
  if (/^[*+?{]/.test(re)) return `starts with ${JSON.stringify(re[0])}, which repeats nothing`;
  // Checked as the path regex "/" + re: the leading literal changes no structure, and shifts positions by one.
  const problem = pathRegexProblem(`/${re}`);
  if (problem !== null) return problem.replace(/ at (\d+)/, (_, n: string) => ` at ${Number(n) - 1}`);
  try {
    new RegExp(re);
  } catch {
    return "does not compile";
  }
  return null;
}

/**
 * A CORS origin of the CORS filter: `*`, or `scheme://host[:port]` whose host may start with `*.`
 * (any one or more labels), case-insensitive. Nothing else: it is placed in a regex and a quoted word.
 */
const CORS_ORIGIN =
  /^(?:\*|[A-Za-z][A-Za-z0-9+.-]{0,15}:\/\/(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::[0-9]{1,5})?)$/;

export function isCorsOrigin(s: unknown): s is string {
  return typeof s === "string" && s.length <= 253 && CORS_ORIGIN.test(s);
}

/** A Gateway API duration (GEP-2257): 1 to 4 parts of up to 5 digits, units h, m, s, ms in this order. */
const DURATION = /^(?:([0-9]{1,5})h)?(?:([0-9]{1,5})m)?(?:([0-9]{1,5})s)?(?:([0-9]{1,5})ms)?$/;
/** HAProxy's longest timeout: 2^31 - 1 ms (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2147483647;

/** A Gateway API duration in ms, or null when it is not one. */
export function durationMs(s: unknown): number | null {
  if (typeof s !== "string" || s === "") return null;
  const m = DURATION.exec(s);
  if (!m) return null;
  const [h, min, sec, ms] = m.slice(1).map((x) => Number(x ?? 0));
  return ((h * 60 + min) * 60 + sec) * 1000 + ms;
}

/**
 * A gRPC service name as a GRPCRoute's Exact method match names it (the CRD's grammar: a
 * protobuf full name, dot-separated identifiers, optionally with a leading dot; case-insensitive
 * letters), at most 1,024 characters.
 */
const GRPC_SERVICE = /^\.?[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*$/;
/** A gRPC method name (the CRD's grammar: one identifier), at most 1,024 characters. */
const GRPC_METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;

export function isGrpcService(s: unknown): s is string {
  return typeof s === "string" && s.length <= 1024 && GRPC_SERVICE.test(s);
}

export function isGrpcMethod(s: unknown): s is string {
  return typeof s === "string" && s.length <= 1024 && GRPC_METHOD.test(s);
}
