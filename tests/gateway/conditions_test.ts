/** Condition builders: every condition names the generation of the object it describes. */
import assert from "node:assert/strict";
import { condition, generationOf } from "../../lib/gateway/conditions.ts";

Deno.test("a condition carries status, reason, message and observedGeneration, nothing the writer owns", () => {
  assert.deepEqual(condition("Accepted", true, "Accepted", "ok", 4), {
    type: "Accepted",
    status: "True",
    reason: "Accepted",
    message: "ok",
    observedGeneration: 4,
  });
  assert.equal(condition("Programmed", false, "Invalid", "no", 1).status, "False");
});

Deno.test("generationOf: metadata.generation, 0 when absent or not a whole number", () => {
  assert.equal(generationOf({ metadata: { generation: 12 } }), 12);
  assert.equal(generationOf({ metadata: {} }), 0);
  assert.equal(generationOf({}), 0);
  assert.equal(generationOf({ metadata: { generation: -1 } }), 0);
  assert.equal(generationOf({ metadata: { generation: 1.5 } }), 0);
});
