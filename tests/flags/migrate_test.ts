import assert from "node:assert/strict";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { migrateFlags } from "../../lib/flags/migrate.ts";
import { type OptionSpec, type Release, RELEASES, releasesOf, runTable } from "../../lib/flags/table.ts";

const table: Record<string, OptionSpec> = runTable;

Deno.test("C → A: renames, drops with advice, default changes noted", () => {
  const m = migrateFlags("C", "A", ["--analytics=false", "--address=:9", "--tls-ca-file=/ca.pem", "-v3", "--rbac"]);
  assert.deepEqual(m.flags, ["--enable-analytics=false", "--v=3", "--rbac"]);
  assert.deepEqual(m.notes, [
    "--analytics: renamed to --enable-analytics in release A",
    "--address: dropped, no equivalent in release A (it exists in C); release A has no separate web interface and telemetry listener; remove the option",
    "--tls-ca-file: dropped, no equivalent in release A (it exists in C); append the CA certificate to the file given in --tls-cert-file",
    "--logtostderr: default changes from false (release C) to true (release A); add --logtostderr=false to keep the old behaviour",
  ]);
});

Deno.test("C ↔ B: --address is --ops-address", () => {
  assert.deepEqual(migrateFlags("C", "B", ["--address=:8080"]).flags, ["--ops-address=:8080"]);
  assert.deepEqual(migrateFlags("B", "C", ["--ops-address", ":8080"]).flags, ["--address=:8080"]);
});

Deno.test("A → C: A-only options dropped with the reason; B default differences noted", () => {
  const m = migrateFlags("A", "B", ["--enable-status-subresource", "--audit-log-mode=batch"]);
  assert.deepEqual(m.flags, ["--audit-log-mode=batch"]);
  assert.ok(
    m.notes.some((n) =>
      n.startsWith("--enable-status-subresource: dropped, no equivalent in release B (it exists in A)")
    ),
  );
  assert.ok(m.notes.includes(
    "--audit-log-batch-max-size: default changes from 1 (release A) to 400 (release B); add --audit-log-batch-max-size=1 to keep the old behaviour",
  ));
  assert.ok(
    m.notes.some((n) => n.startsWith("--logtostderr: default changes from true (release A) to false (release B)")),
  );
  assert.ok(!m.notes.some((n) => n.includes("image-tag")), "image tags follow the release");
});

Deno.test("a value equal to the source default that the target changes is kept and noted", () => {
  const m = migrateFlags("A", "B", ["--audit-log-batch-max-size=1"]);
  assert.deepEqual(m.flags, ["--audit-log-batch-max-size=1"]);
  assert.ok(m.notes.includes(
    "--audit-log-batch-max-size=1: kept as given; it was the default of release A, release B's default is 400",
  ));
  const custom = migrateFlags("A", "B", ["--audit-log-batch-max-size=7"]);
  assert.ok(!custom.notes.some((n) => n.includes("audit-log-batch-max-size")), "explicit non-default value: no note");
});

Deno.test("values the target release rejects are dropped with the allowed values", () => {
  const m = migrateFlags("B", "A", ["--tls-min-version=VersionTLS13", "--tls-cipher-suites=TLS_AES_128_GCM_SHA256"]);
  assert.deepEqual(m.flags, []);
  assert.match(
    m.notes[0],
    /^--tls-min-version=VersionTLS13: dropped, release A does not accept VersionTLS13; choose from VersionTLS10/,
  );
  assert.match(m.notes[1], /^--tls-cipher-suites=TLS_AES_128_GCM_SHA256: dropped/);
});

Deno.test("bad source flags are reported as for run", () => {
  assert.throws(
    () => migrateFlags("A", "B", ["--ops-address=:1"]),
    /--ops-address is not an option of release A; it exists in B/,
  );
  assert.throws(() => migrateFlags("A", "B", ["--secure-port=x"]), /invalid value "x" for --secure-port/);
});

/** A valid value for every option common to two releases (no file options: those need files). */
/** A valid value for each option with a syntax check of its own. */
const checkedSamples: Record<string, string> = { "proxy.server-metric-fields": "2,4,7", "cloud-provider": "gke" };

function sampleFlags(from: Release, to: Release): string[] {
  const samples: Record<string, string> = {
    string: "x",
    int: "7",
    float: "2.5",
    float32: "2.5",
    duration: "1m30s",
    strings: "a,b",
    ip: "127.0.0.1",
    logFormat: "logger:stdout?json=true",
    logLevel: "debug",
    severity: "WARNING",
    traceLocation: "main.go:3",
    level: "4",
    moduleSpec: "x=2",
    crdKinds: "prometheus=Prometheus:prometheuses",
  };
  const out: string[] = [];
  for (const [name, spec] of Object.entries(table)) {
    if (name === "help" || spec.file || spec.kind === "namedCertKey") continue;
    const target = releasesOf(spec).includes(to) ? name : spec.sameAs;
    if (!releasesOf(spec).includes(from) || !target || !releasesOf(table[target]).includes(to)) continue;
    const allowed = spec.oneOfIn?.[from] ?? spec.oneOf;
    const value = allowed
      ? allowed.find((v) => (table[target].oneOfIn?.[to] ?? table[target].oneOf)!.includes(v))
      : undefined;
    if (spec.kind === "bool") out.push(`--${name}=false`);
    else out.push(`--${name}=${value ?? (spec.check ? checkedSamples[name] : samples[spec.kind])}`);
  }
  return out;
}

for (const [a, b] of [["A", "B"], ["B", "C"], ["A", "C"]] as const) {
  Deno.test(`round trip ${a} → ${b} → ${a} keeps every common option and its effective value`, () => {
    const flags = sampleFlags(a, b);
    assert.ok(flags.length > 20);
    const there = migrateFlags(a, b, flags);
    const back = migrateFlags(b, a, there.flags);
    assert.deepEqual(back.flags, flags);
    assert.deepEqual(
      parseRunFlags(a, back.flags).toOptionsJson(),
      parseRunFlags(a, flags).toOptionsJson(),
    );
    // Valid in the target release as well.
    parseRunFlags(b, there.flags);
  });
}

Deno.test("migrating to the same release changes nothing", () => {
  for (const r of RELEASES) {
    const flags = sampleFlags(r, r);
    const m = migrateFlags(r, r, flags);
    assert.deepEqual(m.flags, flags);
    assert.deepEqual(m.notes, []);
  }
});
