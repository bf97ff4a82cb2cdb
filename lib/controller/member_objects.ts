/**
 * @module controller/member_objects
 * The cached objects of a group's members, kept between reconciles: while the group's membership is
 * the same, only the objects written to the cache since the last call are looked up again (the
 * store's write log, lib/cluster/store.ts). A one-Ingress change of a class of 100,000 looked up all
 * 100,000 keys (~17 ms of every change).
 */
import type { KubeObject } from "../cluster/resources.ts";
import type { Store } from "../cluster/store.ts";
import type { GroupIndex, GroupKey } from "./groups.ts";

/** Above this many keys written since the last call, every member is looked up again. */
const PATCH_LIMIT = 256;

export class MemberObjects {
  /** Per group: what `of` handed out last, with the membership version and the store's write mark then. */
  readonly #kept = new Map<
    GroupKey,
    { version: number; mark: number; keys: readonly string[]; objects: readonly KubeObject[] }
  >();

  constructor(readonly store: Store, readonly groups: GroupIndex) {}

  /**
   * The objects of `group`'s members in `groups.members(group)` order, those without a cached
   * object left out. Frozen, and the very same array while none of them changed.
   */
  of(group: GroupKey): readonly KubeObject[] {
    const { store, groups } = this;
    const version = groups.version(group);
    const mark = store.writes;
    const kept = this.#kept.get(group);
    const changed = kept?.version === version ? store.changedSince(kept.mark) : null;
    let objects = kept && changed !== null && changed.length <= PATCH_LIMIT ? kept.objects : null;
    for (const k of objects !== null ? new Set(changed) : []) {
      if (groups.groupOf(k) !== group) continue;
      const i = kept!.keys.indexOf(k);
      const o = store.get(k);
      // A member without its object before, or gone now: looked up in full.
      if (i < 0 || !o) {
        objects = null;
        break;
      }
      if (objects![i] === o) continue;
      if (objects === kept!.objects) objects = objects.slice();
      (objects as KubeObject[])[i] = o;
    }
    if (objects === null) {
      const keys: string[] = [];
      const found: KubeObject[] = [];
      // forEach, not for-of: this runs once per change, often before V8 optimizes it, and an
      // unoptimized for-of allocates a result object per member.
      groups.members(group).forEach((k) => {
        const o = store.get(k);
        if (!o) return;
        keys.push(k);
        found.push(o);
      });
      if (keys.length === 0) this.#kept.delete(group);
      else this.#kept.set(group, { version, mark, keys, objects: Object.freeze(found) });
      return found;
    }
    if (objects !== kept!.objects) Object.freeze(objects);
    this.#kept.set(group, { version, mark, keys: kept!.keys, objects });
    return objects;
  }
}
