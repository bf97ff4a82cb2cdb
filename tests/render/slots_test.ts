import assert from "node:assert/strict";
import {
  checkedForm,
  growable,
  growableDefaults,
  growableSection,
  plainSections,
  SECTION_KEYWORDS,
  skeleton,
  SLOT_LINE,
  slotCount,
  slotLines,
} from "../../lib/render/slots.ts";

Deno.test("slot count: max(4, next power of two ≥ endpoints); one per endpoint (at least 1) in a growable backend", () => {
  assert.deepEqual([0, 1, 4, 5, 8, 9, 16, 17, 1000].map((n) => slotCount(n)), [4, 4, 4, 8, 8, 16, 16, 32, 1024]);
  assert.deepEqual([0, 1, 2, 3, 5, 1000].map((n) => slotCount(n, true)), [1, 1, 2, 3, 5, 1000]);
});

Deno.test("growable: a dynamic balance algorithm (HAProxy 2.6's add server) and no cookie persistence", () => {
  assert.equal(growable("roundrobin", false), true);
  assert.equal(growable("leastconn", false), true);
  assert.equal(growable("source", false), false, "add server: Backend must use a dynamic load balancing");
  assert.equal(growable("roundrobin", true), false, "an added server gets no dynamic cookie");
  const section = (...lines: string[]) => ["backend be_a", ...lines.map((l) => `    ${l}`), ""].join("\n");
  assert.equal(growableSection(section("balance roundrobin", "server s1 10.0.0.1:80")), true);
  assert.equal(growableSection(section("balance leastconn", "server s1 10.0.0.1:80")), true);
  assert.equal(growableSection(section("balance source", "server s1 10.0.0.1:80")), false);
  assert.equal(growableSection(section("balance roundrobin", "cookie c insert dynamic", "server s1 a:1")), false);
  assert.equal(growableSection(section("balance roundrobin", "hash-type consistent", "server s1 a:1")), false);
  assert.equal(growableSection(section("server s1 10.0.0.1:80")), false, "no balance line: not known");
  assert.equal(growableSection("frontend f\n    balance roundrobin\n"), false);
  // HAProxy takes the last balance line
  assert.equal(growableSection(section("balance roundrobin", "balance source", "server s1 10.0.0.1:80")), false);
  assert.equal(growableSection(section("balance source", "balance roundrobin", "server s1 10.0.0.1:80")), false);
});

Deno.test("growableSection: a default-server line after the first slot line (given to no slot) leaves the backend fixed", () => {
  const section = (...lines: string[]) => ["backend be_a", ...lines.map((l) => `    ${l}`), ""].join("\n");
  const slots = (n: number) => Array.from({ length: n }, (_, i) => `server s${i + 1} 10.0.0.${i + 1}:80`);
  assert.equal(growableSection(section("balance roundrobin", "default-server ssl verify none", ...slots(2))), true);
  assert.equal(growableSection(section("balance roundrobin", ...slots(2), "default-server ssl verify none")), false);
  assert.equal(growableSection(section("balance roundrobin", ...slots(1), "default-server check", ...slots(2))), false);
  // then its slot count is structure
  assert.notEqual(
    skeleton(section("balance roundrobin", ...slots(1), "default-server ssl")),
    skeleton(section("balance roundrobin", ...slots(2), "default-server ssl")),
  );
  assert.equal(
    skeleton(section("balance roundrobin", "default-server ssl", ...slots(1))),
    skeleton(section("balance roundrobin", "default-server ssl", ...slots(2))),
  );
});

Deno.test("growableSection: slot lines with other options each leave the backend fixed, every line its own structure", () => {
  const section = (...options: string[]) =>
    [
      "backend be_a",
      "    balance roundrobin",
      ...options.map((o, i) => `    server s${i + 1} 10.0.0.${i + 1}:80${o}`),
      "",
    ]
      .join("\n");
  const [a, b] = [" send-proxy", ""];
  assert.equal(growableSection(section(a, a, a)), true);
  assert.equal(growableSection(section(a, a, b)), false);
  assert.equal(growableSection(section(a, b, b)), false);
  assert.equal(growableSection(section(a + " ", a)), false, "another spacing is another text");
  // [A,B,B] and [A,A,B] were one skeleton: the plan gave an added or parked server the wrong options
  assert.notEqual(skeleton(section(a, b, b)), skeleton(section(a, a, b)));
  assert.notEqual(skeleton(section(a, b)), skeleton(section(a, b, b)));
  // a disabled slot carries the same options after its flag
  assert.equal(growableSection(section(a, a).replace("10.0.0.2:80", "127.0.0.1:1 disabled")), true);
});

Deno.test("growableDefaults: cookie persistence, a hash or a static balance in a defaults section", () => {
  const defaults = (...lines: string[]) => ["defaults", ...lines.map((l) => `    ${l}`), ""].join("\n");
  assert.equal(growableDefaults(""), true);
  assert.equal(growableDefaults(defaults("mode http", "timeout connect 5s", "balance roundrobin")), true);
  assert.equal(growableDefaults(defaults("balance leastconn", "default-server check")), true);
  for (
    const line of [
      "cookie SRV insert indirect nocache dynamic",
      "dynamic-cookie-key secret",
      "hash-type consistent",
      "balance source",
      "balance uri",
      "balance roundrobin # then a comment",
    ]
  ) {
    assert.equal(growableDefaults(defaults("mode http", line)), false, line);
  }
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
  assert.deepEqual(slotLines([], "", true), ["    server s1 127.0.0.1:1 disabled"]);
  assert.deepEqual(
    slotLines([{ address: "10.0.0.1", port: 80 }, { address: "10.0.0.2", port: 80 }], "proto h2", true),
    [
      "    server s1 10.0.0.1:80 proto h2",
      "    server s2 10.0.0.2:80 proto h2",
    ],
  );
  assert.throws(() => slotLines([], "disabled"), /^Error: invalid server params disabled$/);
  for (const params of ["check enabled", 'sni "x"', "sni ${X}", "weight 1\\ "]) {
    assert.throws(() => slotLines([], params));
  }
  for (const line of slotLines([{ address: "10.0.0.1", port: 80 }], "weight 1")) assert.match(line, SLOT_LINE);
});

Deno.test("skeleton: configs that differ only in endpoints are equal, others are not", () => {
  const cfg = (servers: { address: string; port: number }[], extra = "") =>
    ["backend be_a_b_80", "    balance source" + extra, ...slotLines(servers, "weight 1"), ""].join("\n");
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

Deno.test("skeleton: in a growable backend the number of endpoints is not structure, their options are", () => {
  const eps = (n: number) => Array.from({ length: n }, (_, i) => ({ address: `10.0.0.${i + 1}`, port: 80 }));
  const cfg = (n: number, params = "", balance = "roundrobin", grows = true) =>
    [
      "global",
      "    maxconn 10",
      "",
      "backend be_a_b_80",
      `    balance ${balance}`,
      ...slotLines(eps(n), params, grows),
      "",
      "backend be_c",
      "    balance roundrobin",
      ...slotLines(eps(1), "", true),
      "",
    ].join("\n");
  const one = skeleton(cfg(1));
  assert.equal(skeleton(cfg(0)), one);
  assert.equal(skeleton(cfg(3)), one);
  assert.equal(skeleton(cfg(100)), one);
  assert.equal(skeleton(cfg(5, "", "roundrobin", false)), one, "an older controller's 8 slots: the same structure");
  assert.match(one, /^backend be_a_b_80\n {4}balance roundrobin\n {4}server s\* ADDR\n\nbackend be_c\n/m);
  assert.notEqual(skeleton(cfg(3, "proto h2")), skeleton(cfg(1, "")), "another option on the slot lines");
  assert.equal(skeleton(cfg(3, "proto h2")), skeleton(cfg(1, "proto h2")));
  assert.notEqual(skeleton(cfg(3, "", "leastconn")), one, "another balance");
  // a backend that cannot grow keeps its slots' count as structure
  assert.notEqual(skeleton(cfg(1, "", "source", false)), skeleton(cfg(5, "", "source", false)));
});

Deno.test("checkedForm: each backend keeps its first slot line, every other line stays", () => {
  const backend = (name: string, n: number) => [
    `backend ${name}`,
    "    balance roundrobin",
    `    default-server check${name === "be_b" ? " inter 3s" : ""}`,
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
      "    default-server check inter 3s",
      "    server s1 10.0.0.1:80",
      "",
      "frontend f",
    ].join("\n"),
  );
  const noSlots = "global\n    server-state-file x\nbackend b\n    server other 10.0.0.1:80\n";
  assert.equal(checkedForm(noSlots), noSlots, "only slot lines (server s<N>) are left out");
});

Deno.test("checkedForm: a backend the same as one before up to its name and addresses is left out", () => {
  const backend = (name: string, address: string, ...lines: string[]) =>
    [`backend ${name}`, "    balance roundrobin", ...lines, `    server s1 ${address}:8080`, ""].join("\n");
  const config = [
    "global\n    maxconn 100\n",
    "frontend f\n    use_backend be_named if { path /x }\n    use_backend %[var(txn.route)]\n",
    backend("be_a", "10.0.0.1"),
    backend("be_b", "10.0.0.22"), // as be_a: left out
    backend("be_c", "10.0.0.3", "    timeout server 5s"), // another line: kept
    backend("be_d", "10.0.0.4", "    timeout server 5s"), // as be_c: left out
    backend("be_named", "10.0.0.5"), // named by the frontend: kept
    backend("be_e", "10.0.0.6", "    http-request set-header X-Backend be_e"), // its own name in its body
    backend("be_f", "10.0.0.7", "    http-request set-header X-Backend be_f"), // as be_e up to the name: left out
    backend("be_g", "10.0.0.8", "    http-request set-header X-Backend be_a"), // names be_a: be_a kept, be_g kept
    backend("be_tracked", "10.0.0.9"), // named by a track in be_h: kept
    backend("be_h", "10.0.0.10", "    option httpchk", "    default-server track be_tracked/s1"),
    backend("be_twice", "10.0.0.11"),
    backend("be_twice", "10.0.0.12"), // a name given twice: both kept, for HAProxy to refuse
    "frontend g\n    default_backend be_named\n",
  ].join("\n");
  const kept = checkedForm(config).split("\n").filter((l) => l.startsWith("backend ")).map((l) => l.slice(8));
  assert.deepEqual(kept, ["be_a", "be_c", "be_named", "be_e", "be_g", "be_tracked", "be_h", "be_twice", "be_twice"]);
  // Every other section stays whole.
  assert.ok(checkedForm(config).startsWith("global\n    maxconn 100\n\nfrontend f\n    use_backend be_named if"));
  assert.ok(checkedForm(config).endsWith("frontend g\n    default_backend be_named\n"));
  // A longer token holding a name is not that name: these differ by more than their names.
  const similar = [
    backend("be_x", "10.0.0.1", "    http-request set-header X be_x1"),
    backend("be_y", "10.0.0.2", "    http-request set-header X be_y1"),
  ];
  assert.deepEqual(
    checkedForm(similar.join("\n")).split("\n").filter((l) => l.startsWith("backend ")),
    ["backend be_x", "backend be_y"],
  );
  // Names of other characters than the templates write are not replaced: each such backend is checked.
  const odd = [backend("be$x", "10.0.0.1"), backend("be$y", "10.0.0.2"), backend('be"z', "10.0.0.3")];
  assert.deepEqual(
    checkedForm(odd.join("\n")).split("\n").filter((l) => l.startsWith("backend ")),
    ["backend be$x", "backend be$y", 'backend be"z'],
  );
});

Deno.test("plainSections: HAProxy cuts the sections where a line at column 0 starts one, and nowhere else", () => {
  const plain = [
    "# generated",
    "global",
    '    crt-base "${IC_CERT_DIR}"',
    "    # a comment's quote",
    "# a comment at column 0",
    "",
    "backend be_a",
    "\tbalance roundrobin",
    "    server s1 10.0.0.1:80",
    "backend#x",
    "",
  ].join("\n");
  assert.equal(plainSections(plain), true);
  assert.equal(plainSections(""), true);
  for (const keyword of SECTION_KEYWORDS) {
    assert.equal(plainSections(`${keyword} x\n    maxconn 1\n`), true, keyword);
    // indented, a section keyword starts a section all the same (HAProxy 2.6 reads a line's first word)
    assert.equal(plainSections(`backend a\n    server s1 10.0.0.1:80\n    ${keyword} x\n`), false, keyword);
    assert.equal(plainSections(`backend a\n\t${keyword}\n`), false, keyword);
    assert.equal(plainSections(`backend a\n  ${keyword}#x\n`), false, keyword);
  }
  for (
    const odd of [
      "backend a\nbalance roundrobin\n", // at column 0, not a section keyword: in backend a for HAProxy
      "Backend a\n", // keywords are case-sensitive
      'backend a\n    "backend" b\n', // HAProxy unquotes the word: a section
      "backend a\n    ${KEYWORD} b\n", // an environment variable
      "backend a\n    back\\end b\n", // an escape
      ".if 0\nbackend a\n    server s1 10.0.0.1:80\n.endif\n", // a conditional block
      "backend a\n    .if 0\n    server s1 10.0.0.1:80\n    .endif\n",
      "backend a\r\n    server s1 10.0.0.1:80\r\n", // a carriage return
      "backend a\n \vserver s1 10.0.0.1:80\n",
    ]
  ) {
    assert.equal(plainSections(odd), false, JSON.stringify(odd));
  }
  // a word that only begins as a keyword is none
  assert.equal(plainSections("backend a\n    backends b\n    cache-use x\n"), true);
});

Deno.test("checkedForm: a configuration that is not plain is checked whole", () => {
  const backend = (
    name: string,
    indent = "",
  ) => [`${indent}backend ${name}`, "    balance roundrobin", "    server s1 10.0.0.1:80", "    server s2 10.0.0.2:80"];
  const config = ["global", "    maxconn 100", "", ...backend("be_a"), ...backend("be_b", "    "), ""].join("\n");
  assert.equal(checkedForm(config), config);
  assert.notEqual(
    checkedForm(config.replace("    backend be_b", "backend be_b")),
    config.replace("    backend be_b", "backend be_b"),
  );
});

Deno.test("SLOT_LINE: disabled or enabled among the options, or a quote, an escape or a variable there, is no slot line", () => {
  const slot = (line: string) => {
    const m = SLOT_LINE.exec(line);
    return m && [m[2], m[3] !== undefined, m[4]];
  };
  assert.deepEqual(slot("    server s1 10.0.0.1:80"), ["10.0.0.1:80", false, ""]);
  assert.deepEqual(slot("    server s1 127.0.0.1:1 disabled send-proxy"), ["127.0.0.1:1", true, " send-proxy"]);
  assert.deepEqual(slot("    server s2 [fd00::1]:80   check inter 2s "), ["[fd00::1]:80", false, "   check inter 2s "]);
  assert.deepEqual(slot("    server s1 10.0.0.1:80 sni str(disabled.example)"), [
    "10.0.0.1:80",
    false,
    " sni str(disabled.example)",
  ]);
  for (
    const line of [
      "    server s1 10.0.0.1:80 send-proxy disabled", // HAProxy keeps it in maintenance
      "    server s1 10.0.0.1:80 send-proxy disabled#x",
      "    server s1 127.0.0.1:1 disabled enabled", // and this one out of it
      "    server s1 127.0.0.1:1 disabled send-proxy disabled",
      '    server s1 10.0.0.1:80 "disabled"',
      "    server s1 10.0.0.1:80 ${STATE}",
      "    server s1 10.0.0.1:80 dis\\abled",
    ]
  ) {
    assert.equal(SLOT_LINE.exec(line), null, line);
  }
  // such a line's address is structure; a backend with it grows no more
  const section = (first: string) =>
    ["backend be_a", "    balance roundrobin", first, "    server s2 10.0.0.2:80 send-proxy", ""].join("\n");
  assert.notEqual(
    skeleton(section("    server s1 10.0.0.1:80 send-proxy disabled")),
    skeleton(section("    server s1 10.0.0.3:80 send-proxy disabled")),
  );
  assert.equal(growableSection(section("    server s1 10.0.0.1:80 send-proxy")), true);
  assert.equal(growableSection(section("    server s1 10.0.0.1:80 send-proxy disabled")), false);
  assert.equal(growableSection(section("    server other 10.0.0.1:80 send-proxy")), false, "a server of another name");
  assert.equal(growableSection(section("    server-template s 1-2 10.0.0.1:80")), false);
});
