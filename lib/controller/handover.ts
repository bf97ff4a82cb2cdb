/**
 * @module controller/handover
 * Moves of members between groups without a gap (docs/proxy-groups.md). A member filed in another
 * group stays in its old group's configuration until the new group's Deployment has an available
 * replica, has had a grace period to load the configuration serving it and its status shows the
 * new address (lib/controller/status_pass.ts); the old group drops it another grace period later
 * (clients may still use the old address). Which group's published configuration serves each
 * member is kept here; a member no group handles any more loses its status once no group serves it.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { GroupIndex, type GroupKey } from "./groups.ts";
import { proxyOf } from "./objects.ts";
import { deploymentAvailable } from "./proxy_pod.ts";
import type { RouteSource } from "./route_source.ts";
import type { ControllerSettings } from "./settings.ts";

/** A move of a member from the group `from` (still serving it) to the group `to`. */
interface Handover {
  from: GroupKey;
  to: GroupKey;
  /** When `to` first published a configuration serving the member; null: not yet. */
  includedAt: number | null;
  /** When the member's status was moved to `to`'s address; null: not yet. */
  movedAt: number | null;
}

interface HandoverDeps {
  settings: ControllerSettings;
  /** The proxy Deployment at `namespace/name`, as cached (null: none). */
  deployment(namespace: string, name: string): KubeObject | null;
  queue(group: GroupKey): void;
  /** Looks at `group` again in `ms`. */
  later(group: GroupKey, ms: number): void;
  /** No group serves the member `key` of `source` any more and none handles it: its status goes. */
  lost(source: RouteSource, key: string): void;
}

export class Handovers {
  /** Member key → its move, while one runs. */
  readonly #moves = new Map<string, Handover>();
  /** Member key → the group whose published configuration serves it (last publish). */
  readonly #served = new GroupIndex();
  /** Per group: the versions of both indexes after the last release of exactly its members. */
  readonly #released = new Map<GroupKey, string>();

  constructor(readonly deps: HandoverDeps) {}

  /** Whether the member `key` is moving between groups. */
  moving(key: string): boolean {
    return this.#moves.has(key);
  }

  /** The members moving to or from `group`. */
  *involving(group: GroupKey): Iterable<string> {
    for (const [k, h] of this.#moves) if (h.to === group || h.from === group) yield k;
  }

  /** The groups whose published configuration serves some member. */
  servedGroups(): GroupKey[] {
    return this.#served.groups();
  }

  /** `group`'s published configuration serves the member `key`. */
  serve(key: string, group: GroupKey): void {
    this.#served.set(key, group);
  }

  /**
   * The member `key` was filed in `group` (null: none), in `before` until now: a move starts (or
   * ends). Returns the groups to look at: the one before, the new one, the one serving it and the
   * one a move it was on started from.
   */
  filed(key: string, before: GroupKey | null, group: GroupKey | null): Set<GroupKey> {
    const serving = this.#served.groupOf(key);
    const h = this.#moves.get(key);
    if (group === null || group === serving) this.#moves.delete(key);
    else if (serving !== null && h?.to !== group) {
      this.#moves.set(key, { from: serving, to: group, includedAt: null, movedAt: null });
    }
    const out = new Set<GroupKey>();
    for (const g of [before, group, serving, h?.from]) if (g != null) out.add(g);
    return out;
  }

  /**
   * The members `group` serves now: its members, and those moving away whose new group is not
   * serving them yet (until the grace period after their status moved has passed).
   */
  serving(group: GroupKey, source: RouteSource): { members: readonly KubeObject[]; leaving: KubeObject[] } {
    let members = source.memberObjects?.(group);
    if (members === undefined) {
      const found: KubeObject[] = [];
      // forEach, not for-of: this runs once per change over up to 10,000 members, often before V8
      // optimizes it, and an unoptimized for-of allocates a result object per member.
      source.members(group).forEach((k) => {
        const m = source.get(k);
        if (m) found.push(m);
      });
      members = found;
    }
    const leaving: KubeObject[] = [];
    const grace = this.deps.settings.handoverGraceMs;
    // Without moves, nobody is leaving (and 10,000 members need not be walked for it).
    for (const k of this.#moves.size > 0 ? this.#served.members(group) : []) {
      const h = this.#moves.get(k);
      const m = source.get(k);
      if (!h || h.from !== group || !m) continue;
      const left = h.movedAt === null ? null : performance.now() - h.movedAt;
      if (left !== null && left >= grace) continue;
      if (left !== null) this.deps.later(group, grace - left);
      leaving.push(m);
    }
    return { members, leaving };
  }

  /**
   * `group` published a configuration serving exactly `members`; `partial`: not all it had to serve
   * (some left out, or some leaving). The served set is compared with the last one only when
   * membership may have changed: while the group serves exactly all its members, no move runs and
   * neither index moved, it is the same set.
   */
  published(group: GroupKey, source: RouteSource, members: readonly KubeObject[], partial: boolean): void {
    const versions = () => `${source.version(group)}/${this.#served.version(group)}`;
    const whole = !partial && this.#moves.size === 0;
    if (whole && this.#released.get(group) === versions()) return;
    this.release(group, source, new Set(members.map((m) => source.keyOf(m))));
    if (whole && this.#served.members(group).size === members.length) this.#released.set(group, versions());
    else this.#released.delete(group);
  }

  /**
   * After `group` published a configuration serving exactly `served`: the members it served
   * before and no longer does are handed over (or, if no group handles them, lose their status).
   */
  release(group: GroupKey, source: RouteSource, served: ReadonlySet<string>): void {
    for (const k of [...this.#served.members(group)]) {
      if (served.has(k)) continue;
      this.#served.set(k, null);
      const h = this.#moves.get(k);
      if (h?.from === group) {
        this.#moves.delete(k);
        this.deps.queue(h.to);
      }
      if (source.groupOf(k) === null) this.deps.lost(source, k);
    }
    for (const k of served) if (this.#served.groupOf(k) === null) this.#served.set(k, group);
  }

  /**
   * Settles the status of the member `key` of `group` with `show`, which writes `group`'s address.
   * A member moving here keeps its old address until this group's Deployment has an available
   * replica and has had the grace period to load the configuration serving it; the old group then
   * keeps serving it for another grace period before it drops it.
   */
  async settle(key: string, group: GroupKey, show: () => Promise<void>): Promise<void> {
    const h = this.#moves.get(key);
    if (h && h.to === group) {
      const now = performance.now();
      h.includedAt ??= now;
      if (h.movedAt !== null) return;
      if (!this.#ready(group)) return; // the Deployment's availability change brings us back
      const wait = this.deps.settings.handoverGraceMs - (now - h.includedAt);
      if (wait > 0) return this.deps.later(group, wait);
      await show();
      h.movedAt = performance.now();
      this.deps.queue(h.from); // it drops the member after the grace period
      return;
    }
    this.#served.set(key, group);
    await show();
  }

  /** Whether the proxy Deployment of `group` has an available replica (per the cache). */
  #ready(group: GroupKey): boolean {
    const p = proxyOf(group, this.deps.settings);
    return deploymentAvailable(this.deps.deployment(p.namespace, p.name));
  }

  /** The group is gone. */
  forget(group: GroupKey): void {
    this.#released.delete(group);
  }

  /** A lost leadership term: the next release compares the served sets again. */
  forgetTerm(): void {
    this.#released.clear();
  }
}
