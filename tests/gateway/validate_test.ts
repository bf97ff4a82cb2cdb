/** The anchored patterns of Gateway API values that reach the proxy. */
import assert from "node:assert/strict";
import {
  durationMs,
  isCorsOrigin,
  isGatewayHostname,
  isHeaderName,
  isHeaderValue,
  isPreciseHostname,
  isQueryValue,
  valueRegexProblem,
} from "../../lib/gateway/validate.ts";

Deno.test("hostnames: RFC 1123 lower case with an optional leading *. label; no IPs, no inner wildcard", () => {
  for (const ok of ["example.com", "*.example.com", "a-b.c", "x"]) assert.equal(isGatewayHostname(ok), true, ok);
  for (const bad of ["Example.com", "*.*.com", "a.*.com", "1.2.3.4", "-a.com", "a..com", "a.com.", "a b", "a\nb", ""]) {
    assert.equal(isGatewayHostname(bad), false, bad);
  }
  assert.equal(isPreciseHostname("*.example.com"), false);
  assert.equal(isPreciseHostname("example.com"), true);
});

Deno.test("header names are RFC 7230 tokens without the characters the proxy's config reads specially", () => {
  for (const ok of ["Version", "x-forwarded-for", "X_Custom.1", "a!%&*+^`|~"]) assert.equal(isHeaderName(ok), true, ok);
  for (const bad of ["", ":method", "/invalid", "a b", "a:b", "a\r\nb", "é", "a#b", "a$b", "a'b", "a(b)", "a,b"]) {
    assert.equal(isHeaderName(bad), false, bad);
  }
});

Deno.test("header values: printable ASCII, inner blanks, no edge blanks, quotes, CR or LF", () => {
  for (const ok of ["one", "a b\tc", "x=1,y=2", "100%", "\\d"]) assert.equal(isHeaderValue(ok), true, ok);
  for (const bad of ["", " a", "a ", "it's", "a\r\nSet-Cookie: x", "a\nb", "\u0000", "é"]) {
    assert.equal(isHeaderValue(bad), false, JSON.stringify(bad));
  }
  assert.equal(isQueryValue("a b"), false);
  assert.equal(isQueryValue("v1"), true);
});

Deno.test("value regexes: the path regex subset without its leading /", () => {
  assert.equal(valueRegexProblem("^v[0-9]+$"), null);
  assert.equal(valueRegexProblem("one|two"), null);
  assert.match(valueRegexProblem("*a")!, /repeats nothing/);
  assert.match(valueRegexProblem("a b")!, /character " " at 1/);
  assert.match(valueRegexProblem("(a)\\1")!, /escape/);
  assert.match(valueRegexProblem("(?=a)")!, /\(\?/);
  assert.match(valueRegexProblem("it's")!, /not allowed/);
  assert.match(valueRegexProblem("")!, /empty/);
});

Deno.test("durations (GEP-2257): up to four parts of up to five digits, h m s ms in this order", () => {
  const cases: [string, number | null][] = [
    ["0s", 0],
    ["500ms", 500],
    ["1h", 3_600_000],
    ["1h30m", 5_400_000],
    ["1h2m3s4ms", 3_723_004],
    ["99999ms", 99_999],
    ["", null],
    ["1", null],
    ["1.5s", null],
    ["1s1h", null],
    ["1d", null],
    ["-1s", null],
    ["100000s", null],
    ["1 s", null],
  ];
  for (const [text, ms] of cases) assert.equal(durationMs(text), ms, text);
});

Deno.test("CORS origins: *, or scheme://host[:port] with an optional leading *. label; nothing else", () => {
  for (const ok of ["*", "https://www.foo.com", "https://*.bar.com", "http://a.test:8080", "HTTPS://A.COM"]) {
    assert.ok(isCorsOrigin(ok), ok);
  }
  for (
    const bad of ["", "**", "https://", "https://a.com/", "https://a.*.com", "a.com", "https://a.com'", "https://a b"]
  ) {
    assert.ok(!isCorsOrigin(bad), bad);
  }
});
