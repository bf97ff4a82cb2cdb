/**
 * @module nginx/docs
 * The README's parts about the ingress-nginx translation, written by `deno task docs`
 * (lib/flags/docs.ts) from the translation table (nginx/table.ts), the one `nginx-check` reports from:
 * the table of every key after the annotation reference, and the list of what differs (every key
 * whose verdict is `translated`, with its note) in "Migrating from ingress-nginx".
 */
import { cell, code } from "../annotations/docs.ts";
import { NGINX_PREFIX, NGINX_RULES, withWhy } from "./table.ts";

const keys = () => Object.keys(NGINX_RULES).sort();

/** A rule's note as `nginx-check` shows it for the rule's own verdict. */
function noteOf(key: string): string {
  const r = NGINX_RULES[key];
  return r.verdict === "supported" ? r.note : withWhy(r.note, r.why);
}

/** The generated Markdown table of every key. */
export function nginxReference(): string {
  const lines: string[] = [];
  lines.push(
    "#### ingress-nginx annotations",
    "",
    `How \`${NGINX_PREFIX}*\` annotations translate (what \`ingress-controller nginx-check\` reports). The verdict is`,
    "the key's at its usual values (`nginx-check` gives the one of the value written): `supported` only where the",
    "behaviour is ingress-nginx's (status codes, `Location` values, headers, which paths match), `translated` where it",
    "works with the difference the note says. While a key it becomes is only validated, `nginx-check` reports",
    "`unsupported` and says so. Any key not listed is `unsupported`.",
    "",
    "| Annotation | Becomes | Verdict | Note |",
    "|---|---|---|---|",
  );
  for (const key of keys()) {
    const r = NGINX_RULES[key];
    const to = r.to.length ? r.to.map((k) => code(k)).join(", ") : "—";
    lines.push(`| ${code(key)} | ${to} | ${r.verdict} | ${cell(noteOf(key) || "same behaviour")} |`);
  }
  return lines.join("\n") + "\n";
}

/** The generated list of what differs from ingress-nginx: every `translated` key with its note. */
export function nginxDifferences(): string {
  return keys()
    .filter((key) => NGINX_RULES[key].verdict === "translated")
    .map((key) => `- \`${key}\`: ${noteOf(key)}.`)
    .join("\n") + "\n";
}
