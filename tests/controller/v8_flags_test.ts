import assert from "node:assert/strict";
import { v8Flags } from "../../lib/controller/v8_flags.ts";

Deno.test("v8 flags: small semi-spaces and the heap limit; a limit that is not a whole number of MB ≥ 64 is refused", () => {
  assert.equal(v8Flags(768), "--max-semi-space-size=2,--max-old-space-size=768");
  assert.throws(() => v8Flags(32), /heap limit 32 MB: give a whole number of MB, at least 64/);
  assert.throws(() => v8Flags(100.5), RangeError);
});
