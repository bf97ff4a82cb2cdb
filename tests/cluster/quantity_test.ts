import assert from "node:assert/strict";
import { QUANTITY, quantityValue } from "../../lib/cluster/quantity.ts";

Deno.test("quantity: the accepted forms and their values; anything else is refused", () => {
  for (
    const [q, v] of [["2", 2], ["1.5", 1.5], ["500m", 0.5], ["1k", 1000], ["128Mi", 128 * 2 ** 20], ["1Gi", 2 ** 30]]
  ) {
    assert.ok(QUANTITY.test(q as string), String(q));
    assert.equal(quantityValue(q as string), v, String(q));
  }
  for (const q of ["", "-1", "1e3", "1.", ".5", "2 ", "1KiB", "0x10", "1234567890"]) {
    assert.equal(QUANTITY.test(q), false, q);
    assert.equal(quantityValue(q), null, q);
  }
});
