/**
 * @module controller/status_pass
 * The address each member of a published group shows: its proxy's public Service's, once that
 * Service is the controller's own (lib/controller/status.ts); none for a member that owns none of
 * the hosts it names; a member moving here gets it when its handover allows
 * (lib/controller/handover.ts). The writes run in a lane of their own, a few at a time
 * (lib/controller/status_lane.ts), written by the member's route source.
 *
 * The pass of a group looks at every member only when the wanted status changed (or in a new
 * term, or after a validation left members out); otherwise at the members that changed or failed
 * to get their status since, and those handed over: at 10,000 members, the whole pass cost more
 * than the change itself.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { oneLine } from "../common/errors.ts";
import type { ClusterCaches } from "./caches.ts";
import type { GroupKey } from "./groups.ts";
import type { Handovers } from "./handover.ts";
import type { Leadership } from "./leader.ts";
import type { ProxyTarget } from "./objects.ts";
import { ownedBy } from "./ownership.ts";
import type { RouteSource, RouteSources } from "./route_source.ts";
import type { ControllerSettings } from "./settings.ts";
import { type LoadBalancerIngress, loadBalancerOf } from "./status.ts";
import { StatusLane } from "./status_lane.ts";

/**
 * Status writes in flight at once. Not more: after a first publish of 10,000 Ingresses their writes
 * compete for the API server's CPU with the proxies reading their configuration; with 16 in flight
 * the scale bench's first service took 14.6 s (10.9–14.1 s in earlier runs), with 4 12.2 s, with 2
 * 10.1–12.8 s (five runs, three of them ≤ 11.0 s), and the statuses were written about as soon.
 */
const STATUS_WRITES_IN_FLIGHT = 2;

/** What the status pass of a group saw last. */
interface StatusSeen {
  /** The status (JSON) of the last whole pass, and the unserved members. */
  wanted: string;
  want: LoadBalancerIngress[] | null;
  changed: Set<string>;
  /** Members that own none of the hosts they name (Model.unserved): their status lists no address. */
  unserved: ReadonlySet<string>;
}

interface StatusDeps {
  settings: ControllerSettings;
  caches: ClusterCaches;
  sources: RouteSources;
  handovers: Handovers;
  leadership: Leadership;
  queue(group: GroupKey): void;
  /** Looks at `group` again after its back-off; returns the delay. */
  retry(group: GroupKey): number;
  /** Nothing is pending or running any more. */
  onIdle(): void;
  stopped(): boolean;
}

export class StatusPass {
  readonly #seen = new Map<GroupKey, StatusSeen>();
  /** Status writes, a few at a time, outside the group's reconcile. */
  readonly lane: StatusLane;

  constructor(readonly deps: StatusDeps) {
    this.lane = new StatusLane({
      limit: STATUS_WRITES_IN_FLIGHT,
      onIdle: () => deps.onIdle(),
      onFailure: (key, err) => {
        const group = deps.sources.groupOf(key);
        if (deps.stopped() || !deps.leadership.leading || group === null) return;
        this.#seen.get(group)?.changed.add(key);
        // The group's next look writes it again (with its back-off).
        const retryInMs = Math.round(deps.retry(group));
        log.warn("cannot write the status of an ingress; will retry", { ingress: key, error: oneLine(err), retryInMs });
      },
    });
  }

  /** From now on, the members of `group` that change are noted for its pass. */
  begin(group: GroupKey): void {
    if (!this.#seen.has(group)) {
      this.#seen.set(group, { wanted: "", want: null, changed: new Set(), unserved: new Set() });
    }
  }

  /** The member `key` of `group` changed: its next pass looks at it. */
  changed(group: GroupKey, key: string): void {
    this.#seen.get(group)?.changed.add(key);
  }

  /** Someone changed only the status of `member`: when it is not what its group shows, the group writes it back. */
  changedByOthers(source: RouteSource, member: KubeObject): void {
    const key = source.keyOf(member);
    const group = source.groupOf(key);
    const seen = group === null ? undefined : this.#seen.get(group);
    if (!seen?.want || source.shows(member, seen.unserved.has(key) ? [] : seen.want)) return;
    seen.changed.add(key);
    this.deps.queue(group!);
  }

  /**
   * The pass of `group` after it published `target` serving `members` (`proxyService`: its public
   * Service as written or found; `unserved`: members owning none of their hosts; `narrowed`: some
   * members were left out). Only members whose status differs, or that are moving here, get a write.
   */
  pass(
    group: GroupKey,
    source: RouteSource,
    target: ProxyTarget,
    proxyService: KubeObject | undefined,
    members: readonly KubeObject[],
    unserved: readonly string[],
    narrowed: boolean,
  ): void {
    const handovers = this.deps.handovers;
    const want = this.#wanted(group, target, proxyService);
    for (const m of this.#candidates(group, source, want, members, narrowed, unserved)) {
      const key = source.keyOf(m);
      if (source.groupOf(key) !== group) continue;
      if (unserved.length > 0 && unserved.includes(key)) {
        // Every host it names belongs to another namespace: it shows no address (an Event says why).
        if (!source.shows(m, [])) this.lane.add(key, () => this.#clearOwn(group, source, key));
        continue;
      }
      if (!handovers.moving(key) && (want.length === 0 || source.shows(m, want))) {
        handovers.serve(key, group);
        continue;
      }
      this.lane.add(key, () => {
        // Written later: the member as it is then, if this group still serves it.
        const now = source.get(key);
        if (!now || source.groupOf(key) !== group) return Promise.resolve();
        return handovers.settle(key, group, () => this.#update(group, source, target, now, proxyService));
      });
    }
  }

  /**
   * The members whose status the pass of `group` looks at: all of them, or (same wanted status as
   * the last whole pass) those changed since and those being handed over. (Leaving members belong
   * to another group now: the pass skips them either way.)
   */
  #candidates(
    group: GroupKey,
    source: RouteSource,
    want: LoadBalancerIngress[],
    members: readonly KubeObject[],
    narrowed: boolean,
    unserved: readonly string[],
  ): Iterable<KubeObject> {
    const wanted = `${JSON.stringify(want)}\0${unserved.join(",")}`;
    const seen = this.#seen.get(group);
    if (!seen || narrowed || seen.wanted !== wanted) {
      log.v(2)?.info("status pass over every member", {
        group,
        members: members.length,
        // the addresses only: `wanted` also names every unserved member (100,000 keys in a large class)
        why: !seen ? "first" : narrowed ? "narrowed" : "the wanted status changed",
        want: JSON.stringify(want),
      });
      // A validation that left members out makes the next pass whole again. The changes noted
      // stay noted: this pass looks at the objects as they were when the reconcile began.
      if (seen) {
        seen.wanted = narrowed ? "" : wanted;
        seen.want = want;
        seen.unserved = new Set(unserved);
      }
      return members;
    }
    const keys = seen.changed;
    seen.changed = new Set();
    for (const k of this.deps.handovers.involving(group)) keys.add(k);
    const out: KubeObject[] = [];
    for (const k of keys) {
      const m = source.get(k);
      if (m && source.groupOf(k) === group) out.push(m);
    }
    return out;
  }

  /** The address the members of `group` should show: its public Service's, once it is ours and has one. */
  #wanted(group: GroupKey, target: ProxyTarget, service: KubeObject | undefined): LoadBalancerIngress[] {
    const cached = this.deps.caches.services.store.get(`${target.namespace}/${target.name}`);
    // Only a Service of ours gives the member its address (the cache may show a foreign one by now).
    const own = cached ? (ownedBy(cached, group, this.deps.settings.controllerId) ? cached : undefined) : service;
    return loadBalancerOf(own);
  }

  async #update(
    group: GroupKey,
    source: RouteSource,
    target: ProxyTarget,
    member: KubeObject,
    service: KubeObject | undefined,
  ): Promise<void> {
    const want = this.#wanted(group, target, service);
    if (want.length === 0 || source.shows(member, want)) return;
    await source.writeStatus(member, want);
  }

  /** Clears the status of a member of `group` that owns none of its hosts (if it still is one). */
  async #clearOwn(group: GroupKey, source: RouteSource, key: string): Promise<void> {
    const now = source.get(key);
    if (!now || source.groupOf(key) !== group || source.shows(now, [])) return;
    await source.writeStatus(now, null);
  }

  /** Clears the status of a member no group of this controller serves any more (if it still exists). */
  clear(source: RouteSource, key: string): void {
    const m = source.get(key);
    if (!m || source.shows(m, [])) return;
    source.writeStatus(m, null).catch((err) =>
      log.warn("cannot clear the status of an ingress no longer served", {
        ingress: key,
        error: err instanceof Error ? err.message : String(err),
      })
    );
  }

  /** The group is gone. */
  forget(group: GroupKey): void {
    this.#seen.delete(group);
  }

  /** A lost leadership term: the next passes look at every member. */
  forgetTerm(): void {
    this.#seen.clear();
  }
}
