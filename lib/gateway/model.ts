/**
 * @module gateway/model
 * The model of one Gateway: `buildGateway` turns the Gateway, its HTTPRoutes, GRPCRoutes and TLSRoutes, the ReferenceGrants
 * and the cluster's Services, EndpointSlices and Secrets into the proxy's view (ports with their
 * route entries in precedence order, rule backends, Service backends, certificates) and the status
 * the controller writes (Gateway and listener conditions, each route's parent statuses). Pure: it
 * reads only its inputs. The steps live in their own modules: listeners.ts (listener validation
 * and status), attachment.ts (parentRef → listeners), rules.ts (matches, filters, backendRefs),
 * tls_routes.ts (TLSRoutes: SNI names to passthrough backends),
 * precedence.ts (the order of entries), conditions.ts (condition builders). A GRPCRoute is read
 * as an HTTPRoute whose matches are gRPC method and header matches (grpc_matches.ts); an HTTPRoute
 * and a GRPCRoute whose hostnames intersect on a listener are never both served there: the older
 * one (then the first by `namespace/name`) is, the other is not accepted (the GRPCRoute spec).
 */
import { cmp } from "../render/show.ts";
import type { Condition, GRPCRoute, HTTPRoute, RouteParentStatus } from "./api.ts";
import { attach, type Attachment, namesGateway } from "./attachment.ts";
import type { BackendContext, GatewayBackend } from "./backends.ts";
import {
  condition,
  generationOf,
  partiallyInvalidCondition,
  Reason,
  resolvedRefsCondition,
  Type,
} from "./conditions.ts";
import { compareHostnames, intersect, routeHostnames } from "./hostnames.ts";
import { listenerStatus, type ListenerView, readListeners } from "./listeners.ts";
import { insecureConditions, readFrontendValidation } from "./client_validation.ts";
import { compareRanked, createdAt, type Ranked } from "./precedence.ts";
import { type Issue, readRule, type RuleRead } from "./rules.ts";
import { readTlsRoutes, tlsModes } from "./tls_routes.ts";
import {
  GATEWAY_CONTROLLER_NAME,
  type GatewayBuild,
  type GatewayInputs,
  type ProxyPort,
  type RuleBackend,
  type TlsCert,
} from "./model_types.ts";

type BuildProblem = GatewayBuild["problems"][number];

const UNSUPPORTED_PARAMETERS =
  "spec.infrastructure.parametersRef is not read here, so the Gateway is not served rather than served without " +
  "its parameters";
const UNSUPPORTED_ADDRESSES =
  "spec.addresses with a value is not supported: the Gateway's address is its proxy Service's (an IPAddress entry " +
  "without value asks for just that)";

type RouteKind = "HTTPRoute" | "GRPCRoute";
/** The routes of each kind accepted on a listener (`namespace/name`) and their hostnames there. */
type Served = Record<RouteKind, { key: string; hostnames: readonly string[] }[]>;

/** One route as read once for all its parentRefs. */
interface RouteRead {
  route: HTTPRoute | GRPCRoute;
  kind: RouteKind;
  /** `namespace/name`, for a GRPCRoute `GRPCRoute:namespace/name` (rule backend names, entries). */
  id: string;
  generation: number;
  created: number;
  hostnames: string[];
  rules: RuleRead[];
  /** Why the route is refused as a whole (every rule unusable, or no usable hostname), or null. */
  refused: Issue | null;
  /** Refused for its rules only: their entries still answer 500 (never for unusable hostnames: no host to serve). */
  answerRefused: boolean;
  /** Rules not served as written while others are: PartiallyInvalid. */
  partial: Issue[];
  unresolved: Issue[];
}

export function buildGateway(inputs: GatewayInputs): GatewayBuild {
  const gw = inputs.gateway;
  const gwNs = gw.metadata?.namespace ?? "";
  const gwId = `${gwNs}/${gw.metadata?.name ?? ""}`;
  const generation = generationOf(gw);
  const problems: BuildProblem[] = [];
  const secrets = new Set<string>();
  // An address without value asks for one of its type (GatewayAddressEmpty): the proxy Service's IP.
  const addresses =
    (gw.spec?.addresses ?? []).filter((a) => !((a?.type ?? "IPAddress") === "IPAddress" && (a?.value ?? "") === ""))
      .length;
  // Parameters that cannot be read or are wrong refuse the Gateway rather than serve it without
  // them (the spec: Accepted=False, InvalidParameters).
  const parameters = gw.spec?.infrastructure?.parametersRef === undefined
    ? null
    : inputs.parametersProblem === undefined
    ? UNSUPPORTED_PARAMETERS
    : inputs.parametersProblem;
  const refused: [string, string] | null = addresses > 0
    ? [Reason.UnsupportedAddress, UNSUPPORTED_ADDRESSES]
    : parameters !== null
    ? [Reason.InvalidParameters, parameters]
    : null;
  const frontend = readFrontendValidation(gw, inputs.grants, inputs.caConfigMaps);
  const views = readListeners(gw.spec?.listeners ?? [], {
    gatewayNamespace: gwNs,
    generation,
    grants: inputs.grants,
    lookup: inputs.lookup,
    secrets,
    gatewayRefused: refused?.[1] ?? null,
    frontend,
    http2: inputs.http2 ?? true,
  });
  for (const v of views) {
    if (!v.programmed) {
      const c = v.conditions.find((x) => x.type === Type.Programmed)!;
      problems.push({
        object: gwId,
        kind: "Gateway",
        reason: "ListenerNotProgrammed",
        message: `listener ${v.name}: ${c.message}`,
      });
    }
  }

  const ctx: Omit<BackendContext, "routeNamespace"> = {
    grants: inputs.grants,
    lookup: inputs.lookup,
    allowLoopbackEndpoints: inputs.allowLoopbackEndpoints ?? false,
    problems: [],
    backends: new Map<string, GatewayBackend>(),
    services: new Set<string>(),
    backendTls: inputs.backendTls,
    tlsPolicies: new Set<string>(),
  };
  const attached = new Map<ListenerView, Set<string>>(views.map((v) => [v, new Set<string>()]));
  /** Per listener and kind: the routes accepted there and their hostnames (HTTPRoutes and GRPCRoutes never share one). */
  const served = new Map<ListenerView, Served>(views.map((v) => [v, { HTTPRoute: [], GRPCRoute: [] }]));
  const ranked = new Map<number, Map<string, Ranked>>();
  const usedRules = new Map<string, RuleBackend>();
  const statuses = new Map<string, RouteParentStatus[]>();
  const grpcStatuses = new Map<string, RouteParentStatus[]>();
  /** `object\0message` of the route problems reported: a route's issue once, whatever its parentRefs. */
  const reported = new Set<string>();

  const all: { r: HTTPRoute | GRPCRoute; kind: RouteKind }[] = [
    ...inputs.routes.filter((r) => r.kind === undefined || r.kind === "HTTPRoute")
      .map((r) => ({ r, kind: "HTTPRoute" as const })),
    ...(inputs.grpcRoutes ?? []).filter((r) => r.kind === undefined || r.kind === "GRPCRoute")
      .map((r) => ({ r, kind: "GRPCRoute" as const })),
  ];
  const reads = all
    .map(({ r, kind }) => ({ r, kind, created: createdAt(r.metadata?.creationTimestamp), key: idOf(r) }))
    .sort((a, b) => a.created - b.created || cmp(a.key, b.key) || cmp(a.kind, b.kind));
  for (const { r: route, kind, created, key } of reads) {
    const ns = route.metadata?.namespace ?? "";
    const refs = (route.spec?.parentRefs ?? []).filter((p) => namesGateway(p, ns, gw));
    if (refs.length === 0) continue;
    const id = kind === "HTTPRoute" ? key : `${kind}:${key}`;
    const read = readRoute(route, kind, id, created, { ...ctx, routeNamespace: ns, routeKind: kind });
    for (const issue of [...(read.refused ? [read.refused] : []), ...read.partial, ...read.unresolved]) {
      if (reported.has(`${id}\0${issue.message}`)) continue;
      reported.add(`${id}\0${issue.message}`);
      problems.push({ object: key, kind, reason: issue.reason, message: issue.message });
    }
    const parents: RouteParentStatus[] = [];
    for (const ref of refs) {
      const conditions: Condition[] = [];
      const att = apart(
        attach(route, ref, views, gwNs, inputs.namespaceLabels, read.hostnames, kind),
        kind,
        served,
        read.refused !== null,
      );
      if (!att.ok) {
        conditions.push(condition(Type.Accepted, false, att.reason, att.message, read.generation));
        problems.push({
          object: key,
          kind,
          reason: att.reason,
          message: `Gateway ${gwId}: ${att.message}`,
        });
      } else if (read.refused) {
        conditions.push(condition(Type.Accepted, false, read.refused.reason, read.refused.message, read.generation));
        // Rules with a filter that cannot be applied still answer 500 for what they match, never
        // letting those requests reach a less specific route: a filter is never skipped.
        if (read.answerRefused) {
          for (const a of att.listeners) {
            if (a.view.programmed) addEntries(ranked, usedRules, read, a.view, a.hostnames);
          }
        }
      } else {
        const names = att.listeners.map((a) => a.view.name).join(", ");
        conditions.push(
          condition(Type.Accepted, true, Reason.Accepted, `accepted by listeners ${names}`, read.generation),
        );
        for (const a of att.listeners) {
          attached.get(a.view)!.add(id);
          served.get(a.view)![kind].push({ key, hostnames: a.hostnames });
          if (a.view.programmed) addEntries(ranked, usedRules, read, a.view, a.hostnames);
        }
      }
      conditions.push(resolvedRefsCondition(read.unresolved, read.generation));
      if (att.ok && !read.refused && read.partial.length > 0) {
        conditions.push(partiallyInvalidCondition(read.partial, read.generation, "Dropped Rule: "));
      }
      parents.push({ parentRef: structuredClone(ref), controllerName: GATEWAY_CONTROLLER_NAME, conditions });
    }
    (kind === "GRPCRoute" ? grpcStatuses : statuses).set(key, parents);
  }

  const tls = readTlsRoutes(inputs.tlsRoutes ?? [], {
    gateway: gw,
    views,
    namespaceLabels: inputs.namespaceLabels,
    backends: ctx,
    attached,
    problems,
  });
  const ports = proxyPorts(views, ranked);
  for (const p of ports) {
    if (p.protocol === "TLS") Object.assign(p, { sni: tls.sni.get(p.port) ?? [], tlsModes: tlsModes(views, p.port) });
  }
  const rules = [...usedRules.values()].sort((a, b) => cmp(a.name, b.name));
  const used = new Set([...rules, ...tls.rules].flatMap((r) => r.targets.map((t) => t.backend)));
  const backends = [...ctx.backends.values()].filter((b) => used.has(b.name)).sort((a, b) => cmp(a.name, b.name));
  for (const p of ctx.problems) problems.push(p as BuildProblem);

  return {
    proxy: { ports, rules, backends, ...(tls.rules.length > 0 ? { tlsRules: tls.rules } : {}) },
    gateway: {
      conditions: [...gatewayConditions(refused, views, generation), ...insecureConditions(frontend, generation)],
      listeners: views.map((v) => listenerStatus(v, attached.get(v)!.size)),
    },
    routes: statuses,
    grpcRoutes: grpcStatuses,
    tlsRoutes: tls.statuses,
    problems,
    refs: {
      services: [...ctx.services].sort(cmp),
      secrets: [...secrets].sort(cmp),
      ...(frontend.configMaps.size > 0 ? { configMaps: [...frontend.configMaps].sort(cmp) } : {}),
    },
    tlsPolicies: [...ctx.tlsPolicies!].sort(cmp),
  };
}

function idOf(o: { metadata?: { namespace?: string; name?: string } }): string {
  return `${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
}

/**
 * `att` less the listeners where a route of the other kind (HTTPRoute / GRPCRoute) already accepted
 * there has an intersecting hostname: the older route keeps the listener (reads come oldest first).
 * A route refused as a whole (`refused`) is not accepted anywhere, so it is left as it is.
 */
function apart(
  att: Attachment,
  kind: RouteKind,
  served: ReadonlyMap<ListenerView, Served>,
  refused: boolean,
): Attachment {
  if (!att.ok || refused) return att;
  const otherKind: RouteKind = kind === "HTTPRoute" ? "GRPCRoute" : "HTTPRoute";
  const clashes: string[] = [];
  const listeners = att.listeners.filter((a) => {
    const other = served.get(a.view)![otherKind].find((s) =>
      s.hostnames.some((h) => a.hostnames.some((x) => intersect(h, x) !== null))
    );
    if (other) clashes.push(`listener ${a.view.name} already serves ${otherKind} ${other.key} for the same hostnames`);
    return !other;
  });
  if (listeners.length > 0) return { ok: true, listeners };
  return {
    ok: false,
    reason: Reason.NotAllowedByListeners,
    message: `${clashes.join("; ")} (an HTTPRoute and a GRPCRoute never share a hostname: the older route is served)`,
  };
}

function readRoute(
  route: HTTPRoute | GRPCRoute,
  kind: RouteKind,
  id: string,
  created: number,
  ctx: BackendContext,
): RouteRead {
  const generation = generationOf(route);
  const partial: Issue[] = [];
  const written = route.spec?.hostnames ?? [];
  const { hostnames, bad: badHosts } = routeHostnames(written);
  const rules = (route.spec?.rules ?? []).map((rule, i) => readRule(rule, i, id, ctx));
  const unsupported = rules.flatMap((r) => r.unsupported);
  const unresolved = rules.flatMap((r) => r.unresolved);
  let refused: Issue | null = null;
  let answerRefused = false;
  if (written.length > 0 && hostnames.length === 0) {
    refused = { reason: Reason.UnsupportedValue, message: `no valid hostname: ${badHosts.join(", ")} (RFC 1123)` };
  } else if (rules.length > 0 && rules.every((r) => r.unsupported.length > 0)) {
    refused = { reason: unsupported[0].reason, message: unsupported.map((i) => i.message).join("; ") };
    answerRefused = true;
  } else {
    partial.push(...unsupported);
    if (badHosts.length > 0) {
      partial.push({ reason: Reason.UnsupportedValue, message: `${badHosts.join(", ")} ignored: not a hostname` });
    }
  }
  return { route, kind, id, generation, created, hostnames, rules, refused, answerRefused, partial, unresolved };
}

/** The route's entries on one listener, for each of its hostnames there, keyed so a second parentRef adds none twice. */
function addEntries(
  ranked: Map<number, Map<string, Ranked>>,
  usedRules: Map<string, RuleBackend>,
  read: RouteRead,
  view: ListenerView,
  hostnames: readonly string[],
): void {
  let onPort = ranked.get(view.port);
  if (!onPort) ranked.set(view.port, onPort = new Map());
  for (const rule of read.rules) {
    if (rule.matches === null) continue;
    usedRules.set(rule.backend.name, rule.backend);
    for (const hostname of hostnames) {
      rule.matches.forEach((m, j) => {
        const key = `${view.hostname}\0${hostname}\0${rule.backend.name}\0${j}`;
        if (onPort!.has(key)) return;
        onPort!.set(key, {
          entry: {
            hostname,
            listenerHostname: view.hostname,
            path: { ...m.path },
            headers: m.headers.map((h) => ({ ...h })),
            queryParams: m.queryParams.map((q) => ({ ...q })),
            method: m.method,
            rule: rule.backend.name,
            route: read.id,
          },
          created: read.created,
          rule: rule.index,
          match: j,
          ...(rule.grpcRanks ? { grpc: rule.grpcRanks[j] } : {}),
        });
      });
    }
  }
}

function proxyPorts(views: readonly ListenerView[], ranked: Map<number, Map<string, Ranked>>): ProxyPort[] {
  const ports = new Map<number, ProxyPort>();
  for (const v of views) {
    if (!v.programmed || v.protocol === null) continue;
    let p = ports.get(v.port);
    if (!p) {
      p = {
        port: v.port,
        protocol: v.protocol,
        routes: [...(ranked.get(v.port)?.values() ?? [])].sort(compareRanked).map((r) => r.entry),
        certs: [],
      };
      ports.set(v.port, p);
    }
    if (v.clientValidation) p.clientValidation = v.clientValidation;
    for (const c of v.certs) {
      const hosts = v.hostname ? [v.hostname] : [];
      if (!p.certs.some((x) => x.file === c.file && x.hosts.join() === hosts.join())) p.certs.push({ ...c, hosts });
    }
  }
  for (const p of ports.values()) {
    const names = views.filter((v) => v.programmed && v.port === p.port && v.hostname !== "").map((v) => v.hostname);
    p.listenerHostnames = [...new Set(names)].sort(compareHostnames);
    p.certs.sort((a: TlsCert, b: TlsCert) =>
      compareHostnames(a.hosts[0] ?? "", b.hosts[0] ?? "") || cmp(a.file, b.file)
    );
  }
  return [...ports.values()].sort((a, b) => a.port - b.port);
}

/**
 * Accepted: True while at least one listener is accepted (reason ListenersNotValid when some
 * listener is not served), False when none is, when spec.addresses asks for addresses (the
 * proxy's Service gives them) or when the parameters spec.infrastructure.parametersRef names are missing or wrong. Programmed follows Accepted: an accepted Gateway gets its proxy,
 * which serves the programmed listeners (each listener's own Programmed says whether it is one);
 * the controller may still set it False while the proxy has no address.
 */
function gatewayConditions(
  refused: [string, string] | null,
  views: readonly ListenerView[],
  generation: number,
): Condition[] {
  const notServed = views.filter((v) => !v.programmed).map((v) => v.name);
  const accepted = views.filter((v) => v.accepted).length;
  let acc: Condition;
  if (refused !== null) {
    acc = condition(Type.Accepted, false, refused[0], refused[1], generation);
  } else if (accepted === 0) {
    acc = condition(
      Type.Accepted,
      false,
      Reason.ListenersNotValid,
      `no listener is valid: ${notServed.join(", ")}`,
      generation,
    );
  } else if (notServed.length > 0) {
    acc = condition(
      Type.Accepted,
      true,
      Reason.ListenersNotValid,
      `listeners not served: ${notServed.join(", ")} (see their conditions)`,
      generation,
    );
  } else acc = condition(Type.Accepted, true, Reason.Accepted, "Gateway accepted", generation);
  const ok = acc.status === "True";
  const served = views.length - notServed.length;
  const prog = condition(
    Type.Programmed,
    ok,
    ok ? Reason.Programmed : Reason.Invalid,
    ok ? `${served} of ${views.length} listeners programmed` : `not programmed: ${acc.message}`,
    generation,
  );
  return [acc, prog];
}
