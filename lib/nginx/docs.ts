/**
 * @module nginx/docs
 * The README's table of the ingress-nginx translation (nginx/table.ts), written by `deno task docs`
 * (lib/flags/docs.ts) after the annotation reference.
 */
import { cell, code } from "../annotations/docs.ts";
import { NGINX_PREFIX, NGINX_RULES } from "./table.ts";

/** The generated Markdown. */
export function nginxReference(): string {
  const lines: string[] = [];
  lines.push(
    "#### ingress-nginx annotations",
    "",
    `How \`${NGINX_PREFIX}*\` annotations translate (what \`ingress-controller nginx-check\` reports). The verdict is`,
    "the translation's; while a key it becomes is only validated, `nginx-check` reports `unsupported` and says so.",
    "Any key not listed is `unsupported`.",
    "",
    "| Annotation | Becomes | Verdict | Note |",
    "|---|---|---|---|",
  );
  for (const key of Object.keys(NGINX_RULES).sort()) {
    const r = NGINX_RULES[key];
    const to = r.to.length ? r.to.map((k) => code(k)).join(", ") : "—";
    lines.push(`| ${code(key)} | ${to} | ${r.verdict} | ${cell(r.note || "same behaviour")} |`);
  }
  return lines.join("\n") + "\n";
}
