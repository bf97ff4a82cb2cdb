/**
 * @module tests/gateway/fixtures
 * Gateway API objects shaped as the API server returns them (defaults as the CRDs fill them are
 * left out, so the model's own defaults are exercised), and a build of one Gateway from lists.
 */
import type { V1EndpointSlice, V1Secret, V1Service } from "@kubernetes/client-node";
import type {
  Gateway,
  GRPCRoute,
  GRPCRouteRule,
  HTTPRoute,
  HTTPRouteRule,
  Listener,
  ParentReference,
  ReferenceGrant,
  RouteParentStatus,
  TLSRoute,
} from "../../lib/gateway/api.ts";
import { buildGateway } from "../../lib/gateway/model.ts";
import type { GatewayBuild } from "../../lib/gateway/model_types.ts";
import { lookupFromLists } from "../../lib/render/model.ts";

export { endpointSlice, service, tlsSecret } from "../render/fixtures.ts";

export const NS = "infra";

export function gateway(
  listeners: Listener[],
  opts: { name?: string; namespace?: string; generation?: number } = {},
): Gateway {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: opts.name ?? "gw", namespace: opts.namespace ?? NS, generation: opts.generation ?? 1 },
    spec: { gatewayClassName: "ours", listeners },
  };
}

export function http(name: string, port = 80, more: Partial<Listener> = {}): Listener {
  return { name, port, protocol: "HTTP", ...more };
}

export function https(name: string, secret: string, port = 443, more: Partial<Listener> = {}): Listener {
  return { name, port, protocol: "HTTPS", tls: { certificateRefs: [{ name: secret }] }, ...more };
}

/** A TLS listener; Passthrough unless `mode` says otherwise (null: no `tls` at all). */
export function tls(
  name: string,
  port = 443,
  more: Partial<Listener> = {},
  mode: "Passthrough" | "Terminate" | null = "Passthrough",
): Listener {
  return { name, port, protocol: "TLS", ...(mode ? { tls: { mode } } : {}), ...more };
}

/** What a route fixture may set beside its rules. */
interface RouteOpts {
  namespace?: string;
  parentRefs?: ParentReference[];
  hostnames?: string[];
  created?: string;
  generation?: number;
}

/** A route of `kind` (metadata and parentRefs as the API server returns them) with `spec` beside its parentRefs. */
function routeOf<K extends "HTTPRoute" | "TLSRoute">(kind: K, name: string, opts: RouteOpts, spec: object) {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind,
    metadata: {
      name,
      namespace: opts.namespace ?? NS,
      generation: opts.generation ?? 1,
      creationTimestamp: opts.created ?? "2026-01-01T00:00:00Z",
    },
    spec: {
      parentRefs: opts.parentRefs ?? [{ name: "gw", namespace: NS }],
      ...(opts.hostnames ? { hostnames: opts.hostnames } : {}),
      ...spec,
    },
  };
}

/** A TLSRoute whose one rule sends its connections to `backendRefs` (default: Service `svc`, port 443). */
export function tlsRoute(
  name: string,
  hostnames: string[],
  opts: Omit<RouteOpts, "hostnames"> & {
    backendRefs?: NonNullable<NonNullable<TLSRoute["spec"]["rules"]>[number]["backendRefs"]>;
  } = {},
): TLSRoute {
  return routeOf("TLSRoute", name, { ...opts, hostnames }, {
    rules: [{ backendRefs: opts.backendRefs ?? [{ name: "svc", port: 443 }] }],
  }) as TLSRoute;
}

export function route(name: string, rules: HTTPRouteRule[], opts: RouteOpts = {}): HTTPRoute {
  return routeOf("HTTPRoute", name, opts, { rules }) as HTTPRoute;
}

/** A rule sending everything it matches to `service:port`. */
export function toService(service: string, port = 8080, more: Partial<HTTPRouteRule> = {}): HTTPRouteRule {
  return { backendRefs: [{ name: service, port }], ...more };
}

export function grant(
  namespace: string,
  from: { group?: string; kind: string; namespace: string },
  to: { group?: string; kind: string; name?: string },
): ReferenceGrant {
  return {
    apiVersion: "gateway.networking.k8s.io/v1beta1",
    kind: "ReferenceGrant",
    metadata: { name: `grant-${from.kind}-${to.kind}`.toLowerCase(), namespace },
    spec: {
      from: [{ group: from.group ?? "gateway.networking.k8s.io", kind: from.kind, namespace: from.namespace }],
      to: [{ group: to.group ?? "", kind: to.kind, ...(to.name ? { name: to.name } : {}) }],
    },
  };
}

/** A Service `name` with port 8080 → 3000 and one ready endpoint. */
export function backendService(name: string, namespace = NS, address = "10.0.0.1"): {
  service: V1Service;
  slice: V1EndpointSlice;
} {
  return {
    service: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { ports: [{ name: "http", port: 8080, targetPort: 3000 }] },
    } as V1Service,
    slice: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${name}-x`, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: 3000 }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    },
  };
}

/** A GRPCRoute with `route`'s defaults (parentRef `gw` in `infra`). */
export function grpcRoute(
  name: string,
  rules: GRPCRouteRule[],
  opts: Parameters<typeof route>[2] = {},
): GRPCRoute {
  const r = route(name, [], opts);
  return { ...r, kind: "GRPCRoute", spec: { ...r.spec, rules } };
}

export interface World {
  routes?: HTTPRoute[];
  grpcRoutes?: GRPCRoute[];
  tlsRoutes?: TLSRoute[];
  grants?: ReferenceGrant[];
  services?: V1Service[];
  endpointSlices?: V1EndpointSlice[];
  secrets?: V1Secret[];
  namespaces?: Record<string, Record<string, string>>;
  allowLoopbackEndpoints?: boolean;
  /** ConfigMaps by `namespace/name`: their data (the CA bundles spec.tls.frontend names). */
  configMaps?: Record<string, Record<string, string>>;
  /** The class's `http2` (default true). */
  http2?: boolean;
}

/** Builds `gw` with the objects of `world` (namespaces: `infra` with its name label unless given). */
export function build(gw: Gateway, world: World = {}): GatewayBuild {
  const namespaces = world.namespaces ?? { [NS]: { "kubernetes.io/metadata.name": NS } };
  return buildGateway({
    gateway: gw,
    gatewayClass: { metadata: { name: "ours" }, spec: { controllerName: "ingress-controller.io/gateway-controller" } },
    routes: world.routes ?? [],
    grpcRoutes: world.grpcRoutes ?? [],
    tlsRoutes: world.tlsRoutes ?? [],
    grants: world.grants ?? [],
    namespaceLabels: (ns) => namespaces[ns],
    lookup: lookupFromLists({ services: world.services, endpointSlices: world.endpointSlices, secrets: world.secrets }),
    allowLoopbackEndpoints: world.allowLoopbackEndpoints,
    http2: world.http2,
    caConfigMaps: (ns, name) => {
      const data = world.configMaps?.[`${ns}/${name}`];
      return data ? { data } : undefined;
    },
  });
}

/** The condition `type` of a TLSRoute's parent status for `parentIndex`. */
export function tlsRouteCondition(b: GatewayBuild, route: string, type: string, parentIndex = 0) {
  const parents: RouteParentStatus[] | undefined = b.tlsRoutes.get(route.includes("/") ? route : `${NS}/${route}`);
  return parents?.[parentIndex]?.conditions.find((c) => c.type === type);
}

/** The services and slices of {@link backendService} for each name. */
export function backends(...names: string[]): Pick<World, "services" | "endpointSlices"> {
  const made = names.map((n) => n.includes("/") ? backendService(n.split("/")[1], n.split("/")[0]) : backendService(n));
  return { services: made.map((m) => m.service), endpointSlices: made.map((m) => m.slice) };
}

/** The condition `type` of a route's parent status for `parentIndex`. */
export function routeCondition(b: GatewayBuild, route: string, type: string, parentIndex = 0) {
  const parents: RouteParentStatus[] | undefined = b.routes.get(route.includes("/") ? route : `${NS}/${route}`);
  return parents?.[parentIndex]?.conditions.find((c) => c.type === type);
}

/** The condition `type` of a GRPCRoute's parent status for `parentIndex`. */
export function grpcRouteCondition(b: GatewayBuild, route: string, type: string, parentIndex = 0) {
  return b.grpcRoutes.get(`${NS}/${route}`)?.[parentIndex]?.conditions.find((c) => c.type === type);
}

/** The condition `type` of listener `name`. */
export function listenerCondition(b: GatewayBuild, name: string, type: string) {
  return b.gateway.listeners.find((l) => l.name === name)?.conditions.find((c) => c.type === type);
}

/** The Gateway condition `type`. */
export function gatewayCondition(b: GatewayBuild, type: string) {
  return b.gateway.conditions.find((c) => c.type === type);
}
