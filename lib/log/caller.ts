/**
 * @module log/caller
 * Where a log call comes from, read from a V8 stack capture: the call site text (a cache key for
 * `--vmodule`), its file and line (for `--log_backtrace_at`), and the stack to print.
 */

/** A source position of a stack frame. */
export interface Frame {
  /** The file path (decoded from a `file:` URL) or the URL as V8 printed it. */
  readonly path: string;
  readonly line: number;
}

type Fn = (...args: never[]) => unknown;

/**
 * The stack above `fn` (`fn` and what it called are left out), `limit` frames deep, as V8 prints
 * it: one `    at …` line per frame. The global frame limit is restored at once.
 */
export function stackAbove(fn: Fn, limit: number): string {
  const holder: { stack?: string } = {};
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = limit;
  try {
    Error.captureStackTrace(holder, fn);
  } finally {
    Error.stackTraceLimit = saved;
  }
  const stack = holder.stack ?? "";
  const nl = stack.indexOf("\n");
  return nl < 0 ? "" : stack.slice(nl + 1);
}

/** The first frame line of `callSite`/`stackAbove` output, without its indentation. */
export function firstFrame(stack: string): string {
  const nl = stack.indexOf("\n");
  return (nl < 0 ? stack : stack.slice(0, nl)).trim();
}

const POSITION = /\(?([^\s()]+):(\d+):\d+\)?$/;

/** Parses `at name (file:///a/b.ts:12:5)` or `at file:///a/b.ts:12:5`; null when there is no position. */
export function parseFrame(line: string): Frame | null {
  const m = POSITION.exec(line.trim());
  if (!m) return null;
  let path = m[1];
  if (path.startsWith("file://")) {
    try {
      path = decodeURIComponent(new URL(path).pathname);
    } catch {
      // Keep the text V8 printed.
    }
  }
  return { path, line: Number(m[2]) };
}

/** The base name of a frame's file, with its extension: what `--log_backtrace_at` names. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
