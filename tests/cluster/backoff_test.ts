import assert from "node:assert/strict";
import { Backoff } from "../../lib/cluster/backoff.ts";

Deno.test("backoff doubles with jitter up to the cap and resets", () => {
  const b = new Backoff(100, 1000, () => 1);
  assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()], [100, 200, 400, 800, 1000]);
  b.reset();
  assert.equal(b.next(), 100);
  const low = new Backoff(100, 1000, () => 0);
  assert.equal(low.next(), 50);
});
