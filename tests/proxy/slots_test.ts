import assert from "node:assert/strict";
import {
  addOptions,
  growableBackends,
  parseSlots,
  parseTarget,
  skeleton,
  slotCommands,
} from "../../lib/proxy/slots.ts";
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
  // `disabled` after other options is no slot of ours: its line is structure
  const later = parseSlots("backend b\n    server s1 1.2.3.4:80 send-proxy disabled\n    server s2 1.2.3.5:80\n")!;
  assert.deepEqual([...later.keys()], ["b/s2"]);
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
      // HAProxy starts backend c at its indented header: s2 is c's, not b's
      "backend b\n    server s1 1.2.3.4:80\n    backend c\n    server s2 1.2.3.5:80\n",
      ".if 0\nbackend b\n    server s1 1.2.3.4:80\n.endif\n", // HAProxy reads no backend b
      // a default-server line that sets the servers' state: the slot lines do not say it
      "backend b\n    default-server check disabled\n    server s1 1.2.3.4:80\n",
      "backend b\n    default-server enabled\n    server s1 1.2.3.4:80\n",
      'backend b\n    default-server "disabled"\n    server s1 1.2.3.4:80\n',
    ]
  ) assert.equal(parseSlots(bad), null, bad);
});

Deno.test("parseTarget accepts IPv4 and bracketed IPv6 literals with a port only", () => {
  assert.deepEqual(parseTarget("10.1.2.3:443"), { address: "10.1.2.3", port: 443 });
  assert.deepEqual(parseTarget("[fd00::a:1]:8080"), { address: "fd00::a:1", port: 8080 });
  assert.deepEqual(parseTarget("[::ffff:10.1.2.3]:80"), { address: "::ffff:10.1.2.3", port: 80 });
  assert.deepEqual(parseTarget("[1:2:3:4:5:6:7:8]:80"), { address: "1:2:3:4:5:6:7:8", port: 80 });
  for (
    const bad of [
      "10.1.2.3",
      "fd00::1:80",
      "[fd00::1]",
      "[x]:80",
      "1.2.3.4:08",
      "01.2.3.4:80",
      "a:80",
      "1.2.3.4:80;x",
      // not IPv6 literals, though of its characters: HAProxy refuses them in a configuration
      "[1:2:3]:80",
      "[1::2::3]:80",
      "[::1:]:80",
      "[1:2:3:4:5:6:7:8:9]:80",
      "[1.2.3.4]:80",
      "[fe80::1%eth0]:80", // a zone
    ]
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

const eps = (n: number, base = 1) => Array.from({ length: n }, (_, i) => ({ address: `10.0.2.${base + i}`, port: 80 }));
const grown = (n: number, params = "", base = 1) =>
  buildConfig({ backends: [{ name: "web", endpoints: eps(n, base), grows: true }], params });

Deno.test("growableBackends: the options an added server needs, from default-server and the first slot line", () => {
  assert.deepEqual(growableBackends(grown(1)), new Map([["web", ""]]));
  assert.deepEqual(growableBackends(grown(2, "proto h2")), new Map([["web", "proto h2"]]));
  const section = (lines: string[]) =>
    ["backend be_x", "    balance leastconn", ...lines.map((l) => `    ${l}`), ""].join("\n");
  const tls = section([
    "default-server send-proxy-v2 ssl verify required ca-file ns_ca-secret_ca.pem sni str(api.example.com) verifyhost api.example.com alpn http/1.1",
    "server s1 10.0.0.1:443",
  ]);
  assert.deepEqual(
    growableBackends(tls),
    new Map([[
      "be_x",
      "send-proxy-v2 ssl verify required ca-file ns_ca-secret_ca.pem sni str(api.example.com) verifyhost api.example.com alpn http/1.1",
    ]]),
  );
  // options outside the list, or values that do not pass their pattern: nothing is added
  for (
    const bad of [
      "check",
      "track other/s1",
      "sni str(a;b)",
      "sni req.hdr(host)",
      "ca-file /etc/passwd",
      "verify",
      "proto h2;show",
      "weight 1",
    ]
  ) {
    assert.deepEqual(
      growableBackends(section([`default-server ${bad}`, "server s1 10.0.0.1:80"])),
      new Map([["be_x", null]]),
      bad,
    );
  }
  const defaults = (line: string) => `defaults\n    mode http\n    ${line}\n`;
  assert.deepEqual(
    growableBackends(grown(1), defaults("default-server check")),
    new Map([["web", null]]),
    "a defaults default-server is not read",
  );
  assert.deepEqual(growableBackends(grown(1), defaults("balance leastconn")), new Map([["web", ""]]));
  // cookie persistence, a hash or a static balance in a defaults section: no backend is growable
  for (const line of ["cookie SRV insert indirect nocache dynamic", "dynamic-cookie-key k", "hash-type consistent"]) {
    assert.deepEqual(growableBackends(grown(1), defaults(line)), new Map(), line);
  }
  assert.deepEqual(growableBackends(grown(1), defaults("balance source")), new Map());
  // not growable: not listed
  assert.deepEqual(
    growableBackends(buildConfig({ backends: [{ name: "web", endpoints: one, balance: "source" }] })),
    new Map(),
  );
  assert.deepEqual(addOptions("proto  h2 "), ["proto", "h2"]);
  // sections HAProxy cuts otherwise than at column 0: no backend is known to grow
  assert.deepEqual(growableBackends(grown(1).replace("backend web", "backend web\n    defaults x")), new Map());
  assert.deepEqual(growableBackends(grown(1).replace("\ndefaults", "\n  defaults")), new Map());
});

Deno.test("slotCommands: a growable backend adds servers past its slots, parks them when endpoints shrink, reuses them", () => {
  const grow = growableBackends(grown(1, "proto h2"));
  const [s1, s3, s2] = [grown(1, "proto h2"), grown(3, "proto h2"), grown(2, "proto h2")].map((c) => parseSlots(c)!);
  const up = slotCommands(s1, s3, grow)!;
  assert.deepEqual(up.commands.map((c) => [c.kind, c.command]), [
    ["add", "add server web/s2 10.0.2.2:80 proto h2"],
    ["state", "set server web/s2 state ready"],
    ["add", "add server web/s3 10.0.2.3:80 proto h2"],
    ["state", "set server web/s3 state ready"],
  ]);
  assert.equal(up.changed, 2);
  assert.deepEqual(up.extra, new Map([["web", []]]));
  // 3 → 1: s2 and s3 stay, parked, beyond the configuration's slot
  const down = slotCommands(s3, s1, grow)!;
  assert.deepEqual(down.commands.map((c) => c.command), [
    "set server web/s2 state maint",
    "set server web/s2 addr 127.0.0.1 port 1",
    "set server web/s3 state maint",
    "set server web/s3 addr 127.0.0.1 port 1",
  ]);
  const parked = down.extra.get("web")!;
  assert.deepEqual(parked.map((s) => [s.server, s.address, s.port, s.disabled]), [
    ["s2", "127.0.0.1", 1, true],
    ["s3", "127.0.0.1", 1, true],
  ]);
  // 1 (+ s2, s3 parked) → 2: s2 is reused, nothing added; s3 stays parked
  const running = new Map([...s1, ...parked.map((s) => [`web/${s.server}`, s] as const)]);
  const again = slotCommands(running, s2, grow)!;
  assert.deepEqual(again.commands.map((c) => c.command), [
    "set server web/s2 addr 10.0.2.2 port 80",
    "set server web/s2 state ready",
  ]);
  assert.deepEqual(again.extra.get("web")!.map((s) => s.server), ["s3"]);
  // a growable backend without options an added server could take: growing reloads, shrinking does not
  const none = new Map([["web", null]]);
  assert.equal(slotCommands(s1, s3, none), null);
  assert.equal(slotCommands(s3, s1, none)?.commands.length, 4);
  // a backend that cannot grow (not in `grow`) keeps its slots
  assert.equal(slotCommands(s1, s3), null);
  // IPv6 targets are bracketed
  const v6 = parseSlots(
    buildConfig({ backends: [{ name: "web", endpoints: [...eps(1), { address: "fd00::5", port: 80 }], grows: true }] }),
  )!;
  assert.deepEqual(slotCommands(s1, v6, new Map([["web", ""]]))!.commands[0].command, "add server web/s2 [fd00::5]:80");
});

Deno.test("slotCommands: a lone live server of a growable backend moves behind an added spare, which stays parked", () => {
  const [a, b] = [grown(1), grown(1, "", 9)].map((c) => parseSlots(c)!);
  const plan = slotCommands(a, b, new Map([["web", ""]]))!;
  assert.deepEqual(plan.commands.map((c) => c.command), [
    "add server web/s2 10.0.2.9:80",
    "set server web/s2 state ready",
    "set server web/s1 state maint",
    "set server web/s1 addr 10.0.2.9 port 80",
    "set server web/s1 state ready",
    "set server web/s2 state maint",
    "set server web/s2 addr 127.0.0.1 port 1",
  ]);
  assert.deepEqual(plan.extra.get("web")!.map((s) => s.server), ["s2"]);
  // with that spare parked, the next move uses it: nothing added
  const running = new Map([...b, ["web/s2", plan.extra.get("web")![0]] as const]);
  const next = slotCommands(running, a, new Map([["web", ""]]))!;
  assert.equal(next.commands.filter((c) => c.kind === "add").length, 0);
  assert.equal(next.commands[0].command, "set server web/s2 addr 10.0.2.1 port 80");
  // every step keeps a ready server
  for (const [from, to] of [[a, b], [running, a]] as const) {
    const ready = new Set([...from].filter(([, s]) => !s.disabled).map(([k]) => k));
    for (const c of slotCommands(from, to, new Map([["web", ""]]))!.commands) {
      if (c.command.endsWith("state ready")) ready.add(c.slot);
      if (c.command.endsWith("state maint")) ready.delete(c.slot);
      assert.ok(ready.size > 0, `no ready server after ${c.command}`);
    }
  }
});
