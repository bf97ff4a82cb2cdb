import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { type Fields, jsonSink, type Level, log, type Sink, textSink } from "../../lib/log/logger.ts";
import { emitOther, emitTraced, vHere } from "./fixtures/emitter.ts";

interface Entry {
  level: Level;
  msg: string;
  fields: Fields;
  stack?: string;
}

/** Runs `body` with the logger writing to a list, then puts the default logger back. */
function withCapture(opts: Parameters<typeof log.configure>[0], body: (entries: Entry[]) => void): void {
  const entries: Entry[] = [];
  const sink: Sink = { write: (level, msg, fields, stack) => entries.push({ level, msg, fields, stack }) };
  log.configure({ sink, level: "info", verbosity: 0, vmodule: null, backtraceAt: null, ...opts });
  try {
    body(entries);
  } finally {
    log.configure({ sink: textSink(), level: "info", verbosity: 0, vmodule: null, backtraceAt: null });
  }
}

/** `log.v(n)` at one call site of this file. */
function vTest(n: number): boolean {
  return log.v(n) !== undefined;
}

const EMITTER = new URL("./fixtures/emitter.ts", import.meta.url);
/** The line of the statement that logs `msg` in fixtures/emitter.ts. */
function emitterLine(msg: string): number {
  const lines = readFileSync(EMITTER, "utf-8").split("\n");
  const i = lines.findIndex((l) => l.includes(`log.info("${msg}")`));
  assert.ok(i >= 0, msg);
  return i + 1;
}

Deno.test("--vmodule gives each calling file its level; elsewhere -v applies", () => {
  withCapture({ vmodule: "emitter=3" }, () => {
    assert.equal(vHere(3), true);
    assert.equal(vHere(4), false);
    assert.equal(vTest(1), false, "no pattern matches logger_test: -v 0");
  });
  withCapture({ vmodule: "logger_test=2", verbosity: 1 }, () => {
    assert.equal(vTest(2), true);
    assert.equal(vTest(3), false);
    assert.equal(vHere(1), true, "-v 1 still applies to other files");
    assert.equal(vHere(2), false);
  });
});

Deno.test("--vmodule: globs, path patterns, first match wins, -v is a floor as in klog", () => {
  const table: [vmodule: string, verbosity: number, n: number, want: boolean][] = [
    ["emit*=2", 0, 2, true],
    ["emit?er=2", 0, 2, true],
    ["emit?=2", 0, 1, false],
    ["log/fixtures/*=4", 0, 4, true],
    ["tests/log/*=4", 0, 1, false], // `*` does not cross into fixtures/
    ["fixtures/emitter=5,emitter=1", 0, 5, true],
    ["emitter=1,fixtures/emitter=5", 0, 2, false],
    ["emitter=0", 3, 3, true], // klog: enabled at -v or at the file's level, whichever is higher
    ["other=9", 2, 3, false],
    ["other=9", 2, 2, true],
  ];
  for (const [vmodule, verbosity, n, want] of table) {
    withCapture({ vmodule, verbosity }, () => {
      assert.equal(vHere(n), want, `--vmodule=${vmodule} -v=${verbosity}: v(${n})`);
    });
  }
});

Deno.test("--vmodule: a call site's cached level is dropped when the logger is configured again", () => {
  withCapture({ vmodule: "logger_test=4" }, () => {
    assert.equal(vTest(4), true);
    log.configure({ vmodule: "logger_test=1" });
    assert.equal(vTest(4), false);
    assert.equal(vTest(1), true);
    log.configure({ vmodule: null });
    assert.equal(vTest(1), false);
  });
});

Deno.test("--log_backtrace_at adds the stack at exactly that file:line", () => {
  const line = emitterLine("traced statement");
  withCapture({ backtraceAt: `emitter.ts:${line}` }, (entries) => {
    emitTraced();
    emitOther();
    log.info("from the test file");
    assert.deepEqual(entries.map((e) => [e.msg, e.stack !== undefined]), [
      ["traced statement", true],
      ["other statement", false],
      ["from the test file", false],
    ]);
    const frames = entries[0].stack!.split("\n");
    assert.match(frames[0], new RegExp(`^\\s+at emitTraced \\(.*/tests/log/fixtures/emitter\\.ts:${line}:\\d+\\)$`));
    assert.ok(frames.some((f) => /logger_test\.ts:\d+:\d+/.test(f)), "the callers follow");
    assert.ok(frames.every((f) => !f.includes("lib/log/logger.ts")), "the logger's own frames are left out");
  });
  for (const other of [`emitter.ts:${line + 1}`, `logger_test.ts:${line}`, `emitter.js:${line}`, ":0"]) {
    withCapture({ backtraceAt: other }, (entries) => {
      emitTraced();
      assert.equal(entries[0].stack, undefined, other);
    });
  }
});

Deno.test("a stack trace: a `stack` field in JSON (one line per entry), following lines in text", () => {
  const lines: string[] = [];
  jsonSink((l) => lines.push(l)).write(
    "info",
    "m",
    { k: 1 },
    "    at a (file:///x.ts:1:1)\n    at b (file:///y.ts:2:2)",
  );
  textSink((l) => lines.push(l)).write("info", "m", { k: 1 }, "    at a (file:///x.ts:1:1)");
  textSink((l) => lines.push(l)).write("info", "plain", {});
  jsonSink((l) => lines.push(l)).write("info", "plain", {});
  assert.equal(lines[0].includes("\n"), false);
  const entry = JSON.parse(lines[0]);
  assert.deepEqual([entry.msg, entry.k, entry.stack], [
    "m",
    1,
    "    at a (file:///x.ts:1:1)\n    at b (file:///y.ts:2:2)",
  ]);
  assert.match(lines[1], /^\S+ INFO m k=1\n {4}at a \(file:\/\/\/x\.ts:1:1\)$/);
  assert.match(lines[2], /^\S+ INFO plain$/);
  assert.equal("stack" in JSON.parse(lines[3]), false);
});
