import assert from "node:assert/strict";
import { translateIngress } from "../../lib/nginx/translate.ts";
import { CONVERTERS } from "../../lib/nginx/convert.ts";
import { NGINX_RULES } from "../../lib/nginx/table.ts";
import { ANNOTATIONS } from "../../lib/annotations/table.ts";

const N = "nginx.ingress.kubernetes.io/";
const ing = (annotations: Record<string, string>) => ({ metadata: { namespace: "shop", name: "web", annotations } });

Deno.test("compatibility: served keys are written as ours, Go booleans normalised", () => {
  const { annotations, rows } = translateIngress(ing({
    [`${N}ssl-redirect`]: "False",
    [`${N}load-balance`]: "ewma",
    [`${N}proxy-read-timeout`]: "30",
    [`${N}proxy-send-timeout`]: "120",
    [`${N}configuration-snippet`]: "return 200;",
    [`${N}ssl-passthrough`]: "True",
  }));
  assert.deepEqual(annotations, {
    "ingress-controller.io/ssl-redirect": "false",
    "ingress-controller.io/ssl-passthrough": "true",
    "ingress-controller.io/load-balance": "leastconn",
    "ingress-controller.io/timeout-server": "120s",
  });
  assert.equal(rows.find((r) => r.annotation === `${N}configuration-snippet`)?.verdict, "refused");
});

Deno.test("compatibility: the Ingress's own key (or its legacy alias) wins; bad values are not applied", () => {
  assert.deepEqual(
    translateIngress(ing({ [`${N}ssl-redirect`]: "false", "ingress.kubernetes.io/ssl-redirect": "true" })).annotations,
    {},
  );
  const bad = translateIngress(ing({ [`${N}ssl-redirect`]: "nope", [`${N}load-balance`]: "random" }));
  assert.deepEqual(bad.annotations, {});
  assert.deepEqual(bad.rows.map((r) => r.verdict), ["refused", "refused"]);
});

Deno.test("compatibility: every converter writes keys of ours that its rule names", () => {
  const ours = new Set(ANNOTATIONS.map((a) => a.key));
  for (const key of Object.keys(CONVERTERS)) {
    assert.ok(NGINX_RULES[key], `${key} has a rule`);
    for (const to of Object.keys(CONVERTERS[key]("1", { namespace: "x", annotations: {} }))) {
      assert.ok(ours.has(to), `${key} → ${to}`);
    }
  }
});
