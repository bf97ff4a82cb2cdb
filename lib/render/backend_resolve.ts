/**
 * @module render/backend_resolve
 * An Ingress backend → a HAProxy backend: the Service and its port, the ready endpoints of its
 * EndpointSlices (validated addresses only), and the settings its annotations resolve to
 * (lib/render/settings.ts, kept by render/settings_memo.ts). What cannot be resolved is a problem of
 * the route; a Service that cannot be reached still gets its backend, without servers (503 until
 * endpoints appear).
 */
import type { IngressSettings } from "./ingress_settings.ts";
import type { V1EndpointSlice, V1IngressBackend, V1Service, V1ServicePort } from "@kubernetes/client-node";
import {
  isDns1123Label,
  isIPv4,
  isIPv6,
  isPortName,
  isPortNumber,
  isProxyName,
  REFUSED_ENDPOINT_RANGES,
  refusedEndpointRange,
} from "./patterns.ts";
import { growable, slotCount } from "./slots.ts";
import { type BackendSettings, settingsHash } from "./settings.ts";
import type { ResolveContext } from "./settings_reader.ts";
import { memoBackendSettings, type MemoSettings } from "./settings_memo.ts";
import { cmp, show } from "./show.ts";
import type { Backend, ClusterLookup, Match, Problem, Server } from "./model_types.ts";
import type { ServiceRef } from "../annotations/values.ts";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** Reports a problem of the Ingress being read. */
export type Report = (reason: string, message: string) => void;

function sliceProblem(ctx: ServerContext, ns: string, slice: V1EndpointSlice, message: string): void {
  const object = `${ns}/${slice.metadata?.name ?? ""}`;
  ctx.problems.push({ object, kind: "EndpointSlice", reason: "InvalidEndpoints", message });
}

/** What resolving a Service's servers reads and reports to (the Gateway API model shares it). */
export type ServerContext = Pick<ReadContext, "lookup" | "allowLoopbackEndpoints" | "problems">;

export interface ReadContext {
  lookup: ClusterLookup;
  allowLoopbackEndpoints: boolean;
  /** The global and class layers and the risk cut-off the settings are resolved with. */
  resolve: ResolveContext;
  /** JSON of `resolve` (the settings memo's key). */
  resolveKey: string;
  /** The settings of a route without annotations of its own, as JSON. */
  baseline: string;
  /** JSON of DEFAULT_SETTINGS. */
  defaultJson: string;
  /** The Ingress-wide settings of an Ingress without annotations of the table (the global and class layers). */
  ingressDefaults: IngressSettings;
  problems: Problem[];
  backends: Map<string, Backend>;
  services: Set<string>;
  secrets: Set<string>;
}

/** Resolves an ingress backend to a backend name (creating the Backend once); null: path unusable. */
export function resolveBackend(
  ctx: ReadContext,
  ns: string,
  backend: V1IngressBackend | undefined,
  where: string,
  annotations: Record<string, string>,
  path: { path: string; match: Match } | null,
  problem: Report,
  /** The Ingress's name, which error pages send (X-Ingress-Name). */
  ingress = "",
): string | null {
  const svc = backend?.service;
  if (!svc) {
    problem("UnsupportedBackend", `${where}: only Service backends are supported; path ignored`);
    return null;
  }
  if (!isDns1123Label(svc.name)) {
    problem("InvalidBackend", `${where}.service.name: ${show(svc.name)} is not a valid Service name; path ignored`);
    return null;
  }
  const portRef: number | string | undefined = svc.port?.number ?? svc.port?.name;
  if (!isPortNumber(portRef) && !isPortName(portRef)) {
    problem(
      "InvalidBackend",
      `${where}.service.port: ${show(svc.port)} is neither a port number nor a port name; path ignored`,
    );
    return null;
  }
  ctx.services.add(`${ns}/${svc.name}`);
  const serviceAnnotations = ctx.lookup.service(ns, svc.name)?.metadata?.annotations ?? {};
  let resolved: MemoSettings = memoBackendSettings(ctx.resolveKey, ctx.resolve, annotations, serviceAnnotations, path, {
    namespace: ns,
    secret: (name) => {
      ctx.secrets.add(`${ns}/${name}`);
      return ctx.lookup.secret(ns, name);
    },
  });
  for (const [reason, message] of resolved.problems) problem(reason, message);
  if (resolved.settings.errorPages || resolved.settings.defaultBackend) resolved = withIngress(resolved, ingress);
  const settings = resolved.settings;
  // What every route gets without annotations of its own (the global and class layers): such
  // routes share the plain backend, which then carries those settings; only a route that sets
  // something else gets a variant.
  const plain = resolved.json === ctx.baseline;
  const carries = !plain || resolved.json !== ctx.defaultJson;
  const base = `be_${ns}_${svc.name}_${portRef}`;
  const name = plain ? base : `${base}_${resolved.hash()}`;
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${show(name)}`);
  if (ctx.backends.has(name)) return name;
  const servers = settings.serviceUpstream
    ? clusterIpServer(ctx, ns, svc.name, portRef, where, problem)
    : memoServers(ctx, ns, svc.name, portRef, where, problem);
  const fallback = settings.defaultBackend ? fallbackBackend(ctx, ns, settings.defaultBackend, problem) : null;
  ctx.backends.set(name, {
    name,
    namespace: ns,
    service: svc.name,
    port: portRef,
    servers,
    slots: slotCount(servers.length, growable(settings.balance, settings.sticky !== null)),
    balance: settings.balance,
    timeoutServer: settings.timeouts.server,
    ...(carries ? { settings } : {}),
    ...(fallback ? { fallback } : {}),
  });
  return name;
}

/**
 * Settings with a default backend or error pages name their Ingress (X-Ingress-Name): each Ingress
 * gets its own variant, as equal settings of two Ingresses would otherwise share one and send one
 * name for both.
 */
function withIngress(m: MemoSettings, ingress: string): MemoSettings {
  const settings: BackendSettings = {
    ...m.settings,
    ...(m.settings.errorPages ? { errorPages: { ...m.settings.errorPages, ingress } } : {}),
    ...(m.settings.defaultBackend ? { fallbackIngress: ingress } : {}),
  };
  let hash: string | null = null;
  return {
    settings,
    json: JSON.stringify(settings),
    hash: () => hash ??= settingsHash(settings),
    problems: m.problems,
  };
}

/** What resolveServers found for a Service object, a port and the slices it was given. */
interface ServersSeen {
  port: number | string;
  slices: readonly V1EndpointSlice[];
  loopback: boolean;
  servers: Server[];
  sliceProblems: Problem[];
}

/**
 * The caches hand out the same object until it changes, so a Service's servers are computed again
 * only when the Service or one of its EndpointSlices was replaced: at 10,000 ingresses this was a
 * fifth of the model's time. Only results without a problem of the route's own are kept (those
 * messages name the route).
 */
/** The problems of the many Services whose slices have none (one shared array, never changed). */
const NO_PROBLEMS: Problem[] = Object.freeze([]) as unknown as Problem[];
const serversSeen = new WeakMap<V1Service, ServersSeen | Map<number | string, ServersSeen>>();

/** What was seen for a port of the Service (most Services are used by one port: no Map for them). */
function seenFor(svc: V1Service, port: number | string): ServersSeen | undefined {
  const seen = serversSeen.get(svc);
  return seen instanceof Map ? seen.get(port) : seen?.port === port ? seen : undefined;
}

function keepSeen(svc: V1Service, seen: ServersSeen): void {
  const kept = serversSeen.get(svc);
  if (kept instanceof Map) kept.set(seen.port, seen);
  else if (kept === undefined || kept.port === seen.port) serversSeen.set(svc, seen);
  else serversSeen.set(svc, new Map([[kept.port, kept], [seen.port, seen]]));
}

function memoServers(
  ctx: ReadContext,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const svc = ctx.lookup.service(ns, service);
  const slices = ctx.lookup.endpointSlices(ns, service);
  const seen = svc ? seenFor(svc, portRef) : undefined;
  if (
    seen && seen.loopback === ctx.allowLoopbackEndpoints && seen.slices.length === slices.length &&
    seen.slices.every((s, i) => s === slices[i])
  ) {
    ctx.problems.push(...seen.sliceProblems);
    return seen.servers;
  }
  let own = false;
  const before = ctx.problems.length;
  const servers = resolveServers(ctx, ns, service, portRef, where, (reason, message) => {
    own = true;
    problem(reason, message);
  });
  if (svc && !own) {
    keepSeen(svc, {
      port: portRef,
      // Lookups hand out lists they never change (a cache's answer, kept until a slice changes),
      // as ModelMemo's reads assume too: kept as is, not copied (10,000 of them).
      slices,
      loopback: ctx.allowLoopbackEndpoints,
      servers,
      sliceProblems: ctx.problems.length > before ? ctx.problems.slice(before) : NO_PROBLEMS,
    });
  }
  return servers;
}

/**
 * The plain backend of a `default-backend` Service (its first port when none is given, as
 * ingress-nginx); null (with a problem) when it cannot be resolved. The Ingress's annotations do
 * not apply to it, as in ingress-nginx.
 */
function fallbackBackend(ctx: ReadContext, ns: string, ref: ServiceRef, problem: Report): string | null {
  const where = "annotation ingress-controller.io/default-backend";
  const port = ref.port ?? ctx.lookup.service(ns, ref.service)?.spec?.ports?.[0]?.port;
  if (port === undefined) {
    problem("ServiceNotFound", `${where}: Service ${ns}/${ref.service} not found; ignored`);
    return null;
  }
  const backend = typeof port === "number" ? { number: port } : { name: port };
  return resolveBackend(ctx, ns, { service: { name: ref.service, port: backend } }, where, {}, null, problem);
}

/** The Service and its port `portRef` (number or name); null (with a problem) when a route cannot use them. */
function servicePort(
  ctx: ServerContext,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): { svc: V1Service; sp: V1ServicePort } | null {
  const svc = ctx.lookup.service(ns, service);
  if (!svc) {
    problem("ServiceNotFound", `${where}: Service ${ns}/${service} not found; requests get 503 until it exists`);
    return null;
  }
  if (svc.spec?.type === "ExternalName") {
    problem("UnsupportedService", `${where}: Service ${ns}/${service} is of type ExternalName; requests get 503`);
    return null;
  }
  const sp = (svc.spec?.ports ?? []).find((p) => typeof portRef === "number" ? p.port === portRef : p.name === portRef);
  if (!sp) {
    problem("PortNotFound", `${where}: Service ${ns}/${service} has no port ${show(portRef)}; requests get 503`);
    return null;
  }
  return { svc, sp };
}

/** `service-upstream`: the Service's cluster IP and port as the one server; none (with a problem) without one. */
function clusterIpServer(
  ctx: ReadContext,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const found = servicePort(ctx, ns, service, portRef, where, problem);
  if (!found) return [];
  const ip = found.svc.spec?.clusterIP;
  const v6 = isIPv6(ip);
  if (!(v6 || isIPv4(ip)) || !isPortNumber(found.sp.port)) {
    problem(
      "UnsupportedService",
      `${where}: service-upstream needs a cluster IP, and Service ${ns}/${service} has none (headless); requests get 503`,
    );
    return [];
  }
  const range = refusedEndpointRange(ip);
  if (range !== null && !(range === "loopback" && ctx.allowLoopbackEndpoints)) {
    problem(
      "UnsupportedService",
      `${where}: cluster IP ${show(ip)} ${REFUSED_ENDPOINT_RANGES[range]}; requests get 503`,
    );
    return [];
  }
  return [{ address: v6 ? `[${ip.toLowerCase()}]` : ip, port: found.sp.port }];
}

/**
 * Service port (by number or name) → its name/targetPort → the ready endpoints of the matching
 * EndpointSlice port. Problems of the route go to `problem`, those of EndpointSlices to `ctx.problems`.
 */
export function resolveServers(
  ctx: ServerContext,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const found = servicePort(ctx, ns, service, portRef, where, problem);
  if (!found) return [];
  const sp = found.sp;
  const portName = sp.name ?? "";
  const target = sp.targetPort;
  const seen = new Map<string, Server>();
  for (const slice of ctx.lookup.endpointSlices(ns, service)) {
    if (slice.metadata?.labels?.[SERVICE_NAME_LABEL] !== service) continue;
    const v6 = slice.addressType === "IPv6";
    if (!v6 && slice.addressType !== "IPv4") continue;
    const slicePorts = slice.ports ?? [];
    let port = slicePorts.find((p) => (p.name ?? "") === portName)?.port;
    if (port === undefined && slicePorts.length === 0 && typeof target === "number") port = target;
    if (!isPortNumber(port)) {
      if (port !== undefined) sliceProblem(ctx, ns, slice, `port ${show(port)} is invalid; slice ignored`);
      continue;
    }
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      const addr = ep.addresses?.[0];
      const ok = v6 ? isIPv6(addr) : isIPv4(addr);
      if (!ok) {
        sliceProblem(ctx, ns, slice, `address ${show(addr)} is not an ${slice.addressType} address; endpoint ignored`);
        continue;
      }
      // Defence in depth: the API server refuses these too, but a proxy must never be pointed at itself.
      const range = refusedEndpointRange(addr);
      if (range !== null && !(range === "loopback" && ctx.allowLoopbackEndpoints)) {
        sliceProblem(ctx, ns, slice, `address ${show(addr)} ${REFUSED_ENDPOINT_RANGES[range]}; endpoint ignored`);
        continue;
      }
      const address = v6 ? `[${addr.toLowerCase()}]` : addr;
      seen.set(`${address}:${port}`, { address, port });
    }
  }
  return [...seen.values()].sort((a, b) => cmp(a.address, b.address) || a.port - b.port);
}
