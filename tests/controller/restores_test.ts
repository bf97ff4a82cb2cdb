import assert from "node:assert/strict";
import { QUIET_MS, RestorePacer } from "../../lib/controller/restores.ts";

Deno.test("restores: the first is immediate; each one soon after waits twice as long, up to 5 minutes", () => {
  let now = 1_000_000;
  const pacer = new RestorePacer(() => now, () => 1);
  assert.equal(pacer.wait("roles/a/x"), 0);
  assert.equal(pacer.restored("roles/a/x"), 1);
  const waits: number[] = [];
  for (let i = 0; i < 12; i++) {
    const w = pacer.wait("roles/a/x");
    waits.push(w);
    now += w;
    assert.equal(pacer.wait("roles/a/x"), 0);
    pacer.restored("roles/a/x");
  }
  assert.deepEqual(waits.slice(0, 4), [1_000, 2_000, 4_000, 8_000]);
  assert.equal(Math.max(...waits), 5 * 60_000);
  assert.equal(pacer.wait("roles/b/x"), 0, "each object on its own");
});

Deno.test("restores: an object left alone for the quiet period starts over", () => {
  let now = 0;
  const pacer = new RestorePacer(() => now, () => 1);
  pacer.restored("cm/a/x");
  now += 1_000;
  assert.equal(pacer.restored("cm/a/x"), 2);
  now += QUIET_MS + 1;
  assert.equal(pacer.wait("cm/a/x"), 0);
  assert.equal(pacer.restored("cm/a/x"), 1, "counted from one again");
  assert.equal(pacer.wait("cm/a/x"), 1_000);
});
