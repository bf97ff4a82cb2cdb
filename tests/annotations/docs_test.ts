/**
 * The README's annotation reference is generated from the tables (`deno task docs`) and current;
 * it shows every key with its status, scope, risk, example and legacy aliases, and every
 * ingress-nginx key of the translation table.
 */
import assert from "node:assert/strict";
import { annotationsReference } from "../../lib/annotations/docs.ts";
import { ANNOTATIONS } from "../../lib/annotations/table.ts";
import {
  ANNOTATIONS_BEGIN,
  ANNOTATIONS_END,
  NGINX_DIFFERENCES_BEGIN,
  NGINX_DIFFERENCES_END,
  withReferences,
} from "../../lib/flags/docs.ts";
import { nginxReference } from "../../lib/nginx/docs.ts";
import { NGINX_RULES } from "../../lib/nginx/table.ts";

Deno.test("README's annotation reference is current (run `deno task docs` when this fails)", () => {
  const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));
  assert.ok(readme.includes(ANNOTATIONS_BEGIN) && readme.includes(ANNOTATIONS_END));
  assert.equal(withReferences(readme), readme);
});

Deno.test("one row per key with its status, scope, risk and example; legacy aliases named", () => {
  const ref = annotationsReference();
  for (const a of ANNOTATIONS) {
    const row = ref.split("\n").find((l) => l.startsWith(`| \`ingress-controller.io/${a.key}\``));
    assert.ok(row, a.key);
    assert.ok(row.includes(`| ${a.status} | ${a.scope} | ${a.risk} |`), row);
    assert.ok(row.includes("`" + a.example.replaceAll("|", "\\|") + "`"), row);
  }
  assert.match(
    ref,
    /^\| `ingress-controller\.io\/ssl-redirect` \(legacy: `ingress\.kubernetes\.io\/ssl-redirect`\) \| served \|/m,
  );
  assert.match(ref, /^\| `ingress-controller\.io\/auth-basic-secret` \| served \|/m);
  const nginx = nginxReference();
  for (const key of Object.keys(NGINX_RULES)) assert.match(nginx, new RegExp("^\\| `" + key + "` \\|", "m"));
  assert.match(nginx, /^\| `configuration-snippet` \| — \| refused \|/m);
});

Deno.test("withReferences replaces only the marked sections", () => {
  const text = `# T\n${ANNOTATIONS_BEGIN}\nold\n${ANNOTATIONS_END}\n<!-- options:begin -->\nx\n<!-- options:end -->\n` +
    `${NGINX_DIFFERENCES_BEGIN}\nstale\n${NGINX_DIFFERENCES_END}\n`;
  const out = withReferences(text);
  assert.ok(!out.includes("\nold\n"));
  assert.ok(!out.includes("\nstale\n"));
  assert.ok(out.startsWith(`# T\n${ANNOTATIONS_BEGIN}\nGenerated from`));
  assert.throws(() => withReferences("<!-- options:begin -->\n<!-- options:end -->\n"), /annotations:begin/);
  assert.throws(
    () => withReferences(`${ANNOTATIONS_BEGIN}\n${ANNOTATIONS_END}\n<!-- options:begin -->\n<!-- options:end -->\n`),
    /nginx-differences:begin/,
  );
});
