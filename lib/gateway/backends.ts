/**
 * @module gateway/backends
 * An HTTPRoute backendRef → a Service backend of the proxy (`be_<ns>_<svc>_<port>`, its servers the
 * ready endpoints of the Service's EndpointSlices for that port, shared with the Ingress path:
 * lib/render/backend_resolve.ts), or the reason it is invalid: InvalidKind (not a core Service, or
 * an ExternalName one), RefNotPermitted (another namespace without a ReferenceGrant from HTTPRoutes
 * of the route's namespace; such a Service is not even looked up), BackendNotFound (no such Service
 * or port), UnsupportedProtocol (the Service port's `appProtocol` names a protocol the proxy does
 * not speak to backends). `appProtocol` `kubernetes.io/h2c` makes the proxy talk HTTP/2 without
 * TLS (prior knowledge) to the servers; `kubernetes.io/ws` and `http` are HTTP/1.1, which carries
 * WebSocket upgrades as they are; a GRPCRoute speaks h2c to a port without appProtocol (its own backend,
 * `…_h2c`). An invalid reference's weight is answered 500.
 */
import type { Backend, ClusterLookup, Problem } from "../render/model_types.ts";
import { resolveServers } from "../render/backend_resolve.ts";
import { isProxyName } from "../render/patterns.ts";
import { show } from "../render/show.ts";
import { growable, slotCount } from "../render/slots.ts";
import { GROUP, type HTTPBackendRef, type ReferenceGrant } from "./api.ts";
import { Reason } from "./conditions.ts";
import { referenceAllowed } from "./references.ts";
import { isDns1123Label, isPortNumber } from "./validate.ts";
import type { BackendTls, BackendTlsPolicies } from "./backend_tls.ts";

export interface BackendContext {
  routeNamespace: string;
  /**
   * The kind of the referring route (HTTPRoute unless said): what a ReferenceGrant's `from` must
   * name. A GRPCRoute's backends are spoken to in h2c unless their appProtocol says otherwise; a TLSRoute's backends get TLS as it comes, so the Service port's `appProtocol` is not read.
   */
  routeKind?: "HTTPRoute" | "GRPCRoute" | "TLSRoute";
  grants: readonly ReferenceGrant[];
  lookup: ClusterLookup;
  allowLoopbackEndpoints: boolean;
  /** EndpointSlice problems (and only those: the route's own go into its conditions). */
  problems: Problem[];
  /** The Service backends made so far, by name. */
  backends: Map<string, GatewayBackend>;
  /** Services read (`namespace/name`). */
  services: Set<string>;
  /** BackendTLSPolicies (lib/gateway/backend_tls.ts); the keys of those that reach a backend are added to `tlsPolicies`. */
  backendTls?: BackendTlsPolicies;
  tlsPolicies?: Set<string>;
}

export type RefVerdict =
  | { ok: true; backend: string; weight: number }
  | { ok: false; reason: string; message: string; weight: number };

export const MAX_WEIGHT = 1_000_000;

/**
 * A Service backend of a Gateway: `proto` h2 when its Service port's appProtocol is `kubernetes.io/h2c`;
 * `tls` when a BackendTLSPolicy targets the port (null: it does but cannot be used, and the port is never
 * reached: 500).
 */
export type GatewayBackend = Backend & { proto?: "h2"; tls?: BackendTls | null };

/** The `appProtocol` values served, lower-cased, and how the proxy speaks to such a port (null: HTTP/1.1). */
const APP_PROTOCOLS: ReadonlyMap<string, "h2" | null> = new Map([
  ["kubernetes.io/h2c", "h2"],
  ["kubernetes.io/ws", null],
  ["http", null],
]);

/** The backend `ref` (at `where`, e.g. `spec.rules[0].backendRefs[1]`) routes to, or why it cannot. */
export function resolveBackendRef(ref: HTTPBackendRef, where: string, ctx: BackendContext): RefVerdict {
  const rawWeight = ref.weight ?? 1;
  const weightOk = Number.isInteger(rawWeight) && rawWeight >= 0 && rawWeight <= MAX_WEIGHT;
  const weight = weightOk ? rawWeight : 1;
  const bad = (reason: string, message: string): RefVerdict => ({ ok: false, reason, message, weight });
  const group = ref.group ?? "";
  const kind = ref.kind ?? "Service";
  if (group !== "" || kind !== "Service") {
    return bad(
      Reason.InvalidKind,
      `${where} refers to ${show(`${group || "core"}/${kind}`)}; only Services are supported`,
    );
  }
  if (!weightOk) return bad(Reason.UnsupportedValue, `${where}.weight ${show(ref.weight)} is not 0-${MAX_WEIGHT}`);
  const ns = ref.namespace ?? ctx.routeNamespace;
  if (!isDns1123Label(ns) || !isDns1123Label(ref.name)) {
    return bad(Reason.BackendNotFound, `${where}: ${show(`${ns}/${ref.name}`)} is not a Service name`);
  }
  if (!isPortNumber(ref.port)) {
    return bad(
      Reason.UnsupportedValue,
      `${where}.port ${show(ref.port)}: a Service reference needs its port (1-65535)`,
    );
  }
  const routeKind = ctx.routeKind ?? "HTTPRoute";
  const from = { group: GROUP, kind: routeKind, namespace: ctx.routeNamespace };
  if (!referenceAllowed(ctx.grants, from, { group: "", kind: "Service", namespace: ns, name: ref.name })) {
    return bad(
      Reason.RefNotPermitted,
      `${where}: Service ${ns}/${ref.name} is in another namespace and no ReferenceGrant there allows ${routeKind}s ` +
        `of ${ctx.routeNamespace} to use it`,
    );
  }
  ctx.services.add(`${ns}/${ref.name}`);
  const svc = ctx.lookup.service(ns, ref.name);
  if (!svc) return bad(Reason.BackendNotFound, `${where}: Service ${ns}/${ref.name} not found`);
  if (svc.spec?.type === "ExternalName") {
    return bad(
      Reason.InvalidKind,
      `${where}: Service ${ns}/${ref.name} is of type ExternalName, which is not supported`,
    );
  }
  const port = (svc.spec?.ports ?? []).find((p) => p.port === ref.port);
  if (!port) {
    return bad(Reason.BackendNotFound, `${where}: Service ${ns}/${ref.name} has no port ${ref.port}`);
  }
  const app = routeKind === "TLSRoute" ? undefined : (port as { appProtocol?: unknown }).appProtocol;
  const tls = routeKind === "TLSRoute" ? null : ctx.backendTls?.forPort(ns, ref.name, port) ?? null;
  // `HTTPS` (as the API's examples write it): HTTP/1.1 over TLS, which only a BackendTLSPolicy's check gives.
  const https = routeKind === "HTTPRoute" && tls !== null && String(app).toLowerCase() === "https";
  const written = app === undefined || app === null || app === "" || https
    ? null
    : APP_PROTOCOLS.get(String(app).toLowerCase());
  // gRPC is HTTP/2: a GRPCRoute's backend without appProtocol is spoken to in h2c (the spec lets the
  // route's type decide), and one whose appProtocol names HTTP/1.1 cannot carry it.
  const inferred = routeKind === "GRPCRoute" && (app === undefined || app === null || app === "");
  const proto = inferred ? "h2" : routeKind === "GRPCRoute" && written === null ? undefined : written;
  if (proto === undefined) {
    return bad(
      Reason.UnsupportedProtocol,
      `${where}: Service ${ns}/${ref.name} port ${ref.port} has appProtocol ${show(app)}; supported: ` +
        (routeKind === "GRPCRoute"
          ? "kubernetes.io/h2c or none"
          : `${[...APP_PROTOCOLS.keys()].join(", ")}, HTTPS with a BackendTLSPolicy, or none`),
    );
  }
  // A port without appProtocol is HTTP/1.1 to HTTPRoutes and h2c to GRPCRoutes: two backends (Service
  // names have no `_`, so the suffix cannot meet another Service's name).
  const name = `be_${ns}_${ref.name}_${ref.port}${inferred ? "_h2c" : ""}`;
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${show(name)}`);
  if (!ctx.backends.has(name)) {
    // The Service and its port exist (checked above), so resolveServers reports nothing of the route's own.
    const servers = resolveServers(ctx, ns, ref.name, ref.port, where, () => {});
    ctx.backends.set(name, {
      name,
      namespace: ns,
      service: ref.name,
      port: ref.port,
      servers,
      slots: slotCount(servers.length, growable("roundrobin", false)),
      balance: "roundrobin",
      timeoutServer: null,
      ...(proto === "h2" ? { proto } : {}),
      ...(tls ? { tls: tls.ok ? tls.tls : null } : {}),
    });
    // Every policy naming the port (conflicted ones too) gets this Gateway as an ancestor.
    if (tls) { for (const key of ctx.backendTls!.namingPort(ns, ref.name, port)) ctx.tlsPolicies?.add(key); }
  }
  return { ok: true, backend: name, weight };
}
