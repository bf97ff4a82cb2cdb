/**
 * One test per ingress-nginx conversion, generated from the conversion table (lib/nginx/convert.ts
 * `CONVERTERS`): a key without a case in tests/nginx/conversion_cases.ts fails. Each case shows that
 * `nginx-check` and the compatibility mode agree (the key's verdict, exactly the annotations of ours
 * written), that the key itself changes what is written (the same Ingress without it translates
 * differently), and how it changes the rendered configuration. What the configuration does with real
 * traffic: tests/nginx/conversion_traffic_test.ts.
 */
import assert from "node:assert/strict";
import { CONVERTERS } from "../../lib/nginx/convert.ts";
import { NGINX_PREFIX } from "../../lib/nginx/table.ts";
import { translateIngress } from "../../lib/nginx/translate.ts";
import { PREFIX } from "../../lib/annotations/table.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import type { V1Ingress } from "@kubernetes/client-node";
import { caseIngresses, CASES, caseWorld, makePki, RENDER_PORTS } from "./conversion_cases.ts";

const dir = await Deno.makeTempDir({ prefix: "ic-nginx-cases-" });
const pki = await makePki(dir);
await Deno.remove(dir, { recursive: true });
const lookup = lookupFromLists(caseWorld(RENDER_PORTS, pki));
const templates = await loadTemplates(null);

const ours = (bare: Record<string, string>) =>
  Object.fromEntries(Object.entries(bare).map(([k, v]) => [PREFIX + k, v]));
const without = (nginx: Record<string, string>, key: string) =>
  Object.fromEntries(Object.entries(nginx).filter(([k]) => k !== key));

/** The case's own Ingress (the canary, where there is a main one) as the compatibility mode reads it. */
function translated(key: string, nginx: Record<string, string>) {
  return translateIngress(caseIngresses(key, nginx).at(-1)!);
}

/** Every rendered file's lines as `<file>: <line>` (the config trimmed), for the case's Ingresses as the controller translates them. */
function renderedLines(ingresses: V1Ingress[]): { lines: string[]; problems: string[] } {
  const served = ingresses.map((ing) => ({
    ...ing,
    metadata: { ...ing.metadata, annotations: { ...ing.metadata!.annotations, ...translateIngress(ing).annotations } },
  }));
  const { model, problems } = buildModel({ ingresses: served, lookup, allowLoopbackEndpoints: true });
  const r = render(model, templates);
  const files: [string, string][] = [["haproxy.cfg", r.config], ["crt-list", r.crtList], ...Object.entries(r.maps)];
  return {
    lines: files.flatMap(([file, text]) => text.split("\n").map((l) => `${file}: ${l.trim()}`)),
    problems: problems.map((p) => p.message),
  };
}

/** Lines of `after` not in `before` (`+ …`) and of `before` not in `after` (`- …`), counting repeats. */
function changes(before: string[], after: string[]): string[] {
  const left = new Map<string, number>();
  for (const l of before) left.set(l, (left.get(l) ?? 0) + 1);
  const out: string[] = [];
  for (const l of after) {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else out.push(`+ ${l}`);
  }
  for (const [l, n] of left) for (let i = 0; i < n; i++) out.push(`- ${l}`);
  return out;
}

Deno.test("every conversion has a case, and every case is a conversion", () => {
  assert.deepEqual(Object.keys(CASES).filter((k) => !(k in CONVERTERS)), []);
  assert.deepEqual(Object.keys(CONVERTERS).filter((k) => !(k in CASES)), []);
});

for (const key of Object.keys(CONVERTERS)) {
  Deno.test(`conversion of ${NGINX_PREFIX}${key}: its verdict, what it writes, what it renders`, () => {
    const c = CASES[key];
    assert.ok(c, `no case for ${key} in tests/nginx/conversion_cases.ts`);
    for (const variant of c.variants) {
      const what = `${key} with ${JSON.stringify(variant.nginx)}`;
      const { rows, annotations } = translated(key, variant.nginx);
      assert.deepEqual(annotations, ours(variant.ours), what);
      assert.equal(rows.find((r) => r.annotation === NGINX_PREFIX + key)?.verdict, variant.verdict, what);
      for (const r of rows.filter((r) => r.annotation !== NGINX_PREFIX + key)) {
        const expected = variant.others?.[r.annotation.slice(NGINX_PREFIX.length)];
        if (expected) assert.equal(r.verdict, expected, `${what}: ${JSON.stringify(r)}`);
        else assert.ok(r.verdict === "supported" || r.verdict === "translated", `${what}: ${JSON.stringify(r)}`);
      }
    }

    const [first] = c.variants;
    const alone = translated(key, without(first.nginx, key)).annotations;
    const before = renderedLines(caseIngresses(key, without(first.nginx, key)));
    const after = renderedLines(caseIngresses(key, first.nginx));
    assert.deepEqual(after.problems, []);
    const changed = changes(before.lines, after.lines);
    if (!Array.isArray(c.renders)) {
      // by design the key changes nothing: neither what is written nor what is rendered
      assert.deepEqual(alone, ours(first.ours), `${key}: ${(c.renders as { nothing: string }).nothing}`);
      assert.deepEqual(changed, []);
      return;
    }
    assert.notDeepEqual(alone, ours(first.ours), `${key} changes what is written`);
    for (const expected of c.renders as readonly string[]) {
      const [, sign, file, text] = /^([+-]) ([^:]+): (.*)$/.exec(expected)!;
      assert.ok(
        changed.some((l) => l.startsWith(`${sign} ${file}: `) && l.includes(text)),
        `${key}: no line ${expected}; the changes:\n${changed.join("\n")}`,
      );
    }
  });
}
