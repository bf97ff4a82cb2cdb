import assert from "node:assert/strict";
import { parseSlots, parseTarget, skeleton, slotCommands } from "../../lib/proxy/slots.ts";
import { buildConfig } from "./fixtures.ts";

const one = [{ address: "10.0.0.1", port: 8080 }];
const two = [{ address: "10.0.0.2", port: 8080 }, { address: "10.0.0.1", port: 8080 }];

Deno.test("skeleton: configs that differ only in endpoints are equal, anything else is not", () => {
  const a = buildConfig({ backends: [{ name: "web", endpoints: one }], params: "check inter 2s" });
  const b = buildConfig({ backends: [{ name: "web", endpoints: two }], params: "check inter 2s" });
  assert.notEqual(a, b);
  assert.equal(skeleton(a), skeleton(b));
  assert.match(skeleton(a), /^ {4}server s\* ADDR check inter 2s$/m);
  assert.doesNotMatch(skeleton(a), /disabled/);
  // Params, slot count (in a backend that cannot grow), a route, a backend name: structural.
  assert.notEqual(skeleton(a), skeleton(buildConfig({ backends: [{ name: "web", endpoints: one }], params: "check" })));
  const five = Array.from({ length: 5 }, (_, i) => ({ address: `10.0.1.${i + 1}`, port: 80 }));
  const source = (endpoints: typeof one) => buildConfig({ backends: [{ name: "web", endpoints, balance: "source" }] });
  assert.notEqual(skeleton(source(one)), skeleton(source(five)));
  // a growable backend (lib/render/slots.ts): the count of its slots is not structure
  const grows = (endpoints: typeof one) => buildConfig({ backends: [{ name: "web", endpoints, grows: true }] });
  assert.equal(skeleton(grows(one)), skeleton(grows(five)));
  assert.equal(skeleton(grows(one)), skeleton(buildConfig({ backends: [{ name: "web", endpoints: five }] })));
  assert.notEqual(
    skeleton(a),
    skeleton(
      buildConfig({ backends: [{ name: "web", endpoints: one }], frontendExtra: ["    http-request deny if FALSE"] }),
    ),
  );
  // A non-slot line whose address changes is structural (e.g. a bind).
  assert.notEqual(skeleton("    bind 1.2.3.4:80"), skeleton("    bind 1.2.3.5:80"));
});

Deno.test("parseSlots reads every slot with its backend; unsafe forms make it null", () => {
  const slots = parseSlots(
    buildConfig({ backends: [{ name: "web", endpoints: two }, { name: "api", endpoints: [] }] }),
  )!;
  assert.equal(slots.size, 8);
  assert.deepEqual(slots.get("web/s1"), {
    backend: "web",
    server: "s1",
    address: "10.0.0.1",
    port: 8080,
    disabled: false,
  });
  assert.deepEqual(slots.get("web/s3"), {
    backend: "web",
    server: "s3",
    address: "127.0.0.1",
    port: 1,
    disabled: true,
  });
  assert.equal(slots.get("api/s4")?.disabled, true);
  assert.equal(parseSlots("backend b\n    server s1 [fd00::1]:80\n")?.get("b/s1")?.address, "fd00::1");
  for (
    const bad of [
      "backend b\n    server s1 example.com:80\n", // a name needs DNS: not runtime-safe
      "backend b;x\n    server s1 1.2.3.4:80\n", // a proxy name that could add a command
      "backend b\n    server s1 1.2.3.4:80\n    server s1 1.2.3.5:80\n", // duplicate slot
      "frontend f\n    server s1 1.2.3.4:80\n", // a slot outside a backend
      "backend b\n    server s1 1.2.3.4:0\n",
      "backend b\n    server s1 1.2.3.4:65536\n",
      "backend b\n    server s1 1.2.3.256:80\n",
    ]
  ) assert.equal(parseSlots(bad), null, bad);
});

Deno.test("parseTarget accepts IPv4 and bracketed IPv6 literals with a port only", () => {
  assert.deepEqual(parseTarget("10.1.2.3:443"), { address: "10.1.2.3", port: 443 });
  assert.deepEqual(parseTarget("[fd00::a:1]:8080"), { address: "fd00::a:1", port: 8080 });
  for (
    const bad of ["10.1.2.3", "fd00::1:80", "[fd00::1]", "[x]:80", "1.2.3.4:08", "01.2.3.4:80", "a:80", "1.2.3.4:80;x"]
  ) {
    assert.equal(parseTarget(bad), null, bad);
  }
});

Deno.test("slotCommands: enable gets the address first, disable goes to maint first, unchanged slots send nothing", () => {
  const from = parseSlots(buildConfig({ backends: [{ name: "web", endpoints: one }] }))!;
  const to = parseSlots(buildConfig({ backends: [{ name: "web", endpoints: two }] }))!;
  assert.deepEqual(slotCommands(from, to)!.commands.map((c) => c.command), [
    "set server web/s2 addr 10.0.0.2 port 8080",
    "set server web/s2 state ready",
  ]);
  assert.equal(slotCommands(from, to)!.changed, 1);
  assert.deepEqual(slotCommands(to, from)!.commands.map((c) => c.command), [
    "set server web/s2 state maint",
    "set server web/s2 addr 127.0.0.1 port 1",
  ]);
  assert.deepEqual(slotCommands(from, from), { commands: [], changed: 0, extra: new Map() });
  const other = parseSlots(buildConfig({ backends: [{ name: "api", endpoints: one }] }))!;
  assert.equal(slotCommands(from, other), null);
});

Deno.test("slotCommands: a live slot moves through maint; a lone one is bridged by a spare slot", () => {
  const from = parseSlots(buildConfig({ backends: [{ name: "web", endpoints: one }] }))!;
  const moved = parseSlots(
    buildConfig({ backends: [{ name: "web", endpoints: [{ address: "10.0.0.9", port: 81 }] }] }),
  )!;
  // s1 is the only live server: s2 serves the new endpoint while s1 is in maint.
  assert.deepEqual(slotCommands(from, moved), {
    changed: 1,
    extra: new Map(),
    commands: [
      "set server web/s2 addr 10.0.0.9 port 81",
      "set server web/s2 state ready",
      "set server web/s1 state maint",
      "set server web/s1 addr 10.0.0.9 port 81",
      "set server web/s1 state ready",
      "set server web/s2 state maint",
      "set server web/s2 addr 127.0.0.1 port 1",
    ].map((command) => ({ slot: command.split(" ")[2], command, kind: command.includes(" addr ") ? "addr" : "state" })),
  });
  // {.1, .2} → {.2}: s1 moves to .2 while s2 still serves, then s2 is disabled.
  const both = parseSlots(buildConfig({ backends: [{ name: "web", endpoints: two }] }))!;
  const second = parseSlots(buildConfig({ backends: [{ name: "web", endpoints: [two[0]] }] }))!;
  assert.deepEqual(slotCommands(both, second)!.commands.map((c) => c.command), [
    "set server web/s1 state maint",
    "set server web/s1 addr 10.0.0.2 port 8080",
    "set server web/s1 state ready",
    "set server web/s2 state maint",
    "set server web/s2 addr 127.0.0.1 port 1",
  ]);
  // Every step leaves a ready server: replay the commands and check after each one.
  for (const [a, b] of [[from, moved], [both, second], [second, from], [from, both]]) {
    const ready = new Set([...a].filter(([, s]) => !s.disabled).map(([k]) => k));
    for (const c of slotCommands(a, b)!.commands) {
      if (c.command.endsWith("state ready")) ready.add(c.slot);
      if (c.command.endsWith("state maint")) ready.delete(c.slot);
      assert.ok(ready.size > 0, `no ready server after ${c.command}`);
    }
  }
});
