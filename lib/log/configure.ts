/**
 * @module log/configure
 * Applies the logging options of `run` to the process logger: `--log.format`
 * (`logger:stdout|stderr[?json=true]`), `--log.level`, `-v`, and the klog file options
 * (`--log_dir` with `--logtostderr=false`: every line goes to `<log_dir>/ingress-controller.log`, and
 * the `--log.format` target keeps only lines at or above `--stderrthreshold` (default ERROR) unless
 * `--alsologtostderr`, as klog does). `logger:syslog` is refused: this runtime has no syslog client.
 * `--vmodule`, `--log_backtrace_at` and `--log-flush-frequency` are accepted and have no effect
 * (there are no Go source files to match, and every line is written at once).
 */

import { SetupError } from "../errors.ts";
import type { Config } from "../flags/config.ts";
import { parseLogFormat } from "../flags/kinds.ts";
import { jsonSink, type Level, log, type Sink, textSink } from "./logger.ts";

/** The logging options, as `config.get` returns them. */
export interface LogSettings {
  readonly format: string;
  readonly level: Level;
  readonly verbosity: number;
  readonly logDir: string | null;
  readonly logToStderr: boolean;
  readonly alsoLogToStderr: boolean;
  /** klog severity name; null = ERROR. */
  readonly stderrThreshold: "INFO" | "WARNING" | "ERROR" | "FATAL" | null;
}

const LEVEL_OF_SEVERITY = { INFO: "info", WARNING: "warn", ERROR: "error", FATAL: "fatal" } as const;
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

/** Adapter from the run configuration. */
export function logSettingsFromConfig(config: Config): LogSettings {
  return {
    format: config.get("log.format"),
    level: config.get("log.level"),
    verbosity: config.get("v"),
    logDir: config.get("log_dir"),
    logToStderr: config.get("logtostderr"),
    alsoLogToStderr: config.get("alsologtostderr"),
    stderrThreshold: config.get("stderrthreshold"),
  };
}

/** Configures the process logger; the returned function closes the log file, if one was opened. */
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
  let file: Deno.FsFile | undefined;
  if (s.logDir && !s.logToStderr) {
    if (!s.alsoLogToStderr) {
      const min = RANK[LEVEL_OF_SEVERITY[s.stderrThreshold ?? "ERROR"]];
      sinks[0] = { write: (level, msg, fields) => RANK[level] >= min && main.write(level, msg, fields) };
    }
    const path = `${s.logDir}/ingress-controller.log`;
    try {
      file = Deno.openSync(path, { append: true, create: true });
    } catch (err) {
      throw new SetupError(`--log_dir ${JSON.stringify(s.logDir)}: cannot open ${path}: ${(err as Error).message}`);
    }
    const enc = new TextEncoder();
    const f = file;
    sinks.push(makeSink((line) => {
      const bytes = enc.encode(line + "\n");
      for (let done = 0; done < bytes.length;) done += f.writeSync(bytes.subarray(done));
    }));
  }
  log.configure({
    sink: { write: (level, msg, fields) => sinks.forEach((sink) => sink.write(level, msg, fields)) },
    level: s.level,
    verbosity: s.verbosity,
  });
  return () => file?.close();
}
