/**
 * @module gateway/precedence
 * The order in which a port's route entries are tried (the first that matches a request wins), as
 * the Gateway and HTTPRoute specs give it across all routes of the Gateway: the listener's hostname
 * (a request is served by the listener whose hostname matches it most specifically), the entry's
 * hostname (for both: exact before wildcard, more characters first, any host last), then path (Exact, then RegularExpression, then PathPrefix
 * with more characters first; regex precedence is implementation-specific: the Ingress maps place
 * regexes between Exact and prefix too), a method match, more header matches, more query parameter
 * matches; ties go to the oldest route (creationTimestamp), then `namespace/name` alphabetically,
 * then rule order, then match order. A GRPCRoute's entries follow the GRPCRouteRule precedence
 * after the hostnames: more characters in the matching service, then in the method, then more
 * header matches, then the same ties. HTTPRoutes and GRPCRoutes are never merged: on equal
 * hostnames the HTTPRoute entries come first (a request can match both only when the two routes'
 * hostnames intersect, and then the model accepts only one of them).
 */
import type { GrpcRank } from "./grpc_matches.ts";
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
  /** A GRPCRoute's entry: what its precedence counts. */
  grpc?: GrpcRank;
}

const PATH_RANK = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;

export function compareRanked(a: Ranked, b: Ranked): number {
  const x = a.entry;
  const y = b.entry;
  const hosts = compareHostnames(x.listenerHostname ?? "", y.listenerHostname ?? "") ||
    compareHostnames(x.hostname, y.hostname);
  if (hosts !== 0) return hosts;
  if (a.grpc || b.grpc) {
    if (!a.grpc || !b.grpc) return a.grpc ? 1 : -1;
    return b.grpc.service - a.grpc.service || b.grpc.method - a.grpc.method ||
      y.headers.length - x.headers.length || ties(a, b);
  }
  return PATH_RANK[x.path.type] - PATH_RANK[y.path.type] ||
    y.path.value.length - x.path.value.length ||
    Number(y.method !== null) - Number(x.method !== null) ||
    y.headers.length - x.headers.length ||
    y.queryParams.length - x.queryParams.length ||
    ties(a, b);
}

/** Across routes the oldest, then `namespace/name`; in a route the rule, then the match order. */
function ties(a: Ranked, b: Ranked): number {
  const x = a.entry;
  const y = b.entry;
  return a.created - b.created ||
    (x.route < y.route ? -1 : x.route > y.route ? 1 : 0) ||
    a.rule - b.rule ||
    a.match - b.match;
}

/** creationTimestamp (RFC 3339 string or Date) in ms; missing or invalid: after every real one. */
export function createdAt(t: unknown): number {
  const ms = t instanceof Date ? t.getTime() : typeof t === "string" ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : Number.MAX_SAFE_INTEGER;
}
