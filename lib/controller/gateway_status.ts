/**
 * @module controller/gateway_status
 * The status the Gateway API asks of a controller, written by the leader only (through the
 * leadership-gated writer): a GatewayClass's `Accepted` and `supportedFeatures`, a Gateway's
 * addresses, conditions and listeners, the parent statuses of each HTTPRoute, GRPCRoute and TLSRoute attached to it,
 * and the ancestor statuses of each BackendTLSPolicy on a Service its routes reach (the Gateway is the ancestor).
 * A route may name Gateways of several controllers, or several of ours: only the entries of this
 * controller for the Gateway at hand are replaced, every other entry is kept, and the write is
 * an update bound to the route's resourceVersion (retried on a conflict), so two Gateways never
 * drop each other's entries. Conditions keep their `lastTransitionTime` while their status stays.
 * Nothing is written when the status already says the same.
 */
import { isStatus } from "../cluster/client.ts";
import { objectPath, resources } from "../cluster/resources.ts";
import type { Writer } from "./leader.ts";
import { writes } from "./metrics.ts";
import type {
  Condition,
  GatewayAddress,
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  ParentReference,
  RouteParentStatus,
  TLSRoute,
} from "../gateway/api.ts";
import type { GatewayStatusOut } from "../gateway/model_types.ts";
import type { BackendTLSPolicy } from "../gateway/backend_tls.ts";
import { GATEWAY_CONTROLLER_NAME } from "../gateway/model_types.ts";
import { gatewayFeatures } from "../gateway/features.ts";
import type { ClusterClient } from "../cluster/client.ts";

/** How often an update that meets a newer object is tried again (each time on the object as it is now). */
const CONFLICT_RETRIES = 5;

/** `conditions` with the `lastTransitionTime` of the same condition in `old` when its status did not change. */
export function keepTransitionTimes(
  conditions: readonly Condition[],
  old: readonly Condition[] | undefined,
  now: string,
): Condition[] {
  return conditions.map((c) => {
    const before = old?.find((o) => o.type === c.type);
    return {
      ...c,
      lastTransitionTime: before && before.status === c.status && before.lastTransitionTime
        ? before.lastTransitionTime
        : now,
    };
  });
}

/** A status as compared: without the transition times. */
export function comparable(v: unknown): string {
  return JSON.stringify(v, (k, x) => (k === "lastTransitionTime" ? undefined : x));
}

/** Whether `ref` (as written in `route`) names the Gateway `namespace/name`. */
export function namesGateway(ref: ParentReference, routeNamespace: string, gatewayKey: string): boolean {
  const group = ref.group ?? "gateway.networking.k8s.io";
  const kind = ref.kind ?? "Gateway";
  return group === "gateway.networking.k8s.io" && kind === "Gateway" &&
    `${ref.namespace ?? routeNamespace}/${ref.name}` === gatewayKey;
}

/**
 * The route's `status.parents` with this controller's entries for `gatewayKey` replaced by `mine`
 * (none: removed); the other entries are kept in their order.
 */
export function mergedParents(
  route: HTTPRoute | GRPCRoute | TLSRoute,
  gatewayKey: string,
  mine: readonly RouteParentStatus[],
  now: string,
): RouteParentStatus[] {
  const ns = route.metadata.namespace!;
  const current = route.status?.parents ?? [];
  const ours = (p: RouteParentStatus) =>
    p.controllerName === GATEWAY_CONTROLLER_NAME && namesGateway(p.parentRef, ns, gatewayKey);
  const kept = current.filter((p) => !ours(p));
  const refKey = (r: ParentReference) => comparable({ ...r, namespace: r.namespace ?? ns });
  const added = mine.map((p) => {
    const before = current.find((c) => ours(c) && refKey(c.parentRef) === refKey(p.parentRef));
    return { ...p, conditions: keepTransitionTimes(p.conditions, before?.conditions, now) };
  });
  return [...kept, ...added];
}

/** A policy's status for one ancestor (the Gateway API's PolicyAncestorStatus). */
export interface PolicyAncestorStatus {
  ancestorRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

/** The API's limit of `status.ancestors` entries. */
const MAX_ANCESTORS = 16;

/**
 * The policy's `status.ancestors` with this controller's entry for the Gateway `gatewayKey`
 * replaced by `mine` (null: removed); other entries are kept, and ours is left out rather than
 * overflow the API's 16.
 */
export function mergedAncestors(
  policy: BackendTLSPolicy,
  gatewayKey: string,
  mine: PolicyAncestorStatus | null,
  now: string,
): PolicyAncestorStatus[] {
  const current = (policy.status as { ancestors?: PolicyAncestorStatus[] } | undefined)?.ancestors ?? [];
  const ns = policy.metadata.namespace!;
  const ours = (a: PolicyAncestorStatus) =>
    a.controllerName === GATEWAY_CONTROLLER_NAME && namesGateway(a.ancestorRef, ns, gatewayKey);
  const kept = current.filter((a) => !ours(a));
  if (!mine || kept.length >= MAX_ANCESTORS) return kept;
  const before = current.find(ours);
  return [...kept, { ...mine, conditions: keepTransitionTimes(mine.conditions, before?.conditions, now) }];
}

export class GatewayStatusWriter {
  /** `features`: what the class claims (lib/gateway/features.ts gatewayFeatures: they depend on the proxies' place). */
  constructor(
    readonly client: ClusterClient,
    readonly writer: Writer,
    readonly counts: { writes: number },
    readonly features: readonly string[] = gatewayFeatures(false),
  ) {}

  /** Our GatewayClass: accepted, with the features this controller passes (lib/gateway/features.ts). */
  async writeClass(cls: GatewayClass): Promise<void> {
    const now = new Date().toISOString();
    const conditions = keepTransitionTimes(
      [{
        type: "Accepted",
        status: "True",
        reason: "Accepted",
        message: `handled by ${GATEWAY_CONTROLLER_NAME}`,
        observedGeneration: cls.metadata.generation ?? 0,
      }],
      cls.status?.conditions,
      now,
    );
    const status = { ...cls.status, conditions, supportedFeatures: this.features.map((name) => ({ name })) };
    if (comparable(status) === comparable(cls.status ?? {})) return;
    await this.#update(resources.gatewayClasses, null, cls.metadata.name, (current) => ({
      ...current,
      status: {
        ...current.status,
        conditions: keepTransitionTimes(conditions, current.status?.conditions, now),
        supportedFeatures: status.supportedFeatures,
      },
    }));
  }

  /** The Gateway's addresses, conditions and listeners. */
  async writeGateway(
    namespace: string,
    name: string,
    cached: {
      status?: {
        conditions?: Condition[];
        listeners?: { name: string; conditions: Condition[] }[];
        addresses?: GatewayAddress[];
      };
    } | undefined,
    out: GatewayStatusOut,
    addresses: GatewayAddress[],
  ): Promise<void> {
    const now = new Date().toISOString();
    const build = (old: typeof cached) => ({
      addresses,
      conditions: keepTransitionTimes(out.conditions, old?.status?.conditions, now),
      listeners: out.listeners.map((l) => ({
        ...l,
        conditions: keepTransitionTimes(
          l.conditions,
          old?.status?.listeners?.find((o) => o.name === l.name)?.conditions,
          now,
        ),
      })),
    });
    if (cached && comparable(build(cached)) === comparable(cached.status ?? {})) return;
    await this.#update(resources.gateways, namespace, name, (current) => ({ ...current, status: build(current) }));
  }

  /** The route's parent statuses for `gatewayKey` (none: this Gateway's entries go); `r`: its kind (HTTPRoute unless said). */
  async writeRoute(
    route: HTTPRoute | GRPCRoute | TLSRoute,
    gatewayKey: string,
    mine: readonly RouteParentStatus[],
    r: typeof resources.httpRoutes | typeof resources.grpcRoutes | typeof resources.tlsRoutes = resources.httpRoutes,
  ): Promise<void> {
    const now = new Date().toISOString();
    const parents = mergedParents(route, gatewayKey, mine, now);
    if (comparable(parents) === comparable(route.status?.parents ?? [])) return;
    await this.#update(r, route.metadata.namespace!, route.metadata.name, (current) => ({
      ...current,
      status: { ...current.status, parents: mergedParents(current as HTTPRoute, gatewayKey, mine, now) },
    }));
  }

  /** The BackendTLSPolicy's ancestor status for the Gateway `gatewayKey` (null: this Gateway's entry goes). */
  async writePolicy(policy: BackendTLSPolicy, gatewayKey: string, mine: PolicyAncestorStatus | null): Promise<void> {
    const now = new Date().toISOString();
    const ancestors = mergedAncestors(policy, gatewayKey, mine, now);
    const current = (policy.status as { ancestors?: unknown[] } | undefined)?.ancestors ?? [];
    if (comparable(ancestors) === comparable(current)) return;
    await this.#update(resources.backendTlsPolicies, policy.metadata.namespace!, policy.metadata.name, (cur) => ({
      ...cur,
      status: { ...cur.status, ancestors: mergedAncestors(cur as BackendTLSPolicy, gatewayKey, mine, now) },
    }));
  }

  /**
   * Reads the object, changes its status with `change`, and updates `/status` bound to the
   * resourceVersion read; a conflict (someone wrote meanwhile) reads it again. Gone: nothing to do.
   */
  async #update(
    r: typeof resources.gateways | typeof resources.tlsRoutes | typeof resources.backendTlsPolicies,
    namespace: string | null,
    name: string,
    change: (current: any) => any,
  ): Promise<void> {
    const path = objectPath(r, namespace, name);
    for (let attempt = 0;; attempt++) {
      let current: any;
      try {
        current = await this.client.request("GET", path);
      } catch (err) {
        if (isStatus(err, 404)) return;
        throw err;
      }
      const next = change(current);
      if (comparable(next.status ?? {}) === comparable(current.status ?? {})) return;
      try {
        await this.writer.request("PUT", `${path}/status`, { body: next });
        this.counts.writes++;
        writes.inc({ kind: r.kind, op: "status" });
        return;
      } catch (err) {
        if (isStatus(err, 404)) return;
        if (!isStatus(err, 409) || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }
}
