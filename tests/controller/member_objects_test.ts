/**
 * A group's member objects kept between reconciles (lib/controller/member_objects.ts): after any
 * sequence of writes to the cache and moves between groups, what `of` hands out equals the members
 * looked up one by one, and it is the very same array while none of them changed.
 */
import assert from "node:assert/strict";
import { Store } from "../../lib/cluster/store.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { GroupIndex } from "../../lib/controller/groups.ts";
import { MemberObjects } from "../../lib/controller/member_objects.ts";

const ing = (name: string, v: number): KubeObject => ({
  metadata: { namespace: "ns", name, resourceVersion: String(v) },
});

function lookedUp(store: Store, groups: GroupIndex, group: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const k of groups.members(group)) {
    const o = store.get(k);
    if (o) out.push(o);
  }
  return out;
}

Deno.test("member objects: 600 random writes, moves and deletes later, every answer equals the members looked up", () => {
  const store = new Store();
  const groups = new GroupIndex();
  const members = new MemberObjects(store, groups);
  let seed = 5;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const names = Array.from({ length: 60 }, (_, i) => `i${i}`);
  let v = 0;
  for (const n of names) {
    store.set(ing(n, v++));
    groups.set(`ns/${n}`, rand(4) ? "class:a" : "class:b");
  }
  let patched = 0;
  let indexed = 0;
  for (let step = 0; step < 600; step++) {
    const what = rand(20);
    // mostly object writes (one to three, as a burst of events brings them); now and then a burst past the patch
    // limit, or one of 10–40 (found through the index of the member keys)
    const writes = what === 0 ? 300 : what === 4 ? 10 + rand(31) : 1 + rand(3);
    if (what === 1) groups.set(`ns/${names[rand(names.length)]}`, rand(2) ? "class:a" : "class:b");
    else if (what === 2) {
      const n = names[rand(names.length)];
      if (store.delete(`ns/${n}`)) groups.set(`ns/${n}`, null);
    } else if (what === 3) {
      // a member filed before its object is cached (and back)
      const n = names[rand(names.length)];
      groups.set(`ns/${n}`, "class:a");
    } else {
      for (let k = 0; k < writes; k++) {
        const n = names[rand(names.length)];
        store.set(ing(n, v++));
        if (groups.groupOf(`ns/${n}`) === null) groups.set(`ns/${n}`, "class:a");
      }
    }
    for (const group of ["class:a", "class:b"]) {
      const before = members.of(group);
      assert.ok(Object.isFrozen(before));
      assert.deepEqual([...before], lookedUp(store, groups, group), `step ${step} ${group}`);
      // Nothing written since: the very same array.
      assert.equal(members.of(group), before, `step ${step} ${group}: asked again`);
    }
    if (what >= 4 && writes < 4) patched++;
    if (what === 4) indexed++;
  }
  assert.ok(patched > 300);
  assert.ok(indexed > 15, `${indexed} bursts of 10–40`);
});

Deno.test("store: the keys written since a mark, until more were written than it remembers", () => {
  const store = new Store();
  const mark = store.writes;
  store.set(ing("a", 1));
  store.set(ing("b", 2));
  store.delete("ns/a");
  assert.deepEqual(store.changedSince(mark), ["ns/a", "ns/b", "ns/a"]);
  assert.deepEqual(store.changedSince(store.writes), []);
  for (let i = 0; i < 3_000; i++) store.set(ing("c", i));
  assert.equal(store.changedSince(mark), null);
  assert.equal(store.changedSince(store.writes + 1), null);
});
