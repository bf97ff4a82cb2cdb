import assert from "node:assert/strict";
import { WorkQueue } from "../../lib/controller/queue.ts";

Deno.test("queue: a key added many times is handed out once", async () => {
  const q = new WorkQueue();
  for (let i = 0; i < 5; i++) q.add("a");
  q.add("b");
  assert.equal(q.length, 2);
  assert.equal(await q.take(), "a");
  assert.equal(await q.take(), "b");
  assert.equal(q.length, 0);
  q.done("a");
  q.done("b");
  q.shutdown();
});

Deno.test("queue: a key added while in work is handled again after done, never twice at once", async () => {
  const q = new WorkQueue();
  q.add("a");
  const k = await q.take();
  assert.equal(k, "a");
  q.add("a");
  q.add("a");
  assert.equal(q.length, 0, "not ready while in work");
  let got: string | undefined;
  const next = q.take().then((x) => (got = x));
  await Promise.resolve();
  assert.equal(got, undefined);
  q.done("a");
  await next;
  assert.equal(got, "a");
  q.done("a");
  q.shutdown();
});

Deno.test("queue: a key added while quiet is handed out at once; a burst after it becomes one more item", async () => {
  const q = new WorkQueue({ coalesceMs: 30 });
  // A single change waits for nothing.
  const first = q.take();
  q.add("a");
  assert.equal(await first, "a");
  // The burst that follows while "a" is in work: one more item once it is done.
  for (let i = 0; i < 50; i++) q.add("a");
  assert.equal(q.length, 0, "nothing is queued while the key is in work");
  q.done("a");
  assert.equal(q.length, 1, "the burst is one item");
  assert.equal(await q.take(), "a");
  q.done("a");
  // Done within the window: the next burst waits for the window's end, then is one item.
  let taken: string | undefined;
  const take = q.take().then((k) => (taken = k));
  for (let i = 0; i < 50; i++) q.add("a");
  await Promise.resolve();
  assert.equal(taken, undefined, "not handed out before the window ends");
  assert.equal(q.length, 1, "the burst is one waiting item");
  await take; // the window ends (a timer): the worker gets the key once
  assert.equal(taken, "a");
  q.done("a");
  assert.equal(q.length, 0, "nothing was queued again by the burst");
  assert.equal(q.processing, 0);
  q.shutdown();
});

Deno.test("queue: coalesceMs 0 hands a key to a waiting worker at once", async () => {
  const q = new WorkQueue();
  let taken: string | undefined;
  const take = q.take().then((k) => (taken = k));
  q.add("a");
  await take;
  assert.equal(taken, "a");
  q.done("a");
  q.shutdown();
});

Deno.test("queue: retry brings the key back after a backoff; shutdown releases takers", async () => {
  const q = new WorkQueue({ retryInitialMs: 10, retryMaxMs: 20 });
  q.add("a");
  const k = (await q.take())!;
  const delay = q.retry(k);
  assert.ok(delay >= 5 && delay <= 10);
  q.done(k);
  assert.equal(await q.take(), "a");
  q.done("a");
  const waiting = q.take();
  q.shutdown();
  assert.equal(await waiting, undefined);
  q.add("b");
  assert.equal(await q.take(), undefined);
});

Deno.test("queue: a paused queue (standby) keeps its keys and hands them out on resume", async () => {
  const q = new WorkQueue();
  q.pause();
  q.add("a");
  q.add("b");
  q.add("a");
  let got: string | undefined;
  const waiting = q.take().then((x) => (got = x));
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(got, undefined, "nothing is handed out while paused");
  assert.equal(q.length, 2);
  q.resume();
  await waiting;
  assert.equal(got, "a");
  assert.equal(await q.take(), "b");
  q.done("a");
  q.done("b");
  q.pause();
  const last = q.take();
  q.shutdown();
  assert.equal(await last, undefined, "shutdown releases a paused taker");
});
