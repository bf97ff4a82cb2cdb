/**
 * @module lib/dev/conformance/report
 * Reading what the conformance suite left: its report (`ConformanceReport` YAML, written by
 * `-report-output`) and its `-test.v` log (one `--- PASS|FAIL|SKIP: TestConformance/<test>` line per
 * test it ran), and the summary `deno task conformance` prints from them: the core tests of the
 * profile by outcome, the report's own statistics, and as the last line `N passed, M failed`.
 *
 * The report's core statistics are the official numbers when the suite got as far as writing a
 * profile; when it stopped before (its setup failed, or it crashed) every core test it did not
 * pass counts as failed, since none was run.
 */
import { parse } from "yaml";

export interface Statistics {
  Passed: number;
  Failed: number;
  Skipped: number;
}

export interface LevelStatus {
  result: string;
  statistics: Statistics;
  skippedTests?: string[];
  failedTests?: string[];
}

export interface ProfileReport {
  name: string;
  summary?: string;
  core: LevelStatus;
  extended?: LevelStatus & { supportedFeatures?: string[]; unsupportedFeatures?: string[] };
}

/** The fields of the suite's ConformanceReport (sigs.k8s.io/gateway-api/conformance/apis/v1) the summary reads. */
export interface ConformanceReport {
  apiVersion: string;
  kind: "ConformanceReport";
  date?: string;
  gatewayAPIVersion?: string;
  gatewayAPIChannel?: string;
  mode?: string;
  implementation?: { organization?: string; project?: string; url?: string; version?: string; contact?: string[] };
  profiles: ProfileReport[] | null;
}

/** Parses a report; throws naming what is wrong when the text is not a ConformanceReport. */
export function parseReport(text: string): ConformanceReport {
  const doc = parse(text) as Partial<ConformanceReport> | null;
  if (!doc || typeof doc !== "object" || doc.kind !== "ConformanceReport") {
    throw new Error(`not a ConformanceReport (kind: ${JSON.stringify(doc?.kind ?? null)})`);
  }
  const profiles = doc.profiles ?? null;
  if (profiles !== null && !Array.isArray(profiles)) throw new Error("ConformanceReport: profiles is not a list");
  for (const p of profiles ?? []) {
    const s = p?.core?.statistics;
    if (!s || ![s.Passed, s.Failed, s.Skipped].every((n) => Number.isInteger(n) && n >= 0)) {
      throw new Error(`ConformanceReport: profile ${p?.name ?? "?"} has no core statistics`);
    }
  }
  return { ...doc, profiles } as ConformanceReport;
}

export type Outcome = "PASS" | "FAIL" | "SKIP";

const resultLine = /^\s*--- (PASS|FAIL|SKIP): TestConformance\/([^/\s]+) \(/gm;
const suiteLine = /^\s*--- (PASS|FAIL|SKIP): TestConformance \(([\d.]+)s\)/m;

/** The outcome of each test the suite ran (its direct subtests of TestConformance), from the `-test.v` log. */
export function testOutcomes(log: string): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const m of log.matchAll(resultLine)) out.set(m[2], m[1] as Outcome);
  return out;
}

/** TestConformance's own outcome and seconds, or null when the log has no such line (the binary died). */
export function suiteOutcome(log: string): { outcome: Outcome; seconds: number } | null {
  const m = log.match(suiteLine);
  return m ? { outcome: m[1] as Outcome, seconds: Number(m[2]) } : null;
}

/** One failed assertion of the log: the test it failed (`TestConformance` or `TestConformance/<test>`) and why. */
export interface AssertionError {
  test: string;
  message: string;
}

/**
 * The failed assertions of the log, in order: testify's `Error:` and `Messages:` fields with the
 * `Test:` field naming where (the suite itself, e.g. "no supported features were determined for
 * test suite" or a setup wait that timed out, or one of its tests).
 */
export function assertionErrors(log: string): AssertionError[] {
  const out: AssertionError[] = [];
  const lines = log.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s+\S+\.go:\d+: *$/.test(lines[i])) continue;
    const fields = new Map<string, string[]>();
    let field = "";
    // testify's fields: `<spaces>\t<Name>:<spaces>\t<value>`, continued as `<spaces>\t<spaces>\t<value>`.
    for (let j = i + 1; j < lines.length; j++) {
      const m = lines[j].match(/^\s+\t([A-Za-z ]*?):?\s*\t(.*)$/);
      if (!m) break;
      if (m[1].trim()) field = m[1].trim();
      if (!fields.has(field)) fields.set(field, []);
      fields.get(field)!.push(m[2].trim());
    }
    const message = ["Error", "Messages"].flatMap((f) => fields.get(f) ?? []).filter(Boolean).join(" ");
    const test = fields.get("Test")?.[0];
    if (message && test) out.push({ test, message });
  }
  return out;
}

export interface CoreSummary {
  profile: string;
  passed: number;
  failed: number;
  skipped: number;
  /** Where the numbers come from: the report's core statistics, or the log when the report has no profile. */
  source: "report" | "log";
  /** The report's core result (success, partial, failure), when it has the profile. */
  result?: string;
  /** Core tests by outcome, from the log; `notRun`: core tests the log has no outcome for. */
  byOutcome: { passed: string[]; failed: string[]; skipped: string[]; notRun: string[] };
  /** Disagreements worth a line (the report's numbers against the log's, an unexpected core count). */
  notes: string[];
  /** Why each failed core test failed: its first failed assertion in the log. */
  reasons: Map<string, string>;
}

/** The core tests' summary from the report (when it has `profile`) and the log's outcomes. */
export function coreSummary(
  coreTests: readonly string[],
  outcomes: Map<string, Outcome>,
  report: ConformanceReport | null,
  profile: string,
  errors: readonly AssertionError[] = [],
): CoreSummary {
  const reasons = new Map<string, string>();
  for (const e of errors) {
    const name = e.test.startsWith("TestConformance/") ? e.test.slice("TestConformance/".length).split("/")[0] : "";
    if (name && outcomes.get(name) === "FAIL" && !reasons.has(name)) reasons.set(name, e.message);
  }
  const byOutcome = { passed: [] as string[], failed: [] as string[], skipped: [] as string[], notRun: [] as string[] };
  for (const name of coreTests) {
    const o = outcomes.get(name);
    (o === "PASS"
      ? byOutcome.passed
      : o === "FAIL"
      ? byOutcome.failed
      : o === "SKIP"
      ? byOutcome.skipped
      : byOutcome.notRun)
      .push(name);
  }
  const notes: string[] = [];
  const p = report?.profiles?.find((x) => x.name === profile);
  if (p) {
    const s = p.core.statistics;
    const total = s.Passed + s.Failed + s.Skipped;
    if (total !== coreTests.length) {
      notes.push(`the report counts ${total} core tests, this harness knows ${coreTests.length}: update core_tests.ts`);
    }
    if (s.Passed !== byOutcome.passed.length) {
      notes.push(`the report says ${s.Passed} core tests passed, the log shows ${byOutcome.passed.length}`);
    }
    return {
      profile,
      passed: s.Passed,
      failed: s.Failed,
      skipped: s.Skipped,
      source: "report",
      result: p.core.result,
      byOutcome,
      notes,
      reasons,
    };
  }
  const skipped = byOutcome.skipped.length;
  const passed = byOutcome.passed.length;
  if (byOutcome.notRun.length > 0) {
    notes.push(
      `${byOutcome.notRun.length} core tests were not run (${
        report ? "the report has no " + profile + " profile" : "no report"
      }): counted as failed`,
    );
  }
  return {
    profile,
    passed,
    failed: coreTests.length - passed - skipped,
    skipped,
    source: "log",
    byOutcome,
    notes,
    reasons,
  };
}

/** All core tests passed, none failed or skipped. */
export function conformant(s: CoreSummary): boolean {
  return s.failed === 0 && s.skipped === 0 && s.passed > 0 && (s.source === "log" || s.result === "success");
}

/**
 * The extended tests of `profile` that failed: the class claims exactly the features whose tests
 * pass here, so any failure means a claim to withdraw or a bug to fix (a failed result without a
 * list counts as one unnamed failure).
 */
export function extendedFailures(report: ConformanceReport | null, profile: string): string[] {
  const e = report?.profiles?.find((p) => p.name === profile)?.extended;
  if (!e) return [];
  const failed = e.failedTests ?? [];
  if (failed.length > 0) return [...failed];
  return e.result === "failure" || e.statistics.Failed > 0 ? ["(the report names none)"] : [];
}

/** The report's own lines: its API version, channel, mode, and each profile's summary and extended result. */
export function reportLines(report: ConformanceReport | null): string[] {
  const lines: string[] = [];
  if (report) {
    lines.push(
      `suite report: Gateway API ${report.gatewayAPIVersion ?? "?"} (${report.gatewayAPIChannel ?? "?"} channel), ` +
        `mode ${report.mode ?? "?"}, profiles: ${(report.profiles ?? []).map((p) => p.name).join(", ") || "none"}`,
    );
    for (const p of report.profiles ?? []) {
      if (p.summary) lines.push(`  ${p.name}: ${p.summary}`);
      if (p.extended) {
        const e = p.extended.statistics;
        lines.push(
          `  ${p.name} extended: ${p.extended.result}, ${e.Passed} passed, ${e.Failed} failed, ${e.Skipped} skipped; ` +
            `features claimed: ${(p.extended.supportedFeatures ?? []).join(", ") || "none"}`,
        );
      }
    }
  } else {
    lines.push("suite report: none was written");
  }
  return lines;
}

/** One profile's core lines: the counts, the tests by outcome, why each failed, the notes. */
export function coreLines(s: CoreSummary): string[] {
  const lines: string[] = [];
  const list = (what: string, names: string[]) => {
    if (names.length > 0) lines.push(`  ${what} (${names.length}): ${names.join(", ")}`);
  };
  lines.push(
    `${s.profile} core: ${s.source === "report" ? `result ${s.result}, ` : ""}${s.passed} passed, ` +
      `${s.failed} failed, ${s.skipped} skipped (from the ${s.source === "report" ? "report" : "log"})`,
  );
  list("passed", s.byOutcome.passed);
  list("failed", s.byOutcome.failed);
  for (const name of s.byOutcome.failed) {
    const why = s.reasons.get(name);
    if (why) lines.push(`    ${name}: ${why.length > 200 ? why.slice(0, 200) + "…" : why}`);
  }
  list("skipped", s.byOutcome.skipped);
  list("not run", s.byOutcome.notRun);
  for (const n of s.notes) lines.push(`  note: ${n}`);
  return lines;
}

/**
 * The printed summary of one or more profiles; its last line is exactly `N passed, M failed`: the
 * core tests of every profile (a test in the core of two profiles counts in each).
 */
export function summaryLines(s: CoreSummary | readonly CoreSummary[], report: ConformanceReport | null): string[] {
  const all = Array.isArray(s) ? s as readonly CoreSummary[] : [s as CoreSummary];
  const lines = reportLines(report);
  for (const one of all) lines.push(...coreLines(one));
  const passed = all.reduce((n, x) => n + x.passed, 0);
  const failed = all.reduce((n, x) => n + x.failed, 0);
  lines.push(`${passed} passed, ${failed} failed`);
  return lines;
}
