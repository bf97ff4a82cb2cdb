/**
 * @module flags/docs
 * The README's option reference, generated from the option table, and its annotation reference
 * (lib/annotations/docs.ts, lib/nginx/docs.ts). `deno task docs` rewrites the parts of README.md
 * between `<!-- options:begin -->` and `<!-- options:end -->` and between
 * `<!-- annotations:begin -->` and `<!-- annotations:end -->` and the list of what differs from
 * ingress-nginx (lib/nginx/docs.ts) between `<!-- nginx-differences:begin -->` and
 * `<!-- nginx-differences:end -->`; `--check` exits 1 when one is out of date.
 */

import { annotationsReference } from "../annotations/docs.ts";
import { nginxDifferences, nginxReference } from "../nginx/docs.ts";
import { type Json, KINDS } from "./kinds.ts";
import { defaultsOf } from "./parse.ts";
import { helpOf, type OptionSpec, RELEASES, releasesOf, runTable, VERSIONS } from "./table.ts";

export const BEGIN = "<!-- options:begin -->";
export const END = "<!-- options:end -->";
export const ANNOTATIONS_BEGIN = "<!-- annotations:begin -->";
export const ANNOTATIONS_END = "<!-- annotations:end -->";
export const NGINX_DIFFERENCES_BEGIN = "<!-- nginx-differences:begin -->";
export const NGINX_DIFFERENCES_END = "<!-- nginx-differences:end -->";

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

function replaceSection(text: string, begin: string, end: string, content: string): string {
  const b = text.indexOf(begin);
  const e = text.indexOf(end);
  if (b < 0 || e < b) throw new Error(`README has no ${begin} … ${end} section`);
  return text.slice(0, b + begin.length) + "\n" + content + text.slice(e);
}

/** `readme` with the part between the option markers replaced by the generated reference. */
export function withReference(readme: string): string {
  return replaceSection(readme, BEGIN, END, optionsReference());
}

/** `readme` with both generated references replaced (what `deno task docs` writes). */
export function withReferences(readme: string): string {
  const annotations = annotationsReference() + "\n" + nginxReference();
  const withAnnotations = replaceSection(withReference(readme), ANNOTATIONS_BEGIN, ANNOTATIONS_END, annotations);
  return replaceSection(withAnnotations, NGINX_DIFFERENCES_BEGIN, NGINX_DIFFERENCES_END, nginxDifferences());
}

if (import.meta.main) {
  const [mode, path = "README.md"] = Deno.args;
  const current = Deno.readTextFileSync(path);
  const next = withReferences(current);
  if (mode === "--write") {
    if (next !== current) Deno.writeTextFileSync(path, next);
  } else if (mode === "--check") {
    if (next !== current) {
      console.error(`${path}: a generated reference is out of date; run: deno task docs`);
      Deno.exit(1);
    }
  } else {
    console.error("usage: deno run -A lib/flags/docs.ts --write|--check [README.md]");
    Deno.exit(2);
  }
}
