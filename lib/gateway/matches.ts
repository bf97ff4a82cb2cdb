/**
 * @module gateway/matches
 * One HTTPRouteMatch as the proxy compares it: the path (default PathPrefix `/`; Exact; PathPrefix
 * element-wise, a trailing `/` ignored; RegularExpression), headers (names case-insensitive, the
 * first of equal names wins), query parameters (names case-sensitive, the first wins) and the
 * method, every value checked with an anchored pattern (validate.ts). Paths are kept in the form
 * the proxy compares them in (escapes of unreserved characters decoded: lib/render/patterns.ts
 * canonicalPath). A value that fails refuses the match, with a message naming its field.
 */
import { canonicalPath } from "../render/patterns.ts";
import { show } from "../render/show.ts";
import type { HTTPRouteMatch } from "./api.ts";
import type { RouteEntry } from "./model_types.ts";
import {
  isHeaderName,
  isHeaderValue,
  isHttpMethod,
  isMatchPath,
  isQueryValue,
  pathRegexValueProblem,
  valueRegexProblem,
} from "./validate.ts";

/** What one match compares (a RouteEntry without hostname, rule and route). */
export type MatchSpec = Pick<RouteEntry, "path" | "headers" | "queryParams" | "method">;

export type MatchRead = { ok: true; match: MatchSpec } | { ok: false; message: string };

const DEFAULT_MATCH: HTTPRouteMatch = { path: { type: "PathPrefix", value: "/" } };

/** The matches of a rule (the default `PathPrefix /` when it has none). */
export function ruleMatches(matches: readonly HTTPRouteMatch[] | undefined): readonly HTTPRouteMatch[] {
  return matches && matches.length > 0 ? matches : [DEFAULT_MATCH];
}

/** One match (`where`: e.g. `spec.rules[0].matches[1]`) read and checked. */
export function readMatch(m: HTTPRouteMatch, where: string): MatchRead {
  const bad = (message: string): MatchRead => ({ ok: false, message });
  const type = m.path?.type ?? "PathPrefix";
  const value = m.path?.value ?? "/";
  let path: MatchSpec["path"];
  if (type === "Exact" || type === "PathPrefix") {
    if (!isMatchPath(value)) {
      return bad(
        `${where}.path.value ${
          show(value)
        } is not a path this proxy matches (absolute, no //, /./, /../, quotes, $, %2F)`,
      );
    }
    const c = canonicalPath(value);
    path = { type, value: type === "PathPrefix" && c.length > 1 ? c.replace(/\/+$/, "") || "/" : c };
  } else if (type === "RegularExpression") {
    const problem = pathRegexValueProblem(value);
    if (problem !== null) return bad(`${where}.path.value: the regular expression ${show(value)} ${problem}`);
    path = { type, value };
  } else {
    return bad(`${where}.path.type ${show(type)} is not supported (Exact, PathPrefix, RegularExpression)`);
  }

  const headers: MatchSpec["headers"] = [];
  for (const [j, h] of (m.headers ?? []).entries()) {
    const at = `${where}.headers[${j}]`;
    if (!isHeaderName(h.name)) return bad(`${at}.name ${show(h.name)} is not a header name (RFC 7230 token)`);
    const t = h.type ?? "Exact";
    const problem = valueProblem(t, h.value, isHeaderValue);
    if (problem !== null) return bad(`${at}: ${problem}`);
    const name = h.name.toLowerCase();
    if (!headers.some((x) => x.name === name)) headers.push({ name, type: t as "Exact", value: h.value });
  }

  const queryParams: MatchSpec["queryParams"] = [];
  for (const [j, q] of (m.queryParams ?? []).entries()) {
    const at = `${where}.queryParams[${j}]`;
    if (!isHeaderName(q.name)) return bad(`${at}.name ${show(q.name)} is not a query parameter name (RFC 7230 token)`);
    const t = q.type ?? "Exact";
    const problem = valueProblem(t, q.value, isQueryValue);
    if (problem !== null) return bad(`${at}: ${problem}`);
    if (!queryParams.some((x) => x.name === q.name)) {
      queryParams.push({ name: q.name, type: t as "Exact", value: q.value });
    }
  }

  let method: string | null = null;
  if (m.method !== undefined) {
    if (!isHttpMethod(m.method)) return bad(`${where}.method ${show(m.method)} is not a supported HTTP method`);
    method = m.method;
  }
  return { ok: true, match: { path, headers, queryParams, method } };
}

function valueProblem(type: string, value: unknown, exact: (v: unknown) => boolean): string | null {
  if (type === "Exact") {
    return exact(value)
      ? null
      : `value ${show(value)} is not printable ASCII without quotes, line breaks or edge blanks`;
  }
  if (type === "RegularExpression") {
    const problem = valueRegexProblem(value);
    return problem === null ? null : `the regular expression ${show(value)} ${problem}`;
  }
  return `type ${show(type)} is not supported (Exact, RegularExpression)`;
}
