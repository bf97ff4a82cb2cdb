/**
 * The typed parsers of the annotation table: the values users write are accepted (and typed), and
 * hostile ones are refused with a reason: white space and line breaks where a single token is
 * expected, quotes, backslashes, `${VAR}` (HAProxy's environment expansion), `%[` (its log-format),
 * and values far longer than any real one. Every key's default and example must parse.
 */
import assert from "node:assert/strict";
import { ANNOTATIONS } from "../../lib/annotations/table.ts";
import * as v from "../../lib/annotations/values.ts";
import type { ValueKind } from "../../lib/annotations/values.ts";

const good = <T>(k: ValueKind<T>, raw: string): T => {
  const p = k.parse(raw);
  assert.ok(p.ok, `${JSON.stringify(raw)} should parse: ${p.ok ? "" : p.reason}`);
  return p.value;
};
const refused = (k: ValueKind, raw: string) => {
  const p = k.parse(raw);
  assert.ok(!p.ok, `${JSON.stringify(raw)} should be refused by ${k.syntax}`);
  assert.match(p.reason, /^(is|has|names) /);
};

/** Values no kind may accept as they are. */
const HOSTILE = [
  "",
  " ",
  "30s\n    http-request deny\n#",
  "a'b",
  'a"b',
  "a\\b",
  "${HOME}",
  "%[env(HOME)]",
  "x\r\ny",
  "\u0000",
  "é",
  "x".repeat(5000),
];

Deno.test("every key's default and example parse with its own parser", () => {
  for (const a of ANNOTATIONS) {
    if (a.default !== null) assert.ok(a.value.parse(a.default).ok, `default of ${a.key}`);
    assert.ok(a.value.parse(a.example).ok, `example of ${a.key}: ${JSON.stringify(a.example)}`);
  }
});

Deno.test("hostile values are refused by every parser of the table", () => {
  const kinds = new Set(ANNOTATIONS.map((a) => a.value));
  for (const k of kinds) {
    for (const raw of HOSTILE) refused(k, raw);
  }
});

Deno.test("booleans, enums, integers", () => {
  assert.equal(good(v.bool, "true"), true);
  assert.equal(good(v.bool, "false"), false);
  for (const raw of ["True", "yes", "1", " true", "true\n"]) refused(v.bool, raw);
  assert.equal(good(v.oneOf(["h1", "h2"]), "h2"), "h2");
  refused(v.oneOf(["h1", "h2"]), "H2");
  assert.equal(good(v.int(0, 100), "100"), 100);
  for (const raw of ["101", "-1", "1e2", "010", "1.5", "0x10"]) refused(v.int(0, 100), raw);
  assert.equal(good(v.redirectCode, "308"), "308");
  refused(v.redirectCode, "300");
});

Deno.test("durations are HAProxy times bounded by its largest timer; the legacy timeout keeps its syntax", () => {
  for (const raw of ["500ms", "30s", "5m", "1h", "24d"]) assert.equal(good(v.duration, raw), raw);
  for (const raw of ["30", "0s", "25d", "1.5s", "30 s", "3000000000ms", "1w"]) refused(v.duration, raw);
  assert.equal(good(v.legacyTimeout, "999999m"), "999999m", "overflow is the xray's to refuse, as before");
  refused(v.legacyTimeout, "1h");
});

Deno.test("sizes, status codes", () => {
  assert.equal(good(v.size, "8m"), 8 * 1024 ** 2);
  assert.equal(good(v.size, "1G"), 1024 ** 3);
  assert.equal(good(v.size, "0"), 0);
  for (const raw of ["10 MB", "8mb", "-1", "1.5m", "99999999999999g"]) refused(v.size, raw);
  assert.deepEqual(good(v.errorCodes, "503, 404,404"), [404, 503]);
  for (const raw of ["200", "404,", "404;503", "600"]) refused(v.errorCodes, raw);
});

Deno.test("CIDR lists: IPv4 and IPv6, white space around items, no host names, zones or bad prefixes", () => {
  const list = good(v.cidrList, "10.0.0.0/8, 192.168.1.1,2001:DB8::/32 ,::1");
  assert.deepEqual(list.map((c) => `${c.family} ${c.address}/${c.bits}`), [
    "4 10.0.0.0/8",
    "4 192.168.1.1/32",
    "6 2001:db8::/32",
    "6 ::1/128",
  ]);
  for (
    const raw of [
      "10.0.0.0/33",
      "2001:db8::/129",
      "10.0.0.0/08",
      "example.com",
      "fe80::1%eth0",
      "10.0.0.0/8,,10.1.0.0/16",
      "10.0.0.0/8\n10.1.0.0/16",
      "256.0.0.1",
      "1.2.3",
    ]
  ) refused(v.cidrList, raw);
});

Deno.test("header names, values and lines", () => {
  assert.equal(good(v.headerName, "X-Canary"), "X-Canary");
  for (const raw of ["X Canary", "X-Canary:", "-x", "X-Cañary"]) refused(v.headerName, raw);
  assert.equal(good(v.headerValue, "max-age=31536000; includeSubDomains"), "max-age=31536000; includeSubDomains");
  for (const raw of [" lead", "trail ", "50%", "$x", "a\tb"]) refused(v.headerValue, raw);
  assert.deepEqual(good(v.headerLines, "X-Frame-Options: DENY\r\nX-Env:prod\n"), [
    { name: "X-Frame-Options", value: "DENY" },
    { name: "X-Env", value: "prod" },
  ]);
  for (const raw of ["X-A", "X-A: ok\n\nX-B: ok", "X-A: %[src]", "X-A: ${HOME}"]) refused(v.headerLines, raw);
  assert.deepEqual(good(v.headerNames, "Content-Type, Authorization"), ["Content-Type", "Authorization"]);
  assert.deepEqual(good(v.headerNamesOrStar, "*, X-Id"), ["*", "X-Id"]);
  assert.deepEqual(good(v.methods, "get, POST"), ["GET", "POST"]);
});

Deno.test("URLs, paths, rewrite targets, names", () => {
  assert.equal(good(v.url, "https://www.example.com/a%20b?x=1&y=2"), "https://www.example.com/a%20b?x=1&y=2");
  assert.equal(good(v.url, "http://[2001:db8::1]:8080/"), "http://[2001:db8::1]:8080/");
  for (
    const raw of ["ftp://x", "https://Example.com", "https://x/%zz", "https://x/$host", "//x", "https://x/a b"]
  ) refused(v.url, raw);
  assert.equal(good(v.authSignin, "/oauth2/start"), "/oauth2/start");
  assert.deepEqual(good(v.rewriteTarget, "/$2"), { target: "/$2", captures: true });
  assert.deepEqual(good(v.rewriteTarget, "/"), { target: "/", captures: false });
  for (const raw of ["$1", "/$0", "/${1}", "/a\\1"]) refused(v.rewriteTarget, raw);
  assert.equal(good(v.secretName, "web-users"), "web-users");
  refused(v.secretName, "kube-system/admin");
  assert.deepEqual(good(v.serviceRef, "error-pages:80"), { service: "error-pages", port: 80 });
  assert.deepEqual(good(v.serviceRef, "error-pages:http"), { service: "error-pages", port: "http" });
  for (const raw of ["Error", "svc:99999", "svc:"]) refused(v.serviceRef, raw);
  assert.equal(good(v.cookieName, "route"), "route");
  for (const raw of ["a=b", "a;b", "a b"]) refused(v.cookieName, raw);
  assert.equal(good(v.hostName, "api.internal.example"), "api.internal.example");
  refused(v.hostName, "*.example.com");
});

Deno.test("CORS origins: any, exact, one-label wildcard, and compiled regexes without backslash", () => {
  assert.deepEqual(good(v.origins, "*"), [{ kind: "any" }]);
  assert.deepEqual(good(v.origins, "https://a.example.com:8443, http://*.example.org"), [
    { kind: "exact", origin: "https://a.example.com:8443" },
    { kind: "wildcard", origin: "http://*.example.org" },
  ]);
  assert.deepEqual(good(v.origins, "~^https://[a-z]+[.]example[.]com$"), [
    { kind: "regex", pattern: "^https://[a-z]+[.]example[.]com$" },
  ]);
  for (
    const raw of ["https://example.com/", "example.com", "~^https://a\\.b$", "~(", "~${X}", "*, https://a.example"]
  ) refused(v.origins, raw);
});
