import assert from "node:assert/strict";
import { checkedForm, skeleton, SLOT_LINE, slotCount, slotLines } from "../../lib/render/slots.ts";

Deno.test("slot count is max(4, next power of two ≥ endpoints)", () => {
  assert.deepEqual([0, 1, 4, 5, 8, 9, 16, 17, 1000].map(slotCount), [4, 4, 4, 8, 8, 16, 16, 32, 1024]);
});

Deno.test("slot lines have the contract's shape; unused slots are 127.0.0.1:1 disabled", () => {
  assert.deepEqual(slotLines([{ address: "10.0.0.1", port: 80 }, { address: "[fd00::1]", port: 8080 }]), [
    "    server s1 10.0.0.1:80",
    "    server s2 [fd00::1]:8080",
    "    server s3 127.0.0.1:1 disabled",
    "    server s4 127.0.0.1:1 disabled",
  ]);
  assert.deepEqual(slotLines([], "check inter 2s"), [
    "    server s1 127.0.0.1:1 disabled check inter 2s",
    "    server s2 127.0.0.1:1 disabled check inter 2s",
    "    server s3 127.0.0.1:1 disabled check inter 2s",
    "    server s4 127.0.0.1:1 disabled check inter 2s",
  ]);
  assert.throws(() => slotLines([], "disabled"), /^Error: invalid server params disabled$/);
  for (const line of slotLines([{ address: "10.0.0.1", port: 80 }], "weight 1")) assert.match(line, SLOT_LINE);
});

Deno.test("skeleton: configs that differ only in endpoints are equal, others are not", () => {
  const cfg = (servers: { address: string; port: number }[], extra = "") =>
    ["backend be_a_b_80", "    balance roundrobin" + extra, ...slotLines(servers, "weight 1"), ""].join("\n");
  const a = cfg([{ address: "10.0.0.1", port: 80 }]);
  const b = cfg([{ address: "10.0.0.2", port: 81 }, { address: "10.0.0.3", port: 81 }]);
  const c = cfg([{ address: "10.0.0.1", port: 80 }], " ");
  const many = cfg(Array.from({ length: 5 }, (_, i) => ({ address: `10.0.0.${i}`, port: 80 })));
  assert.equal(skeleton(a), skeleton(b));
  assert.notEqual(skeleton(a), skeleton(c));
  assert.notEqual(skeleton(a), skeleton(many)); // 8 slots instead of 4: a reload
  assert.match(skeleton(a), /^ {4}server s1 ADDR weight 1$/m);
  assert.doesNotMatch(skeleton(a), /disabled/);
});

Deno.test("checkedForm: each backend keeps its first slot line, every other line stays", () => {
  const backend = (name: string, n: number) => [
    `backend ${name}`,
    "    balance roundrobin",
    "    default-server check",
    ...slotLines(Array.from({ length: n }, (_, i) => ({ address: `10.0.0.${i + 1}`, port: 80 }))),
    "",
  ];
  const config = ["global", "    maxconn 100", "", ...backend("be_a", 1), ...backend("be_b", 5), "frontend f"].join(
    "\n",
  );
  assert.equal(
    checkedForm(config),
    [
      "global",
      "    maxconn 100",
      "",
      "backend be_a",
      "    balance roundrobin",
      "    default-server check",
      "    server s1 10.0.0.1:80",
      "",
      "backend be_b",
      "    balance roundrobin",
      "    default-server check",
      "    server s1 10.0.0.1:80",
      "",
      "frontend f",
    ].join("\n"),
  );
  const noSlots = "global\n    server-state-file x\nbackend b\n    server other 10.0.0.1:80\n";
  assert.equal(checkedForm(noSlots), noSlots, "only slot lines (server s<N>) are left out");
});
