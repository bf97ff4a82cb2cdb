/**
 * @module gateway/tls_routes
 * The TLSRoutes of one Gateway, routed by SNI. A TLSRoute attaches to TLS listeners only, in
 * Passthrough or Terminate mode (an HTTP or HTTPS listener refuses it: NotAllowedByListeners); its
 * hostnames intersect the listener's as an HTTPRoute's do (lib/gateway/hostnames.ts); its one rule's
 * backendRefs are Services (ReferenceGrants from TLSRoutes for other namespaces) reached as
 * `mode tcp` copies of their backends, `be_<ns>_<svc>_<port>_tcp`, by weight. What a connection
 * with an SNI of the route gets: one of the valid targets by weight, the invalid references'
 * share refused (the connection is closed), and every connection refused when no target is valid
 * (the API: "the underlying implementation must actively reject … by rejecting the connection").
 * Of two routes with the same name on one port, the oldest wins (creation time, then
 * namespace/name), as for HTTPRoutes. Listener isolation: a connection belongs to the listener of
 * its port whose hostname matches its SNI most specifically, so a name under a more specific
 * listener's hostname is only that listener's, and each listener hostname without an entry of its
 * own gets a stop (closed) that keeps its names from a less specific listener's routes; this is
 * also what tells a Terminate listener's connections from a Passthrough one's on a shared port.
 */
import { cmp } from "../render/show.ts";
import type { Condition, RouteParentStatus, TLSRoute } from "./api.ts";
import { attach, namesGateway } from "./attachment.ts";
import { type BackendContext, resolveBackendRef } from "./backends.ts";
import {
  condition,
  generationOf,
  partiallyInvalidCondition,
  Reason,
  resolvedRefsCondition,
  Type,
} from "./conditions.ts";
import { compareHostnames, intersect, routeHostnames } from "./hostnames.ts";
import type { ListenerView } from "./listeners.ts";
import { GATEWAY_CONTROLLER_NAME, type GatewayBuild, type SniEntry, type TlsRule } from "./model_types.ts";
import { createdAt } from "./precedence.ts";
import { type Issue, ruleBackendName } from "./rules.ts";
import type { Gateway } from "./api.ts";

type BuildProblem = GatewayBuild["problems"][number];

export interface TlsContext {
  gateway: Gateway;
  views: readonly ListenerView[];
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
  /** Shared with the HTTPRoutes' reading (Service backends, Services read, EndpointSlice problems). */
  backends: Omit<BackendContext, "routeNamespace" | "routeKind">;
  /** Per listener: the routes (`kind namespace/name`) attached, for its attachedRoutes. */
  attached: Map<ListenerView, Set<string>>;
  problems: BuildProblem[];
}

export interface TlsRoutesOut {
  /** Per port: its SNI entries, most specific name first. */
  sni: Map<number, SniEntry[]>;
  rules: TlsRule[];
  statuses: Map<string, RouteParentStatus[]>;
}

interface TlsRead {
  id: string;
  generation: number;
  created: number;
  hostnames: string[];
  rule: TlsRule;
  /** Why the route is not accepted at all, or null. */
  refused: Issue | null;
  partial: Issue[];
  unresolved: Issue[];
}

/** Suffix of a `mode tcp` copy of a Service backend. */
const TCP_SUFFIX = "_tcp";

function readTlsRoute(route: TLSRoute, id: string, ctx: BackendContext): TlsRead {
  const generation = generationOf(route);
  const written = route.spec?.hostnames ?? [];
  const { hostnames, bad } = routeHostnames(written);
  const partial: Issue[] = [];
  const unresolved: Issue[] = [];
  let refused: Issue | null = null;
  if (written.length > 0 && hostnames.length === 0) {
    refused = { reason: Reason.UnsupportedValue, message: `no valid hostname: ${bad.join(", ")} (RFC 1123)` };
  } else if (bad.length > 0) {
    partial.push({ reason: Reason.UnsupportedValue, message: `${bad.join(", ")} ignored: not a hostname` });
  }
  const rules = route.spec?.rules ?? [];
  if (rules.length > 1) {
    partial.push({
      reason: Reason.UnsupportedValue,
      message: `spec.rules[1..${rules.length - 1}] ignored: a TLSRoute has one rule`,
    });
  }
  // `TLSRoute ` in the hashed identity: never the name of an HTTPRoute's rule of the same namespace/name
  const rule: TlsRule = { name: ruleBackendName(`TLSRoute ${id}`, 0), targets: [], invalidWeight: 0 };
  (rules[0]?.backendRefs ?? []).forEach((ref, j) => {
    const v = resolveBackendRef(ref, `spec.rules[0].backendRefs[${j}]`, { ...ctx, routeKind: "TLSRoute" });
    if (!v.ok) {
      unresolved.push({ reason: v.reason, message: v.message });
      rule.invalidWeight += v.weight;
      return;
    }
    if (v.weight === 0) return;
    const http = ctx.backends.get(v.backend)!;
    const name = `${v.backend}${TCP_SUFFIX}`;
    if (!ctx.backends.has(name)) {
      const { proto: _proto, tls: _tls, ...rest } = http;
      ctx.backends.set(name, { ...rest, name, mode: "tcp" });
    }
    const same = rule.targets.find((t) => t.backend === name);
    if (same) same.weight += v.weight;
    else rule.targets.push({ backend: name, weight: v.weight });
  });
  return {
    id,
    generation,
    created: createdAt(route.metadata?.creationTimestamp),
    hostnames,
    rule,
    refused,
    partial,
    unresolved,
  };
}

/** Reads the TLSRoutes naming the Gateway: their parent statuses, the TLS ports' SNI entries and rules. */
export function readTlsRoutes(routes: readonly TLSRoute[], ctx: TlsContext): TlsRoutesOut {
  const gw = ctx.gateway;
  const gwNs = gw.metadata?.namespace ?? "";
  const gwId = `${gwNs}/${gw.metadata?.name ?? ""}`;
  const statuses = new Map<string, RouteParentStatus[]>();
  /** Per port: SNI name → its entry (the first, i.e. oldest, route's). */
  const byPort = new Map<number, Map<string, SniEntry>>();
  const used = new Map<string, TlsRule>();
  const reported = new Set<string>();
  const reads = routes
    .map((r) => ({ r, id: `${r.metadata?.namespace ?? ""}/${r.metadata?.name ?? ""}` }))
    .map((x) => ({ ...x, created: createdAt(x.r.metadata?.creationTimestamp) }))
    .sort((a, b) => a.created - b.created || cmp(a.id, b.id));
  for (const { r: route, id } of reads) {
    const ns = route.metadata?.namespace ?? "";
    const refs = (route.spec?.parentRefs ?? []).filter((p) => namesGateway(p, ns, gw));
    if (refs.length === 0) continue;
    const read = readTlsRoute(route, id, { ...ctx.backends, routeNamespace: ns });
    for (const issue of [...(read.refused ? [read.refused] : []), ...read.partial, ...read.unresolved]) {
      if (reported.has(issue.message)) continue;
      reported.add(issue.message);
      ctx.problems.push({ object: id, kind: "TLSRoute", reason: issue.reason, message: issue.message });
    }
    const parents: RouteParentStatus[] = [];
    for (const ref of refs) {
      const conditions: Condition[] = [];
      const att = attach(route, ref, ctx.views, gwNs, ctx.namespaceLabels, read.hostnames, "TLSRoute");
      if (!att.ok) {
        conditions.push(condition(Type.Accepted, false, att.reason, att.message, read.generation));
        ctx.problems.push({
          object: id,
          kind: "TLSRoute",
          reason: att.reason,
          message: `Gateway ${gwId}: ${att.message}`,
        });
      } else if (read.refused) {
        conditions.push(condition(Type.Accepted, false, read.refused.reason, read.refused.message, read.generation));
      } else {
        const names = att.listeners.map((a) => a.view.name).join(", ");
        conditions.push(
          condition(Type.Accepted, true, Reason.Accepted, `accepted by listeners ${names}`, read.generation),
        );
        for (const a of att.listeners) {
          ctx.attached.get(a.view)!.add(`TLSRoute ${id}`);
          if (!a.view.programmed) continue;
          let names = byPort.get(a.view.port);
          if (!names) byPort.set(a.view.port, names = new Map());
          for (const hostname of a.hostnames) {
            if (names.has(hostname) || ownedByMoreSpecific(ctx.views, a.view, hostname)) continue;
            const terminate = a.view.tlsMode === "Terminate" ? { terminate: true as const } : {};
            names.set(hostname, { hostname, rule: read.rule.name, route: id, ...terminate });
            used.set(read.rule.name, read.rule);
          }
        }
      }
      conditions.push(resolvedRefsCondition(read.unresolved, read.generation));
      if (att.ok && !read.refused && read.partial.length > 0) {
        conditions.push(partiallyInvalidCondition(read.partial, read.generation));
      }
      parents.push({ parentRef: structuredClone(ref), controllerName: GATEWAY_CONTROLLER_NAME, conditions });
    }
    statuses.set(id, parents);
  }
  addStops(ctx.views, byPort);
  const sni = new Map<number, SniEntry[]>();
  for (const [port, names] of byPort) {
    sni.set(port, [...names.values()].sort((a, b) => compareHostnames(a.hostname, b.hostname)));
  }
  return { sni, rules: [...used.values()].sort((a, b) => cmp(a.name, b.name)), statuses };
}

/** The programmed TLS listeners of `port` other than `own`. */
function otherTlsListeners(views: readonly ListenerView[], port: number, own?: ListenerView): ListenerView[] {
  return views.filter((v) => v !== own && v.programmed && v.protocol === "TLS" && v.port === port);
}

/**
 * Whether the connections for `hostname` (an entry of listener `own`) belong to another listener of
 * the port whose hostname is more specific than `own`'s and matches all of them.
 */
function ownedByMoreSpecific(views: readonly ListenerView[], own: ListenerView, hostname: string): boolean {
  return otherTlsListeners(views, own.port, own).some((v) =>
    v.hostname !== "" && compareHostnames(v.hostname, own.hostname) < 0 &&
    intersect(v.hostname, hostname) === hostname
  );
}

/** A stop (rule null: closed) for each listener hostname of a TLS port that no entry names as it is. */
function addStops(views: readonly ListenerView[], byPort: Map<number, Map<string, SniEntry>>): void {
  for (const v of views) {
    if (!v.programmed || v.protocol !== "TLS" || v.hostname === "") continue;
    let names = byPort.get(v.port);
    if (!names) byPort.set(v.port, names = new Map());
    if (names.has(v.hostname)) continue;
    names.set(v.hostname, {
      hostname: v.hostname,
      rule: null,
      route: "",
      ...(v.tlsMode === "Terminate" ? { terminate: true as const } : {}),
    });
  }
}

/** The modes of the programmed TLS listeners of `port`, Passthrough first. */
export function tlsModes(views: readonly ListenerView[], port: number): ("Passthrough" | "Terminate")[] {
  const modes = new Set(otherTlsListeners(views, port).map((v) => v.tlsMode));
  return (["Passthrough", "Terminate"] as const).filter((m) => modes.has(m));
}
