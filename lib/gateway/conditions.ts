/**
 * @module gateway/conditions
 * Builders for the status conditions the model computes. Every condition carries the
 * `observedGeneration` of the object it describes (the Gateway's for Gateway and listener
 * conditions, the route's for its parent statuses); `lastTransitionTime` is the status writer's,
 * which keeps it while a condition's status stays the same.
 */
import type { Condition } from "./api.ts";

/** A condition of an object at `generation` (metadata.generation; 0 when the object has none). */
export function condition(
  type: string,
  ok: boolean,
  reason: string,
  message: string,
  generation: number,
): Condition {
  return { type, status: ok ? "True" : "False", reason, message, observedGeneration: generation };
}

/** What is wrong with part of a route: a condition's reason and message. */
interface RouteIssue {
  reason: string;
  message: string;
}

/** A route parent's ResolvedRefs: True, or False with the first issue's reason and every issue's message. */
export function resolvedRefsCondition(unresolved: readonly RouteIssue[], generation: number): Condition {
  return unresolved.length === 0
    ? condition(Type.ResolvedRefs, true, Reason.ResolvedRefs, "all backendRefs resolved", generation)
    : condition(
      Type.ResolvedRefs,
      false,
      unresolved[0].reason,
      unresolved.map((i) => i.message).join("; "),
      generation,
    );
}

/** A route parent's PartiallyInvalid (True: some of the route is not served as written), `prefix` before the messages. */
export function partiallyInvalidCondition(partial: readonly RouteIssue[], generation: number, prefix = ""): Condition {
  return condition(
    Type.PartiallyInvalid,
    true,
    Reason.UnsupportedValue,
    `${prefix}${partial.map((i) => i.message).join("; ")}`,
    generation,
  );
}

/** `metadata.generation` of an object, 0 when absent. */
export function generationOf(o: { metadata?: { generation?: number } }): number {
  const g = o.metadata?.generation;
  return typeof g === "number" && Number.isInteger(g) && g >= 0 ? g : 0;
}

/** Condition types and reasons of the Gateway API (v1) the model sets. */
export const Type = {
  Accepted: "Accepted",
  Programmed: "Programmed",
  ResolvedRefs: "ResolvedRefs",
  Conflicted: "Conflicted",
  PartiallyInvalid: "PartiallyInvalid",
} as const;

export const Reason = {
  // Gateway
  Accepted: "Accepted",
  ListenersNotValid: "ListenersNotValid",
  UnsupportedAddress: "UnsupportedAddress",
  InvalidParameters: "InvalidParameters",
  Programmed: "Programmed",
  Invalid: "Invalid",
  // Listener
  UnsupportedProtocol: "UnsupportedProtocol",
  UnsupportedValue: "UnsupportedValue",
  PortUnavailable: "PortUnavailable",
  ResolvedRefs: "ResolvedRefs",
  InvalidCertificateRef: "InvalidCertificateRef",
  InvalidRouteKinds: "InvalidRouteKinds",
  RefNotPermitted: "RefNotPermitted",
  InvalidCACertificateRef: "InvalidCACertificateRef",
  InvalidCACertificateKind: "InvalidCACertificateKind",
  NoValidCACertificate: "NoValidCACertificate",
  NoConflicts: "NoConflicts",
  HostnameConflict: "HostnameConflict",
  ProtocolConflict: "ProtocolConflict",
  // Route
  NotAllowedByListeners: "NotAllowedByListeners",
  NoMatchingListenerHostname: "NoMatchingListenerHostname",
  NoMatchingParent: "NoMatchingParent",
  IncompatibleFilters: "IncompatibleFilters",
  InvalidKind: "InvalidKind",
  BackendNotFound: "BackendNotFound",
} as const;
