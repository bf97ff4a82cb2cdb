import assert from "node:assert/strict";
import {
  isDns1123Label,
  isDns1123Subdomain,
  isHost,
  isIPv4,
  isIPv6,
  isPath,
  isPortName,
  sq,
  wildcardRegex,
} from "../../lib/render/patterns.ts";

const HOSTILE = ["a\nb", "a\rb", "a'b", 'a"b', "a\\b", "a#b", "a%[b]", "a${B}", "a b", "ä", "a\tb", "a\0b"];

Deno.test("hosts: lower-case RFC-1123, optional leading *. label", () => {
  for (const ok of ["a", "foo.example.com", "*.example.com", "xn--bcher-kva.example", "1.2.3.4"]) {
    assert.ok(isHost(ok), ok);
  }
  for (const bad of ["", "Foo.com", "*.", "*", "a.*.com", "-a.com", "a-.com", "a..com", ".a", "a.com.", ...HOSTILE]) {
    assert.ok(!isHost(bad), JSON.stringify(bad));
  }
  assert.ok(!isHost("a".repeat(64)));
  assert.ok(!isHost(`${"a.".repeat(127)}ab`));
});

Deno.test("paths: absolute, safe characters, no dot segments", () => {
  for (const ok of ["/", "/foo", "/foo/", "/a-b_c.d~e", "/%20x", "/api/v1:batch", "/a@b"]) assert.ok(isPath(ok), ok);
  const bad = [
    "",
    "foo",
    "//",
    "/a//b",
    "/a/./b",
    "/a/../b",
    "/a/..",
    "/a/.",
    "/%2F",
    "/%zz",
    "/a?b",
    "/a{b}",
    ...HOSTILE,
  ];
  for (const p of bad) assert.ok(!isPath(p), JSON.stringify(p));
  assert.ok(!isPath(`/${"a".repeat(1024)}`));
});

Deno.test("names and port names", () => {
  assert.ok(isDns1123Label("my-svc"));
  assert.ok(!isDns1123Label("my_svc"));
  assert.ok(!isDns1123Label("a".repeat(64)));
  assert.ok(isDns1123Subdomain("tls.example-1"));
  assert.ok(!isDns1123Subdomain("Tls"));
  assert.ok(isPortName("http"));
  assert.ok(!isPortName("80"));
  assert.ok(!isPortName("a--b"));
  assert.ok(!isPortName("a-very-long-port-name"));
});

Deno.test("IP literals", () => {
  for (const ok of ["10.0.0.1", "255.255.255.255", "0.0.0.0"]) assert.ok(isIPv4(ok), ok);
  for (const bad of ["10.0.0", "256.0.0.1", "01.0.0.1", "10.0.0.1 ", "10.0.0.1\n"]) assert.ok(!isIPv4(bad), bad);
  for (const ok of ["::1", "fd00::1", "2001:db8:0:0:0:0:0:1", "::ffff:10.0.0.1", "::"]) assert.ok(isIPv6(ok), ok);
  for (const bad of ["1:2:3:4:5:6:7:8:9", "fd00:::1", "1::2::3", "fd00::1%eth0", "[::1]", "12345::", "::1\n"]) {
    assert.ok(!isIPv6(bad), bad);
  }
});

Deno.test("sq refuses anything that could leave the single quotes", () => {
  assert.equal(sq("/a"), "'/a'");
  for (const bad of ["'", "a\nb", "a b", "\\", "é"]) {
    assert.throws(() => sq(bad), /^Error: refusing to place unsafe value in the HAProxy configuration: /, bad);
  }
  assert.equal(wildcardRegex("*.example.com"), "^[^.]+[.]example[.]com$");
  assert.throws(() => wildcardRegex("example.com"), /^Error: not a wildcard host: "example.com"$/);
});
