/**
 * @module auth/always_allow
 * Release A's `--authorization-always-allow-paths`: exact paths, or prefixes written with a
 * trailing `*`. Such paths are authorized without asking the cluster (authentication still runs,
 * so invalid credentials still get 401).
 */
import { UsageError } from "../common/errors.ts";

export type PathMatcher = (path: string) => boolean;

export function alwaysAllowMatcher(patterns: readonly string[]): PathMatcher {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const raw of patterns) {
    const p = raw.trim();
    if (p === "") continue;
    const star = p.indexOf("*");
    if (star >= 0 && star !== p.length - 1) {
      throw new UsageError(
        `--authorization-always-allow-paths: "${p}" has a "*" that is not at the end; only a trailing "*" (prefix match) is allowed`,
      );
    }
    if (star >= 0) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return (path) => exact.has(path) || prefixes.some((prefix) => path.startsWith(prefix));
}
