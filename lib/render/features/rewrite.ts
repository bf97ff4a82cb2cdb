/**
 * @module render/features/rewrite
 * `rewrite-target`: the path sent to the backend. On Prefix and Exact paths the route's prefix is
 * replaced; on a regex path (`path-regex`) the whole path becomes the target, `$1`…`$9` from the
 * regex's captures, as ingress-nginx's `rewrite (?i)<regex> <target> break`. The rewrite depends
 * on the route's path, so the path is part of the settings. Both are written single-quoted; the
 * target is a log-format string in HAProxy, so its `%` is doubled.
 */
import { quoted, regexEscape } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

/** A prefix rewrite (the route's prefix and what replaces it) or a regex rewrite (the route's regex and the new path). */
export type Rewrite = { prefix: string; target: string } | { regex: string; target: string };

/** The route's rewrite (null: none, or the route is the default backend); `$n` outside a regex path is reported and ignored. */
export function readRewrite(
  r: SettingsReader,
  path: { path: string; match: "exact" | "prefix" | "regex" } | null,
): Rewrite | null {
  const rewrite = r.set<{ target: string; captures: boolean }>("rewrite-target");
  if (!rewrite || !path) return null;
  if (path.match === "regex") return { regex: path.path, target: rewrite.target };
  if (rewrite.captures) {
    r.report(
      "InvalidAnnotation",
      `annotation ingress-controller.io/rewrite-target: $1…$9 need a regex path (path-regex and pathType ` +
        `ImplementationSpecific); ignored for path ${path.path}`,
    );
    return null;
  }
  return { prefix: path.path, target: rewrite.target };
}

/** The whole path becomes the target (the query string is kept); the regex is the route's (case-insensitive too). */
export function rewriteLines(r: Rewrite): string[] {
  if ("regex" in r) {
    const target = formatLiteral(r.target).replace(/\$([1-9])/g, "\\$1");
    return [`http-request replace-path ${quoted(`^(?i:${r.regex})`)} ${quoted(target)}`];
  }
  return [prefixRewriteLine(r)];
}

/**
 * A path placed in a log-format argument (replace-path's target): `%` doubled, so a target's `%XX`
 * escape stays an escape instead of making HAProxy refuse the whole configuration.
 */
function formatLiteral(path: string): string {
  return path.replaceAll("%", "%%");
}

/** `/prefix` + target: `/prefix` → target, `/prefix/rest` → target joined with `/rest`. */
function prefixRewriteLine(r: { prefix: string; target: string }): string {
  const prefix = r.prefix === "/" ? "" : regexEscape(r.prefix);
  const target = formatLiteral(r.target.replace(/\/$/, ""));
  // `\1` is the rest after the prefix, starting with `/` or empty; an empty result becomes `/`.
  return target === ""
    ? `http-request replace-path ${quoted(`^${prefix}/?(.*)$`)} ${quoted("/\\1")}`
    : `http-request replace-path ${quoted(`^${prefix}(/.*)?$`)} ${quoted(`${target}\\1`)}`;
}
