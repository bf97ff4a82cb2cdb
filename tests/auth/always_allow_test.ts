import assert from "node:assert/strict";
import { alwaysAllowMatcher } from "../../lib/auth/always_allow.ts";
import { UsageError } from "../../lib/common/errors.ts";

Deno.test("always_allow: exact paths and trailing-* prefixes", () => {
  const m = alwaysAllowMatcher(["/healthz", "/debug/*"]);
  assert.ok(m("/healthz"));
  assert.ok(!m("/healthz/ping"));
  assert.ok(m("/debug/pprof/"));
  assert.ok(m("/debug/"));
  assert.ok(!m("/debug"));
  assert.ok(!m("/metrics"));
  assert.ok(!alwaysAllowMatcher([])("/healthz"));
});

Deno.test("always_allow: a * anywhere but the end is a usage error", () => {
  assert.throws(() => alwaysAllowMatcher(["/a/*/b"]), UsageError);
  assert.throws(() => alwaysAllowMatcher(["*/x"]), UsageError);
});
