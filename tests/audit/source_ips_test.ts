import assert from "node:assert/strict";
import { sourceIPs } from "../../lib/audit/source_ips.ts";

Deno.test("sourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer, deduplicated as Kubernetes does", () => {
  const cases: [Record<string, string>, string, string[]][] = [
    [{}, "127.0.0.1", ["127.0.0.1"]],
    [{}, "::ffff:10.1.2.3", ["10.1.2.3"]],
    [{}, "[2001:db8:0:0:0:0:0:1]:443", ["2001:db8::1"]],
    [{}, "127.0.0.1:50000", ["127.0.0.1"]],
    [{ "x-forwarded-for": "1.1.1.1, 2.2.2.2" }, "3.3.3.3", ["1.1.1.1", "2.2.2.2", "3.3.3.3"]],
    // the peer is not repeated when it is the last hop already listed
    [{ "x-forwarded-for": "1.1.1.1, 3.3.3.3" }, "3.3.3.3", ["1.1.1.1", "3.3.3.3"]],
    // invalid entries are skipped
    [{ "x-forwarded-for": "garbage, 1.1.1.1,, 999.1.1.1" }, "3.3.3.3", ["1.1.1.1", "3.3.3.3"]],
    // X-Real-Ip only when not in the chain
    [{ "x-forwarded-for": "1.1.1.1", "x-real-ip": "1.1.1.1" }, "3.3.3.3", ["1.1.1.1", "3.3.3.3"]],
    [{ "x-forwarded-for": "1.1.1.1", "x-real-ip": "2.2.2.2" }, "3.3.3.3", ["1.1.1.1", "2.2.2.2", "3.3.3.3"]],
    [{ "x-real-ip": "2.2.2.2" }, "2.2.2.2", ["2.2.2.2"]],
    // canonical forms: leading zeros in IPv4, mapped IPv6, compressed IPv6
    [{ "x-forwarded-for": "010.001.002.003, ::FFFF:1.2.3.4, fd00:0:0:0:1:0:0:0" }, "::1", [
      "10.1.2.3",
      "1.2.3.4",
      "fd00::1:0:0:0",
      "::1",
    ]],
    [{ "x-forwarded-for": "fe80::1%eth0" }, "127.0.0.1", ["127.0.0.1"]],
  ];
  for (const [headers, peer, want] of cases) {
    assert.deepEqual(sourceIPs(new Headers(headers), peer), want, JSON.stringify([headers, peer]));
  }
});
