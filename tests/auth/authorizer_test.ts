import assert from "node:assert/strict";
import { type AccessReviewer, accessReviewSpec, WebhookAuthorizer } from "../../lib/auth/authorizer.ts";
import type { RequestAttributes } from "../../lib/auth/types.ts";

const user = { name: "alice", groups: ["devs"], extra: { scopes: ["a"] } };
const get = (path: string): RequestAttributes => ({ user, verb: "get", path });

Deno.test("authorizer: allowed and denied are cached for their own TTLs; errors reject and are not cached", async () => {
  let calls = 0;
  let fail = false;
  const review: AccessReviewer = (a) => {
    calls++;
    if (fail) return Promise.reject(new Error("boom"));
    return Promise.resolve({ allowed: a.path === "/ok", reason: a.path === "/ok" ? "rbac" : "" });
  };
  const z = new WebhookAuthorizer(review, 60_000, 0);
  assert.equal((await z.authorize(get("/ok"))).allowed, true);
  assert.equal((await z.authorize(get("/ok"))).allowed, true);
  assert.equal(calls, 1, "allowed answer cached");
  assert.equal((await z.authorize(get("/no"))).allowed, false);
  assert.equal((await z.authorize(get("/no"))).allowed, false);
  assert.equal(calls, 3, "denied TTL 0: not cached");
  fail = true;
  await assert.rejects(z.authorize(get("/other")), /boom/);
  await assert.rejects(z.authorize(get("/other")), /boom/);
  assert.equal(calls, 5);
});

Deno.test("authorizer: system:masters needs no review", async () => {
  const z = new WebhookAuthorizer(() => Promise.reject(new Error("must not be called")), 1, 1);
  const d = await z.authorize({
    user: { name: "root", groups: ["system:masters"], extra: {} },
    verb: "delete",
    path: "/x",
  });
  assert.equal(d.allowed, true);
  assert.equal(z.reviewsSent, 0);
});

Deno.test("authorizer: the review spec carries non-resource or resource attributes", () => {
  assert.deepEqual(accessReviewSpec(get("/metrics")), {
    user: "alice",
    groups: ["devs"],
    extra: { scopes: ["a"] },
    nonResourceAttributes: { path: "/metrics", verb: "get" },
  });
  const spec = accessReviewSpec({
    user,
    verb: "list",
    path: "/api/v1/namespaces/ns/pods",
    resource: { apiGroup: "", apiVersion: "v1", resource: "pods", namespace: "ns" },
  });
  assert.deepEqual(spec.resourceAttributes, {
    verb: "list",
    group: "",
    version: "v1",
    resource: "pods",
    namespace: "ns",
  });
});
