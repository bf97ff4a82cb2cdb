/**
 * @module log/configure
 * Applies the logging options of `run` to the process logger: `--log.format`
 * (`logger:stdout|stderr[?json=true]`), `--log.level`, `-v`, and the klog file options
 * (`--log_dir` with `--logtostderr=false`: every line is also appended to
 * `<log_dir>/ingress-controller.log`). `logger:syslog` is refused: this runtime has no syslog client.
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
}

/** Adapter from the run configuration. */
export function logSettingsFromConfig(config: Config): LogSettings {
  return {
    format: config.get("log.format"),
    level: config.get("log.level"),
    verbosity: config.get("v"),
    logDir: config.get("log_dir"),
    logToStderr: config.get("logtostderr"),
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
  const sinks: Sink[] = [makeSink(format.target === "stdout" ? out.stdout : out.stderr)];
  let file: Deno.FsFile | undefined;
  if (s.logDir && !s.logToStderr) {
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
