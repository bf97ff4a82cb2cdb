/**
 * @module render/route_order
 * The order in which routes match (Model.routes): exact hosts, wildcard hosts, then rules without
 * host; within a host, longer paths first and Exact before Prefix at equal length.
 */
import type { PathType, Route } from "./model_types.ts";
import { cmp } from "./show.ts";

/** What the order looks at. */
export type RouteOrderFields = Pick<Route, "host" | "path" | "pathType">;

function hostRank(host: string): number {
  return host === "" ? 2 : host.startsWith("*.") ? 1 : 0;
}

const TYPE_RANK: Record<PathType, number> = { Exact: 0, Prefix: 1, ImplementationSpecific: 2 };

/** Match order: the first route whose host and path match wins (see Model.routes). */
export function compareRoutes(a: RouteOrderFields, b: RouteOrderFields): number {
  return hostRank(a.host) - hostRank(b.host) || cmp(a.host, b.host) || b.path.length - a.path.length ||
    TYPE_RANK[a.pathType] - TYPE_RANK[b.pathType] || cmp(a.path, b.path);
}
