/**
 * @module gateway/render_checks
 * The Gateway renderer's boundary: every value of the proxy model is checked again here with an
 * anchored pattern before it is placed in `haproxy.cfg` or a map file, and placed in the form its
 * spot needs (a single-quoted word, a log-format string). The model (lib/gateway/model.ts) refuses
 * such values with a condition first; one that reaches the renderer is a bug, so it throws rather
 * than render it. The predicates are exported so the model can refuse exactly what cannot be rendered.
 */
import { isHost, isPath, isProxyName } from "../render/patterns.ts";
import { pathRegexProblem } from "../annotations/values.ts";

/**
 * A header or query parameter name as it may be placed in `req.fhdr(<name>)`, `urlp(<name>)` and
 * `set-header <name>`: an RFC 7230 token without `#` (a comment), `$` (an expansion) and `'`, at
 * most 256 characters (the model's own pattern, lib/gateway/validate.ts).
 */
const FIELD_NAME = /^[!%&*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** A header or query value: printable ASCII, spaces and tabs, 1 to 4096 characters (no other control character). */
const FIELD_VALUE = /^[\t\x20-\x7e]{1,4096}$/;
/** An HTTP method token (Gateway API lists upper-case ones). */
const METHOD = /^[A-Z]{1,32}$/;
/** A rule backend's name: `gw_` and letters, digits, `_`, `-` (no `.`: `.<n>` names its targets). */
const RULE_NAME = /^gw_[A-Za-z0-9_-]{1,100}$/;
/** A value of a routing map (`<backend>:<rank>`): a backend name without `:`. */
const MAP_TARGET = /^[A-Za-z0-9_.-]{1,180}$/;
export const REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export function isFieldName(s: unknown): s is string {
  return typeof s === "string" && FIELD_NAME.test(s);
}

export function isFieldValue(s: unknown): s is string {
  return typeof s === "string" && FIELD_VALUE.test(s);
}

/** A header or query parameter regex: a field value that JavaScript compiles (PCRE2 reads the same subset). */
export function isValueRegex(s: unknown): s is string {
  if (!isFieldValue(s) || s.length > 1024) return false;
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}

export function isMethod(s: unknown): s is string {
  return typeof s === "string" && METHOD.test(s);
}

export function isRuleName(s: unknown): s is string {
  return typeof s === "string" && RULE_NAME.test(s);
}

/** A path regex of a RegularExpression match: the subset Ingress `path-regex` accepts (lib/annotations/values.ts). */
export function isPathRegex(s: unknown): s is string {
  return typeof s === "string" && pathRegexProblem(s) === null;
}

function bug(what: string, value: unknown): never {
  throw new Error(`bug: unvalidated ${what} ${JSON.stringify(value)} in the Gateway model`);
}

export function checked<T>(ok: (v: unknown) => v is T, what: string, value: unknown): T {
  if (!ok(value)) bug(what, value);
  return value;
}

/** A hostname of a route entry: exact, `*.suffix` or "" (any). */
export function checkedHostname(h: unknown): string {
  return h === "" ? "" : checked(isHost, "hostname", h);
}

/** A literal path (Exact, PathPrefix, a rewrite or redirect path). */
export function checkedPath(p: unknown): string {
  return checked(isPath, "path", p);
}

/** A backend name that may be a map value. */
export function checkedTarget(name: unknown): string {
  if (typeof name !== "string" || !MAP_TARGET.test(name) || !isProxyName(name)) bug("backend name", name);
  return name;
}

/**
 * One HAProxy word holding `s` exactly: single-quoted (nothing is expanded or escaped inside), a
 * `'` of the value written `\'` between two quoted parts. Refuses anything but printable ASCII and tabs.
 */
export function word(s: string): string {
  if (!/^[\t\x20-\x7e]*$/.test(s)) bug("value", s);
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/** A log-format string holding `s` literally (`%` doubled), as one word. */
export function logFormatWord(s: string): string {
  return word(s.replaceAll("%", "%%"));
}
