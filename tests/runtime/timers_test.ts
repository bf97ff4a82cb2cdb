import assert from "node:assert/strict";
import { pause, sleep } from "../../lib/runtime/timers.ts";

// The sanitizers (--sanitize-ops) fail these tests if an aborted wait left its timer pending.
Deno.test("sleep rejects with the signal's reason when aborted and leaves no timer", async () => {
  const ac = new AbortController();
  const p = sleep(60_000, ac.signal);
  ac.abort(new Error("stop"));
  await assert.rejects(p, /^Error: stop$/);
});

Deno.test("sleep rejects at once on an already aborted signal", async () => {
  await assert.rejects(sleep(60_000, AbortSignal.abort(new RangeError("gone"))), RangeError);
});

Deno.test("sleep resolves after the time when not aborted", async () => {
  const ac = new AbortController();
  assert.equal(await sleep(1, ac.signal), undefined);
});

Deno.test("pause returns early, without rejecting, when aborted", async () => {
  const ac = new AbortController();
  const p = pause(60_000, ac.signal);
  ac.abort(new Error("stop"));
  assert.equal(await p, undefined);
});
