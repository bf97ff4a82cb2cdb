/**
 * @module gateway/grpc_matches
 * One GRPCRouteMatch as the proxy compares it. A gRPC call is an HTTP/2 POST to
 * `/<service>/<method>`, so a method match is a path match: Exact service and method → the Exact
 * path `/<service>/<method>`; service only → the PathPrefix `/<service>` (element-wise: every
 * method of that service, never `/<service>.Other`); method only → the path regex
 * `/[^/]+/<method>`; RegularExpression → the path regex `/(?:<service>)/(?:<method>)`, a missing
 * side matching any one segment. Names are checked against the CRD's grammar (validate.ts
 * isGrpcService, isGrpcMethod), regexes against the program's regex subset without `/` (each stays
 * inside its segment). Header matches are HTTPRoute's (matches.ts). No method match: every call.
 * Each match also carries what the GRPCRoute precedence counts (characters in the matching service
 * and method).
 */
import { show } from "../render/show.ts";
import type { GRPCRouteMatch, HTTPRouteMatch } from "./api.ts";
import { type MatchRead, readMatch } from "./matches.ts";
import { isGrpcMethod, isGrpcService, valueRegexProblem } from "./validate.ts";

/** The characters of a match's service and method (GRPCRouteRule precedence). */
export interface GrpcRank {
  service: number;
  method: number;
}

export type GrpcMatchRead = (MatchRead & { ok: true; rank: GrpcRank }) | (MatchRead & { ok: false });

/** The path match a method match becomes, or why it cannot be served. */
function pathOf(m: NonNullable<GRPCRouteMatch["method"]>, where: string): HTTPRouteMatch["path"] | string {
  const type = m.type ?? "Exact";
  const service = m.service ?? "";
  const method = m.method ?? "";
  if (service === "" && method === "") return `${where}: one or both of service and method must be given`;
  if (type === "Exact") {
    if (service !== "" && !isGrpcService(service)) {
      return `${where}.service ${show(service)} is not a gRPC service name (e.g. pkg.v1.Service)`;
    }
    if (method !== "" && !isGrpcMethod(method)) {
      return `${where}.method ${show(method)} is not a gRPC method name (letters, digits, _)`;
    }
    if (method === "") return { type: "PathPrefix", value: `/${service}` };
    if (service === "") return { type: "RegularExpression", value: `/[^/]+/${method}` };
    return { type: "Exact", value: `/${service}/${method}` };
  }
  if (type === "RegularExpression") {
    for (const [field, re] of [["service", service], ["method", method]] as const) {
      if (re === "") continue;
      const problem = re.includes("/") ? "contains /" : valueRegexProblem(re);
      if (problem !== null) return `${where}.${field}: the regular expression ${show(re)} ${problem}`;
    }
    return { type: "RegularExpression", value: `/(?:${service || "[^/]+"})/(?:${method || "[^/]+"})` };
  }
  return `${where}.type ${show(type)} is not supported (Exact, RegularExpression)`;
}

/** One match (`where`: e.g. `spec.rules[0].matches[1]`) read and checked. */
export function readGrpcMatch(m: GRPCRouteMatch, where: string): GrpcMatchRead {
  const path = m.method ? pathOf(m.method, `${where}.method`) : { type: "PathPrefix" as const, value: "/" };
  if (typeof path === "string") return { ok: false, message: path };
  const read = readMatch({ path, headers: m.headers }, where);
  if (!read.ok) return read;
  return { ...read, rank: { service: m.method?.service?.length ?? 0, method: m.method?.method?.length ?? 0 } };
}
