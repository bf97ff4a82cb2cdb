/** Gateway API hostname semantics (Listener.hostname and HTTPRouteSpec.hostnames docs). */
import assert from "node:assert/strict";
import { compareHostnames, effectiveHostnames, hostMatches, intersect } from "../../lib/gateway/hostnames.ts";

Deno.test("a wildcard matches one or more labels in front of its suffix, never the suffix itself", () => {
  assert.equal(hostMatches("*.example.com", "test.example.com"), true);
  assert.equal(hostMatches("*.example.com", "foo.test.example.com"), true);
  assert.equal(hostMatches("*.example.com", "example.com"), false);
  assert.equal(hostMatches("*.example.com", "test.example.net"), false);
  assert.equal(hostMatches("*.example.com", "testexample.com"), false);
  assert.equal(hostMatches("a.example.com", "a.example.com"), true);
  assert.equal(hostMatches("a.example.com", "b.example.com"), false);
  assert.equal(hostMatches("", "anything.example"), true);
});

Deno.test("a listener test.example.com admits routes naming it or *.example.com; the intersection is the exact name", () => {
  assert.equal(intersect("test.example.com", "test.example.com"), "test.example.com");
  assert.equal(intersect("test.example.com", "*.example.com"), "test.example.com");
  assert.equal(intersect("*.example.com", "test.example.com"), "test.example.com");
  assert.equal(intersect("test.example.com", "other.example.com"), null);
  // *.specific.com on a listener very.specific.com (conformance HTTPRouteHostnameIntersection)
  assert.equal(intersect("very.specific.com", "*.specific.com"), "very.specific.com");
});

Deno.test("a listener *.example.com admits *.example.com, test.example.com and foo.test.example.com, not example.com", () => {
  assert.equal(intersect("*.example.com", "*.example.com"), "*.example.com");
  assert.equal(intersect("*.example.com", "foo.test.example.com"), "foo.test.example.com");
  assert.equal(intersect("*.example.com", "example.com"), null);
  assert.equal(intersect("*.example.com", "test.example.net"), null);
});

Deno.test("two wildcards intersect in the more specific one, or not at all", () => {
  assert.equal(intersect("*.example.com", "*.a.example.com"), "*.a.example.com");
  assert.equal(intersect("*.a.example.com", "*.example.com"), "*.a.example.com");
  assert.equal(intersect("*.example.com", "*.xexample.com"), null);
  assert.equal(intersect("*.a.example.com", "*.b.example.com"), null);
});

Deno.test("effective hostnames: the route's hostnames that intersect, once each; none named: the listener's or any", () => {
  assert.deepEqual(effectiveHostnames("", []), [""]);
  assert.deepEqual(effectiveHostnames("*.bar.com", []), ["*.bar.com"]);
  assert.deepEqual(effectiveHostnames("", ["a.com", "*.b.com"]), ["a.com", "*.b.com"]);
  assert.deepEqual(
    effectiveHostnames("*.wildcard.io", ["non.matching.com", "wildcard.io", "foo.wildcard.io", "foo.bar.wildcard.io"]),
    ["foo.wildcard.io", "foo.bar.wildcard.io"],
  );
  assert.deepEqual(effectiveHostnames("a.example.com", ["*.example.com", "a.example.com"]), ["a.example.com"]);
  assert.deepEqual(effectiveHostnames("very.specific.com", ["specific.but.wrong.com", "wildcard.io"]), []);
});

Deno.test("hostname precedence: exact before wildcard, more characters first, any host last", () => {
  const sorted = ["", "*.com", "*.foo.example.com", "bar.com", "*.example.com", "foo.example.com"].sort(
    compareHostnames,
  );
  assert.deepEqual(sorted, ["foo.example.com", "bar.com", "*.foo.example.com", "*.example.com", "*.com", ""]);
});
