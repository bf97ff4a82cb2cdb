import assert from "node:assert/strict";
import { KINDS } from "../../lib/flags/kinds.ts";
import { defaultsOf } from "../../lib/flags/parse.ts";
import { type OptionSpec, RELEASES, releasesOf, runTable } from "../../lib/flags/table.ts";
import { validateFlags } from "../../lib/flags/validate.ts";

/** Hand-transcribed from the spec, independent of the table. */
const fixture: Record<string, Record<string, unknown>> = JSON.parse(
  Deno.readTextFileSync(new URL("./spec_fixture.json", import.meta.url)),
);
delete fixture._about;
const all: Record<string, OptionSpec> = runTable;
/** The options of the specification: every entry but this product's own (`ours`). */
const table: Record<string, OptionSpec> = Object.fromEntries(Object.entries(all).filter(([, s]) => !s.ours));

Deno.test("the option table and the hand-made spec fixture name the same options (but the product's own)", () => {
  assert.deepEqual(Object.keys(table).sort(), Object.keys(fixture).sort());
});

Deno.test("the product's own options are in every release and recorded in a document that names them", () => {
  const own = Object.entries(all).filter(([, s]) => s.ours);
  assert.ok(own.some(([n]) => n === "gateway-proxies-in-gateway-namespace"));
  for (const [name, spec] of own) {
    assert.deepEqual(releasesOf(spec), [...RELEASES], name);
    const doc = Deno.readTextFileSync(new URL(`../../${spec.ours}`, import.meta.url));
    assert.ok(doc.includes(`--${name}`), `${spec.ours} names --${name}`);
  }
});

for (const name of Object.keys(fixture)) {
  Deno.test(`spec fixture: --${name} has the spec's releases, defaults and type`, () => {
    const spec = table[name];
    assert.ok(spec, `--${name} is missing from the table`);
    const want = fixture[name];
    assert.deepEqual(releasesOf(spec), RELEASES.filter((r) => r in want), "releases");
    for (const r of releasesOf(spec)) {
      const got = KINDS[spec.kind].toJson(defaultsOf(runTable, r).get(name));
      assert.deepEqual(got, want[r], `default in ${r}`);
      const typeName = spec.typeNameIn?.[r] ?? (KINDS[spec.kind].typeName || "bool");
      const wantType = (r === "C" && want.typeC) || want.type;
      assert.equal(typeName, wantType, `type in ${r}`);
    }
  });
}

Deno.test("spec section 9: release-specific option groups", () => {
  const only = (rs: string) => Object.keys(table).filter((n) => releasesOf(table[n]).join("") === rs).sort();
  assert.deepEqual(only("A"), [
    "audit-log-truncate-enabled",
    "audit-log-truncate-max-batch-size",
    "audit-log-truncate-max-event-size",
    "audit-log-version",
    "audit-webhook-truncate-enabled",
    "audit-webhook-truncate-max-batch-size",
    "audit-webhook-truncate-max-event-size",
    "audit-webhook-version",
    "authorization-always-allow-paths",
    "bypass-validating-webhook-xray",
    "enable-status-subresource",
    "enable-validating-webhook",
    "log-flush-frequency",
    "use-apiserver-fqdn-for-managed-cluster",
  ]);
  assert.deepEqual(only("C"), ["address", "analytics", "tls-ca-file"]);
  assert.deepEqual(only("B"), ["ops-address"]);
  const ab = only("AB");
  for (const n of ab) {
    assert.match(
      n,
      /^(audit-log-batch-|audit-log-mode$|audit-webhook-batch-|audit-webhook-initial-backoff$|http2-max-streams-per-connection$|tls-cipher-suites$|tls-min-version$|validate-proxy-config$|enable-analytics$)/,
    );
  }
  // log batch (6) + log mode + webhook batch (6) + initial backoff + the 5 named ones.
  assert.equal(ab.length, 6 + 1 + 6 + 1 + 5);
  assert.deepEqual(only("BC"), []);
  assert.deepEqual(only("AC"), []);
});

Deno.test("every release's defaults pass the release's own validation", () => {
  for (const release of RELEASES) {
    const values = defaultsOf(runTable, release);
    validateFlags(runTable, { release, values, given: new Set(), args: [], occurrences: [] });
  }
});

Deno.test("renames are symmetric and never overlap within a release", () => {
  for (const [name, spec] of Object.entries(table)) {
    if (!spec.sameAs) continue;
    const other = table[spec.sameAs];
    assert.equal(other.sameAs, name, `${spec.sameAs}.sameAs`);
    assert.deepEqual(releasesOf(spec).filter((r) => releasesOf(other).includes(r)), [], name);
  }
});
