/**
 * @module gateway/precedence
 * The order in which a port's route entries are tried (the first that matches a request wins), as
 * the Gateway and HTTPRoute specs give it across all routes of the Gateway: the listener's hostname
 * (a request is served by the listener whose hostname matches it most specifically), the entry's
 * hostname (for both: exact before wildcard, more characters first, any host last), then path (Exact, then RegularExpression, then PathPrefix
 * with more characters first; regex precedence is implementation-specific: the Ingress maps place
 * regexes between Exact and prefix too), a method match, more header matches, more query parameter
 * matches; ties go to the oldest route (creationTimestamp), then `namespace/name` alphabetically,
 * then rule order, then match order.
 */
import { compareHostnames } from "./hostnames.ts";
import type { RouteEntry } from "./model_types.ts";

/** An entry with what orders it beyond its own fields. */
export interface Ranked {
  entry: RouteEntry;
  /** creationTimestamp in ms (routes without one sort last). */
  created: number;
  /** Rule index in its route. */
  rule: number;
  /** Match index in its rule. */
  match: number;
}

const PATH_RANK = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;

export function compareRanked(a: Ranked, b: Ranked): number {
  const x = a.entry;
  const y = b.entry;
  return compareHostnames(x.listenerHostname ?? "", y.listenerHostname ?? "") ||
    compareHostnames(x.hostname, y.hostname) ||
    PATH_RANK[x.path.type] - PATH_RANK[y.path.type] ||
    y.path.value.length - x.path.value.length ||
    Number(y.method !== null) - Number(x.method !== null) ||
    y.headers.length - x.headers.length ||
    y.queryParams.length - x.queryParams.length ||
    a.created - b.created ||
    (x.route < y.route ? -1 : x.route > y.route ? 1 : 0) ||
    a.rule - b.rule ||
    a.match - b.match;
}

/** creationTimestamp (RFC 3339 string or Date) in ms; missing or invalid: after every real one. */
export function createdAt(t: unknown): number {
  const ms = t instanceof Date ? t.getTime() : typeof t === "string" ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : Number.MAX_SAFE_INTEGER;
}
