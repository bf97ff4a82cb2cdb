import assert from "node:assert/strict";
import { TokenAuthenticator, type TokenReviewer } from "../../lib/auth/token.ts";

const alice = { name: "alice", groups: ["devs"], extra: {} };

Deno.test("token: answers are cached, both authenticated and not; concurrent look-ups share one review", async () => {
  let calls = 0;
  const review: TokenReviewer = (t) => {
    calls++;
    return Promise.resolve(t === "good" ? { authenticated: true, user: alice } : { authenticated: false });
  };
  const a = new TokenAuthenticator(review, 60_000);
  const [x, y] = await Promise.all([a.authenticate("good"), a.authenticate("good")]);
  assert.deepEqual(x, alice);
  assert.deepEqual(y, alice);
  assert.equal(calls, 1);
  assert.equal(await a.authenticate("bad"), null);
  assert.equal(await a.authenticate("bad"), null);
  assert.equal(calls, 2);
  assert.equal(a.reviewsSent, 2);
});

Deno.test("token: errors are not cached", async () => {
  let calls = 0;
  const review: TokenReviewer = () => {
    calls++;
    return calls === 1
      ? Promise.reject(new Error("apiserver down"))
      : Promise.resolve({ authenticated: true, user: alice });
  };
  const a = new TokenAuthenticator(review, 60_000);
  await assert.rejects(a.authenticate("t"), /apiserver down/);
  assert.deepEqual(await a.authenticate("t"), alice);
  assert.equal(calls, 2);
});

Deno.test("token: a TTL of 0 disables the cache; entries expire after the TTL", async () => {
  let calls = 0;
  const review: TokenReviewer = () => (calls++, Promise.resolve({ authenticated: true, user: alice }));
  const none = new TokenAuthenticator(review, 0);
  await none.authenticate("t");
  await none.authenticate("t");
  assert.equal(calls, 2);
  let now = 1_000;
  const short = new TokenAuthenticator(review, 30, { now: () => now });
  await short.authenticate("t");
  assert.equal(calls, 3);
  now += 30;
  await short.authenticate("t");
  assert.equal(calls, 3, "cached for the whole TTL");
  now += 1;
  await short.authenticate("t");
  assert.equal(calls, 4, "looked up again once the TTL has passed");
});
