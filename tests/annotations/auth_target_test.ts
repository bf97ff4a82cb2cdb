/**
 * The address policy of external authentication (lib/annotations/auth_target.ts) through the value
 * kinds of `auth-url`, `auth-signin` and `auth-request-headers`: every refused address in each of
 * its spellings (IPv4 decimal, octal, hex and short forms, IPv6 with embedded IPv4, upper case,
 * trailing dots), the metadata names, single-label names, the proxy's own ports; what passes, with
 * the address the proxy will use; the host allow-list of `auth-url-allowed-hosts`.
 */
import assert from "node:assert/strict";
import * as v from "../../lib/annotations/values.ts";
import { hostAllowed, parseHostPatterns, PROXY_PORTS, refusedAddress } from "../../lib/annotations/auth_target.ts";
import { exporterPort, healthPort, statsPort } from "../../lib/controller/proxy_pod.ts";

const refusedBecause = (raw: string): string => {
  const p = v.authUrl.parse(raw);
  assert.ok(!p.ok, `${raw} should be refused`);
  return p.reason;
};

Deno.test("auth-url: service names and private addresses pass, with the address the proxy uses", () => {
  const cases: [string, { host: string; port: number; address: string }][] = [
    ["http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth", {
      host: "oauth2-proxy.auth.svc.cluster.local",
      port: 80,
      address: "name",
    }],
    ["https://auth.example.com:8443/check?app=shop", { host: "auth.example.com", port: 8443, address: "name" }],
    ["https://auth.example.com", { host: "auth.example.com", port: 443, address: "name" }],
    ["http://10.0.0.5:4180/oauth2/auth", { host: "10.0.0.5", port: 4180, address: "ipv4" }],
    ["http://192.168.1.20/", { host: "192.168.1.20", port: 80, address: "ipv4" }],
    ["http://[fd00:0:0::5]:4180/", { host: "fd00::5", port: 4180, address: "ipv6" }],
    ["http://[2001:DB8::1]/", { host: "2001:db8::1", port: 80, address: "ipv6" }],
  ];
  for (const [raw, want] of cases) {
    const p = v.authUrl.parse(raw);
    assert.ok(p.ok, `${raw}: ${!p.ok && p.reason}`);
    assert.deepEqual(p.value, { url: raw, ...want }, raw);
  }
});

Deno.test("auth-url: loopback, unspecified, link-local, metadata and reserved IPv4 addresses are refused", () => {
  const cases: [string, RegExp][] = [
    ["http://127.0.0.1:56789/", /the proxy.s stats port/],
    ["http://127.0.0.1/", /loopback/],
    ["http://127.1.2.3:8080/", /loopback/],
    ["http://0.0.0.0/", /unspecified/],
    ["http://169.254.169.254/latest/meta-data/", /link-local/],
    ["http://169.254.170.2/v2/credentials", /link-local/],
    ["http://169.254.170.23/v1/credentials", /link-local/],
    ["http://100.100.100.200/latest/meta-data/", /Alibaba/],
    ["http://168.63.129.16/machine", /Azure/],
    ["http://224.0.0.1/", /multicast/],
    ["http://255.255.255.255/", /multicast or reserved/],
  ];
  for (const [raw, why] of cases) {
    const reason = refusedBecause(raw);
    assert.match(reason, why, raw);
    assert.match(reason, /never sends authentication requests there/, raw);
  }
});

Deno.test("auth-url: other spellings of IPv4 addresses are refused, whatever the address", () => {
  for (
    const raw of [
      "http://2852039166/", // 169.254.169.254 as one decimal number
      "http://0xa9fea9fe/", // … as hex
      "http://0xA9FEA9FE/",
      "http://0251.0376.0251.0376/", // … octal parts
      "http://169.254.43518/", // … short form
      "http://0x7f.1/",
      "http://127.1/",
      "http://017700000001/",
      "http://127.0.0.01/",
      "http://10.0.0.010/", // a leading zero is octal to some parsers, decimal to others
      "http://0x0a.0.0.1/",
      "http://1.2.3.4.5/",
    ]
  ) {
    assert.match(refusedBecause(raw), /(?:other than as a\.b\.c\.d|upper case)/, raw);
  }
});

Deno.test("auth-url: IPv6 loopback, link-local, metadata and IPv4 addresses written as IPv6 are refused", () => {
  const cases: [string, RegExp][] = [
    ["http://[::1]/", /loopback/],
    ["http://[0:0:0:0:0:0:0:1]/", /loopback/],
    ["http://[::]/", /unspecified/],
    ["http://[fe80::1]/", /link-local/],
    ["http://[fe80::a9fe:a9fe]/openstack", /link-local/],
    ["http://[fd00:ec2::254]/latest/meta-data/", /AWS/],
    ["http://[FD00:EC2::254]/latest/meta-data/", /AWS/],
    ["http://[fd00:ec2:0::254]/", /AWS/],
    ["http://[fd00:ec2::23]/", /EKS Pod Identity/],
    ["http://[fd20:ce::254]/computeMetadata/v1/", /Google/],
    ["http://[fd00:100::100:200]/", /Alibaba/],
    ["http://[ff02::1]/", /multicast/],
    ["http://[::ffff:169.254.169.254]/", /link-local.*written as IPv6/],
    ["http://[::ffff:a9fe:a9fe]/", /link-local.*written as IPv6/],
    ["http://[::ffff:127.0.0.1]:56780/", /loopback.*written as IPv6/],
    ["http://[::169.254.169.254]/", /link-local.*written as IPv6/],
    ["http://[64:ff9b::a9fe:a9fe]/", /link-local.*written as IPv6/],
    ["http://[64:ff9b::127.0.0.1]/", /loopback.*written as IPv6/],
    ["http://[2002:a9fe:a9fe::1]/", /link-local.*6to4/],
  ];
  for (const [raw, why] of cases) assert.match(refusedBecause(raw), why, raw);
  assert.equal(refusedAddress("::ffff:10.0.0.1"), null, "a mapped private address is an ordinary one");
  assert.equal(refusedAddress("64:ff9b::a00:1"), null);
});

Deno.test("auth-url: metadata and local names, their other spellings, and single-label names are refused", () => {
  const cases: [string, RegExp][] = [
    ["http://metadata.google.internal/computeMetadata/v1/", /Google Cloud/],
    ["http://metadata.goog/computeMetadata/v1/", /Google Cloud/],
    ["http://instance-data.ec2.internal/latest/", /AWS/],
    ["http://metadata.tencentyun.com/latest/", /Tencent/],
    ["http://localhost:8080/", /the machine itself/],
    ["http://auth.localhost/", /the machine itself/],
    ["http://METADATA.GOOGLE.INTERNAL/", /upper case/],
    ["http://Metadata.Google.Internal/", /upper case/],
    ["http://metadata.google.internal./computeMetadata/v1/", /ending in a dot/],
    ["http://localhost./", /ending in a dot/],
    ["http://metadata/computeMetadata/v1/", /single-label host/],
    ["http://instance-data/latest/", /single-label host/],
    ["http://oauth2-proxy/oauth2/auth", /single-label host.*oauth2-proxy\.auth\.svc\.cluster\.local/],
    ["http://a..b/", /not a DNS name/],
    ["http://-a.example.com/", /not a DNS name/],
  ];
  for (const [raw, why] of cases) assert.match(refusedBecause(raw), why, raw);
});

Deno.test("auth-url: the proxy pod's own ports are refused on any host; other ports pass", () => {
  assert.deepEqual(Object.keys(PROXY_PORTS).map(Number).sort(), [statsPort, exporterPort, healthPort].sort());
  for (const port of [statsPort, exporterPort, healthPort]) {
    assert.match(refusedBecause(`http://ic-web.ingress-controller.svc.cluster.local:${port}/`), /the proxy's/);
    assert.match(refusedBecause(`http://10.0.0.7:${port}/stats`), new RegExp(`port ${port}`));
  }
  assert.ok(v.authUrl.parse("http://10.0.0.7:56792/").ok);
  for (const raw of ["http://10.0.0.7:0/", "http://10.0.0.7:65536/", "http://10.0.0.7:080/"]) {
    assert.ok(!v.authUrl.parse(raw).ok, raw);
  }
});

Deno.test("auth-url: hostile syntax is refused before the policy", () => {
  for (
    const raw of [
      "http://auth.example.com/x' '/evil",
      "http://auth.example.com/${HOME}",
      "http://auth.example.com/%[req.hdr(host)]",
      "http://auth.example.com/a\nb",
      "http://user:pw@auth.example.com/",
      "http://169.254.169.254@auth.example.com/",
      "http://auth.example.com#@169.254.169.254/",
      "file:///etc/passwd",
      "gopher://auth.example.com/",
      "http://[fe80::1%25eth0]/",
      "/oauth2/auth",
    ]
  ) {
    assert.equal(refusedBecause(raw), "is not an http:// or https:// URL", raw);
  }
});

Deno.test("auth-signin: a path, or a URL that passes the same address policy", () => {
  assert.ok(v.authSignin.parse("/oauth2/start?x=1").ok);
  assert.ok(v.authSignin.parse("https://auth.example.com/oauth2/start").ok);
  assert.ok(
    v.authSignin.parse("https://sso/start").ok,
    "a browser resolves a single-label name with its search domains",
  );
  for (
    const [raw, why] of [
      ["http://169.254.169.254/", /link-local/],
      ["https://0x7f000001/start", /other than as a\.b\.c\.d/],
      ["http://[::1]/start", /loopback/],
      ["oauth2/start", /not an http\(s\):\/\/ URL or an absolute path/],
    ] as const
  ) {
    const p = v.authSignin.parse(raw);
    assert.ok(!p.ok && why.test(p.reason), `${raw}: ${!p.ok && p.reason}`);
  }
});

Deno.test("auth-request-headers: header names, never the ones the proxy sets on the auth request", () => {
  assert.deepEqual(
    v.authRequestHeaders.parse("X-Api-Key, Accept").ok && v.authRequestHeaders.parse("X-Api-Key").ok,
    true,
  );
  for (const name of ["Host", "X-Forwarded-For", "x-original-url", "X-Real-IP", "Content-Length", "X-Sent-From"]) {
    const p = v.authRequestHeaders.parse(`X-Api-Key, ${name}`);
    assert.ok(!p.ok && p.reason.includes(name), name);
  }
  assert.ok(!v.authRequestHeaders.parse("X-A, X'B").ok);
});

Deno.test("auth-url-allowed-hosts: names and *.domain patterns (one label), anchored", () => {
  const list = parseHostPatterns("oauth2-proxy.auth.svc.cluster.local, *.sso.svc.cluster.local")!;
  assert.deepEqual(list, ["oauth2-proxy.auth.svc.cluster.local", "*.sso.svc.cluster.local"]);
  assert.ok(hostAllowed(list, "oauth2-proxy.auth.svc.cluster.local"));
  assert.ok(hostAllowed(list, "dex.sso.svc.cluster.local"));
  assert.ok(!hostAllowed(list, "sso.svc.cluster.local"), "the wildcard needs one more label");
  assert.ok(!hostAllowed(list, "a.dex.sso.svc.cluster.local"), "exactly one more label");
  assert.ok(!hostAllowed(list, "web.team-b.svc.cluster.local"));
  assert.ok(!hostAllowed(list, "oauth2-proxy.auth.svc.cluster.local.evil.example"));
  for (
    const bad of ["", "a,,b", "*.*.example.com", "*", "Auth.example.com", "a.example.com/x", "a b", "*example.com"]
  ) {
    assert.equal(parseHostPatterns(bad), null, bad);
  }
});
