import assert from "node:assert/strict";
import { CONTROLLER_SEMI_SPACE_MB, PROXY_SEMI_SPACE_MB, v8Flags } from "../../lib/controller/v8_flags.ts";

Deno.test("v8 flags: the semi-space size and the heap limit; a limit that is not a whole number of MB ≥ 64 is refused", () => {
  assert.equal(v8Flags(768, CONTROLLER_SEMI_SPACE_MB), "--max-semi-space-size=8,--max-old-space-size=768");
  assert.equal(v8Flags(512, PROXY_SEMI_SPACE_MB), "--max-semi-space-size=2,--max-old-space-size=512");
  assert.throws(() => v8Flags(32, 2), /heap limit 32 MB: give a whole number of MB, at least 64/);
  assert.throws(() => v8Flags(100.5, 2), RangeError);
});
