import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SetupError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { configureLogging } from "../../lib/log/configure.ts";
import { logSettingsFromConfig } from "../../lib/flags/log_settings.ts";
import { log } from "../../lib/log/logger.ts";
import { emitOther, emitTraced, vHere } from "./fixtures/emitter.ts";

function capture(argv: string[]) {
  const out = { stdout: [] as string[], stderr: [] as string[] };
  const close = configureLogging(logSettingsFromConfig(parseRunFlags("A", argv)), {
    stdout: (l) => out.stdout.push(l),
    stderr: (l) => out.stderr.push(l),
  });
  return { out, close };
}

Deno.test("--log.format target and json, --log.level and -v drive the logger", () => {
  const { out, close } = capture(["--log.format=logger:stdout?json=true", "--log.level=warn", "-v", "2"]);
  try {
    log.info("hidden");
    log.warn("shown", { k: 1 });
    log.v(2)?.error("v2");
    log.v(3)?.error("v3");
    assert.equal(out.stderr.length, 0);
    assert.deepEqual(out.stdout.map((l) => JSON.parse(l).msg), ["shown", "v2"]);
    assert.equal(JSON.parse(out.stdout[0]).k, 1);
  } finally {
    close();
    configureLogging(logSettingsFromConfig(parseRunFlags("A", [])));
  }
});

Deno.test("default: text lines on stderr at info", () => {
  const { out, close } = capture([]);
  try {
    log.debug("no");
    log.info("yes");
    assert.equal(out.stdout.length, 0);
    assert.equal(out.stderr.length, 1);
    assert.match(out.stderr[0], /^\S+ INFO yes$/);
  } finally {
    close();
  }
});

Deno.test("--log_dir with --logtostderr=false writes a log file; stderr keeps lines at --stderrthreshold", () => {
  const dir = mkdtempSync(join(tmpdir(), "log-"));
  try {
    const { out, close } = capture([`--log_dir=${dir}`, "--logtostderr=false"]);
    log.info("to file");
    log.error("to both");
    close();
    assert.deepEqual(out.stderr.map((l) => l.replace(/^\S+ /, "")), ["ERROR to both"]);
    assert.match(readFileSync(join(dir, "ingress-controller.log"), "utf-8"), /INFO to file\n.* ERROR to both\n$/);
    const warn = capture([`--log_dir=${dir}`, "--logtostderr=false", "--stderrthreshold=WARNING"]);
    log.info("file only");
    log.warn("warned");
    warn.close();
    assert.deepEqual(warn.out.stderr.map((l) => l.replace(/^\S+ /, "")), ["WARN warned"]);
    const also = capture([`--log_dir=${dir}`, "--logtostderr=false", "--alsologtostderr"]);
    log.info("everywhere");
    also.close();
    assert.deepEqual(also.out.stderr.map((l) => l.replace(/^\S+ /, "")), ["INFO everywhere"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    configureLogging(logSettingsFromConfig(parseRunFlags("A", [])));
  }
});

Deno.test("logger:syslog is refused with one clear line", () => {
  assert.throws(
    () => capture(["--log.format=logger:syslog?appname=bob&local=7"]),
    (err: Error) => err instanceof SetupError && /cannot write to syslog/.test(err.message),
  );
});

Deno.test("--vmodule and --log_backtrace_at from the command line reach the logger", () => {
  const source = readFileSync(new URL("./fixtures/emitter.ts", import.meta.url), "utf-8").split("\n");
  const line = source.findIndex((l) => l.includes('log.info("traced statement")')) + 1;
  assert.ok(line > 0);
  const { out, close } = capture([
    "--vmodule=other=1,fixtures/emitter=3",
    `--log_backtrace_at=emitter.ts:${line}`,
    "--log.format=logger:stdout?json=true",
  ]);
  try {
    assert.equal(vHere(3), true);
    assert.equal(vHere(4), false);
    assert.equal(log.v(1), undefined, "this file keeps -v 0");
    emitTraced();
    emitOther();
    assert.equal(out.stdout.length, 2);
    const [traced, other] = out.stdout.map((l) => JSON.parse(l));
    assert.match(traced.stack, new RegExp(`^ {4}at emitTraced \\(.*emitter\\.ts:${line}:\\d+\\)\\n`));
    assert.equal(other.stack, undefined);
  } finally {
    close();
    configureLogging(logSettingsFromConfig(parseRunFlags("A", [])));
  }
  assert.equal(vHere(1), false, "configuring again without the options clears them");
});
