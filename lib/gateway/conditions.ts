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
