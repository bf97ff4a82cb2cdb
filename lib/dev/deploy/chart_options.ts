/**
 * @module deploy/chart_options
 * The parts of the Helm chart (`deploy/chart/`) that come from the option table, so that no option
 * is ever listed twice by hand: the documented `controller.options` block of `values.yaml` (every
 * `run` option, its type, its default per release and its help) and `templates/_releases.tpl`
 * (per release: the version, the image tags and the names of its options, which the chart uses to
 * refuse an option the release does not have). `deno task manifests` writes both; the chart tests
 * check they are current.
 */
import { type Json, KINDS } from "../../flags/kinds.ts";
import { defaultsOf } from "../../flags/parse.ts";
import { helpOf, optionsOf, type OptionSpec, RELEASES, releasesOf, runTable, VERSIONS } from "../../flags/table.ts";

export const VALUES_BEGIN = "    # options:begin";
export const VALUES_END = "    # options:end";

const indent = "    ";

/** A default as YAML would write it (JSON is YAML), `unset` when none. */
function shown(v: Json): string {
  return v === null ? "unset" : JSON.stringify(v);
}

/** Word-wraps `text` into comment lines of at most `width` characters. */
function wrap(text: string, prefix: string, width = 118): string[] {
  const lines: string[] = [];
  let line = prefix;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length + word.length + 1 > width && line.trim() !== prefix.trim()) {
      lines.push(line.trimEnd());
      line = prefix;
    }
    line += `${word} `;
  }
  if (line.trim() !== prefix.trim()) lines.push(line.trimEnd());
  return lines;
}

/** The comment block documenting every `run` option (without the markers). */
export function valuesOptionsBlock(): string {
  const defaults = Object.fromEntries(RELEASES.map((r) => [r, defaultsOf(runTable, r)]));
  const entries = (Object.entries(runTable) as [string, OptionSpec][]).sort(([a], [b]) => (a < b ? -1 : 1));
  const lines = [
    `${indent}# Generated from lib/flags/table.ts by \`deno task manifests\`; do not edit by hand. Every option of`,
    `${indent}# \`ingress-controller run\`: its type, then its default in each release that has it. Set one as`,
    `${indent}# \`name: value\` above (lists as YAML lists); the chart refuses an option the chosen release lacks.`,
  ];
  for (const [name, spec] of entries) {
    const kind = KINDS[spec.kind];
    const defs = releasesOf(spec).map((r) => `${r}: ${shown(kind.toJson(defaults[r].get(name)) as Json)}`);
    const type = kind.typeName || "bool";
    lines.push(`${indent}# ${name} (${type}; ${defs.join(", ")})`);
    let help = helpOf(spec, releasesOf(spec)[0]);
    if (spec.sameAs) help += ` (same setting as ${spec.sameAs} in other releases)`;
    lines.push(...wrap(help, `${indent}#   `));
  }
  return lines.join("\n") + "\n";
}

/** `values` with the block between the markers replaced by the generated one. */
export function withValuesOptions(values: string): string {
  const begin = values.indexOf(VALUES_BEGIN);
  const end = values.indexOf(VALUES_END);
  if (begin < 0 || end < begin) throw new Error(`values.yaml has no "${VALUES_BEGIN.trim()}" … "${VALUES_END.trim()}"`);
  return values.slice(0, begin + VALUES_BEGIN.length) + "\n" + valuesOptionsBlock() + values.slice(end);
}

/** `templates/_releases.tpl`: per release its version, image tags, registry and option names. */
export function releasesTemplate(): string {
  const releases: Record<string, unknown> = {};
  for (const r of RELEASES) {
    const d = defaultsOf(runTable, r);
    releases[r] = {
      version: VERSIONS[r],
      registry: d.get("image-registry"),
      controllerTag: d.get("exporter-image-tag"),
      proxyTag: d.get("proxy-image-tag"),
      options: optionsOf(runTable, r).map(([name]) => name),
    };
  }
  return [
    "{{/* Generated from lib/flags/table.ts by `deno task manifests`; do not edit by hand. */}}",
    "{{/* Per release of the option set: version, default image names and the names of its `run` options. */}}",
    '{{- define "ingress-controller.releases" -}}',
    JSON.stringify(releases, null, 2),
    "{{- end }}",
    "",
  ].join("\n");
}
