import assert from "node:assert/strict";
import { flagUsages, runUsage } from "../../lib/flags/help.ts";
import {
  helpOf,
  type OptionSpec,
  proxyTable,
  RELEASES,
  releasesOf,
  runTable,
  VERSIONS,
} from "../../lib/flags/table.ts";

const table: Record<string, OptionSpec> = runTable;
const flagOf = (line: string) => /^\s+(?:-\w, )?--(\S+)/.exec(line)?.[1];

for (const release of RELEASES) {
  Deno.test(`help of release ${release}: every option of the release, sorted, none of another`, () => {
    const lines = flagUsages(runTable, release).trimEnd().split("\n");
    const names = lines.map(flagOf);
    const want = Object.keys(table).filter((n) => releasesOf(table[n]).includes(release)).sort();
    assert.deepEqual(names, want);
    // One column for the help texts: the longest flag is followed by exactly three spaces.
    const col = Math.max(...lines.map((l) => /^(\s+(?:-\w, )?--\S+(?: \S+)?)/.exec(l)![1].length)) + 3;
    for (const l of lines) {
      assert.match(l.slice(0, col), /\S {3,}$/, l);
      assert.ok(l.slice(col).startsWith(helpOf(table[flagOf(l)!], release)), `help starts at column ${col}: ${l}`);
    }
    assert.ok(runUsage(runTable, release, VERSIONS[release]).includes("Usage:\n  ingress-controller run [flags]"));
    assert.doesNotMatch(runUsage(runTable, release, VERSIONS[release]), /--work-dir|--configmap/, "proxy flags hidden");
  });
}

Deno.test("help lines look like pflag's: type names, quoting, zero defaults omitted", () => {
  const line = (release: "A" | "B" | "C", name: string) =>
    flagUsages(runTable, release).split("\n").find((l) => flagOf(l) === name)!.replace(/(\S)\s{3,}/, "$1   ");
  assert.equal(line("A", "help"), "  -h, --help   help for run");
  assert.equal(line("A", "v"), "  -v, --v Level   log level for V logs");
  assert.match(line("A", "secure-port"), /^ {6}--secure-port int {3}.* \(default 443\)$/);
  assert.match(line("A", "qps"), /^ {6}--qps float {3}.* \(default 1e\+06\)$/);
  assert.match(line("A", "burst"), /\(default 1000000\)$/);
  assert.match(line("A", "resync-period"), /^ {6}--resync-period duration {3}.*\(default 10m0s\)$/);
  assert.match(line("B", "ops-address"), /^ {6}--ops-address string {3}.*\(default ":56790"\)$/);
  assert.match(
    line("A", "bind-address"),
    /^ {6}--bind-address ip {3}.*:: for all IPv6 interfaces\)\. \(default 0\.0\.0\.0\)$/,
  );
  assert.match(line("C", "bind-address"), /\(0\.0\.0\.0\)\. \(default 0\.0\.0\.0\)$/);
  assert.match(line("A", "profiling"), /^ {6}--profiling {3}.*\(default true\)$/);
  assert.match(line("A", "rbac"), /^ {6}--rbac {3}Enable RBAC for operator & offshoot cluster objects$/);
  assert.match(line("A", "logtostderr"), /\(default true\)$/);
  assert.doesNotMatch(line("B", "logtostderr"), /default/);
  assert.match(
    line("A", "requestheader-username-headers"),
    /^ {6}--requestheader-username-headers strings {3}.*\(default \[x-remote-user\]\)$/,
  );
  assert.match(line("C", "requestheader-username-headers"), /--requestheader-username-headers stringSlice /);
  assert.doesNotMatch(line("A", "requestheader-allowed-names"), /default/);
  assert.match(line("A", "tls-sni-cert-key"), /^ {6}--tls-sni-cert-key namedCertKey {3}.*\(default \[\]\)$/);
  assert.match(line("A", "log.format"), /^ {6}--log.format logFormatFlag {3}.*\(default "logger:stderr"\)$/);
  assert.match(line("A", "log.level"), /^ {6}--log.level levelFlag {3}.*\(default "info"\)$/);
  assert.match(line("A", "log_backtrace_at"), /^ {6}--log_backtrace_at traceLocation {3}.*\(default :0\)$/);
  assert.match(
    line("A", "stderrthreshold"),
    /^ {6}--stderrthreshold severity {3}logs at or above this threshold go to stderr$/,
  );
  assert.match(line("A", "metrics-crd-kinds"), /--metrics-crd-kinds CrdKinds /);
  assert.match(line("A", "audit-log-batch-throttle-qps"), /--audit-log-batch-throttle-qps float32 {3}.*batch mode\.$/);
  assert.match(line("B", "audit-log-batch-throttle-qps"), /\(default 10\)$/);
  assert.doesNotMatch(line("A", "audit-log-batch-max-wait"), /default/);
  assert.match(line("B", "audit-log-batch-max-wait"), /\(default 30s\)$/);
  assert.doesNotMatch(line("A", "kubeconfig"), /default/);
});

Deno.test("help text differs where the releases' wording does", () => {
  const text = (r: "A" | "B" | "C") => flagUsages(runTable, r);
  assert.match(text("A"), /--requestheader-client-ca-file string .*WARNING: generally do not depend/);
  assert.doesNotMatch(text("B"), /WARNING: generally do not depend/);
  assert.match(text("B"), /--audit-log-format string .*AdvancedAuditing/);
  assert.doesNotMatch(text("A"), /--audit-log-format string .*AdvancedAuditing/);
  assert.match(text("A"), /--tls-min-version string .*Possible values: VersionTLS10, VersionTLS11, VersionTLS12/);
  assert.match(text("B"), /--tls-min-version string .*TLS package constants/);
  assert.match(text("A"), /--tls-cipher-suites strings .*Possible values: TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,/);
});

Deno.test("proxy command help lists its own flags", () => {
  const text = flagUsages(proxyTable, "A");
  assert.match(text, /--work-dir string {3}.*\(default "\/var\/run\/ingress-controller"\)/);
  assert.match(text, /--stats-port int {3}.*\(default 56789\)/);
});
