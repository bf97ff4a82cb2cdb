import assert from "node:assert/strict";
import {
  formatDurationNs,
  formatFloatGo,
  parseBool,
  parseDurationNs,
  parseFloatGo,
  parseInt0,
  parseIP,
  readCsvRecord,
  writeCsvRecord,
} from "../../lib/common/gosyntax.ts";

Deno.test("ParseBool accepts exactly Go's forms", () => {
  for (const s of ["1", "t", "T", "TRUE", "true", "True"]) assert.equal(parseBool(s), true, s);
  for (const s of ["0", "f", "F", "FALSE", "false", "False"]) assert.equal(parseBool(s), false, s);
  for (const s of ["", "yes", "no", "tRUE", "on", "2", " true"]) {
    assert.throws(() => parseBool(s), /^Error: not a boolean \(use true or false\)$/, s);
  }
});

Deno.test("ParseInt base 0: prefixes, leading-0 octal, signs, underscores as Go allows", () => {
  const ok: [string, number][] = [
    ["0", 0],
    ["10", 10],
    ["-10", -10],
    ["+7", 7],
    ["0x10", 16],
    ["0X1f", 31],
    ["010", 8],
    ["0o17", 15],
    ["0O17", 15],
    ["0b101", 5],
    ["1_000", 1000],
    ["0x_10", 16],
    ["0_10", 8],
    ["-0b1_1", -3],
  ];
  for (const [s, n] of ok) assert.equal(parseInt0(s), n, s);
  for (
    const s of ["", "-", "0x", "0b", "08", "09", "1.0", "1e3", "abc", "1_", "_1", "1__0", "0x_", " 1", "1 ", "0b2"]
  ) {
    assert.throws(() => parseInt0(s), /^Error: not an integer( \(misplaced underscore\))?$/, s);
  }
  assert.throws(() => parseInt0("99999999999999999999"), /out of range/);
});

Deno.test("ParseFloat: decimal, exponent, leading dot, hex, inf/nan, underscores", () => {
  const ok: [string, number][] = [
    ["1e+06", 1e6],
    ["1E6", 1e6],
    [".5", 0.5],
    ["5.", 5],
    ["-2.5e-3", -0.0025],
    ["1_000.5", 1000.5],
    ["0x1p-2", 0.25],
    ["0x1.8p1", 3],
    ["10", 10],
  ];
  for (const [s, n] of ok) assert.equal(parseFloatGo(s), n, s);
  assert.equal(parseFloatGo("+Inf"), Infinity);
  assert.equal(parseFloatGo("-infinity"), -Infinity);
  assert.ok(Number.isNaN(parseFloatGo("NaN")));
  for (const s of ["", ".", "e5", "1e", "1_.5", "0x1", "abc", "1,5", "--1"]) {
    assert.throws(() => parseFloatGo(s), /^Error: not a number( \(misplaced underscore\))?$/, s);
  }
  assert.equal(parseFloatGo("0.1", 32), 0.1);
  assert.throws(() => parseFloatGo("1e39", 32), /float32/);
});

Deno.test("FormatFloat 'g' -1 as pflag prints float defaults", () => {
  assert.equal(formatFloatGo(1e6), "1e+06");
  assert.equal(formatFloatGo(10), "10");
  assert.equal(formatFloatGo(100000), "100000");
  assert.equal(formatFloatGo(0.5), "0.5");
  assert.equal(formatFloatGo(0.00001), "1e-05");
  assert.equal(formatFloatGo(1.5e7), "1.5e+07");
  assert.equal(formatFloatGo(1e21), "1e+21");
});

Deno.test("ParseDuration: units, µs, fractions, several parts, bare 0, signs", () => {
  const ok: [string, bigint][] = [
    ["0", 0n],
    ["-0", 0n],
    ["+0", 0n],
    ["0s", 0n],
    ["10s", 10_000_000_000n],
    ["1m30s", 90_000_000_000n],
    ["1.5h", 5_400_000_000_000n],
    [".5s", 500_000_000n],
    ["1.s", 1_000_000_000n],
    ["300ms", 300_000_000n],
    ["1us", 1000n],
    ["1µs", 1000n],
    ["1μs", 1000n],
    ["7ns", 7n],
    ["1h2m3s4ms5us6ns", 3_723_004_005_006n],
    ["-1m", -60_000_000_000n],
    ["2h45m", 9_900_000_000_000n],
  ];
  for (const [s, ns] of ok) assert.equal(parseDurationNs(s), ns, s);
  for (const s of ["", "10", "1.5", "s", ".s", "1x", "1sm2", "1 s", "- 1s", "1d", "1S"]) {
    assert.throws(
      () => parseDurationNs(s),
      /^Error: (not a duration|missing unit in duration|unknown unit ".+" in duration)/,
      s,
    );
  }
  assert.throws(() => parseDurationNs("10"), /missing unit/);
  assert.throws(() => parseDurationNs("3000000h"), /out of range/);
});

Deno.test("Duration.String: Go's canonical form", () => {
  const cases: [bigint, string][] = [
    [0n, "0s"],
    [1n, "1ns"],
    [1100n, "1.1µs"],
    [2_200_000n, "2.2ms"],
    [300_000_000n, "300ms"],
    [1_000_000_000n, "1s"],
    [1_500_000_000n, "1.5s"],
    [90_000_000_000n, "1m30s"],
    [600_000_000_000n, "10m0s"],
    [3_600_000_000_000n, "1h0m0s"],
    [3_723_004_005_006n, "1h2m3.004005006s"],
    [-90_000_000_000n, "-1m30s"],
  ];
  for (const [ns, s] of cases) assert.equal(formatDurationNs(ns), s, s);
  for (const s of ["10m0s", "5s", "1h0m0s", "1.5s", "300ms", "1µs"]) {
    assert.equal(formatDurationNs(parseDurationNs(s)), s);
  }
});

Deno.test("ParseIP: IPv4 and IPv6 literals only, canonical output", () => {
  const ok: [string, string][] = [
    ["0.0.0.0", "0.0.0.0"],
    ["127.0.0.1", "127.0.0.1"],
    [" 10.1.2.3 ", "10.1.2.3"],
    ["::", "::"],
    ["::1", "::1"],
    ["FD00:0:0:0:0:0:0:1", "fd00::1"],
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
    ["::ffff:1.2.3.4", "1.2.3.4"],
    ["::1.2.3.4", "::102:304"],
    ["1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"],
  ];
  for (const [s, want] of ok) assert.equal(parseIP(s), want, s);
  for (
    const s of [
      "",
      "localhost",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "01.2.3.4",
      "1.2.3.4/24",
      "[::1]",
      "fe80::1%eth0",
      ":::",
      "1::2::3",
      "12345::",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
    ]
  ) {
    assert.throws(() => parseIP(s), /^Error: not an IP address \(use an IPv4 or IPv6 literal\)$/, s);
  }
});

Deno.test("CSV record: commas split, double quotes quote, errors on bare quotes", () => {
  assert.deepEqual(readCsvRecord(""), []);
  assert.deepEqual(readCsvRecord("a"), ["a"]);
  assert.deepEqual(readCsvRecord("a,b"), ["a", "b"]);
  assert.deepEqual(readCsvRecord('"a,b",c'), ["a,b", "c"]);
  assert.deepEqual(readCsvRecord('"say ""hi""",x'), ['say "hi"', "x"]);
  assert.deepEqual(readCsvRecord("a,"), ["a", ""]);
  assert.deepEqual(readCsvRecord(",a"), ["", "a"]);
  assert.deepEqual(readCsvRecord(" a , b"), [" a ", " b"]);
  for (const s of ['a"b', '"a', '"a"b', "a\nb"]) {
    assert.throws(
      () => readCsvRecord(s),
      /^Error: (bare " in non-quoted-field|extraneous or missing " in quoted-field|a list value must be on one line)$/,
      s,
    );
  }
  assert.equal(writeCsvRecord(["a", "b,c", 'q"'] as string[]), 'a,"b,c","q"""');
});
