import assert from "node:assert/strict";
import { SetupError } from "../../lib/common/errors.ts";
import { parsePolicy } from "../../lib/audit/policy.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import { parseSecretRefs } from "../../lib/proxy/files.ts";
import {
  canonicalPath,
  isDns1123Label,
  isDns1123Subdomain,
  isHost,
  isIPv4,
  isIPv6,
  isPath,
  isPortName,
  PEM_FILE,
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

Deno.test("paths: dot segments written as escapes are refused too; routes compare in the normalized form", () => {
  for (const bad of ["/%2e%2e/admin", "/a/%2E%2e/b", "/a/.%2e", "/a/%2e", "/%2E/", "/a%5Cb", "/a%5c", "/a%2fb"]) {
    assert.ok(!isPath(bad), bad);
  }
  for (const ok of ["/%7euser", "/.well-known", "/a..b", "/a/%2e%2ex", "/caf%c3%a9"]) assert.ok(isPath(ok), ok);
  assert.equal(canonicalPath("/%7euser/%41%2D%5f%2E"), "/~user/A-_.");
  assert.equal(canonicalPath("/caf%c3%a9/%3f%20"), "/caf%C3%A9/%3F%20");
  assert.equal(canonicalPath("/plain"), "/plain");
});

Deno.test("port names", () => {
  assert.ok(isPortName("http"));
  assert.ok(!isPortName("80"));
  assert.ok(!isPortName("a--b"));
  assert.ok(!isPortName("a-very-long-port-name"));
});

const LABELS_OK = ["a", "0", "my-svc", "a1-b2", "x".repeat(63)];
const LABELS_BAD = ["", "A", "-a", "a-", "a_b", "a.b", "a b", "x".repeat(64), "ä", "a\n", "a\u0000"];
const SUBDOMAINS_OK = [...LABELS_OK, "tls.example-1", "a.b.c", "x".repeat(100), `${"a.".repeat(126)}b`];
const SUBDOMAINS_BAD = [
  "",
  "a..b",
  "a.-b",
  "a-.b",
  ".a",
  "a.",
  "-a.b",
  "Tls",
  "a_b",
  "a/b",
  "a b",
  `${"a.".repeat(126)}bc`, // 254 characters
  "a\nb",
];

Deno.test("DNS-1123 names: one definition, used by the renderer, the proxy and the audit policy", async () => {
  for (const ok of LABELS_OK) assert.ok(isDns1123Label(ok), ok);
  for (const bad of LABELS_BAD) assert.ok(!isDns1123Label(bad), JSON.stringify(bad));
  for (const ok of SUBDOMAINS_OK) assert.ok(isDns1123Subdomain(ok), ok);
  for (const bad of SUBDOMAINS_BAD) assert.ok(!isDns1123Subdomain(bad), JSON.stringify(bad));
  assert.ok(!isDns1123Label(7) && !isDns1123Subdomain(null));

  // PEM file names: <label>_<subdomain>.pem
  for (const ok of ["a_b.pem", "ns-1_my.cert-2.pem", "0_0.pem"]) assert.ok(PEM_FILE.test(ok), ok);
  for (const bad of ["a.b_c.pem", "a_b..c.pem", "a_b.-c.pem", "a_.b.pem", "a-_b.pem", ".._b.pem", "a_b.pem\n"]) {
    assert.ok(!PEM_FILE.test(bad), JSON.stringify(bad));
  }

  // The proxy's secrets.json check (lib/proxy/files.ts)
  const ref = (namespace: string, name: string) =>
    JSON.stringify([{ file: `${namespace}_${name}.pem`, namespace, name }]);
  for (const name of SUBDOMAINS_OK) assert.equal(parseSecretRefs(ref("ns", name))[0].name, name);
  for (const name of SUBDOMAINS_BAD) {
    assert.throws(() => parseSecretRefs(ref("ns", name)), /is not a DNS-1123 subdomain/, JSON.stringify(name));
  }
  for (const ns of LABELS_BAD) {
    assert.throws(() => parseSecretRefs(ref(ns, "a")), /is not a DNS-1123 label/, JSON.stringify(ns));
  }

  // The audit policy's API group names (lib/audit/policy.ts)
  const policy = (group: string) =>
    parsePolicy(
      JSON.stringify({
        apiVersion: "audit.k8s.io/v1",
        kind: "Policy",
        rules: [{ level: "Metadata", resources: [{ group }] }],
      }),
      "p.json",
    );
  for (const group of SUBDOMAINS_OK) assert.equal(policy(group).rules.length, 1);
  for (const group of SUBDOMAINS_BAD.filter((g) => g !== "")) {
    assert.throws(() => policy(group), /is not a valid API group/, JSON.stringify(group));
  }

  // The proxy command's --configmap and --namespace (lib/proxy/command.ts), refused before anything starts
  const settings = {
    kubeconfig: "/nonexistent/kubeconfig",
    namespace: "ns",
    configmap: "site-proxy",
    haproxy: "/nonexistent/haproxy",
    workDir: "/nonexistent/work",
    bindAddress: "127.0.0.1",
    httpPort: 8080,
    httpsPort: 8443,
    statsPort: 56789,
  };
  for (const configmap of ["a..b", "a.-b", "x".repeat(254)]) {
    await assert.rejects(
      runProxy({ ...settings, configmap }, AbortSignal.abort()),
      (e) => e instanceof SetupError && /--configmap/.test(e.message),
    );
  }
  for (const namespace of ["a.b", "x".repeat(64)]) {
    await assert.rejects(
      runProxy({ ...settings, namespace }, AbortSignal.abort()),
      (e) => e instanceof SetupError && /--namespace/.test(e.message),
    );
  }
});

Deno.test("IP literals", () => {
  for (const ok of ["10.0.0.1", "255.255.255.255", "0.0.0.0"]) assert.ok(isIPv4(ok), ok);
  for (const bad of ["10.0.0", "256.0.0.1", "01.0.0.1", "10.0.0.1 ", "10.0.0.1\n"]) assert.ok(!isIPv4(bad), bad);
  for (const ok of ["::1", "fd00::1", "2001:db8:0:0:0:0:0:1", "::ffff:10.0.0.1", "::"]) assert.ok(isIPv6(ok), ok);
  for (const bad of ["1:2:3:4:5:6:7:8:9", "fd00:::1", "1::2::3", "fd00::1%eth0", "[::1]", "12345::", "::1\n"]) {
    assert.ok(!isIPv6(bad), bad);
  }
});
