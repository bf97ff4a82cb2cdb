/**
 * @module annotations/values
 * The typed value parsers of the annotation table: each one takes the raw annotation string and
 * either returns a typed value or a reason (the end of the one-line message `annotation KEY: "raw"
 * <reason>`). Every pattern is anchored and bounded; nothing is "cleaned up" except the white space
 * around list items, which users write (`10.0.0.0/8, 192.168.0.0/16`). What a parser accepts is
 * safe to place in HAProxy's configuration once quoted for its place: no quotes, no backslash, no
 * `${` (environment expansion) and no `%` (log-format) except where a kind says otherwise.
 * This module imports nothing from lib/ but its sibling annotations/auth_target.ts (which imports
 * nothing of lib/ either): lib/render reads annotations through it.
 */
import { isIPv4, isIPv6 } from "node:net";
import { type AuthTarget, authTarget } from "./auth_target.ts";

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

/** A value kind: its parser and the syntax the README shows. */
export interface ValueKind<T = unknown> {
  readonly syntax: string;
  parse(raw: string): Parsed<T>;
}

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

/** Longest raw value any kind accepts (lists included). */
export const MAX_VALUE_LENGTH = 4096;

/** `max` bounds the work on absurd input; kinds whose anchored pattern bounds the length leave it at the default. */
function kind<T>(syntax: string, parse: (raw: string) => Parsed<T>, max = MAX_VALUE_LENGTH): ValueKind<T> {
  return {
    syntax,
    parse: (raw) =>
      typeof raw !== "string"
        ? bad("is not a string")
        : raw.length > max
        ? bad(`is longer than ${max} characters`)
        : parse(raw),
  };
}

/** Comma-separated items, white space around each allowed; empty items refused. */
function items(raw: string): string[] | null {
  const parts = raw.split(",").map((s) => s.replace(/^[ \t]+|[ \t]+$/g, ""));
  return parts.some((p) => p === "") ? null : parts;
}

export const bool: ValueKind<boolean> = kind(
  '`"true"` or `"false"`',
  (raw) => raw === "true" || raw === "false" ? ok(raw === "true") : bad('is not "true" or "false"'),
);

export function oneOf<const V extends string>(values: readonly V[]): ValueKind<V> {
  return kind(
    values.map((v) => `\`${v}\``).join(", "),
    (raw) => (values as readonly string[]).includes(raw) ? ok(raw as V) : bad(`is not one of ${values.join(",")}`),
  );
}

export function int(min: number, max: number, unit = ""): ValueKind<number> {
  return kind(`integer ${min}–${max}${unit ? ` (${unit})` : ""}`, (raw) => {
    if (!/^(?:0|[1-9][0-9]{0,9})$/.test(raw)) return bad(`is not an integer ${min}–${max}`);
    const n = Number(raw);
    return n >= min && n <= max ? ok(n) : bad(`is not an integer ${min}–${max}`);
  });
}

/** HAProxy's largest timer (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * An HAProxy time: digits and a unit (`ms`, `s`, `m`, `h`, `d`), at most MAX_TIMER_MS. The value
 * is kept as written (HAProxy reads the same syntax).
 */
export const duration: ValueKind<string> = kind(
  "HAProxy time: `500ms`, `30s`, `5m`, `1h`, `1d` (at most 24d)",
  (raw) => {
    const m = /^([1-9][0-9]{0,9})(ms|s|m|h|d)$/.exec(raw);
    if (!m || Number(m[1]) * UNIT_MS[m[2]] > MAX_TIMER_MS) return bad("is not a duration like 30s (at most 24d)");
    return ok(raw);
  },
);

/**
 * The timeout syntax `ingress.kubernetes.io/timeout-server` has always accepted (1–6 digits and
 * `ms`, `s` or `m`); values HAProxy cannot hold are refused by `haproxy -c` (the webhook's xray).
 */
export const legacyTimeout: ValueKind<string> = kind(
  "HAProxy time: 1–6 digits and `ms`, `s` or `m` (`30s`)",
  (raw) => /^[1-9][0-9]{0,5}(?:ms|s|m)$/.test(raw) ? ok(raw) : bad("is not a duration like 30s"),
);

/** A byte size: digits with an optional `k`, `m`, `g` (either case, powers of 1024); `0` means no limit. */
export const size: ValueKind<number> = kind("bytes, or with `k`, `m`, `g` (1024-based): `8m`; `0`: no limit", (raw) => {
  const m = /^(0|[1-9][0-9]{0,12})([kKmMgG]?)$/.exec(raw);
  if (!m) return bad("is not a size like 8m");
  const n = Number(m[1]) * ({ "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()] ?? 1);
  return n <= Number.MAX_SAFE_INTEGER ? ok(n) : bad("is too large");
});

/** HTTP status codes of redirects. */
export const redirectCode = oneOf(["301", "302", "303", "307", "308"] as const);

/** Comma-separated HTTP error status codes (400–599). */
export const errorCodes: ValueKind<number[]> = kind("comma-separated status codes 400–599: `404,503`", (raw) => {
  const list = items(raw);
  if (!list || !list.every((c) => /^[45][0-9][0-9]$/.test(c))) return bad("is not a list of status codes 400–599");
  return ok([...new Set(list.map(Number))].sort((a, b) => a - b));
}, 512);

export interface Cidr {
  readonly family: 4 | 6;
  readonly address: string;
  readonly bits: number;
}

/** One IPv4 or IPv6 address or CIDR; the address part must be a literal (no zone, no host name). */
export function parseCidr(s: string): Cidr | null {
  const m = /^([0-9A-Fa-f:.]{2,45})(?:\/([0-9]{1,3}))?$/.exec(s);
  if (!m) return null;
  const family = isIPv4(m[1]) ? 4 : isIPv6(m[1]) ? 6 : 0;
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  if (m[2] !== undefined && (!/^(?:0|[1-9][0-9]{0,2})$/.test(m[2]) || Number(m[2]) > max)) return null;
  return { family, address: m[1].toLowerCase(), bits: m[2] === undefined ? max : Number(m[2]) };
}

export const cidrList: ValueKind<Cidr[]> = kind(
  "comma-separated IPv4/IPv6 addresses or CIDRs: `10.0.0.0/8, 2001:db8::/32`",
  (raw) => {
    const list = items(raw);
    if (!list) return bad("is not a comma-separated list of addresses or CIDRs");
    const out: Cidr[] = [];
    for (const item of list) {
      const c = parseCidr(item);
      if (!c) return bad(`has ${JSON.stringify(item.slice(0, 60))}, which is not an IPv4/IPv6 address or CIDR`);
      out.push(c);
    }
    return ok(out);
  },
  MAX_VALUE_LENGTH,
);

/** A header name: letters, digits, `-` and `_` (a token HAProxy and every backend read alike). */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const headerName: ValueKind<string> = kind(
  "header name: letters, digits, `-`, `_`",
  (raw) => HEADER_NAME.test(raw) ? ok(raw) : bad("is not a header name (letters, digits, - and _)"),
);

/**
 * A header value: printable ASCII and spaces inside, none at either end; no quotes, backslash, `%`
 * (HAProxy's log-format) or `$`.
 */
const HEADER_VALUE = /^[!#&(-\[\]-~](?:[ !#&(-\[\]-~]{0,1022}[!#&(-\[\]-~])?$/;
export const headerValue: ValueKind<string> = kind(
  "printable ASCII without quotes, `\\`, `%`, `$`",
  (raw) =>
    HEADER_VALUE.test(raw) ? ok(raw) : bad("is not a header value (printable ASCII without quotes, \\, % and $)"),
  1024,
);

export const headerNames: ValueKind<string[]> = kind("comma-separated header names", (raw) => {
  const list = items(raw);
  if (!list || !list.every((h) => HEADER_NAME.test(h))) return bad("is not a comma-separated list of header names");
  return ok(list);
}, MAX_VALUE_LENGTH);

/** Header names, or `*` (CORS expose). */
export const headerNamesOrStar: ValueKind<string[]> = kind("`*` or comma-separated header names", (raw) => {
  const list = items(raw);
  if (!list || !list.every((h) => h === "*" || HEADER_NAME.test(h))) {
    return bad("is not * or a comma-separated list of header names");
  }
  return ok(list);
}, MAX_VALUE_LENGTH);

export interface HeaderLine {
  readonly name: string;
  readonly value: string;
}

/** One `Name: value` per line (LF or CRLF); the lines are the list, so line breaks are its separators. */
export const headerLines: ValueKind<HeaderLine[]> = kind("one `Name: value` per line", (raw) => {
  const lines = raw.split(/\r?\n/).filter((l, i, all) => !(l === "" && i === all.length - 1));
  const out: HeaderLine[] = [];
  for (const line of lines) {
    const m = /^([^:]*):[ \t]*(.*)$/.exec(line);
    if (!m || !HEADER_NAME.test(m[1]) || !HEADER_VALUE.test(m[2])) {
      return bad(`has the line ${JSON.stringify(line.slice(0, 60))}, which is not "Name: value"`);
    }
    out.push({ name: m[1], value: m[2] });
  }
  return out.length > 0 ? ok(out) : bad("has no header line");
}, MAX_VALUE_LENGTH);

export const methods: ValueKind<string[]> = kind("comma-separated HTTP methods: `GET, POST`", (raw) => {
  const list = items(raw);
  if (!list || !list.every((m) => /^[A-Za-z]{1,20}$/.test(m))) return bad("is not a comma-separated list of methods");
  return ok(list.map((m) => m.toUpperCase()));
}, 1024);

/** A cookie name: letters, digits, `-`, `_`, `.` (a subset of RFC 6265's token). */
export const cookieName: ValueKind<string> = kind(
  "cookie name: letters, digits, `-`, `_`, `.`",
  (raw) => /^[A-Za-z0-9_.-]{1,64}$/.test(raw) ? ok(raw) : bad("is not a cookie name (letters, digits, -, _ and .)"),
);

/** An object name in the Ingress's own namespace (DNS-1123 subdomain); `namespace/name` is refused. */
const SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
export const secretName: ValueKind<string> = kind("name of a Secret in the Ingress's namespace", (raw) => {
  if (raw.includes("/")) return bad("names another namespace; only Secrets of the Ingress's own namespace are read");
  return SUBDOMAIN.test(raw) ? ok(raw) : bad("is not a Secret name");
}, 253);

export interface ServiceRef {
  readonly service: string;
  readonly port: number | string | null;
}

const LABEL = "[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?";
/** `service` or `service:port` (a port number or name) in the Ingress's namespace. */
export const serviceRef: ValueKind<ServiceRef> = kind(
  "`service` or `service:port` in the Ingress's namespace",
  (raw) => {
    const m = new RegExp(`^(${LABEL})(?::([1-9][0-9]{0,4}|[a-z0-9](?:[-a-z0-9]{0,13}[a-z0-9])?))?$`).exec(raw);
    if (!m) return bad("is not service or service:port");
    const port = m[2] === undefined ? null : /^[0-9]+$/.test(m[2]) ? Number(m[2]) : m[2];
    if (typeof port === "number" && port > 65535) return bad("has a port over 65535");
    return ok({ service: m[1], port });
  },
);

/** A DNS name (lower case) as sent in SNI or Host. */
const HOST = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
export const hostName: ValueKind<string> = kind(
  "DNS name: `api.example.com`",
  (raw) => HOST.test(raw) && raw.length <= 253 ? ok(raw) : bad("is not a DNS name"),
  253,
);

/** An absolute path of unreserved characters, sub-delims allowed in paths, and `%XX` escapes. */
const PATH = "/(?:[A-Za-z0-9._~!*+,;=:@/-]|%[0-9A-Fa-f]{2})*";
const QUERY = "(?:\\?(?:[A-Za-z0-9._~!*+,;=:@/?&-]|%[0-9A-Fa-f]{2})*)?";
export const path: ValueKind<string> = kind(
  "absolute path: `/app`",
  (raw) => new RegExp(`^${PATH}$`).test(raw) ? ok(raw) : bad("is not an absolute path"),
  1024,
);

const AUTHORITY = `(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9a-fA-F:.]{2,45}\\])(?::[1-9][0-9]{0,4})?`;
const URL_RE = new RegExp(`^https?://${AUTHORITY}(?:${PATH})?${QUERY}$`);
/** An absolute `http://` or `https://` URL (host lower case; `%XX` escapes only). */
export const url: ValueKind<string> = kind(
  "`http://` or `https://` URL",
  (raw) => URL_RE.test(raw) ? ok(raw) : bad("is not an http:// or https:// URL"),
  2048,
);

/**
 * A URL of external authentication: an `http://` or `https://` URL whose target passes the address
 * policy of annotations/auth_target.ts. The host may be written in any case and end in a dot here
 * only so that the policy refuses those spellings with a reason of its own.
 */
const AUTH_URL_RE = new RegExp(
  `^https?://(?:[A-Za-z0-9.-]{1,254}|\\[[0-9a-fA-F:.]{2,45}\\])(?::[1-9][0-9]{0,4})?(?:${PATH})?${QUERY}$`,
);
function authUrlOf(raw: string, browser: boolean): Parsed<AuthTarget> {
  if (!AUTH_URL_RE.test(raw)) return bad("is not an http:// or https:// URL");
  const t = authTarget(raw, { browser });
  return "refused" in t ? bad(t.refused) : ok(t);
}
export const authUrl: ValueKind<AuthTarget> = kind(
  '`http://` or `https://` URL of a host the proxy may contact (README "External authentication")',
  (raw) => authUrlOf(raw, false),
  2048,
);

/** Where `auth-signin` sends a browser: a path on the request's own host, or a URL passing the address policy. */
export const authSignin: ValueKind<string> = kind(
  "absolute path (same host) or `https://` URL",
  (raw) => {
    if (new RegExp(`^${PATH}${QUERY}$`).test(raw)) return ok(raw);
    const p = authUrlOf(raw, true);
    if (p.ok) return ok(raw);
    return bad(
      p.reason === "is not an http:// or https:// URL" ? "is not an http(s):// URL or an absolute path" : p.reason,
    );
  },
  2048,
);

/**
 * Request headers the proxy sets on the authentication request itself, or that belong to the
 * connection: a client's copy is never forwarded (templates/ic_ext_auth.lua).
 */
export const AUTH_OWN_HEADERS: readonly string[] = [
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "expect",
  "x-original-url",
  "x-original-method",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "x-auth-request-redirect",
  "x-sent-from",
];

/** Client request headers forwarded to the auth service besides `Cookie` and `Authorization`. */
export const authRequestHeaders: ValueKind<string[]> = kind(
  "comma-separated header names (not the ones the proxy sets itself)",
  (raw) => {
    const p = headerNames.parse(raw);
    if (!p.ok) return p;
    const own = p.value.find((h) => AUTH_OWN_HEADERS.includes(h.toLowerCase()));
    return own === undefined ? ok(p.value) : bad(
      `names ${own}, which the proxy sets on the authentication request itself (README "External authentication")`,
    );
  },
  MAX_VALUE_LENGTH,
);

/** A rewrite target: an absolute path that may hold `$1`…`$9` (captures of a regex path). */
export const rewriteTarget: ValueKind<{ target: string; captures: boolean }> = kind(
  "absolute path, with `$1`…`$9` for regex captures: `/$2`",
  (raw) => {
    if (!new RegExp(`^/(?:[A-Za-z0-9._~!*+,;=:@/-]|%[0-9A-Fa-f]{2}|\\$[1-9])*$`).test(raw)) {
      return bad("is not an absolute path (with $1…$9 for captures)");
    }
    return ok({ target: raw, captures: /\$[1-9]/.test(raw) });
  },
  1024,
);

/** A realm for basic auth: printable ASCII without quotes, backslash, `%`, `$`. */
export const realm: ValueKind<string> = kind(
  "printable ASCII without quotes, `\\`, `%`, `$`",
  (raw) =>
    HEADER_VALUE.test(raw) && raw.length <= 128
      ? ok(raw)
      : bad("is not a realm (printable ASCII without quotes, \\, % and $)"),
  128,
);

export type Origin = { readonly kind: "any" } | { readonly kind: "exact" | "wildcard"; readonly origin: string } | {
  readonly kind: "regex";
  readonly pattern: string;
};

const ORIGIN = new RegExp(`^https?://(\\*\\.)?${LABEL}(?:\\.${LABEL})*(?::[1-9][0-9]{0,4})?$`);
/** Regex origins: no backslash or quotes (character classes instead), no `${`, must compile. */
const ORIGIN_REGEX = /^[A-Za-z0-9.*+?^$()|[\]{}:/_-]{1,256}$/;

/** `*`, or comma-separated origins: exact, `https://*.example.com` (one label), or `~regex`. */
export const origins: ValueKind<Origin[]> = kind(
  "`*`, or comma-separated origins: `https://a.example.com`, `https://*.example.com`, `~^https://[a-z]+[.]example[.]com$`",
  (raw) => {
    if (raw === "*") return ok([{ kind: "any" }]);
    const list = items(raw);
    if (!list) return bad("is not * or a comma-separated list of origins");
    const out: Origin[] = [];
    for (const item of list) {
      if (item.startsWith("~")) {
        const pattern = item.slice(1);
        if (!ORIGIN_REGEX.test(pattern) || pattern.includes("${") || !compiles(pattern)) {
          return bad(`has the regex ${JSON.stringify(item.slice(0, 60))}, which is not allowed (no \\, quotes or \${)`);
        }
        out.push({ kind: "regex", pattern });
      } else if (ORIGIN.test(item)) {
        out.push({ kind: item.includes("*.") ? "wildcard" : "exact", origin: item });
      } else return bad(`has ${JSON.stringify(item.slice(0, 60))}, which is not an origin like https://example.com`);
    }
    return ok(out);
  },
  MAX_VALUE_LENGTH,
);

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** The longest path regex (`path-regex`): a bound on HAProxy's per-request matching work and its line. */
export const MAX_PATH_REGEX_LENGTH = 256;
/** Literal characters of a path regex: those of a path (without `%`), as everywhere in the program. */
const REGEX_LITERAL = /^[A-Za-z0-9._~!,;=:@/-]$/;
/** What may follow `\`: classes and escaped punctuation (never digits: no back-references). */
const REGEX_ESCAPE = /^[dDwWsSbB.\\/()[\]{}*+?|^~!,;=:@-]$/;
/** A brace quantifier; counts of at most 255 (PCRE2's limit is 65535, JavaScript has none). */
const REGEX_BRACES = /^\{([0-9]{1,3})(?:(,)([0-9]{1,3})?)?\}/;

/**
 * Why `re` is not a path regex this program places in HAProxy, or null. The accepted language is
 * the subset PCRE2 (HAProxy's `map_reg`, `replace-path`) and JavaScript read alike and that cannot
 * break a configuration line or a map file: literals of a path, `.`, classes `[…]` of literals and
 * escapes (ranges between two literals), groups `(…)` and `(?:…)` (no other `(?`), `|`, `^`, `$`
 * only before `)`, `|` or the end, quantifiers `* + ?` (lazy `?` allowed, not possessive) and
 * `{m}`, `{m,}`, `{m,n}` after a single item (never after a group: PCRE2 copies a repeated group
 * into the compiled pattern, so nested counts could exceed its size limit), escapes from
 * REGEX_ESCAPE. No space, quote, `#`, `%`, `$` elsewhere, `&`, `'`, `"` or control character.
 */
export function pathRegexProblem(re: string): string | null {
  if (re.length > MAX_PATH_REGEX_LENGTH) return `is longer than ${MAX_PATH_REGEX_LENGTH} characters`;
  if (!re.startsWith("/")) return "does not start with /";
  /** What the previous token was: a quantifier needs an item before it. */
  let prev: "none" | "item" | "group" | "quantifier" | "lazy" = "none";
  let depth = 0;
  for (let i = 0; i < re.length;) {
    const c = re[i];
    if (c === "\\") {
      if (!REGEX_ESCAPE.test(re[i + 1] ?? "")) {
        return `has the escape \\${re[i + 1] ?? ""} at ${i}, which is not allowed`;
      }
      [i, prev] = [i + 2, "item"];
    } else if (c === "[") {
      const end = classEnd(re, i);
      if (typeof end === "string") return end;
      [i, prev] = [end, "item"];
    } else if (c === "(") {
      if (re[i + 1] === "?" && re[i + 2] !== ":") return `has "(?" at ${i}; only (?:…) groups are allowed`;
      depth++;
      [i, prev] = [re[i + 1] === "?" ? i + 3 : i + 1, "none"];
    } else if (c === ")") {
      if (--depth < 0) return `has an unbalanced ) at ${i}`;
      [i, prev] = [i + 1, "group"];
    } else if (c === "*" || c === "+" || c === "?") {
      if (c === "?" && prev === "quantifier") [i, prev] = [i + 1, "lazy"];
      else if (prev === "item" || prev === "group") [i, prev] = [i + 1, "quantifier"];
      else return `has ${c} at ${i} without an item to repeat`;
    } else if (c === "{") {
      const m = REGEX_BRACES.exec(re.slice(i));
      if (!m) return `has { at ${i} that is not a quantifier {m}, {m,} or {m,n} (write \\{ for the character)`;
      if (prev !== "item") {
        return `has the quantifier ${m[0]} at ${i} after a group or nothing; repeat single items only`;
      }
      const [min, max] = [Number(m[1]), m[3] === undefined ? null : Number(m[3])];
      if (min > 255 || (max !== null && (max > 255 || max < min))) {
        return `has the quantifier ${m[0]} at ${i}: counts 0–255, m ≤ n`;
      }
      [i, prev] = [i + m[0].length, "quantifier"];
    } else if (c === "|" || c === "^") {
      [i, prev] = [i + 1, "none"];
    } else if (c === "$") {
      if (i + 1 < re.length && re[i + 1] !== ")" && re[i + 1] !== "|") {
        return `has $ at ${i}, allowed only before ), | or the end`;
      }
      [i, prev] = [i + 1, "none"];
    } else if (c === "." || REGEX_LITERAL.test(c)) {
      [i, prev] = [i + 1, "item"];
    } else return `has the character ${JSON.stringify(c)} at ${i}, which is not allowed`;
  }
  if (depth !== 0) return "has an unbalanced (";
  return compiles(re) ? null : "does not compile";
}

/** The index after the class starting at `start` (`[`), or why it is refused. */
function classEnd(re: string, start: number): number | string {
  // PCRE2 reads `[:…:]`, `[.….]` and `[=…=]` as POSIX bracket expressions (and refuses them outside a
  // class), where JavaScript reads a class: refused, since HAProxy would refuse the configuration.
  const t = re[start + 1];
  if ((t === ":" || t === "." || t === "=") && posixBracketEnds(re, start + 2, t)) {
    return `has a POSIX bracket expression [${t}…${t}] at ${start}, which is not allowed`;
  }
  let i = start + 1;
  if (re[i] === "^") i++;
  /** The previous member when it is a literal (a range may start there). */
  let literal: string | null = null;
  let members = 0;
  for (; i < re.length && re[i] !== "]"; members++) {
    const c = re[i];
    if (c === "\\") {
      // \b and \B mean other things inside a class (PCRE2 refuses \B there)
      if (!REGEX_ESCAPE.test(re[i + 1] ?? "") || /[bB]/.test(re[i + 1])) {
        return `has the escape \\${re[i + 1] ?? ""} at ${i}, which is not allowed in a class`;
      }
      [i, literal] = [i + 2, null];
    } else if (c === "-" && members > 0 && re[i + 1] !== "]") {
      // a range; PCRE2 refuses one that starts or ends at an escape such as \d
      const to = re[i + 1];
      if (literal === null || !/^[A-Za-z0-9]$/.test(literal) || !/^[A-Za-z0-9]$/.test(to) || to < literal) {
        return `has a range at ${i} that is not between two letters or digits in order (write - first or last)`;
      }
      [i, literal] = [i + 2, null];
    } else if (REGEX_LITERAL.test(c) || "*+?.(){}|^".includes(c)) {
      [i, literal] = [i + 1, c];
    } else return `has the character ${JSON.stringify(c)} at ${i}, which is not allowed`;
  }
  if (i >= re.length) return `has an unclosed [ at ${start}`;
  if (members === 0) return `has an empty class at ${start}`;
  return i + 1;
}

/** Whether PCRE2 finds the end `t]` of a POSIX bracket expression from `from` (its check_posix_syntax). */
function posixBracketEnds(re: string, from: number, t: string): boolean {
  for (let p = from; p < re.length; p++) {
    if (re[p] === "\\" && (re[p + 1] === "]" || re[p + 1] === "\\")) p++;
    else if (re[p] === "]" || (re[p] === "[" && re[p + 1] === t)) return false;
    else if (re[p] === t && re[p + 1] === "]") return true;
  }
  return false;
}

/**
 * A path regex (pathType `ImplementationSpecific` with `path-regex`): see pathRegexProblem. It is
 * matched from the start of the path, case-insensitively (ingress-nginx's `~*` locations).
 */
export const pathRegex: ValueKind<string> = kind(
  "regular expression starting with `/`: `/api/v[0-9]+/(.*)`",
  (raw) => {
    const problem = pathRegexProblem(raw);
    return problem === null ? ok(raw) : bad(problem);
  },
  MAX_PATH_REGEX_LENGTH,
);
