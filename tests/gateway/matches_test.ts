/** HTTPRouteMatch (HTTPPathMatch, HTTPHeaderMatch, HTTPQueryParamMatch, HTTPMethod docs). */
import assert from "node:assert/strict";
import { readMatch, ruleMatches } from "../../lib/gateway/matches.ts";
import type { HTTPRouteMatch } from "../../lib/gateway/api.ts";

function ok(m: HTTPRouteMatch) {
  const r = readMatch(m, "spec.rules[0].matches[0]");
  if (!r.ok) throw new Error(r.message);
  return r.match;
}

function refused(m: HTTPRouteMatch): string {
  const r = readMatch(m, "spec.rules[0].matches[0]");
  assert.equal(r.ok, false, JSON.stringify(m));
  return (r as { message: string }).message;
}

Deno.test("no matches: one PathPrefix / match; no path: PathPrefix /", () => {
  assert.deepEqual(ruleMatches(undefined), [{ path: { type: "PathPrefix", value: "/" } }]);
  assert.deepEqual(ruleMatches([]), [{ path: { type: "PathPrefix", value: "/" } }]);
  assert.deepEqual(ok({}), { path: { type: "PathPrefix", value: "/" }, headers: [], queryParams: [], method: null });
  assert.deepEqual(ok({ path: { value: "/v2" } }).path, { type: "PathPrefix", value: "/v2" });
});

Deno.test("PathPrefix ignores a trailing /; Exact keeps it; escapes of unreserved characters are decoded", () => {
  assert.deepEqual(ok({ path: { type: "PathPrefix", value: "/abc/" } }).path, { type: "PathPrefix", value: "/abc" });
  assert.deepEqual(ok({ path: { type: "PathPrefix", value: "/" } }).path, { type: "PathPrefix", value: "/" });
  assert.deepEqual(ok({ path: { type: "Exact", value: "/two/" } }).path, { type: "Exact", value: "/two/" });
  assert.deepEqual(ok({ path: { type: "Exact", value: "/%61pi%2a" } }).path, { type: "Exact", value: "/api%2A" });
});

Deno.test("paths the proxy cannot match safely are refused with the field named", () => {
  for (const value of ["relative", "/a//b", "/a/../b", "/a%2Fb", "/a b", "/it's", "/a#b", "/a\nb"]) {
    assert.match(
      refused({ path: { type: "PathPrefix", value } }),
      /spec\.rules\[0\]\.matches\[0\]\.path\.value/,
      value,
    );
  }
  assert.match(refused({ path: { type: "Glob" as "Exact", value: "/a" } }), /path\.type "Glob" is not supported/);
});

Deno.test("RegularExpression paths: the safe PCRE/JavaScript subset", () => {
  assert.deepEqual(ok({ path: { type: "RegularExpression", value: "/v[0-9]+/.*" } }).path, {
    type: "RegularExpression",
    value: "/v[0-9]+/.*",
  });
  for (const value of ["/(a)\\1", "/a b", "/(?=x)", "/a{1,999}", "^/a", "/a'"]) {
    assert.match(refused({ path: { type: "RegularExpression", value } }), /regular expression/, value);
  }
});

Deno.test("headers: names lower-cased (case-insensitive), the first of equal names wins; Exact and RegularExpression", () => {
  const m = ok({
    headers: [
      { name: "Version", value: "two" },
      { name: "version", value: "three" },
      { name: "Color", type: "RegularExpression", value: "^(orange|red)$" },
    ],
  });
  assert.deepEqual(m.headers, [
    { name: "version", type: "Exact", value: "two" },
    { name: "color", type: "RegularExpression", value: "^(orange|red)$" },
  ]);
  assert.match(refused({ headers: [{ name: "Bad Name", value: "x" }] }), /headers\[0\]\.name/);
  assert.match(refused({ headers: [{ name: "x", value: "a\r\nb" }] }), /headers\[0\]/);
  assert.match(refused({ headers: [{ name: "x", type: "Prefix" as "Exact", value: "a" }] }), /type "Prefix"/);
});

Deno.test("query parameters: names case-sensitive, the first wins; method upper case from the enum", () => {
  const m = ok({
    queryParams: [{ name: "animal", value: "whale" }, { name: "Animal", value: "dolphin" }, {
      name: "animal",
      value: "x",
    }],
    method: "POST",
  });
  assert.deepEqual(m.queryParams.map((q) => [q.name, q.value]), [["animal", "whale"], ["Animal", "dolphin"]]);
  assert.equal(m.method, "POST");
  assert.match(refused({ method: "get" }), /method "get"/);
  assert.match(refused({ queryParams: [{ name: "a", value: "x y" }] }), /queryParams\[0\]/);
});
