/**
 * @module annotations/docs
 * The README's reference of the controller's annotations, generated from the annotation table;
 * `deno task docs` (lib/flags/docs.ts) writes it, followed by the ingress-nginx translation table
 * (nginx/docs.ts), between `<!-- annotations:begin -->` and `<!-- annotations:end -->`.
 */
import { ANNOTATIONS, PREFIX } from "./table.ts";

export const ANNOTATIONS_BEGIN = "<!-- annotations:begin -->";
export const ANNOTATIONS_END = "<!-- annotations:end -->";

export const cell = (s: string) => s.replaceAll("|", "\\|").replace(/\s*\n\s*/g, " ");
export const code = (s: string) => "`" + s.replaceAll("`", "'") + "`";

/** The generated Markdown (without the markers). */
export function annotationsReference(): string {
  const lines = [
    "Generated from `lib/annotations/table.ts` and `lib/nginx/table.ts` by `deno task docs`; do not edit by hand.",
    "**Served** keys are rendered into HAProxy today; **validated** keys are parsed and checked (the webhook refuses",
    "a bad value) but not rendered yet, so setting them changes nothing yet.",
    "",
  ];
  const groups = [...new Set(ANNOTATIONS.map((a) => a.group))];
  for (const group of groups) {
    lines.push(`#### ${group}`, "", "| Annotation | Status | Scope | Risk | Value | Default | Example | Meaning |");
    lines.push("|---|---|---|---|---|---|---|---|");
    for (const a of ANNOTATIONS.filter((x) => x.group === group)) {
      const name = code(PREFIX + a.key) + (a.aliases?.length ? ` (legacy: ${a.aliases.map(code).join(", ")})` : "");
      const dflt = a.default === null ? "unset" : code(a.default);
      lines.push(
        `| ${name} | ${a.status} | ${a.scope} | ${a.risk} | ${cell(a.value.syntax)} | ${cell(dflt)} | ${
          cell(code(a.example))
        } | ${cell(a.docs)} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n") + "\n";
}
