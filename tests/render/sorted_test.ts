/**
 * Sorted arrays changed in place (lib/render/sorted.ts): after random insertions and removals the
 * array equals one sorted from scratch, and a copy made to be changed is equal to its original.
 */
import assert from "node:assert/strict";
import { insertSorted, removeSorted, roomyCopy } from "../../lib/render/sorted.ts";

Deno.test("sorted arrays: 2,000 random insertions and removals keep the order a sort gives", () => {
  let seed = 3;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const cmp = (a: number, b: number) => a - b;
  let kept: number[] = [];
  const want: number[] = [];
  for (let step = 0; step < 2_000; step++) {
    if (step % 100 === 0) {
      // a copy to be changed, as a model delta makes one of the last model's array
      const copy = roomyCopy(kept);
      assert.deepEqual(copy, kept);
      kept = copy;
    }
    const v = rand(300);
    if (rand(3) === 0) {
      const i = want.indexOf(v);
      assert.equal(removeSorted(kept, v, cmp), i >= 0);
      if (i >= 0) want.splice(i, 1);
    } else {
      const at = insertSorted(kept, v, cmp);
      want.push(v);
      want.sort(cmp);
      assert.equal(kept[at], v);
      assert.ok(at + 1 === kept.length || kept[at + 1] > v, "inserted after its equals");
    }
    assert.deepEqual(kept, want, `step ${step}`);
  }
  assert.deepEqual(roomyCopy([]), []);
});
