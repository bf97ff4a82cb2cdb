/**
 * @module flags/log_settings
 * The logging options of `run`, read from the parsed configuration into the logger's own
 * settings type, so that lib/log knows nothing of the option table.
 */
import type { LogSettings } from "../log/configure.ts";
import type { Config } from "./config.ts";

/** The logger's settings from the run configuration. */
export function logSettingsFromConfig(config: Config): LogSettings {
  return {
    format: config.get("log.format"),
    level: config.get("log.level"),
    verbosity: config.get("v"),
    logDir: config.get("log_dir"),
    logToStderr: config.get("logtostderr"),
    alsoLogToStderr: config.get("alsologtostderr"),
    stderrThreshold: config.get("stderrthreshold"),
    vmodule: config.get("vmodule"),
    backtraceAt: config.get("log_backtrace_at"),
    flushFrequencyMs: config.get("log-flush-frequency") ?? undefined,
  };
}
