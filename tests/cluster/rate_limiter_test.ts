import assert from "node:assert/strict";
import { TokenBucket } from "../../lib/cluster/rate_limiter.ts";

Deno.test("token bucket: burst is free, then one token per 1/qps seconds", () => {
  let now = 0;
  const b = new TokenBucket({ qps: 10, burst: 3, now: () => now });
  assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
  assert.equal(Math.round(b.reserve()), 100);
  assert.equal(Math.round(b.reserve()), 200);
  now = 1000; // one second later: 10 tokens earned, 2 owed, capped at burst
  assert.equal(b.reserve(), 0);
  assert.equal(b.reserve(), 0);
  assert.equal(b.reserve(), 0);
  assert.ok(b.reserve() > 0);
});

Deno.test("token bucket: qps <= 0 means unlimited", () => {
  const b = new TokenBucket({ qps: 0, burst: 1 });
  for (let i = 0; i < 1000; i++) assert.equal(b.reserve(), 0);
});

Deno.test("token bucket: waiters are spaced by 1/qps", () => {
  let now = 0;
  const b = new TokenBucket({ qps: 2, burst: 1, now: () => now });
  const waits = Array.from({ length: 5 }, () => Math.round(b.reserve()));
  assert.deepEqual(waits, [0, 500, 1000, 1500, 2000]);
  now = 10_000;
  assert.equal(b.reserve(), 0);
});
