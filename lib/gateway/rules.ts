/**
 * @module gateway/rules
 * One HTTPRoute rule read: its matches, its rule backend (filters and weighted Service targets;
 * lib/gateway/model_types.ts RuleBackend) and what is wrong with it. A rule whose matches cannot
 * be served is dropped; a rule whose filters cannot be served keeps its matches and answers 500
 * (a filter is never skipped); invalid backendRefs answer 500 for their share of the weight. The
 * rule backend's name depends only on the route's identity and the rule's index, so editing a
 * rule's paths, filters or backends keeps its name.
 */
import { createHash } from "node:crypto";
import type { HTTPRouteRule } from "./api.ts";
import { type BackendContext, resolveBackendRef } from "./backends.ts";
import { Reason } from "./conditions.ts";
import { readFilters } from "./filters.ts";
import { type MatchSpec, readMatch, ruleMatches } from "./matches.ts";
import type { RuleBackend } from "./model_types.ts";

export interface Issue {
  reason: string;
  message: string;
}

export interface RuleRead {
  index: number;
  /** null: the rule is dropped (a match cannot be served). */
  matches: MatchSpec[] | null;
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

/** Reads rule `index` of route `routeId` (`namespace/name`). */
export function readRule(rule: HTTPRouteRule, index: number, routeId: string, ctx: BackendContext): RuleRead {
  const where = `spec.rules[${index}]`;
  const unsupported: Issue[] = [];
  const unresolved: Issue[] = [];
  const backend: RuleBackend = {
    name: ruleBackendName(routeId, index),
    requestHeaders: null,
    responseHeaders: null,
    redirect: null,
    rewrite: null,
    targets: [],
    invalidWeight: 0,
  };

  const raw = ruleMatches(rule.matches);
  let matches: MatchSpec[] | null = [];
  for (const [j, m] of raw.entries()) {
    const read = readMatch(m, `${where}.matches[${j}]`);
    if (!read.ok) {
      unsupported.push({ reason: Reason.UnsupportedValue, message: `${read.message}; rule ${index} dropped` });
      matches = null;
      break;
    }
    matches.push(read.match);
  }

  const prefixOnly = raw.every((m) => (m.path?.type ?? "PathPrefix") === "PathPrefix");
  const filters = readFilters(rule.filters, where, prefixOnly);
  let failed = !filters.ok;
  if (filters.ok) Object.assign(backend, filters.filters);
  else unsupported.push({ reason: filters.reason, message: filters.message });

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
    if ((ref.filters ?? []).length > 0) {
      unsupported.push({
        reason: Reason.UnsupportedValue,
        message: `${at}.filters are not supported; requests this rule matches get 500`,
      });
      failed = true;
    }
    const v = resolveBackendRef(ref, at, ctx);
    if (!v.ok) {
      unresolved.push({ reason: v.reason, message: v.message });
      backend.invalidWeight += v.weight;
    } else if (v.weight > 0) {
      const same = backend.targets.find((t) => t.backend === v.backend);
      if (same) same.weight += v.weight;
      else backend.targets.push({ backend: v.backend, weight: v.weight });
    }
  }

  if (failed) {
    // Served as a 500 for everything it matches: a filter that cannot be applied is never skipped.
    Object.assign(backend, { requestHeaders: null, responseHeaders: null, redirect: null, rewrite: null, targets: [] });
    backend.invalidWeight = 0;
  }
  return { index, matches, backend, unsupported, unresolved };
}
