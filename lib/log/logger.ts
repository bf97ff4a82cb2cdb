/**
 * @module log/logger
 * The process logger. Every module logs through `log`; `configureLogger` (driven by the
 * `--log.*` and klog-style options) decides target, format, level and verbosity.
 */

export type Level = "debug" | "info" | "warn" | "error" | "fatal";
const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

export type Fields = Record<string, unknown>;
export interface Sink {
  write(level: Level, msg: string, fields: Fields): void;
}

/** Plain text to stderr: `2026-11-22T01:02:03.456Z INFO message key=value`. */
export function textSink(write: (line: string) => void = (l) => console.error(l)): Sink {
  return {
    write(level, msg, fields) {
      const kv = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : safe(v)}`);
      write([new Date().toISOString(), level.toUpperCase(), msg, ...kv].join(" "));
    },
  };
}

/** One JSON object per line. */
export function jsonSink(write: (line: string) => void = (l) => console.error(l)): Sink {
  return {
    write(level, msg, fields) {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
    },
  };
}

function safe(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

class Logger {
  #sink: Sink = textSink();
  #min: Level = "info";
  #verbosity = 0;

  configure(opts: { sink?: Sink; level?: Level; verbosity?: number }): void {
    if (opts.sink) this.#sink = opts.sink;
    if (opts.level) this.#min = opts.level;
    if (opts.verbosity !== undefined) this.#verbosity = opts.verbosity;
  }

  enabled(level: Level): boolean {
    return rank[level] >= rank[this.#min];
  }

  /** klog-style verbosity gate: `log.v(4)?.info("…")`. */
  v(n: number): Logger | undefined {
    return n <= this.#verbosity ? this : undefined;
  }

  debug(msg: string, fields: Fields = {}): void {
    this.#emit("debug", msg, fields);
  }
  info(msg: string, fields: Fields = {}): void {
    this.#emit("info", msg, fields);
  }
  warn(msg: string, fields: Fields = {}): void {
    this.#emit("warn", msg, fields);
  }
  error(msg: string, fields: Fields = {}): void {
    this.#emit("error", msg, fields);
  }

  #emit(level: Level, msg: string, fields: Fields): void {
    if (this.enabled(level)) this.#sink.write(level, msg, fields);
  }
}

/** The one logger of the process. */
export const log = new Logger();
