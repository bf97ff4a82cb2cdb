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
/** Up to this many changed members are found by searching the member keys; more, through an index of them. */
const SEARCH_LIMIT = 4;

interface Kept {
  version: number;
  mark: number;
  keys: readonly string[];
  /** `keys` by position, made once more than SEARCH_LIMIT changed members are looked for (then kept with them). */
  at: Map<string, number> | null;
  objects: readonly KubeObject[];
}

export class MemberObjects {
  /** Per group: what `of` handed out last, with the membership version and the store's write mark then. */
  readonly #kept = new Map<GroupKey, Kept>();

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
    const members = objects !== null ? [...new Set(changed)].filter((k) => groups.groupOf(k) === group) : [];
    // A search of 100,000 keys per changed member: a few, not the hundreds written back by status writes.
    if (members.length > SEARCH_LIMIT && kept!.at === null) kept!.at = new Map(kept!.keys.map((k, i) => [k, i]));
    for (const k of members) {
      const i = kept!.at ? kept!.at.get(k) ?? -1 : kept!.keys.indexOf(k);
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
      else this.#kept.set(group, { version, mark, keys, at: null, objects: Object.freeze(found) });
      return found;
    }
    if (objects !== kept!.objects) Object.freeze(objects);
    this.#kept.set(group, { ...kept!, mark, objects });
    return objects;
  }
}
