/**
 * @module render/quoting
 * How a value is placed in an HAProxy argument. Every value from an annotation has passed its
 * anchored parser (lib/annotations/values.ts) before it gets here; these functions refuse what the
 * parsers should have refused (a bug), so nothing of a user's is ever written verbatim. Imports
 * nothing: every writer of HAProxy lines may use it.
 */

/**
 * A single-quoted HAProxy argument. Inside single quotes HAProxy expands nothing and knows no
 * escape, so only `'` and line breaks could change the line's structure; the parsers refuse them,
 * and finding one here is a bug.
 */
export function quoted(s: string): string {
  if (/['\r\n\0]/.test(s)) throw new Error(`bug: unquotable value ${JSON.stringify(s)}`);
  return `'${s}'`;
}

/** A log-format argument (set-header values, return headers): `%` must not reach it unescaped. */
export function literal(s: string): string {
  if (s.includes("%")) throw new Error(`bug: % in a literal ${JSON.stringify(s)}`);
  return quoted(s);
}

/** `s` matched literally inside a regular expression. */
export function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
