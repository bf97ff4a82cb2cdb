/**
 * @module log/logger
 * The process logger. Every module logs through `log`; `configureLogging` (lib/log/configure.ts,
 * driven by the `--log.*` and klog-style options) decides target, format, level, verbosity,
 * per-file verbosity (`--vmodule`) and where a stack trace is added (`--log_backtrace_at`).
 */

import { baseName, firstFrame, parseFrame, stackAbove } from "./caller.ts";
import { moduleLevel, type ModulePattern, parseVModule } from "./vmodule.ts";

export type Level = "debug" | "info" | "warn" | "error" | "fatal";
const rank: Record<Level, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

export type Fields = Record<string, unknown>;
export interface Sink {
  /** `stack`: the stack trace `--log_backtrace_at` asked for at this statement, one `at …` frame a line. */
  write(level: Level, msg: string, fields: Fields, stack?: string): void;
}

/**
 * Plain text to stderr: `2026-11-22T01:02:03.456Z INFO message key=value`; a stack trace follows
 * on its own indented lines, as klog prints it.
 */
export function textSink(write: (line: string) => void = (l) => console.error(l)): Sink {
  return {
    write(level, msg, fields, stack) {
      const kv = Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? JSON.stringify(v) : safe(v)}`);
      const line = [new Date().toISOString(), level.toUpperCase(), msg, ...kv].join(" ");
      write(stack ? `${line}\n${stack}` : line);
    },
  };
}

/** One JSON object per line; a stack trace is the `stack` field, so an entry stays one line. */
export function jsonSink(write: (line: string) => void = (l) => console.error(l)): Sink {
  return {
    write(level, msg, fields, stack) {
      const entry = { time: new Date().toISOString(), level, msg, ...fields };
      write(JSON.stringify(stack ? { ...entry, stack } : entry));
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

/** `--log_backtrace_at`: a base name with extension and a line; null = none. */
export interface TraceLocation {
  readonly file: string;
  readonly line: number;
}

/** Parses a `--log_backtrace_at` value (validated by lib/flags/kinds.ts); ":0", "" or null = none. */
export function parseTraceLocation(raw: string | null | undefined): TraceLocation | null {
  if (!raw || raw === ":0") return null;
  const colon = raw.lastIndexOf(":");
  return { file: raw.slice(0, colon), line: Number(raw.slice(colon + 1)) };
}

/** Frames printed for `--log_backtrace_at` (V8's default of 10 often stops inside a library). */
const TRACE_DEPTH = 64;
/** Distinct call sites remembered for `--vmodule`; the source has far fewer, this only bounds a leak. */
const SITE_CACHE_MAX = 10_000;

/** What `configure` accepts; a field left out keeps its value. */
export interface LoggerOptions {
  sink?: Sink;
  level?: Level;
  verbosity?: number;
  /** `--vmodule` text (`pattern=N,…`); null or "" clears it. */
  vmodule?: string | null;
  /** `--log_backtrace_at` text (`file.ts:N`); null, "" or ":0" clears it. */
  backtraceAt?: string | null;
}

class Logger {
  #sink: Sink = textSink();
  #min: Level = "info";
  #verbosity = 0;
  /** null when `--vmodule` is unset: `v()` then never captures a stack. */
  #vmodule: ModulePattern[] | null = null;
  /** The highest level a `--vmodule` pattern gives: above it and `-v`, no caller can be enabled. */
  #vmoduleMax = 0;
  /** V level per call site (the caller's stack frame text). */
  #siteLevel = new Map<string, number>();
  #trace: TraceLocation | null = null;

  configure(opts: LoggerOptions): void {
    if (opts.sink) this.#sink = opts.sink;
    if (opts.level) this.#min = opts.level;
    if (opts.verbosity !== undefined) this.#verbosity = opts.verbosity;
    if (opts.vmodule !== undefined) {
      const patterns = parseVModule(opts.vmodule);
      this.#vmodule = patterns.length > 0 ? patterns : null;
      this.#vmoduleMax = Math.max(0, ...patterns.map((p) => p.level));
      this.#siteLevel.clear();
    }
    if (opts.backtraceAt !== undefined) this.#trace = parseTraceLocation(opts.backtraceAt);
  }

  enabled(level: Level): boolean {
    return rank[level] >= rank[this.#min];
  }

  /**
   * klog-style verbosity gate: `log.v(4)?.info("…")`. As in klog, `n` is enabled when it is at most
   * `-v`, or at most the level the first `--vmodule` pattern matching the calling file gives.
   */
  v(n: number): Logger | undefined {
    if (n <= this.#verbosity) return this;
    // Finding the caller costs a stack capture (several µs under Deno, which source-maps it): only
    // when a pattern could enable this level.
    if (this.#vmodule === null || n > this.#vmoduleMax) return undefined;
    return n <= this.#callerLevel(this.#vmodule) ? this : undefined;
  }

  #callerLevel(patterns: readonly ModulePattern[]): number {
    const site = firstFrame(stackAbove(Logger.prototype.v, 1));
    let level = this.#siteLevel.get(site);
    if (level === undefined) {
      const frame = parseFrame(site);
      level = (frame && moduleLevel(patterns, frame.path)) ?? 0;
      if (this.#siteLevel.size >= SITE_CACHE_MAX) this.#siteLevel.clear();
      this.#siteLevel.set(site, level);
    }
    return level;
  }

  debug(msg: string, fields: Fields = {}): void {
    this.#emit("debug", msg, fields, Logger.prototype.debug);
  }
  info(msg: string, fields: Fields = {}): void {
    this.#emit("info", msg, fields, Logger.prototype.info);
  }
  warn(msg: string, fields: Fields = {}): void {
    this.#emit("warn", msg, fields, Logger.prototype.warn);
  }
  error(msg: string, fields: Fields = {}): void {
    this.#emit("error", msg, fields, Logger.prototype.error);
  }

  /** `from`: the public method called, so the trace starts at its caller. */
  #emit(level: Level, msg: string, fields: Fields, from: (msg: string, fields?: Fields) => void): void {
    if (!this.enabled(level)) return;
    if (this.#trace === null) return this.#sink.write(level, msg, fields);
    // One frame first: the deep capture is paid only at the configured statement.
    const frame = parseFrame(firstFrame(stackAbove(from, 1)));
    const hit = frame !== null && frame.line === this.#trace.line && baseName(frame.path) === this.#trace.file;
    this.#sink.write(level, msg, fields, hit ? stackAbove(from, TRACE_DEPTH) : undefined);
  }
}

/** The one logger of the process. */
export const log = new Logger();
