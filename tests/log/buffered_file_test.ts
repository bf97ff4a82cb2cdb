import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { configureLogging } from "../../lib/log/configure.ts";
import { logSettingsFromConfig } from "../../lib/flags/log_settings.ts";
import { log } from "../../lib/log/logger.ts";

/** A temporary --log_dir; the default logger is put back afterwards. */
async function withLogDir(body: (dir: string, read: () => string) => void | Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "log-buf-"));
  const read = () => readFileSync(join(dir, "ingress-controller.log"), "utf-8");
  try {
    await body(dir, read);
  } finally {
    configureLogging(logSettingsFromConfig(parseRunFlags("A", [])));
    rmSync(dir, { recursive: true, force: true });
  }
}

function fileLogging(dir: string, ...argv: string[]) {
  const stderr: string[] = [];
  const close = configureLogging(
    logSettingsFromConfig(parseRunFlags("A", [`--log_dir=${dir}`, "--logtostderr=false", ...argv])),
    { stdout: () => assert.fail("nothing goes to stdout"), stderr: (l) => stderr.push(l) },
  );
  return { close, stderr };
}

const messages = (text: string) => text.split("\n").filter(Boolean).map((l) => l.replace(/^\S+ /, ""));

Deno.test("the log file is flushed by the --log-flush-frequency timer, not at each line", async () => {
  await withLogDir(async (dir, read) => {
    const { close } = fileLogging(dir, "--log-flush-frequency=50ms");
    try {
      log.info("one");
      log.info("two");
      assert.equal(read(), "", "buffered until the interval");
      // Bounded wait for the timer (the assertion is on the content, not on the time taken).
      for (let i = 0; i < 200 && read() === ""; i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(messages(read()), ["INFO one", "INFO two"]);
      log.info("three");
      assert.deepEqual(messages(read()), ["INFO one", "INFO two"]);
    } finally {
      close();
    }
    assert.deepEqual(messages(read()), ["INFO one", "INFO two", "INFO three"]);
  });
});

Deno.test("an error line flushes at once, with the lines before it, in order; stderr is not buffered", async () => {
  await withLogDir((dir, read) => {
    const { close, stderr } = fileLogging(dir, "--log-flush-frequency=1h");
    try {
      log.info("before");
      log.warn("warned");
      assert.equal(read(), "");
      log.error("failed", { code: 7 });
      assert.deepEqual(messages(read()), ["INFO before", "WARN warned", "ERROR failed code=7"]);
      assert.deepEqual(messages(stderr.join("\n")), ["ERROR failed code=7"]);
      log.info("after");
      assert.equal(messages(read()).length, 3);
    } finally {
      close();
    }
    assert.deepEqual(messages(read()).at(-1), "INFO after");
  });
});

Deno.test("close flushes everything buffered: no line is lost on a normal stop", async () => {
  await withLogDir((dir, read) => {
    const { close } = fileLogging(dir, "--log-flush-frequency=1h", "--log.format=logger:stderr?json=true");
    for (let i = 0; i < 1000; i++) log.info("line", { i });
    close();
    log.info("after close is dropped, not thrown");
    const lines = read().trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 1000 }, (_, i) => i));
  });
});

Deno.test("--log-flush-frequency=0 writes each line at once; a full buffer is written without the timer", async () => {
  await withLogDir((dir, read) => {
    const zero = fileLogging(dir, "--log-flush-frequency=0");
    log.info("direct");
    assert.deepEqual(messages(read()), ["INFO direct"]);
    zero.close();
    const hour = fileLogging(dir, "--log-flush-frequency=1h");
    const big = "x".repeat(1024);
    for (let i = 0; i < 300; i++) log.info(big);
    const written = messages(read()).length;
    assert.ok(written > 1 && written < 301, `about 256 KiB written before close, got ${written} lines`);
    hour.close();
    assert.equal(messages(read()).length, 301);
  });
});

Deno.test("releases without --log-flush-frequency buffer the file too (klog's 5s)", async () => {
  assert.equal(logSettingsFromConfig(parseRunFlags("A", [])).flushFrequencyMs, 5000);
  assert.equal(logSettingsFromConfig(parseRunFlags("B", [])).flushFrequencyMs, undefined);
  await withLogDir((dir, read) => {
    const close = configureLogging(logSettingsFromConfig(parseRunFlags("B", [`--log_dir=${dir}`])), {
      stdout: () => {},
      stderr: () => {},
    });
    log.info("buffered in B");
    assert.equal(read(), "");
    close(); // also clears the 5 s timer: the sanitizers would fail this test otherwise
    assert.deepEqual(messages(read()), ["INFO buffered in B"]);
  });
});

for (const how of ["exit", "throw", "reject"]) {
  Deno.test(`buffered lines reach the file when the process leaves by ${how}`, async () => {
    await withLogDir(async (dir, read) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", new URL("./exit_writer.ts", import.meta.url).pathname, dir, how],
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.equal(out.success, how === "exit", new TextDecoder().decode(out.stderr));
      assert.deepEqual(messages(read()), [`INFO last words how="${how}"`]);
    });
  });
}
