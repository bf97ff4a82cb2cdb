/**
 * @module log/vmodule
 * klog's `--vmodule` for TypeScript sources: `pattern=N,…` gives the V level of the files a pattern
 * matches. A pattern without a slash is matched against the file's base name without `.ts`
 * (`informer`, `inform*`); a pattern with a slash against the full path without `.ts` or any
 * trailing part of it that starts after a slash (`lib/cluster/*`, `/work/main/lib/cluster/informer`).
 * Globs are Go's `filepath.Match` ones: `*` and `?` never cross a slash. The first match wins.
 */

import { posix } from "node:path";

/** One `pattern=N` element of `--vmodule`. */
export interface ModulePattern {
  readonly pattern: string;
  readonly level: number;
  /** The pattern has a slash: matched against the path, not only the base name. */
  readonly full: boolean;
  /** No glob characters: compared as a string (as klog does, for speed). */
  readonly literal: boolean;
}

/** Parses a `--vmodule` value (already validated by lib/flags/kinds.ts); null or "" = no patterns. */
export function parseVModule(spec: string | null | undefined): ModulePattern[] {
  const out: ModulePattern[] = [];
  for (const element of (spec ?? "").split(",")) {
    if (element === "") continue;
    const eq = element.lastIndexOf("=");
    const pattern = element.slice(0, eq).replace(/\.ts$/, "");
    out.push({
      pattern,
      level: Number(element.slice(eq + 1)),
      full: pattern.includes("/"),
      literal: !/[*?[\\]/.test(pattern),
    });
  }
  return out;
}

function matchOne(p: ModulePattern, name: string): boolean {
  return p.literal ? name === p.pattern : posix.matchesGlob(name, p.pattern);
}

/** The path suffixes a slash pattern may match: the whole path, then each part after a slash. */
function pathSuffixes(path: string): string[] {
  const out = [path];
  for (let i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) {
    if (i + 1 < path.length) out.push(path.slice(i + 1));
  }
  return out;
}

/**
 * The V level the first matching pattern gives the source file `path` (a file path or a `file:` URL,
 * with its `.ts`/`.js`/… extension), or undefined when no pattern matches.
 */
export function moduleLevel(patterns: readonly ModulePattern[], path: string): number | undefined {
  const full = path.replace(/^file:\/\//, "").replace(/\.[cm]?[jt]sx?$/, "");
  const base = full.slice(full.lastIndexOf("/") + 1);
  let suffixes: string[] | undefined;
  for (const p of patterns) {
    if (!p.full) {
      if (matchOne(p, base)) return p.level;
      continue;
    }
    suffixes ??= pathSuffixes(full);
    if (suffixes.some((s) => matchOne(p, s))) return p.level;
  }
  return undefined;
}
