/**
 * @module gateway/listeners
 * A Gateway's listeners as the model serves them: validated (protocol HTTP, HTTPS with TLS
 * Terminate and usable certificate Secrets the Gateway may read, or TLS in Passthrough mode, or in
 * Terminate mode with usable certificate Secrets as HTTPS; port,
 * hostname, route kinds: HTTPRoute on HTTP and HTTPS, TLSRoute on TLS),
 * checked for conflicts with each other (same port with another protocol, or same port and
 * hostname), and their status conditions (Accepted, ResolvedRefs, Conflicted, Programmed).
 * A listener is programmed, i.e. served by the proxy, only when it is accepted, not conflicted and
 * all its references resolve.
 */
import type { ClusterLookup, TlsCert } from "../render/model_types.ts";
import type { ClientValidation } from "./model_types.ts";
import { tlsSummaryOf } from "../render/tls_secret.ts";
import { show } from "../render/show.ts";
import {
  type Condition,
  GROUP,
  type Listener,
  type ListenerStatus,
  type ReferenceGrant,
  type RouteGroupKind,
} from "./api.ts";
import type { FrontendValidation } from "./client_validation.ts";
import { condition, Reason, Type } from "./conditions.ts";
import { referenceAllowed } from "./references.ts";
import { containerPort, containerPortClashes } from "./ports.ts";
import { isDns1123Label, isDns1123Subdomain, isGatewayHostname, isPortNumber } from "./validate.ts";

export const HTTPROUTE_KIND: RouteGroupKind = { group: GROUP, kind: "HTTPRoute" };
export const GRPCROUTE_KIND: RouteGroupKind = { group: GROUP, kind: "GRPCRoute" };
export const TLSROUTE_KIND: RouteGroupKind = { group: GROUP, kind: "TLSRoute" };
/** The route kinds an HTTP or HTTPS listener serves. */
const HTTP_KINDS: readonly RouteGroupKind[] = [HTTPROUTE_KIND, GRPCROUTE_KIND];
/** The route kinds a TLS listener (Passthrough) serves. */
const TLS_KINDS: readonly RouteGroupKind[] = [TLSROUTE_KIND];

/** One listener as the model serves it. */
export interface ListenerView {
  index: number;
  listener: Listener;
  name: string;
  port: number;
  /** null: a protocol this program does not serve. TLS: TLSRoutes by SNI (`tlsMode`). */
  protocol: "HTTP" | "HTTPS" | "TLS" | null;
  /** TLS: Passthrough (routed undecrypted) or Terminate (decrypted with `certs`, then routed in clear). */
  tlsMode?: "Passthrough" | "Terminate";
  /** "" when the listener names none (any host). */
  hostname: string;
  /** The route kinds it admits (HTTPRoute on HTTP and HTTPS, TLSRoute on TLS, or none). */
  supportedKinds: RouteGroupKind[];
  accepted: boolean;
  resolved: boolean;
  conflicted: boolean;
  programmed: boolean;
  /** HTTPS and TLS Terminate: its usable certificates. */
  certs: Omit<TlsCert, "hosts">[];
  /** HTTPS: the check of its clients' certificates (spec.tls.frontend), when its port has one. */
  clientValidation?: ClientValidation;
  conditions: Condition[];
}

export interface ListenerContext {
  gatewayNamespace: string;
  generation: number;
  grants: readonly ReferenceGrant[];
  lookup: ClusterLookup;
  /** Secrets read (`namespace/name`). */
  secrets: Set<string>;
  /** Why the Gateway as a whole is refused (no listener is then programmed), or null. */
  gatewayRefused?: string | null;
  /** Whether HTTPS ports offer HTTP/2 (GRPCRoutes need it); default true. */
  http2?: boolean;
  /** spec.tls.frontend, read (lib/gateway/client_validation.ts); absent: none. */
  frontend?: FrontendValidation;
}

interface Verdict {
  accepted: [string, string] | null;
  resolved: [string, string][];
}

/** The listeners of a Gateway, in spec order, with their conditions. */
export function readListeners(listeners: readonly Listener[], ctx: ListenerContext): ListenerView[] {
  const views = listeners.map((l, i) => readOne(l, i, ctx));
  markConflicts(views);
  for (const v of views) v.conditions = conditionsOf(v, ctx.generation, ctx.gatewayRefused ?? null);
  return views;
}

/** Intermediate verdicts, kept until the conditions are built. */
const verdicts = new WeakMap<ListenerView, Verdict>();

function readOne(l: Listener, index: number, ctx: ListenerContext): ListenerView {
  const where = `spec.listeners[${index}]`;
  const verdict: Verdict = { accepted: null, resolved: [] };
  const protocol = l.protocol === "HTTP" || l.protocol === "HTTPS" || l.protocol === "TLS" ? l.protocol : null;
  const hostname = typeof l.hostname === "string" ? l.hostname : "";
  if (protocol === null) {
    verdict.accepted = [
      Reason.UnsupportedProtocol,
      `${where}.protocol ${show(l.protocol)} is not supported; this Gateway serves HTTP, HTTPS and TLS`,
    ];
  } else if (!isDns1123Subdomain(l.name)) {
    verdict.accepted = [Reason.UnsupportedValue, `${where}.name ${show(l.name)} is not a valid section name`];
  } else if (!isPortNumber(l.port)) {
    verdict.accepted = [Reason.PortUnavailable, `${where}.port ${show(l.port)} is not a port number (1-65535)`];
  } else if (hostname !== "" && !isGatewayHostname(hostname)) {
    verdict.accepted = [
      Reason.UnsupportedValue,
      `${where}.hostname ${show(l.hostname)} is not a hostname (RFC 1123, optionally *. in front)`,
    ];
  } else if (protocol === "HTTPS" && l.tls?.mode !== undefined && l.tls.mode !== "Terminate") {
    verdict.accepted = [
      Reason.UnsupportedValue,
      `${where}.tls.mode ${show(l.tls.mode)} is not supported for HTTPS; use Terminate`,
    ];
  }
  // TLS's mode defaults to Terminate (the API's default): the proxy decrypts with the listener's
  // certificates, then routes the plain stream by SNI as Passthrough routes the encrypted one.
  const tlsMode = protocol === "TLS" ? tlsModeOf(l, where, verdict) : undefined;
  const supportedKinds = protocol === null || (protocol === "TLS" && tlsMode === undefined)
    ? []
    : routeKinds(l, where, verdict, protocol, ctx.http2 ?? true);
  const terminates = protocol === "HTTPS" || tlsMode === "Terminate";
  const certs = terminates && verdict.accepted === null ? certificates(l, where, ctx, verdict) : [];
  const clientValidation = protocol === "HTTPS" && verdict.accepted === null
    ? frontendValidation(l.port, ctx, verdict)
    : null;
  const view: ListenerView = {
    index,
    listener: l,
    name: typeof l.name === "string" ? l.name : "",
    port: typeof l.port === "number" ? l.port : 0,
    protocol,
    ...(tlsMode ? { tlsMode } : {}),
    hostname,
    supportedKinds,
    accepted: verdict.accepted === null,
    resolved: verdict.resolved.length === 0,
    conflicted: false,
    programmed: false,
    certs,
    ...(clientValidation ? { clientValidation } : {}),
    conditions: [],
  };
  verdicts.set(view, verdict);
  return view;
}

/** A TLS listener's `tls.mode` (Terminate when absent), or undefined with an Accepted verdict for another value. */
function tlsModeOf(l: Listener, where: string, verdict: Verdict): "Passthrough" | "Terminate" | undefined {
  const mode = l.tls?.mode ?? "Terminate";
  if (mode === "Passthrough" || mode === "Terminate") return mode;
  verdict.accepted ??= [
    Reason.UnsupportedValue,
    `${where}.tls.mode ${show(mode)} is not supported for TLS; use Passthrough or Terminate`,
  ];
  return undefined;
}

/**
 * `allowedRoutes.kinds`: the supported ones (HTTPRoute and GRPCRoute on HTTP and HTTPS, GRPCRoute on
 * HTTPS only with HTTP/2, TLSRoute on TLS), and a ResolvedRefs verdict for the others.
 */
function routeKinds(
  l: Listener,
  where: string,
  verdict: Verdict,
  protocol: "HTTP" | "HTTPS" | "TLS",
  http2: boolean,
): RouteGroupKind[] {
  // GRPCRoute on HTTPS needs HTTP/2 through ALPN; a class with `http2: "false"` offers HTTP/1.1 only.
  const noGrpc = protocol === "HTTPS" && !http2;
  const supported = protocol === "TLS" ? TLS_KINDS : noGrpc ? [HTTPROUTE_KIND] : HTTP_KINDS;
  const kinds = l.allowedRoutes?.kinds;
  if (!kinds || kinds.length === 0) return supported.map((k) => ({ ...k }));
  const out: RouteGroupKind[] = [];
  const refused: string[] = [];
  for (const k of kinds) {
    const group = k.group ?? GROUP;
    if (noGrpc && group === GROUP && k.kind === GRPCROUTE_KIND.kind) {
      // The GRPCRoute specification: Accepted=False, UnsupportedProtocol, for such a listener.
      verdict.accepted ??= [
        Reason.UnsupportedProtocol,
        `${where}.allowedRoutes.kinds names GRPCRoute, but this class's HTTPS ports offer HTTP/1.1 only ` +
        `(http2: "false"); GRPCRoute needs HTTP/2 through ALPN`,
      ];
      continue;
    }
    const known = group === GROUP ? supported.find((x) => x.kind === k.kind) : undefined;
    if (known) {
      if (!out.some((x) => x.kind === known.kind)) out.push({ ...known });
    } else refused.push(`${group}/${k.kind}`);
  }
  if (refused.length > 0) {
    verdict.resolved.push([
      Reason.InvalidRouteKinds,
      `${where}.allowedRoutes.kinds: ${show(refused.join(", "))} not supported on a ${protocol} listener; only ` +
      `${supported.map((x) => `${GROUP}/${x.kind}`).join(" and ")} ${supported.length > 1 ? "are" : "is"}`,
    ]);
  }
  return out;
}

/** The usable certificates of an HTTPS or TLS Terminate listener; every unusable reference adds a ResolvedRefs verdict. */
function certificates(l: Listener, where: string, ctx: ListenerContext, verdict: Verdict): Omit<TlsCert, "hosts">[] {
  const refs = l.tls?.certificateRefs ?? [];
  if (refs.length === 0) {
    verdict.resolved.push([
      Reason.InvalidCertificateRef,
      `${where}.tls.certificateRefs is empty; ${l.protocol === "TLS" ? "TLS in Terminate mode" : "HTTPS"} needs one`,
    ]);
    return [];
  }
  const out: Omit<TlsCert, "hosts">[] = [];
  refs.forEach((ref, j) => {
    const at = `${where}.tls.certificateRefs[${j}]`;
    const group = ref.group ?? "";
    const kind = ref.kind ?? "Secret";
    const ns = ref.namespace ?? ctx.gatewayNamespace;
    if (group !== "" || kind !== "Secret") {
      verdict.resolved.push([
        Reason.InvalidCertificateRef,
        `${at} refers to ${show(`${group}/${kind}`)}; only core Secrets are supported`,
      ]);
      return;
    }
    if (!isDns1123Label(ns) || !isDns1123Subdomain(ref.name)) {
      verdict.resolved.push([Reason.InvalidCertificateRef, `${at}: ${show(`${ns}/${ref.name}`)} is not a Secret name`]);
      return;
    }
    const from = { group: GROUP, kind: "Gateway", namespace: ctx.gatewayNamespace };
    if (!referenceAllowed(ctx.grants, from, { group: "", kind: "Secret", namespace: ns, name: ref.name })) {
      verdict.resolved.push([
        Reason.RefNotPermitted,
        `${at}: Secret ${ns}/${ref.name} is in another namespace and no ReferenceGrant there allows Gateways of ` +
        `${ctx.gatewayNamespace} to use it`,
      ]);
      return;
    }
    ctx.secrets.add(`${ns}/${ref.name}`);
    const secret = ctx.lookup.secret(ns, ref.name);
    if (!secret) {
      verdict.resolved.push([Reason.InvalidCertificateRef, `${at}: Secret ${ns}/${ref.name} not found`]);
      return;
    }
    const summary = tlsSummaryOf(secret);
    if (!summary.valid) {
      verdict.resolved.push([
        Reason.InvalidCertificateRef,
        `${at}: Secret ${ns}/${ref.name} cannot serve TLS: ${summary.reason ?? "invalid"}`,
      ]);
      return;
    }
    if (!out.some((c) => c.namespace === ns && c.name === ref.name)) {
      out.push({ file: `${ns}_${ref.name}.pem`, namespace: ns, name: ref.name });
    }
  });
  return out;
}

/**
 * The client-certificate check of an HTTPS listener's port (perPort over default), its problems
 * added to the listener's verdict: a check that cannot be used leaves the listener unresolved, and
 * unaccepted when no CA reference is usable, so the port is never served without it.
 */
function frontendValidation(port: number, ctx: ListenerContext, verdict: Verdict): ClientValidation | null {
  const v = ctx.frontend?.forPort(port) ?? null;
  if (v === null) return null;
  verdict.resolved.push(...v.resolved);
  if (v.refused) verdict.accepted = v.refused;
  return v.validation;
}

/**
 * Listeners that cannot be told apart conflict, all of them (the spec forbids picking a winner):
 * several protocols on one port (ProtocolConflict), or one port and hostname twice
 * (HostnameConflict). Listeners refused on their own take no part.
 */
function markConflicts(views: ListenerView[]): void {
  const byPort = new Map<number, ListenerView[]>();
  for (const v of views) if (v.accepted) byPort.set(v.port, [...(byPort.get(v.port) ?? []), v]);
  // Two ports the proxy would bind as one container port (81 and 10081, lib/gateway/ports.ts): the
  // higher one's listeners are refused, the lower one's served.
  for (const [lower, higher] of containerPortClashes(byPort.keys())) {
    for (const v of byPort.get(higher)!) {
      conflict(
        v,
        Reason.PortUnavailable,
        `port ${higher} would take the proxy's container port ${containerPort(higher)}, which port ${lower} has`,
      );
    }
    byPort.delete(higher);
  }
  for (const [port, group] of byPort) {
    const protocols = new Set(group.map((v) => v.protocol));
    if (protocols.size > 1) {
      for (const v of group) {
        conflict(
          v,
          Reason.ProtocolConflict,
          `port ${port} is used with protocols ${[...protocols].sort().join(" and ")}`,
        );
      }
      continue;
    }
    const byHost = new Map<string, ListenerView[]>();
    for (const v of group) byHost.set(v.hostname, [...(byHost.get(v.hostname) ?? []), v]);
    for (const [host, same] of byHost) {
      if (same.length < 2) continue;
      const names = same.map((v) => v.name).join(", ");
      for (const v of same) {
        conflict(
          v,
          Reason.HostnameConflict,
          `listeners ${names} all use port ${port} and ${host ? `hostname ${host}` : "no hostname"}`,
        );
      }
    }
  }
}

function conflict(v: ListenerView, reason: string, message: string): void {
  v.conflicted = true;
  v.accepted = false;
  verdicts.get(v)!.accepted = [reason, message];
}

function conditionsOf(v: ListenerView, generation: number, gatewayRefused: string | null): Condition[] {
  const verdict = verdicts.get(v)!;
  v.programmed = v.accepted && v.resolved && !v.conflicted && gatewayRefused === null;
  const [conflictReason, conflictMessage] = v.conflicted ? verdict.accepted! : [Reason.NoConflicts, "no conflicts"];
  const resolvedReason = verdict.resolved.find(([r]) => r === Reason.RefNotPermitted)?.[0] ??
    verdict.resolved[0]?.[0] ?? Reason.ResolvedRefs;
  const why = [
    ...(gatewayRefused ? [`the Gateway is not accepted: ${gatewayRefused}`] : []),
    ...(verdict.accepted ? [verdict.accepted[1]] : []),
    ...verdict.resolved.map(([, m]) => m),
  ];
  return [
    condition(
      Type.Accepted,
      v.accepted,
      verdict.accepted?.[0] ?? Reason.Accepted,
      verdict.accepted?.[1] ?? "listener accepted",
      generation,
    ),
    condition(
      Type.ResolvedRefs,
      v.resolved,
      resolvedReason,
      v.resolved ? "all references resolved" : verdict.resolved.map(([, m]) => m).join("; "),
      generation,
    ),
    condition(Type.Conflicted, v.conflicted, conflictReason, conflictMessage, generation),
    condition(
      Type.Programmed,
      v.programmed,
      v.programmed ? Reason.Programmed : Reason.Invalid,
      v.programmed ? "listener programmed" : `not served: ${why.join("; ")}`,
      generation,
    ),
  ];
}

/** The status of one listener with its number of attached routes. */
export function listenerStatus(v: ListenerView, attachedRoutes: number): ListenerStatus {
  return {
    name: v.name,
    supportedKinds: v.supportedKinds.map((k) => ({ ...k })),
    attachedRoutes,
    conditions: v.conditions,
  };
}
