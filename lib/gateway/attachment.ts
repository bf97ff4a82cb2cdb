/**
 * @module gateway/attachment
 * Which listeners a route's parentRef attaches it to: the listeners the reference selects
 * (`sectionName`, `port`), of those the ones whose `allowedRoutes` admit the route (its kind and its
 * namespace: Same, All, or a label Selector), and of those the ones whose hostname intersects the
 * route's. Each step that leaves nothing gives the reason the route is not accepted there:
 * NoMatchingParent, NotAllowedByListeners, NoMatchingListenerHostname. Attachment does not depend
 * on the listeners' own validity: a listener with unresolved references still counts its routes.
 */
import type { AllowedRoutes, Gateway, GRPCRoute, HTTPRoute, ParentReference, TLSRoute } from "./api.ts";
import { GROUP } from "./api.ts";
import { Reason } from "./conditions.ts";
import { effectiveHostnames } from "./hostnames.ts";
import type { ListenerView } from "./listeners.ts";

type LabelSelector = NonNullable<NonNullable<AllowedRoutes["namespaces"]>["selector"]>;

export interface Attached {
  view: ListenerView;
  /** The route's hostnames on this listener (hostnames.ts effectiveHostnames); never empty. */
  hostnames: string[];
}

export type Attachment =
  | { ok: true; listeners: Attached[] }
  | { ok: false; reason: string; message: string };

/** Whether a route's parentRef names this Gateway (group and kind default to the Gateway's, namespace to the route's). */
export function namesGateway(ref: ParentReference, routeNamespace: string, gateway: Gateway): boolean {
  return (ref.group ?? GROUP) === GROUP && (ref.kind ?? "Gateway") === "Gateway" &&
    ref.name === gateway.metadata?.name && (ref.namespace ?? routeNamespace) === gateway.metadata?.namespace;
}

/** Whether `labels` are selected by a Kubernetes label selector (a missing selector selects nothing). */
export function selectorMatches(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector || !labels) return false;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const values = e.values ?? [];
    const ok = e.operator === "In"
      ? has && values.includes(labels[e.key])
      : e.operator === "NotIn"
      ? !has || !values.includes(labels[e.key])
      : e.operator === "Exists"
      ? has
      : e.operator === "DoesNotExist"
      ? !has
      : false;
    if (!ok) return false;
  }
  return true;
}

/** The route kinds a listener may admit. */
export type RouteKind = "HTTPRoute" | "GRPCRoute" | "TLSRoute";

/** Whether a listener admits routes of `kind` (HTTPRoute unless said) from `namespace`. */
export function admits(
  view: ListenerView,
  namespace: string,
  gatewayNamespace: string,
  namespaceLabels: (ns: string) => Readonly<Record<string, string>> | undefined,
  kind: RouteKind = "HTTPRoute",
): boolean {
  if (!view.supportedKinds.some((k) => k.kind === kind && (k.group ?? GROUP) === GROUP)) return false;
  const from = view.listener.allowedRoutes?.namespaces?.from ?? "Same";
  if (from === "All") return true;
  if (from === "Same") return namespace === gatewayNamespace;
  if (from === "Selector") {
    return selectorMatches(view.listener.allowedRoutes?.namespaces?.selector, namespaceLabels(namespace));
  }
  return false;
}

/**
 * The listeners `ref` attaches `route` (of `kind`, HTTPRoute unless said) to. `hostnames` are the
 * route's valid hostnames (empty: it names none).
 */
export function attach(
  route: HTTPRoute | GRPCRoute | TLSRoute,
  ref: ParentReference,
  views: readonly ListenerView[],
  gatewayNamespace: string,
  namespaceLabels: (ns: string) => Readonly<Record<string, string>> | undefined,
  hostnames: readonly string[],
  kind: RouteKind = "HTTPRoute",
): Attachment {
  const ns = route.metadata?.namespace ?? "";
  const selected = views.filter((v) =>
    (ref.sectionName === undefined || ref.sectionName === "" || v.name === ref.sectionName) &&
    (ref.port === undefined || v.port === ref.port)
  );
  const target = [
    ...(ref.sectionName ? [`sectionName ${JSON.stringify(ref.sectionName)}`] : []),
    ...(ref.port !== undefined ? [`port ${ref.port}`] : []),
  ].join(" and ");
  if (selected.length === 0) {
    return { ok: false, reason: Reason.NoMatchingParent, message: `the Gateway has no listener with ${target}` };
  }
  const admitting = selected.filter((v) => admits(v, ns, gatewayNamespace, namespaceLabels, kind));
  if (admitting.length === 0) {
    return {
      ok: false,
      reason: Reason.NotAllowedByListeners,
      message: `no listener${target ? ` with ${target}` : ""} allows ${kind}s from namespace ${ns}`,
    };
  }
  const listeners: Attached[] = [];
  for (const view of admitting) {
    const names = effectiveHostnames(view.hostname, hostnames);
    if (names.length > 0) listeners.push({ view, hostnames: names });
  }
  if (listeners.length === 0) {
    return {
      ok: false,
      reason: Reason.NoMatchingListenerHostname,
      message: `no hostname of spec.hostnames (${hostnames.join(", ")}) matches a listener's hostname (${
        admitting.map((v) => v.hostname || "any").join(", ")
      })`,
    };
  }
  return { ok: true, listeners };
}
