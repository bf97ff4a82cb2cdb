/** One HTTPRoute rule read: its rule backend, and what makes it answer 500 or be dropped. */
import assert from "node:assert/strict";
import type { Backend, Problem } from "../../lib/render/model_types.ts";
import type { HTTPRouteRule } from "../../lib/gateway/api.ts";
import { readRule, ruleBackendName } from "../../lib/gateway/rules.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { backends, NS } from "./fixtures.ts";

function read(rule: HTTPRouteRule) {
  const world = backends("web");
  return readRule(rule, 2, `${NS}/r`, {
    routeNamespace: NS,
    grants: [],
    lookup: lookupFromLists(world),
    allowLoopbackEndpoints: false,
    problems: [] as Problem[],
    backends: new Map<string, Backend>(),
    services: new Set<string>(),
  });
}

Deno.test("a plain rule: its matches, its targets, its name from the route and the index", () => {
  const r = read({
    matches: [{ path: { value: "/a" } }, { method: "POST" }],
    backendRefs: [{ name: "web", port: 8080 }],
  });
  assert.equal(r.backend.name, ruleBackendName(`${NS}/r`, 2));
  assert.deepEqual(r.matches!.map((m) => [m.path.value, m.method]), [["/a", null], ["/", "POST"]]);
  assert.deepEqual(r.backend.targets, [{ backend: `be_${NS}_web_8080`, weight: 1 }]);
  assert.deepEqual([r.unsupported, r.unresolved], [[], []]);
});

Deno.test("an unusable match drops the rule; an unusable filter keeps its matches and answers 500", () => {
  const dropped = read({
    matches: [{ path: { value: "/ok" } }, { method: "BREW" }],
    backendRefs: [{ name: "web", port: 8080 }],
  });
  assert.equal(dropped.matches, null);
  assert.match(dropped.unsupported[0].message, /spec\.rules\[2\]\.matches\[1\]\.method "BREW".*rule 2 dropped/);
  const failing = read({
    filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "a", value: "1" }] } }, {
      type: "RequestMirror",
    }],
    backendRefs: [{ name: "web", port: 8080 }],
  });
  assert.equal(failing.matches!.length, 1);
  assert.deepEqual([failing.backend.targets, failing.backend.invalidWeight, failing.backend.requestHeaders], [
    [],
    0,
    null,
  ]);
  assert.equal(failing.unsupported[0].reason, "UnsupportedValue");
});

Deno.test("a redirect with backendRefs, or a backendRef filter not served, answer 500 with the reason", () => {
  const both = read({
    filters: [{ type: "RequestRedirect", requestRedirect: {} }],
    backendRefs: [{ name: "web", port: 8080 }],
  });
  assert.deepEqual([both.backend.redirect, both.backend.targets], [null, []]);
  assert.equal(both.unsupported[0].reason, "IncompatibleFilters");
  const refFilters = read({
    backendRefs: [{ name: "web", port: 8080, filters: [{ type: "URLRewrite", urlRewrite: {} }] }],
  });
  assert.deepEqual(refFilters.backend.targets, []);
  assert.match(refFilters.unsupported[0].message, /backendRefs\[0\]\.filters\[0\]\.type "URLRewrite" is not supported/);
});

Deno.test("backendRef header filters stay with their target; refs without filters to one Service share one", () => {
  const set = (
    v: string,
  ) => [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "Backend", value: v }] } }];
  const r = read({
    backendRefs: [
      { name: "web", port: 8080, weight: 10, filters: set("one") },
      { name: "web", port: 8080, weight: 10, filters: set("two") },
      { name: "web", port: 8080, weight: 5 },
      { name: "web", port: 8080, weight: 5 },
    ],
  });
  assert.deepEqual(r.backend.targets, [
    {
      backend: `be_${NS}_web_8080`,
      weight: 10,
      requestHeaders: { set: [{ name: "Backend", value: "one" }], add: [], remove: [] },
      responseHeaders: null,
    },
    {
      backend: `be_${NS}_web_8080`,
      weight: 10,
      requestHeaders: { set: [{ name: "Backend", value: "two" }], add: [], remove: [] },
      responseHeaders: null,
    },
    { backend: `be_${NS}_web_8080`, weight: 10 },
  ]);
  assert.deepEqual(r.unsupported, []);
});

Deno.test("timeouts: the smaller of request and backendRequest in ms; 0s is off; bad durations answer 500", () => {
  const t = (timeouts: Record<string, string>) => read({ backendRefs: [{ name: "web", port: 8080 }], timeouts });
  assert.equal(read({ backendRefs: [{ name: "web", port: 8080 }] }).backend.timeoutMs, null);
  assert.equal(t({ request: "500ms" }).backend.timeoutMs, 500);
  assert.equal(t({ backendRequest: "1h30m" }).backend.timeoutMs, 5_400_000);
  assert.equal(t({ request: "10s", backendRequest: "2s" }).backend.timeoutMs, 2000);
  assert.equal(t({ request: "0s", backendRequest: "2s" }).backend.timeoutMs, 2000);
  assert.equal(t({ request: "0s" }).backend.timeoutMs, 0);
  for (const bad of ["1.5s", "10", "1d", "-1s", "1s1h", "100000s"]) {
    const r = t({ request: bad });
    assert.deepEqual(r.backend.targets, [], bad);
    assert.match(r.unsupported[0].message, /spec\.rules\[2\]\.timeouts\.request ".*" is not a duration/, bad);
  }
  const long = t({ request: "99999h" });
  assert.match(long.unsupported[0].message, /longer than the proxy allows/);
});
