import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SetupError, UsageError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { type Json, KINDS } from "../../lib/flags/kinds.ts";
import { parseFlags } from "../../lib/flags/parse.ts";
import {
  type Kind,
  oneOfIn,
  type OptionSpec,
  type Release,
  RELEASES,
  releasesOf,
  type RunOptionName,
  runTable,
} from "../../lib/flags/table.ts";

const dir = mkdtempSync(join(tmpdir(), "flags-parse-"));
const fileA = join(dir, "a.pem");
const fileB = join(dir, "b.pem");
writeFileSync(fileA, "x");
writeFileSync(fileB, "y");
globalThis.addEventListener("unload", () => rmSync(dir, { recursive: true, force: true }));

const table: Record<string, OptionSpec> = runTable;
const optionsJson = (release: Release, argv: string[]) => parseRunFlags(release, argv).toOptionsJson().options;

/** Accepted text → value in the options JSON, and rejected texts, for each kind (no enum/file rules). */
const SAMPLES: Record<Kind, { ok: [string, Json][]; bad: string[] }> = {
  string: { ok: [["x", "x"], ["", ""], ["a b=c", "a b=c"]], bad: [] },
  bool: { ok: [["true", true], ["F", false], ["1", true], ["False", false]], bad: ["yes", "2", ""] },
  int: { ok: [["0x10", 16], ["010", 8], ["1_0", 10], ["42", 42]], bad: ["1.5", "x", "", "0x"] },
  float: { ok: [["1e+06", 1e6], ["1E6", 1e6], [".5", 0.5], ["3", 3]], bad: ["x", "", "1,5"] },
  float32: { ok: [["2.5", 2.5], ["1E2", 100]], bad: ["x", "1e39"] },
  duration: {
    ok: [["1m30s", "1m30s"], ["0", "0s"], ["1.5h", "1h30m0s"], ["100us", "100µs"], ["90s", "1m30s"]],
    bad: ["10", "x", "1d", ""],
  },
  strings: { ok: [["a,b", ["a", "b"]], ['"x,y",z', ["x,y", "z"]], ["", []]], bad: ['a"b'] },
  ip: { ok: [["::1", "::1"], ["10.0.0.1", "10.0.0.1"]], bad: ["x", "", "10.0.0.256"] },
  namedCertKey: { ok: [], bad: ["onlyone", "a,b:"] },
  logFormat: {
    ok: [
      ["logger:stdout?json=true", "logger:stdout?json=true"],
      ["logger:syslog?appname=bob&local=7", "logger:syslog?appname=bob&local=7"],
      ["logger:stderr", "logger:stderr"],
    ],
    bad: ["stderr", "file:x", "logger:file", "logger:stdout?color=1", "logger:syslog?local=9"],
  },
  logLevel: { ok: [["debug", "debug"], ["WARN", "warn"], ["fatal", "fatal"]], bad: ["trace", "warning!"] },
  severity: { ok: [["warning", "WARNING"], ["2", "ERROR"], ["FATAL", "FATAL"]], bad: ["4", "x", "-1"] },
  traceLocation: { ok: [["main.go:10", "main.go:10"], [":0", ":0"]], bad: ["main:10", "x.go:0", "x.go", "x.go:a"] },
  level: { ok: [["3", 3], ["0", 0]], bad: ["-1", "x", "0x3"] },
  moduleSpec: { ok: [["foo=2,bar*=3", "foo=2,bar*=3"], ["foo=0,", "foo=0,"]], bad: ["foo", "foo=x", "=1", "a=-1"] },
  crdKinds: {
    ok: [["prometheus=Prometheus:prometheuses,servicemonitor=ServiceMonitor:servicemonitors", null]],
    bad: ["Prometheus=Prometheus", "x=A:b", "prometheus=Prometheus"],
  },
};

/** Flags an option needs beside it to be valid (both TLS files go together). */
const companions: Record<string, string[]> = {
  "tls-cert-file": [`--tls-private-key-file=${fileB}`],
  "tls-private-key-file": [`--tls-cert-file=${fileB}`],
};

/** Options whose table entry has a syntax check of its own, with forms it accepts and refuses. */
const checked: Record<string, { ok: string[]; bad: string[] }> = {
  "proxy.server-metric-fields": { ok: ["2,4,7", "", "44"], bad: ["4,99", "x", "4;7", "-1"] },
  "cloud-provider": { ok: ["aws", "aks", "baremetal", ""], bad: ["amazon", "AWS", "toString", "aws,gce"] },
};

function accepted(name: string, spec: OptionSpec, release: Release): [string, Json][] {
  if (spec.file) {
    if (spec.kind === "namedCertKey") {
      return [[`${fileA},${fileB}:a.example.com, *.b.example.com`, [{
        certFile: fileA,
        keyFile: fileB,
        names: ["a.example.com", "*.b.example.com"],
      }]]];
    }
    return companions[name] ? [[fileA, fileA]] : [[fileA, fileA], ["", ""]];
  }
  if (checked[name]) return checked[name].ok.map((v) => [v, v]);
  const allowed = oneOfIn(spec, release);
  if (allowed) {
    const pick = [allowed[0], allowed[allowed.length - 1]];
    return pick.map((v) => [v, spec.kind === "strings" ? [v] : v]);
  }
  return SAMPLES[spec.kind].ok.map(([raw, json]): [string, Json] => [raw, json === null ? raw : json]).filter((
    [raw],
  ) => !(spec.min === 0 && raw.startsWith("-")) && !(name === "secure-port" && Number(raw) > 65535));
}

function rejected(name: string, spec: OptionSpec, release: Release): string[] {
  const bad = checked[name]
    ? [...checked[name].bad]
    : spec.file
    ? spec.kind === "namedCertKey"
      ? [...SAMPLES.namedCertKey.bad, `${fileA},${dir}/missing.pem`]
      : [`${dir}/missing`, dir]
    : oneOfIn(spec, release)
    ? ["not-a-value"]
    : [...SAMPLES[spec.kind].bad];
  if (spec.min === 0) bad.push(spec.kind === "duration" ? "-1s" : "-1");
  if (spec.max !== undefined) bad.push(String(spec.max + 1));
  return bad;
}

for (const release of RELEASES) {
  Deno.test(`release ${release}: every option accepts its valid forms (=value and separate value)`, () => {
    for (const [name, spec] of Object.entries(table)) {
      if (!releasesOf(spec).includes(release) || name === "help") continue;
      for (const [raw, want] of accepted(name, spec, release)) {
        const extra = companions[name] ?? [];
        assert.deepEqual(optionsJson(release, [`--${name}=${raw}`, ...extra])[name], want, `--${name}=${raw}`);
        if (!KINDS[spec.kind].isBool) {
          assert.deepEqual(optionsJson(release, [`--${name}`, raw, ...extra])[name], want, `--${name} ${raw}`);
        }
      }
      if (KINDS[spec.kind].isBool) assert.equal(optionsJson(release, [`--${name}`])[name], true, `--${name}`);
    }
  });

  Deno.test(`release ${release}: every option rejects bad values with one line naming option and value`, () => {
    for (const [name, spec] of Object.entries(table)) {
      if (!releasesOf(spec).includes(release) || name === "help") continue;
      for (const raw of rejected(name, spec, release)) {
        assert.throws(
          () => parseRunFlags(release, [`--${name}=${raw}`, ...(companions[name] ?? [])]),
          (err: Error) => {
            assert.ok(err instanceof UsageError || err instanceof SetupError, `${name}=${raw}: ${err}`);
            assert.ok(err.message.includes(`--${name}`), `names the option: ${err.message}`);
            const parts = raw.split(/[,:]/).filter((p) => p !== "");
            const named = err.message.includes(JSON.stringify(raw)) || parts.some((p) => err.message.includes(p));
            assert.ok(named || raw === "", `names the value: ${err.message}`);
            assert.doesNotMatch(err.message, /\n/);
            return true;
          },
          `--${name}=${raw} must be rejected`,
        );
      }
    }
  });

  Deno.test(`release ${release}: options of other releases are named as such`, () => {
    for (const [name, spec] of Object.entries(table)) {
      if (releasesOf(spec).includes(release)) continue;
      assert.throws(
        () => parseRunFlags(release, [`--${name}=1`]),
        new UsageError(`--${name} is not an option of release ${release}; it exists in ${releasesOf(spec).join(", ")}`),
      );
    }
  });
}

Deno.test("the issue's example: --ops-address in A", () => {
  assert.throws(
    () => parseRunFlags("A", ["--ops-address=:1"]),
    { message: "--ops-address is not an option of release A; it exists in B" },
  );
  assert.throws(() => parseRunFlags("A", ["--no-such-option"]), /unknown option --no-such-option/);
});

Deno.test("pflag: last value wins for scalars", () => {
  assert.equal(parseRunFlags("A", ["--secure-port=1", "--secure-port", "2"]).get("secure-port"), 2);
  assert.equal(parseRunFlags("A", ["--rbac", "--rbac=false"]).get("rbac"), false);
});

Deno.test("pflag: list flags — first occurrence replaces the default, later ones append", () => {
  const c = parseRunFlags("A", [
    "--requestheader-username-headers=a",
    "--requestheader-username-headers",
    'b,"c,d"',
  ]);
  assert.deepEqual(c.get("requestheader-username-headers"), ["a", "b", "c,d"]);
  assert.deepEqual(parseRunFlags("A", ["--requestheader-username-headers="]).get("requestheader-username-headers"), []);
  assert.deepEqual(parseRunFlags("A", []).get("requestheader-username-headers"), ["x-remote-user"]);
  const sni = parseRunFlags("A", [`--tls-sni-cert-key=${fileA},${fileB}`, `--tls-sni-cert-key=${fileB},${fileA}:x.io`]);
  assert.deepEqual(sni.get("tls-sni-cert-key"), [
    { certFile: fileA, keyFile: fileB, names: [] },
    { certFile: fileB, keyFile: fileA, names: ["x.io"] },
  ]);
});

Deno.test("pflag: shorthands -v 3, -v=3, -v3, combined -hv3, --v=3", () => {
  for (const argv of [["-v", "3"], ["-v=3"], ["-v3"], ["--v=3"], ["--v", "3"]]) {
    assert.equal(parseRunFlags("A", argv).get("v"), 3, argv.join(" "));
  }
  const c = parseRunFlags("A", ["-hv3"]);
  assert.equal(c.get("help"), true);
  assert.equal(c.get("v"), 3);
  assert.throws(() => parseRunFlags("A", ["-v"]), /flag needs an argument: 'v' in -v/);
  assert.throws(() => parseRunFlags("A", ["-x"]), /unknown shorthand flag: 'x' in -x/);
  assert.throws(
    () => parseRunFlags("A", ["-kubeconfig=/x"]),
    /unknown shorthand flag: 'k' in -kubeconfig=\/x; long options take two dashes: --kubeconfig/,
  );
});

Deno.test("pflag: bool forms; a separate word after a switch is not its value", () => {
  for (
    const [raw, want] of [["1", true], ["t", true], ["T", true], ["TRUE", true], ["0", false], ["f", false]] as const
  ) {
    assert.equal(parseRunFlags("A", [`--profiling=${raw}`]).get("profiling"), want, raw);
  }
  assert.throws(() => parseRunFlags("A", ["--profiling", "false"]), /run takes no arguments, got "false"/);
});

Deno.test("pflag: -- ends the flags; a non-bool flag takes the next word whatever it is", () => {
  const p = parseFlags(runTable, "A", ["--rbac", "--", "--secure-port=1", "x"]);
  assert.deepEqual(p.args, ["--secure-port=1", "x"]);
  assert.equal(p.values.get("secure-port"), 443);
  assert.equal(parseRunFlags("A", ["--ingress-class", "--rbac"]).get("ingress-class"), "--rbac");
  assert.equal(parseRunFlags("A", ["--ingress-class=a=b"]).get("ingress-class"), "a=b");
  assert.throws(() => parseRunFlags("A", ["--secure-port"]), /flag needs an argument: --secure-port/);
  assert.throws(() => parseRunFlags("A", ["---secure-port=1"]), /bad flag syntax: ---secure-port=1/);
  assert.throws(() => parseRunFlags("A", ["--=1"]), /bad flag syntax/);
});

Deno.test("--help skips validation so a broken command line still gets help", () => {
  assert.equal(parseRunFlags("A", ["--secure-port=-1", "--help"]).get("help"), true);
});

Deno.test("Config: typed values, durations in ms, null when unset, undefined when absent, frozen", () => {
  const c = parseRunFlags("B", ["--resync-period=1m30s", "--qps=.5"]);
  assert.equal(c.release, "B");
  assert.equal(c.version, "7.0.0-rc.2");
  assert.equal(c.get("resync-period"), 90000);
  assert.equal(c.get("proxy.timeout"), 5000);
  assert.equal(c.get("qps"), 0.5);
  assert.equal(c.get("kubeconfig"), null);
  assert.equal(c.get("ops-address"), ":56790");
  assert.equal(c.get("address"), undefined);
  assert.equal(c.has("address"), false);
  assert.equal(c.has("ops-address"), true);
  assert.equal(c.isGiven("qps"), true);
  assert.equal(c.isGiven("burst"), false);
  assert.ok(Object.isFrozen(c));
  assert.ok(
    Object.isFrozen(c.get("requestheader-group-headers")) || Array.isArray(c.get("requestheader-group-headers")),
  );
  const name: RunOptionName = "secure-port";
  const port: number = c.get(name);
  assert.equal(port, 443);
});

Deno.test("every option with a syntax check of its own has accepted and refused samples here", () => {
  const withCheck = Object.entries(table).filter(([, spec]) => spec.check).map(([name]) => name).sort();
  assert.deepEqual(withCheck, Object.keys(checked).sort());
});
