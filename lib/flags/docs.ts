/**
 * @module flags/docs
 * The README's option reference, generated from the option table. `deno task docs` rewrites the
 * part of README.md between `<!-- options:begin -->` and `<!-- options:end -->`;
 * `--check` exits 1 when that part is out of date.
 */

import { type Json, KINDS } from "./kinds.ts";
import { defaultsOf } from "./parse.ts";
import { helpOf, type OptionSpec, RELEASES, releasesOf, runTable, VERSIONS } from "./table.ts";

export const BEGIN = "<!-- options:begin -->";
export const END = "<!-- options:end -->";

const cell = (s: string) => s.replaceAll("|", "\\|");

function shownDefault(v: Json): string {
  if (v === null) return "unset";
  if (Array.isArray(v)) return "`[" + v.map((x) => typeof x === "string" ? x : JSON.stringify(x)).join(",") + "]`";
  return "`" + (typeof v === "string" ? v : JSON.stringify(v)) + "`";
}

/** The generated Markdown (without the markers). */
export function optionsReference(): string {
  const defaults = Object.fromEntries(RELEASES.map((r) => [r, defaultsOf(runTable, r)]));
  const entries = (Object.entries(runTable) as [string, OptionSpec][]).sort(([a], [b]) => (a < b ? -1 : 1));
  const lines = [
    "### Options of `ingress-controller run`",
    "",
    "Generated from `lib/flags/table.ts` by `deno task docs`; do not edit by hand. A default column shows",
    "the option's default in that release, `unset` when it has none, and `—` when the release does not",
    "have the option. Durations use Go's syntax (`10s`, `1m30s`), lists are comma-separated or repeated.",
    "",
    `| Option | Type | ${RELEASES.map((r) => `${r} (${VERSIONS[r]})`).join(" | ")} | Meaning |`,
    `|---|---|${RELEASES.map(() => "---").join("|")}|---|`,
  ];
  for (const [name, spec] of entries) {
    const kind = KINDS[spec.kind];
    const flag = spec.short ? `\`--${name}\`, \`-${spec.short}\`` : `\`--${name}\``;
    const types = [...new Set(releasesOf(spec).map((r) => spec.typeNameIn?.[r] ?? kind.typeName))]
      .map((t) => t || "bool").join(" / ");
    const defs = RELEASES.map((r) =>
      r in spec.default ? shownDefault(kind.toJson(defaults[r].get(name)) as Json) : "—"
    );
    const first = releasesOf(spec)[0];
    let meaning = helpOf(spec, first);
    if (spec.sameAs) meaning += ` (same setting as \`--${spec.sameAs}\` in other releases)`;
    lines.push(`| ${flag} | ${types} | ${defs.join(" | ")} | ${cell(meaning)} |`);
  }
  return lines.join("\n") + "\n";
}

/** `readme` with the part between the markers replaced by the generated reference. */
export function withReference(readme: string): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`README has no ${BEGIN} … ${END} section`);
  return readme.slice(0, begin + BEGIN.length) + "\n" + optionsReference() + readme.slice(end);
}

if (import.meta.main) {
  const [mode, path = "README.md"] = Deno.args;
  const current = Deno.readTextFileSync(path);
  const next = withReference(current);
  if (mode === "--write") {
    if (next !== current) Deno.writeTextFileSync(path, next);
  } else if (mode === "--check") {
    if (next !== current) {
      console.error(`${path}: the option reference is out of date; run: deno task docs`);
      Deno.exit(1);
    }
  } else {
    console.error("usage: deno run -A lib/flags/docs.ts --write|--check [README.md]");
    Deno.exit(2);
  }
}
