/**
 * The README's ingress-nginx parts come from the translation table `nginx-check` reports from
 * (lib/nginx/table.ts through lib/nginx/docs.ts): the reference of every key and the list of what
 * differs are current, the list is exactly the `translated` keys with the notes `nginx-check` prints,
 * and a deliberate difference says why.
 */
import assert from "node:assert/strict";
import { NGINX_DIFFERENCES_BEGIN, NGINX_DIFFERENCES_END, withReferences } from "../../lib/flags/docs.ts";
import { nginxDifferences, nginxReference } from "../../lib/nginx/docs.ts";
import { NGINX_PREFIX, NGINX_RULES } from "../../lib/nginx/table.ts";
import { translateIngress } from "../../lib/nginx/translate.ts";

const readme = Deno.readTextFileSync(new URL("../../README.md", import.meta.url));

Deno.test("README's ingress-nginx reference and difference list are current (run `deno task docs` when this fails)", () => {
  assert.equal(withReferences(readme), readme);
  const begin = readme.indexOf(NGINX_DIFFERENCES_BEGIN);
  const end = readme.indexOf(NGINX_DIFFERENCES_END);
  assert.ok(
    begin > readme.indexOf("### Migrating from ingress-nginx") && end > begin,
    "the list is in the migration guide",
  );
  assert.ok(readme.includes(nginxReference()));
});

Deno.test("the difference list is every translated key, with the note nginx-check prints for it", () => {
  const list = nginxDifferences().trimEnd().split("\n");
  const translated = Object.keys(NGINX_RULES).filter((k) => NGINX_RULES[k].verdict === "translated").sort();
  assert.deepEqual(list.map((l) => /^- `([^`]+)`: /.exec(l)?.[1]), translated);
  assert.ok(translated.length > 20);
  // nginx-check's note for an Ingress that only sets the key (a value keeping the rule's verdict)
  const samples: Record<string, string> = {
    "ssl-redirect": "true",
    "force-ssl-redirect": "true",
    "use-regex": "true",
    "from-to-www-redirect": "true",
    "limit-rps": "5",
    "proxy-read-timeout": "60",
    "enable-cors": "true",
    "affinity": "cookie",
    "default-backend": "pages",
  };
  for (const [key, raw] of Object.entries(samples)) {
    const { rows } = translateIngress({
      metadata: { namespace: "web", name: "x", annotations: { [NGINX_PREFIX + key]: raw } },
    });
    assert.equal(rows[0].verdict, "translated", key);
    assert.ok(list.includes(`- \`${key}\`: ${rows[0].note}.`), `${key}: ${rows[0].note}`);
  }
});

Deno.test("a deliberate difference says why; a supported key has none", () => {
  for (const [key, rule] of Object.entries(NGINX_RULES)) {
    if (rule.verdict === "supported") assert.equal(rule.why, undefined, key);
  }
  assert.match(nginxDifferences(), /^- `proxy-send-timeout`: .*\(deliberate: an HAProxy limit\)\.$/m);
  assert.match(nginxDifferences(), /^- `auth-url`: .*\(deliberate, for security\)\.$/m);
  assert.match(nginxReference(), /^\| `configuration-snippet` \| — \| refused \| .*\(deliberate, for security\) \|$/m);
});
