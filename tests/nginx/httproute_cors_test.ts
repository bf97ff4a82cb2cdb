/**
 * The migration preview's CORS filter (lib/nginx/httproute_cors.ts): ingress-nginx's enable-cors and
 * cors-* keys as the HTTPRoute rule's CORS filter, every field written out, with a verdict for what
 * the filter cannot say; each filter valid by the CRD's rules and read back by our Gateway model.
 */
import assert from "node:assert/strict";
import type { HTTPCORSFilter, HTTPRoute } from "../../lib/gateway/api.ts";
import { readFilters } from "../../lib/gateway/filters.ts";
import { planMigration } from "../../lib/nginx/to_httproute.ts";
import { filter, GW, ing, only, rulesOf, verdict } from "./httproute_fixtures.ts";

function corsOf(routes: HTTPRoute[]): HTTPCORSFilter | undefined {
  const all = routes.flatMap(rulesOf).map((r) => filter(r, "CORS")?.cors);
  assert.ok(all.every((c) => JSON.stringify(c) === JSON.stringify(all[0])), "one CORS filter for every rule");
  return all[0];
}

/** The filter's fields obey the CRD's rules (`*` alone, at most 64 origins and headers, 9 methods, maxAge ≥ 1). */
function crdValid(c: HTTPCORSFilter) {
  for (const field of ["allowOrigins", "allowMethods", "allowHeaders"] as const) {
    const xs = c[field] ?? [];
    assert.ok(!(xs.includes("*") && xs.length > 1), `${field}: * alone`);
    assert.equal(new Set(xs).size, xs.length, `${field}: a set`);
  }
  assert.ok((c.allowOrigins ?? []).length <= 64 && (c.allowHeaders ?? []).length <= 64);
  assert.ok((c.allowMethods ?? []).length <= 9 && (c.exposeHeaders ?? []).length <= 64);
  assert.ok(Number.isInteger(c.maxAge) && c.maxAge! >= 1);
  // the API: `*` cannot be used in Access-Control-Expose-Headers with allowCredentials
  if (c.allowCredentials) assert.ok(!(c.exposeHeaders ?? []).includes("*"));
}

Deno.test("enable-cors alone: ingress-nginx's defaults written out, without credentials for the origin *", () => {
  const { m, routes } = only([ing("cors", { "enable-cors": "true" }, { paths: [{ path: "/" }, { path: "/api" }] })]);
  const c = corsOf(routes)!;
  // ingress-nginx's defaults (cors/main.go): every origin, six methods, nine headers, 20 days; the Gateway
  // API's (5 s, no credentials) must not apply in their place
  assert.deepEqual(c, {
    allowOrigins: ["*"],
    allowMethods: ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"],
    allowHeaders: [
      "DNT",
      "Keep-Alive",
      "User-Agent",
      "X-Requested-With",
      "If-Modified-Since",
      "Cache-Control",
      "Content-Type",
      "Range",
      "Authorization",
    ],
    maxAge: 1728000,
  });
  crdValid(c);
  // credentials (ingress-nginx's default) with *: ingress-nginx sends *, which browsers refuse for credentialed
  // requests; a Gateway must echo the Origin then, which would let every site send them: not written, and said
  assert.ok(!("allowCredentials" in c));
  assert.ok(m.notes.some((n) => /allowCredentials is not written with the origin \*/.test(n)), m.notes.join("\n"));
  assert.ok(m.notes.some((n) => /preflight .* from an origin it does not allow itself, 204/.test(n)));
  assert.match(
    verdict(m.verdicts, "enable-cors")!,
    /CORS filter on each rule to a backend.*allowOrigins \*, maxAge 1728000/,
  );
  for (const [i, rule] of routes.flatMap(rulesOf).entries()) {
    const f = readFilters(rule.filters, `rules[${i}]`, true);
    assert.ok(f.ok && f.filters.cors !== null, JSON.stringify(f));
  }
});

Deno.test("listed origins with credentials, methods, headers, exposed headers and max-age: each its field", () => {
  const { m, routes } = only([
    ing("cors", {
      "enable-cors": "true",
      "cors-allow-origin": "https://app.example.com, https://admin.example.com:8443",
      "cors-allow-methods": "get, POST, PUT",
      "cors-allow-headers": "Content-Type,X-Api-Key, content-type",
      "cors-expose-headers": "X-Request-Id, X-Total",
      "cors-allow-credentials": "true",
      "cors-max-age": "600",
    }),
  ]);
  const c = corsOf(routes)!;
  assert.deepEqual(c, {
    allowOrigins: ["https://app.example.com", "https://admin.example.com:8443"],
    allowCredentials: true,
    allowMethods: ["GET", "POST", "PUT"],
    // header names are case-insensitive: one of each (the CRD's list is a set)
    allowHeaders: ["Content-Type", "X-Api-Key"],
    exposeHeaders: ["X-Request-Id", "X-Total"],
    maxAge: 600,
  });
  crdValid(c);
  assert.match(verdict(m.verdicts, "cors-allow-origin")!, /allowOrigins .*case-insensitively/);
  assert.match(verdict(m.verdicts, "cors-allow-credentials")!, /allowCredentials: true$/);
  assert.match(verdict(m.verdicts, "cors-expose-headers")!, /also on the preflight answer/);
  assert.match(verdict(m.verdicts, "cors-max-age")!, /maxAge 600/);
  assert.ok(!m.notes.some((n) => n.includes("allowCredentials is not written")));
});

Deno.test("CORS values the filter cannot say: wildcards, regex origins, other methods, * exposed with credentials, max-age 0", () => {
  const { m, routes } = only([
    ing("cors", {
      "enable-cors": "true",
      "cors-allow-origin": "https://*.example.org",
      "cors-allow-methods": "GET, PROPFIND",
      "cors-expose-headers": "*, X-Id",
      "cors-max-age": "0",
    }),
  ]);
  const c = corsOf(routes)!;
  crdValid(c);
  // the Gateway API's * matches any number of labels, the Ingress's (and ingress-nginx's) one
  assert.deepEqual(c.allowOrigins, ["https://*.example.org"]);
  assert.match(verdict(m.verdicts, "cors-allow-origin")!, /one or more labels.*exactly one/);
  assert.deepEqual(c.allowMethods, ["GET"]);
  assert.match(verdict(m.verdicts, "cors-allow-methods")!, /PROPFIND: not among the Gateway API's methods, left out/);
  assert.deepEqual(c.exposeHeaders, ["X-Id"]);
  assert.match(verdict(m.verdicts, "cors-expose-headers")!, /\* left out: with credentials/);
  assert.equal(c.maxAge, 1);
  assert.match(verdict(m.verdicts, "cors-max-age")!, /maxAge 1, the Gateway API's minimum/);

  // without credentials an exposed * is every header: kept
  const open = only([
    ing("cors", { "enable-cors": "true", "cors-expose-headers": "*", "cors-allow-credentials": "false" }),
  ]);
  assert.deepEqual(corsOf(open.routes)!.exposeHeaders, ["*"]);
  assert.equal(corsOf(open.routes)!.allowCredentials, undefined);
  // false is the Gateway API's default
  assert.match(verdict(open.m.verdicts, "cors-allow-credentials")!, /nothing to carry over \(false\)/);

  // this controller's regex origins have no form: left out; with none left, no filter and the keys stay
  const some = only([
    ing("cors", {
      "ingress-controller.io/cors-enable": "true",
      "ingress-controller.io/cors-allow-origin": "~^https://[a-z]+[.]example[.]net$, https://a.example.com",
    }),
  ]);
  assert.deepEqual(corsOf(some.routes)!.allowOrigins, ["https://a.example.com"]);
  assert.match(
    some.m.verdicts.find((v) => v.startsWith("ingress-controller.io/cors-allow-origin:"))!,
    /left out \(no HTTPCORSFilter form.*~\^https/,
  );
  const none = only([
    ing("cors", {
      "ingress-controller.io/cors-enable": "true",
      "ingress-controller.io/cors-allow-origin": "~^https://[a-z]+[.]example[.]net$",
    }),
  ]);
  assert.equal(corsOf(none.routes), undefined);
  assert.match(
    none.m.verdicts.find((v) => v.startsWith("ingress-controller.io/cors-enable:"))!,
    /no Gateway API form served here \(cors-enable: its origins .* have no HTTPCORSFilter form.*stays an Ingress annotation/,
  );
});

Deno.test("CORS off: no filter, the cors-* keys carry nothing; redirects keep no CORS filter; canaries share it", () => {
  const off: Record<string, string>[] = [
    { "cors-allow-origin": "https://a.example.com" },
    { "enable-cors": "false", "cors-max-age": "5" },
  ];
  for (const a of off) {
    const { m, routes } = only([ing("cors", a)]);
    assert.equal(corsOf(routes), undefined);
    for (const k of Object.keys(a)) assert.match(verdict(m.verdicts, k)!, /nothing to carry over/, k);
  }
  // as the Ingress: its redirects answer before CORS (render/settings_lines.ts)
  const redirect = only([ing("r", { "enable-cors": "true", "permanent-redirect": "https://b.example.com/" })]);
  assert.deepEqual(redirect.routes.flatMap(rulesOf).map((r) => r.filters?.map((f) => f.type)), [["RequestRedirect"]]);
  const root = only([ing("r", { "enable-cors": "true", "app-root": "/app" })]);
  assert.deepEqual(root.routes.flatMap(rulesOf).map((r) => r.filters?.map((f) => f.type)), [
    ["RequestRedirect"],
    ["CORS"],
  ]);
  // the main Ingress's CORS is on the canary's rules too (the canary's own keys are not carried, and said so)
  const plan = planMigration([
    ing("main", { "enable-cors": "true" }),
    ing("beta", { "canary": "true", "canary-by-header": "X-Beta", "enable-cors": "false" }, {
      paths: [{ path: "/", service: "beta" }],
    }),
  ], GW);
  const rules = plan.ingresses[0].routes.flatMap(rulesOf);
  assert.equal(rules.length, 3);
  assert.ok(rules.every((r) => filter(r, "CORS")), JSON.stringify(rules));
  assert.ok(plan.ingresses[1].notes.some((n) => n.startsWith("its own cors-enable is not carried")));
});
