/**
 * @module nginx/httproute_filters
 * The Gateway API pieces of the migration preview that read one value: regex paths as
 * RegularExpression matches (open at their end) and the rewrite idiom as a prefix, header edits as
 * Request/ResponseHeaderModifier (`hsts` as a Strict-Transport-Security set), `redirect-to` as a
 * RequestRedirect, `timeout-server` as a GEP-2257 duration.
 */
import type { HeaderLine } from "../annotations/values.ts";
import type { HTTPHeader, HTTPRouteFilter, HTTPRouteMatch } from "../gateway/api.ts";
import { setting } from "./httproute_settings.ts";
import type { Settings } from "./httproute_types.ts";

/**
 * The Ingress's regex (matched from the start of the path, its end open) as a RegularExpression that
 * this Gateway matches against the whole path: `.*` after each top-level alternative not ending in `$`.
 */
export function openEndedRegex(re: string): string {
  const alts: string[] = [];
  let [depth, inClass, start] = [0, false, 0];
  for (let i = 0; i < re.length; i++) {
    const c = re[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) {
      alts.push(re.slice(start, i));
      start = i + 1;
    }
  }
  alts.push(re.slice(start));
  return alts.map((a) => /(?:^|[^\\])\$$/.test(a) || a.endsWith(".*") ? a : `${a}.*`).join("|");
}

/**
 * ingress-nginx's rewrite idiom `P(/|$)(.*)` with target `T$2` (T ending in `/`, P a literal path):
 * the same as PathPrefix P with ReplacePrefixMatch T. Null for any other regex or target.
 */
export function prefixRewriteOf(regex: string, target: string): { prefix: string; replace: string } | null {
  const r = /^(\/[A-Za-z0-9_~,;=:@\/-]*[A-Za-z0-9_~,;=:@-])\(\/\|\$\)\(\.\*\)$/.exec(regex);
  const t = /^(\/(?:[A-Za-z0-9._~!*+,;=:@\/-]*\/)?)\$2$/.exec(target);
  return r && t ? { prefix: r[1], replace: t[1] } : null;
}

/**
 * A regex path as a Gateway match: `/` (every path, from its start) as PathPrefix `/`, which matches
 * the same paths and keeps its place after every other regex of the host, as the Ingress's
 * longest-first order does; any other as a RegularExpression open at its end.
 */
export function regexMatch(regex: string): HTTPRouteMatch {
  return regex === "/"
    ? { path: { type: "PathPrefix", value: "/" } }
    : { path: { type: "RegularExpression", value: openEndedRegex(regex) } };
}

/** The Ingress's match of a regex path (from the start, case-insensitively); unreadable here: a match. */
export function matchesFromStart(regex: string, path: string): boolean {
  try {
    return new RegExp(`^(?:${regex})`, "i").test(path);
  } catch {
    return true;
  }
}

export const HSTS_HEADER = "Strict-Transport-Security";

/** `hsts` and its keys: the Strict-Transport-Security value the Ingress sends on its HTTPS answers, or null. */
export function hstsValue(s: Settings): string | null {
  if (setting<boolean>(s, "hsts") !== true) return null;
  return `max-age=${setting<number>(s, "hsts-max-age") ?? 0}` +
    (setting<boolean>(s, "hsts-include-subdomains") ? "; includeSubDomains" : "") +
    (setting<boolean>(s, "hsts-preload") ? "; preload" : "");
}

/**
 * The request and response header filters of a path (`hsts`: a Strict-Transport-Security set), and
 * the Host a URLRewrite sets.
 */
export function headerFilters(s: Settings): { filters: HTTPRouteFilter[]; host: string | null } {
  const lines = (key: string) => setting<HeaderLine[]>(s, key) ?? [];
  const names = (key: string) => setting<string[]>(s, key) ?? [];
  const filters: HTTPRouteFilter[] = [];
  let host: string | null = null;
  const reqSet = lines("request-headers-set").filter((h) => {
    if (h.name.toLowerCase() !== "host") return true;
    host = h.value;
    return false;
  });
  const edits = (set: HeaderLine[], add: HeaderLine[], remove: string[]) => ({
    ...(set.length ? { set: set.map((h): HTTPHeader => ({ name: h.name, value: h.value })) } : {}),
    ...(add.length ? { add: add.map((h): HTTPHeader => ({ name: h.name, value: h.value })) } : {}),
    ...(remove.length ? { remove } : {}),
  });
  const req = edits(reqSet, lines("request-headers-add"), names("request-headers-delete"));
  if (Object.keys(req).length) filters.push({ type: "RequestHeaderModifier", requestHeaderModifier: req });
  // the Ingress sets Strict-Transport-Security after the response edits: its value replaces theirs
  const sts = hstsValue(s);
  const notSts = (name: string) => sts === null || name.toLowerCase() !== HSTS_HEADER.toLowerCase();
  const res = edits(
    [
      ...lines("response-headers-set").filter((h) => notSts(h.name)),
      ...(sts !== null ? [{ name: HSTS_HEADER, value: sts }] : []),
    ],
    lines("response-headers-add").filter((h) => notSts(h.name)),
    names("response-headers-delete").filter(notSts),
  );
  if (Object.keys(res).length) filters.push({ type: "ResponseHeaderModifier", responseHeaderModifier: res });
  return { filters, host };
}

/**
 * `timeout-server` (HAProxy time: digits and ms, s or m) as a Gateway API duration (GEP-2257: up to
 * five digits per unit, h m s ms in this order), the rule's `timeouts.backendRequest`.
 */
export function backendRequestTimeout(value: string | null): string | null {
  const m = value === null ? null : /^([0-9]{1,6})(ms|s|m)$/.exec(value);
  if (!m) return null;
  let ms = Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 }[m[2]] ?? 0);
  const parts: string[] = [];
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]] as const) {
    const n = Math.floor(ms / size);
    ms -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.length > 0 ? parts.join("") : null;
}

/** `redirect-to` as a RequestRedirect filter. */
export function redirectFilter(url: string, code: number): HTTPRouteFilter {
  const u = new URL(url);
  return {
    type: "RequestRedirect",
    requestRedirect: {
      scheme: u.protocol.slice(0, -1),
      hostname: u.hostname,
      ...(u.port ? { port: Number(u.port) } : {}),
      path: { type: "ReplaceFullPath", replaceFullPath: u.pathname || "/" },
      statusCode: code,
    },
  };
}
