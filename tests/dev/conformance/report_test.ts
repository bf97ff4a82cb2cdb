/**
 * Reading the conformance suite's report and log (lib/dev/conformance/report.ts):
 * - a ConformanceReport as the suite writes it (statistics keys capitalised, profiles null when the
 *   suite stopped early) parses; anything else is refused with the reason;
 * - the log's outcomes are the direct subtests of TestConformance (nested subtests and other
 *   tests ignored, indentation and parallel `=== CONT` lines as `go test -v` prints them);
 * - the summary takes the report's core statistics when it has the profile, else counts every core
 *   test not passed as failed; its last line is exactly `N passed, M failed`; only all passed,
 *   none skipped, is conformant;
 * - failed assertions are read with the test they belong to: TestConformance's own (the suite
 *   stopping before its tests) and each failed test's reason, from real logs.
 */
import assert from "node:assert/strict";
import {
  assertionErrors,
  conformant,
  coreSummary,
  extendedFailures,
  parseReport,
  suiteOutcome,
  summaryLines,
  testOutcomes,
} from "../../../lib/dev/conformance/report.ts";
import { CORE_TESTS, GRPC_CORE_TESTS, PROFILES, TLS_CORE_TESTS } from "../../../lib/dev/conformance/core_tests.ts";

const report = (core: string, profiles = true) =>
  `apiVersion: gateway.networking.k8s.io/v1
date: "2026-11-27T18:00:00Z"
gatewayAPIChannel: standard
gatewayAPIVersion: v1.6.3
implementation:
  contact:
  - '@ingress-controller/maintainers'
  organization: ingress-controller
  project: ingress-controller
  url: https://example.org/ingress-controller
  version: 9.0.0
kind: ConformanceReport
mode: default
${
    profiles
      ? `profiles:
- core:
${core}
  extended:
    result: success
    statistics:
      Failed: 0
      Passed: 0
      Skipped: 58
    unsupportedFeatures:
    - HTTPRouteMethodMatching
  name: GATEWAY-HTTP
  summary: Core tests failed with 2 test failures.`
      : "profiles: null"
  }
`;

const failing = `    failedTests:
    - HTTPRouteWeight
    - HTTPRouteMultipleGateways
    result: failure
    statistics:
      Failed: 2
      Passed: 34
      Skipped: 0`;

const log = [
  "=== RUN   TestConformance",
  "=== RUN   TestConformance/HTTPRouteSimpleSameNamespace",
  "=== PAUSE TestConformance/HTTPRouteSimpleSameNamespace",
  "=== RUN   TestConformance/HTTPRouteWeight",
  "=== CONT  TestConformance/HTTPRouteSimpleSameNamespace",
  "=== RUN   TestConformance/HTTPRouteMethodMatching",
  "    suite.go:123: Skipping HTTPRouteMethodMatching: suite does not support HTTPRouteMethodMatching",
  "--- FAIL: TestConformance (612.30s)",
  "    --- SKIP: TestConformance/HTTPRouteMethodMatching (0.00s)",
  "    --- FAIL: TestConformance/HTTPRouteWeight (40.10s)",
  "        --- PASS: TestConformance/HTTPRouteWeight/0_request_to_'/' (3.00s)",
  "        --- FAIL: TestConformance/HTTPRouteWeight/weights (37.00s)",
  "    --- PASS: TestConformance/HTTPRouteSimpleSameNamespace (4.20s)",
  "--- PASS: TestConformanceOptions (0.00s)",
  "FAIL",
].join("\n");

Deno.test("a ConformanceReport parses; other documents are refused with the reason", () => {
  const r = parseReport(report(failing));
  assert.equal(r.gatewayAPIVersion, "v1.6.3");
  assert.equal(r.profiles?.[0].name, "GATEWAY-HTTP");
  assert.deepEqual(r.profiles?.[0].core.statistics, { Failed: 2, Passed: 34, Skipped: 0 });
  assert.equal(parseReport(report("", false)).profiles, null);
  assert.throws(() => parseReport("kind: Pod\n"), /not a ConformanceReport \(kind: "Pod"\)/);
  assert.throws(() => parseReport(""), /not a ConformanceReport/);
  assert.throws(
    () => parseReport(report("    result: failure\n    statistics:\n      Passed: x")),
    /profile GATEWAY-HTTP has no core statistics/,
  );
});

Deno.test("the log's outcomes are TestConformance's direct subtests", () => {
  const o = testOutcomes(log);
  assert.deepEqual(Object.fromEntries(o), {
    HTTPRouteMethodMatching: "SKIP",
    HTTPRouteWeight: "FAIL",
    HTTPRouteSimpleSameNamespace: "PASS",
  });
  assert.deepEqual(suiteOutcome(log), { outcome: "FAIL", seconds: 612.3 });
  assert.equal(suiteOutcome("=== RUN   TestConformance\npanic: boom\n"), null);
});

Deno.test("with the profile in the report, its core statistics are the numbers; names come from the log", () => {
  const r = parseReport(report(failing));
  const s = coreSummary(CORE_TESTS, testOutcomes(log), r, "GATEWAY-HTTP");
  assert.equal(s.source, "report");
  assert.deepEqual([s.passed, s.failed, s.skipped, s.result], [34, 2, 0, "failure"]);
  assert.deepEqual(s.byOutcome.passed, ["HTTPRouteSimpleSameNamespace"]);
  assert.deepEqual(s.byOutcome.failed, ["HTTPRouteWeight"]);
  assert.equal(s.byOutcome.notRun.length, 34);
  // The log of this fixture shows 1 pass where the report counts 34: said, not hidden.
  assert.deepEqual(s.notes, ["the report says 34 core tests passed, the log shows 1"]);
  const lines = summaryLines(s, r);
  assert.equal(lines.at(-1), "34 passed, 2 failed");
  assert.ok(lines.includes("GATEWAY-HTTP core: result failure, 34 passed, 2 failed, 0 skipped (from the report)"));
  assert.ok(lines.some((l) => l.startsWith("  GATEWAY-HTTP extended: success, 0 passed, 0 failed, 58 skipped")));
  assert.equal(conformant(s), false);
});

Deno.test("only every core test passed, none skipped, is conformant", () => {
  const all = new Map(CORE_TESTS.map((t) => [t, "PASS" as const]));
  const stats = (p: number, f: number, sk: number, result: string) =>
    `    result: ${result}\n    statistics:\n      Failed: ${f}\n      Passed: ${p}\n      Skipped: ${sk}`;
  const ok = coreSummary(CORE_TESTS, all, parseReport(report(stats(36, 0, 0, "success"))), "GATEWAY-HTTP");
  assert.equal(conformant(ok), true);
  assert.deepEqual(ok.notes, []);
  assert.equal(summaryLines(ok, null).at(-1), "36 passed, 0 failed");
  const partial = coreSummary(CORE_TESTS, all, parseReport(report(stats(35, 0, 1, "partial"))), "GATEWAY-HTTP");
  assert.equal(conformant(partial), false);
  assert.equal(summaryLines(partial, null).at(-1), "35 passed, 0 failed");
  // A report counting another number of core tests than the harness knows is named.
  const more = coreSummary(CORE_TESTS, all, parseReport(report(stats(37, 0, 0, "success"))), "GATEWAY-HTTP");
  assert.match(more.notes[0], /the report counts 37 core tests, this harness knows 36/);
});

Deno.test("without the profile in the report, every core test not passed counts as failed", () => {
  const outcomes = testOutcomes(log);
  const s = coreSummary(CORE_TESTS, outcomes, parseReport(report("", false)), "GATEWAY-HTTP");
  assert.equal(s.source, "log");
  assert.deepEqual([s.passed, s.failed, s.skipped], [1, 35, 0]);
  assert.deepEqual(s.notes, ["34 core tests were not run (the report has no GATEWAY-HTTP profile): counted as failed"]);
  assert.equal(summaryLines(s, null).at(-1), "1 passed, 35 failed");
  const none = coreSummary(CORE_TESTS, new Map(), null, "GATEWAY-HTTP");
  assert.deepEqual([none.passed, none.failed], [0, 36]);
  assert.equal(summaryLines(none, null).at(-1), "0 passed, 36 failed");
  assert.equal(conformant(none), false);
});

Deno.test("the suite's own assertion is quoted (a real log: no supported features on the GatewayClass)", async () => {
  const real = await Deno.readTextFile(new URL("./fixtures/no_features.txt", import.meta.url));
  assert.deepEqual(assertionErrors(real), [{
    test: "TestConformance",
    message: "Received unexpected error: no supported features were determined for test suite " +
      "error initializing conformance suite",
  }]);
  assert.deepEqual(suiteOutcome(real), { outcome: "FAIL", seconds: 0.01 });
  assert.deepEqual(testOutcomes(real).size, 0);
});

// A real run focused on one test (-run-test=HTTPRouteSimpleSameNamespace), whose setup got past the
// Gateways' readiness because their status had been set by hand: the report and the log as written.
Deno.test("a real report and log of one test: the report's numbers, the failed test and its reason", async () => {
  const log = await Deno.readTextFile(new URL("./fixtures/one_test.txt", import.meta.url));
  const r = parseReport(await Deno.readTextFile(new URL("./fixtures/one_test_report.yaml", import.meta.url)));
  const errors = assertionErrors(log);
  assert.deepEqual(errors, [{
    test: "TestConformance/HTTPRouteSimpleSameNamespace",
    message: "Received unexpected error: context deadline exceeded " +
      "error waiting for Gateway to have at least one IP address in status",
  }]);
  const s = coreSummary(CORE_TESTS, testOutcomes(log), r, "GATEWAY-HTTP", errors);
  assert.deepEqual([s.source, s.result, s.passed, s.failed, s.skipped], ["report", "failure", 0, 1, 35]);
  assert.deepEqual(s.notes, [], "the report counts the 36 core tests the harness knows");
  assert.deepEqual(s.byOutcome.failed, ["HTTPRouteSimpleSameNamespace"]);
  assert.equal(s.byOutcome.skipped.length, 35);
  assert.deepEqual(r.profiles?.[0].core.failedTests, ["HTTPRouteSimpleSameNamespace"]);
  const lines = summaryLines(s, r);
  assert.ok(lines.includes(
    "    HTTPRouteSimpleSameNamespace: Received unexpected error: context deadline exceeded " +
      "error waiting for Gateway to have at least one IP address in status",
  ));
  assert.equal(lines.at(-1), "0 passed, 1 failed");
  assert.equal(conformant(s), false);
});

Deno.test("the core list is the 36 GATEWAY-HTTP core tests of suite v1.6.3, each once", () => {
  assert.equal(CORE_TESTS.length, 36);
  assert.equal(new Set(CORE_TESTS).size, 36);
  assert.ok(!CORE_TESTS.includes("GatewayInvalidParametersRef"), "left core in v1.6.3");
  assert.ok(!CORE_TESTS.includes("HTTPRouteDisallowedKind"), "needs TLSRoute");
});

Deno.test("the GATEWAY-TLS core list: the 10 Gateway-only tests and the 9 TLSRoute tests of suite v1.6.3", () => {
  assert.equal(TLS_CORE_TESTS.length, 19);
  assert.equal(new Set(TLS_CORE_TESTS).size, 19);
  assert.equal(TLS_CORE_TESTS.filter((t) => t.startsWith("TLSRoute")).length, 9);
  assert.ok(!TLS_CORE_TESTS.some((t) => t.startsWith("HTTPRoute")), "HTTPRoute is not in its core");
  assert.ok(!TLS_CORE_TESTS.includes("GatewayWithAttachedRoutes"), "needs HTTPRoute");
  assert.ok(!TLS_CORE_TESTS.includes("TLSRouteTerminateSimpleSameNamespace"), "extended: TLSRouteModeTerminate");
  assert.deepEqual(PROFILES.map((p) => p.name), ["GATEWAY-HTTP", "GATEWAY-GRPC", "GATEWAY-TLS"]);
});

Deno.test("two profiles: each one's core lines, the last line sums their core tests", () => {
  const http = coreSummary(CORE_TESTS, new Map(CORE_TESTS.map((t) => [t, "PASS" as const])), null, "GATEWAY-HTTP");
  const tls = coreSummary(
    TLS_CORE_TESTS,
    new Map([["TLSRouteSimpleSameNamespace", "FAIL" as const]]),
    null,
    "GATEWAY-TLS",
  );
  const lines = summaryLines([http, tls], null);
  assert.ok(lines.some((l) => l.startsWith("GATEWAY-HTTP core: 36 passed, 0 failed")), lines.join("\n"));
  assert.ok(lines.some((l) => l.startsWith("GATEWAY-TLS core: 0 passed, 19 failed")), lines.join("\n"));
  assert.equal(lines.at(-1), "36 passed, 19 failed");
  assert.equal(conformant(http), true);
  assert.equal(conformant(tls), false);
});

Deno.test("extended tests that failed: the report's list (a claimed feature must pass); none for success or no profile", () => {
  const withExtended = (extended: string) =>
    parseReport(
      report(`    result: success
    statistics:
      Failed: 0
      Passed: 36
      Skipped: 0`).replace(
        / {2}extended:\n(?: {4}.*\n)+/,
        `  extended:\n${extended}`,
      ),
    );
  assert.deepEqual(extendedFailures(parseReport(report(failing)), "GATEWAY-HTTP"), []);
  const failed = withExtended(`    failedTests:
    - HTTPRouteCORS
    result: failure
    statistics:
      Failed: 1
      Passed: 26
      Skipped: 0
    supportedFeatures:
    - HTTPRouteCORS
`);
  assert.deepEqual(extendedFailures(failed, "GATEWAY-HTTP"), ["HTTPRouteCORS"]);
  const unnamed = withExtended(`    result: failure
    statistics:
      Failed: 1
      Passed: 0
      Skipped: 0
`);
  assert.deepEqual(extendedFailures(unnamed, "GATEWAY-HTTP"), ["(the report names none)"]);
  assert.deepEqual(extendedFailures(failed, "GATEWAY-TLS"), []);
  assert.deepEqual(extendedFailures(null, "GATEWAY-HTTP"), []);
});

Deno.test("the GATEWAY-GRPC core tests of suite v1.6.3: the 10 Gateway-only ones and the 4 GRPCRoute ones", () => {
  assert.equal(GRPC_CORE_TESTS.length, 14);
  assert.equal(new Set(GRPC_CORE_TESTS).size, 14);
  for (const t of GRPC_CORE_TESTS) {
    assert.ok(t.startsWith("GRPC") || CORE_TESTS.includes(t), `${t}: a Gateway-only test is core in GATEWAY-HTTP too`);
  }
  assert.ok(!GRPC_CORE_TESTS.includes("GatewayWithAttachedRoutes"), "needs HTTPRoute");
  assert.ok(!GRPC_CORE_TESTS.includes("GRPCRouteNamedRule"), "needs GRPCRouteNamedRouteRule (extended)");
  assert.deepEqual(PROFILES.map((p) => p.name), ["GATEWAY-HTTP", "GATEWAY-GRPC", "GATEWAY-TLS"]);
});
