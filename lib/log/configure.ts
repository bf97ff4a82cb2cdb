/**
 * @module log/configure
 * Applies the logging options of `run` to the process logger: `--log.format`
 * (`logger:stdout|stderr[?json=true]`), `--log.level`, `-v`, and the klog file options
 * (`--log_dir` with `--logtostderr=false`: every line goes to `<log_dir>/ingress-controller.log`, and
 * the `--log.format` target keeps only lines at or above `--stderrthreshold` (default ERROR) unless
 * `--alsologtostderr`, as klog does). `logger:syslog` is refused: this runtime has no syslog client.
 * The file is buffered and flushed every `--log-flush-frequency` (5s in releases without the option),
 * at once after an error line, and on close or exit (lib/log/buffered_file.ts); stderr and stdout
 * are written unbuffered. `--vmodule` and `--log_backtrace_at` are applied by the logger to the
 * TypeScript source files (lib/log/vmodule.ts, lib/log/logger.ts).
 */

import { SetupError } from "../common/errors.ts";
import { BufferedFile } from "./buffered_file.ts";
import { parseLogFormat } from "./format.ts";
import { jsonSink, type Level, log, type Sink, textSink } from "./logger.ts";

/** The logging options (lib/flags/log_settings.ts reads them from the run configuration). */
export interface LogSettings {
  readonly format: string;
  readonly level: Level;
  readonly verbosity: number;
  readonly logDir: string | null;
  readonly logToStderr: boolean;
  readonly alsoLogToStderr: boolean;
  /** klog severity name; null = ERROR. */
  readonly stderrThreshold: "INFO" | "WARNING" | "ERROR" | "FATAL" | null;
  /** `--vmodule` (`pattern=N,…`); null/undefined = none. */
  readonly vmodule?: string | null;
  /** `--log_backtrace_at` (`file.ts:N`); ":0"/null/undefined = none. */
  readonly backtraceAt?: string | null;
  /** `--log-flush-frequency` in ms; undefined = klog's 5s (releases without the option); 0 = unbuffered. */
  readonly flushFrequencyMs?: number;
}

/** klog's flush interval, used where the release has no `--log-flush-frequency`. */
const DEFAULT_FLUSH_MS = 5000;

const LEVEL_OF_SEVERITY = { INFO: "info", WARNING: "warn", ERROR: "error", FATAL: "fatal" } as const;
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

/**
 * Configures the process logger; the returned function flushes and closes the log file, if one was
 * opened (call it on every way out of `run`; `Deno.exit` and an uncaught error flush it too).
 */
export function configureLogging(s: LogSettings, out = {
  stdout: (line: string) => console.log(line),
  stderr: (line: string) => console.error(line),
}): () => void {
  const format = parseLogFormat(s.format);
  if (format.target === "syslog") {
    throw new SetupError(
      `--log.format ${JSON.stringify(s.format)}: this build cannot write to syslog; use logger:stderr or logger:stdout`,
    );
  }
  const makeSink = format.json ? jsonSink : textSink;
  const main = makeSink(format.target === "stdout" ? out.stdout : out.stderr);
  const sinks: Sink[] = [main];
  let file: BufferedFile | undefined;
  if (s.logDir && !s.logToStderr) {
    if (!s.alsoLogToStderr) {
      const min = RANK[LEVEL_OF_SEVERITY[s.stderrThreshold ?? "ERROR"]];
      sinks[0] = {
        write: (level, msg, fields, stack) => RANK[level] >= min && main.write(level, msg, fields, stack),
      };
    }
    const path = `${s.logDir}/ingress-controller.log`;
    let opened: Deno.FsFile;
    try {
      opened = Deno.openSync(path, { append: true, create: true });
    } catch (err) {
      throw new SetupError(`--log_dir ${JSON.stringify(s.logDir)}: cannot open ${path}: ${(err as Error).message}`);
    }
    const f = file = new BufferedFile(opened, s.flushFrequencyMs ?? DEFAULT_FLUSH_MS);
    // The sink formats one line; whether it is urgent depends on the level, known only here.
    let urgent = false;
    const fileSink = makeSink((line) => f.write(line, urgent));
    sinks.push({
      write(level, msg, fields, stack) {
        urgent = RANK[level] >= RANK.error;
        fileSink.write(level, msg, fields, stack);
      },
    });
  }
  log.configure({
    sink: { write: (level, msg, fields, stack) => sinks.forEach((sink) => sink.write(level, msg, fields, stack)) },
    level: s.level,
    verbosity: s.verbosity,
    vmodule: s.vmodule ?? null,
    backtraceAt: s.backtraceAt ?? null,
  });
  return () => file?.close();
}
