/**
 * @module gateway/rules
 * One HTTPRoute or GRPCRoute rule read: its matches (a GRPCRoute's: grpc_matches.ts), its rule backend (filters and weighted Service targets;
 * lib/gateway/model_types.ts RuleBackend) and what is wrong with it. A rule whose matches cannot
 * be served is dropped; a rule whose filters cannot be served keeps its matches and answers 500
 * (a filter is never skipped); invalid backendRefs answer 500 for their share of the weight.
 * `timeouts` bound the wait for the backend's answer (lib/gateway/model_types.ts RuleBackend). The
 * rule backend's name depends only on the route's identity and the rule's index, so editing a
 * rule's paths, filters or backends keeps its name.
 */
import { createHash } from "node:crypto";
import type { GRPCRouteRule, HTTPRouteFilter, HTTPRouteRule } from "./api.ts";
import { type BackendContext, resolveBackendRef } from "./backends.ts";
import { Reason } from "./conditions.ts";
import { readFilters } from "./filters.ts";
import { type GrpcRank, readGrpcMatch } from "./grpc_matches.ts";
import { type MatchRead, type MatchSpec, readMatch, ruleMatches } from "./matches.ts";
import type { RuleBackend } from "./model_types.ts";
import { durationMs, MAX_TIMEOUT_MS } from "./validate.ts";
import { show } from "../render/show.ts";

export interface Issue {
  reason: string;
  message: string;
}

export interface RuleRead {
  index: number;
  /** null: the rule is dropped (a match cannot be served). */
  matches: MatchSpec[] | null;
  /** A GRPCRoute rule's: what the GRPCRoute precedence counts of each match (same order as `matches`). */
  grpcRanks?: GrpcRank[];
  backend: RuleBackend;
  /** Why (part of) the rule is not served as written: the route's Accepted / PartiallyInvalid. */
  unsupported: Issue[];
  /** Invalid backendRefs: the route's ResolvedRefs. */
  unresolved: Issue[];
}

/** `gw_<hash>` of a route's identity and a rule index: stable across edits of the rule. */
export function ruleBackendName(routeId: string, index: number): string {
  return `gw_${createHash("sha256").update(`${routeId}#${index}`).digest("hex").slice(0, 12)}`;
}

/** A rule backend without filters, timeouts or targets: every request it gets is answered 500. */
function answers500(): Omit<RuleBackend, "name"> {
  return {
    requestHeaders: null,
    responseHeaders: null,
    redirect: null,
    rewrite: null,
    cors: null,
    timeoutMs: null,
    targets: [],
    invalidWeight: 0,
  };
}

/** The filter types of a GRPCRoute rule (its CRD's enum); the header modifiers are the ones served. */
const GRPC_FILTERS: ReadonlySet<string> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "ExtensionRef",
]);

/**
 * Reads rule `index` of route `routeId` (`namespace/name`; a GRPCRoute's: `GRPCRoute:namespace/name`,
 * so its rule backends never share a name with an HTTPRoute's). `ctx.routeKind` says which kind.
 */
export function readRule(
  rule: HTTPRouteRule | GRPCRouteRule,
  index: number,
  routeId: string,
  ctx: BackendContext,
): RuleRead {
  const where = `spec.rules[${index}]`;
  const grpc = ctx.routeKind === "GRPCRoute";
  const unsupported: Issue[] = [];
  const unresolved: Issue[] = [];
  const backend: RuleBackend = { name: ruleBackendName(routeId, index), ...answers500(), ...(grpc ? { grpc } : {}) };

  const reads: MatchRead[] = [];
  const grpcRanks: GrpcRank[] = [];
  if (grpc) {
    const raw = (rule as GRPCRouteRule).matches;
    for (const [j, m] of (raw && raw.length > 0 ? raw : [{}]).entries()) {
      const read = readGrpcMatch(m, `${where}.matches[${j}]`);
      if (read.ok) grpcRanks.push(read.rank);
      reads.push(read);
    }
  } else {
    for (const [j, m] of ruleMatches((rule as HTTPRouteRule).matches).entries()) {
      reads.push(readMatch(m, `${where}.matches[${j}]`));
    }
  }
  let matches: MatchSpec[] | null = [];
  for (const read of reads) {
    if (!read.ok) {
      unsupported.push({ reason: Reason.UnsupportedValue, message: `${read.message}; rule ${index} dropped` });
      matches = null;
      break;
    }
    matches.push(read.match);
  }

  const prefixOnly = grpc ||
    ruleMatches((rule as HTTPRouteRule).matches).every((m) => (m.path?.type ?? "PathPrefix") === "PathPrefix");
  const notGrpc = grpc ? (rule.filters ?? []).findIndex((f) => !GRPC_FILTERS.has(f?.type)) : -1;
  const filters = notGrpc >= 0
    ? {
      ok: false as const,
      reason: Reason.UnsupportedValue,
      message: `${where}.filters[${notGrpc}].type ${show(rule.filters![notGrpc].type)} is not a GRPCRoute filter`,
    }
    : readFilters(rule.filters as HTTPRouteFilter[] | undefined, where, prefixOnly);
  let failed = !filters.ok;
  if (filters.ok) Object.assign(backend, filters.filters);
  else unsupported.push({ reason: filters.reason, message: filters.message });

  const timeout = grpc ? null : readTimeouts((rule as HTTPRouteRule).timeouts, where);
  if (typeof timeout === "string") {
    unsupported.push({ reason: Reason.UnsupportedValue, message: `${timeout}; requests this rule matches get 500` });
    failed = true;
  } else backend.timeoutMs = timeout;

  const refs = rule.backendRefs ?? [];
  if (backend.redirect && refs.length > 0) {
    unsupported.push({
      reason: Reason.IncompatibleFilters,
      message: `${where}: a RequestRedirect rule cannot have backendRefs; requests it matches get 500`,
    });
    failed = true;
  }
  for (const [j, ref] of refs.entries()) {
    const at = `${where}.backendRefs[${j}]`;
    const own = readFilters(ref.filters as HTTPRouteFilter[] | undefined, at, prefixOnly, true);
    if (!own.ok) {
      unsupported.push({ reason: own.reason, message: own.message });
      failed = true;
    }
    const edits = own.ok ? own.filters : null;
    const hasEdits = edits !== null && (edits.requestHeaders !== null || edits.responseHeaders !== null);
    const v = resolveBackendRef(ref, at, ctx);
    if (!v.ok) {
      unresolved.push({ reason: v.reason, message: v.message });
      backend.invalidWeight += v.weight;
    } else if (v.weight > 0) {
      // refs to one Service without filters of their own share one target
      const same = hasEdits ? undefined : backend.targets.find((t) =>
        t.backend === v.backend && !t.requestHeaders &&
        !t.responseHeaders
      );
      if (same) same.weight += v.weight;
      else {
        backend.targets.push({
          backend: v.backend,
          weight: v.weight,
          ...(hasEdits ? { requestHeaders: edits.requestHeaders, responseHeaders: edits.responseHeaders } : {}),
        });
      }
    }
  }

  if (failed) {
    // Served as a 500 for everything it matches: a filter that cannot be applied is never skipped.
    Object.assign(backend, answers500());
  }
  return { index, matches, ...(grpc && matches ? { grpcRanks } : {}), backend, unsupported, unresolved };
}

/**
 * A rule's `timeouts` as one wait in ms (the smaller of request and backendRequest: the proxy makes
 * one attempt per request; 0 when both are off), null when it has none, or why not.
 */
function readTimeouts(t: HTTPRouteRule["timeouts"], where: string): number | null | string {
  if (t === undefined || t === null) return null;
  const values: number[] = [];
  for (const field of ["request", "backendRequest"] as const) {
    const raw = t[field];
    if (raw === undefined) continue;
    const ms = durationMs(raw);
    if (ms === null) return `${where}.timeouts.${field} ${show(raw)} is not a duration (e.g. 500ms, 10s, 1h30m)`;
    if (ms > MAX_TIMEOUT_MS) {
      return `${where}.timeouts.${field} ${show(raw)} is longer than the proxy allows (24.8 days)`;
    }
    values.push(ms);
  }
  if (values.length === 0) return null;
  const on = values.filter((v) => v > 0);
  return on.length === 0 ? 0 : Math.min(...on);
}
