/**
 * Route values that JavaScript's checks accept but HAProxy reads otherwise never reach a Gateway's
 * configuration as they are, so one tenant's route cannot make `haproxy -c` refuse the Gateway every
 * tenant's routes share:
 * - an exact header or query match of `}` (HAProxy ends an inline condition at that word, quoted or
 *   not) is matched as the regex `^\}$`;
 * - a regex with a POSIX bracket expression (`[:a:]`, `[.a.]`, `[=a=]`), which PCRE2 refuses and
 *   JavaScript reads as a class, is refused with the route's status, the other routes served;
 * - two listener ports the proxy would bind as one container port (81 and 10081): the higher one's
 *   listener is refused (PortUnavailable), the other served.
 * Each configuration is checked by the real `haproxy -c`.
 */
import assert from "node:assert/strict";
import { loadTemplates } from "../../lib/render/render.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { pathRegexProblem } from "../../lib/annotations/values.ts";
import { checkRendered } from "./render_fixtures.ts";
import { backends, build, gateway, http, NS, route, toService } from "./fixtures.ts";

const templates = await loadTemplates(null);
const shared = () => gateway([http("web", 80, { allowedRoutes: { namespaces: { from: "All" } } })]);
const accepted = (b: ReturnType<typeof build>, name: string) =>
  b.routes.get(`${NS}/${name}`)![0].conditions.find((c) => c.type === "Accepted")!.status;

for (
  const [label, match] of [
    ["header", { headers: [{ name: "x-a", value: "}" }] }],
    ["query", { queryParams: [{ name: "a", value: "}" }] }],
  ] as const
) {
  Deno.test(`a ${label} match of "}" is written as the regex ^\\}$ and the Gateway's configuration passes`, async () => {
    const good = route("good", [toService("svc")], { hostnames: ["good.example.com"] });
    const brace = route("brace", [
      toService("svc", 8080, { matches: [{ path: { type: "PathPrefix", value: "/b" }, ...match } as never] }),
    ]);
    const b = build(shared(), { routes: [good, brace], ...backends("svc") });
    assert.equal(accepted(b, "brace"), "True");
    const r = renderGateway(b.proxy, templates);
    assert.match(r.config, /-m reg -- '\^\\\}\$'/);
    assert.doesNotMatch(r.config, /-- '\}'/);
    const check = await checkRendered(r);
    assert.ok(check.ok, check.output);
  });
}

const posix: [string, object][] = [
  ["a path regex (map)", { path: { type: "RegularExpression", value: "/[:a:]" } }],
  ["a path regex with a method", { path: { type: "RegularExpression", value: "/[.a.]" }, method: "GET" }],
  ["a header regex", {
    path: { type: "PathPrefix", value: "/x" },
    headers: [{ name: "x-a", type: "RegularExpression", value: "[=a=]" }],
  }],
];
for (const [label, match] of posix) {
  Deno.test(`${label} with a POSIX bracket expression is refused for its route; the Gateway's configuration passes`, async () => {
    const good = route("good", [toService("svc")], { hostnames: ["good.example.com"] });
    const posixRoute = route("posix", [toService("svc", 8080, { matches: [match as never] })], {
      hostnames: ["posix.example.com"],
    });
    const b = build(shared(), { routes: [good, posixRoute], ...backends("svc") });
    assert.equal(accepted(b, "good"), "True");
    assert.notEqual(accepted(b, "posix"), "True");
    const check = await checkRendered(renderGateway(b.proxy, templates));
    assert.ok(check.ok, check.output);
  });
}

Deno.test("POSIX bracket expressions are refused in path regexes; classes that only look like them are not", () => {
  for (const re of ["/[:a:]", "/x[.a.]", "/[=a=]", "/[:alpha:]"]) assert.match(pathRegexProblem(re) ?? "", /POSIX/, re);
  for (const re of ["/[.]", "/[:]", "/[=a]", "/[^:a:]", "/v[0-9.]+"]) assert.equal(pathRegexProblem(re), null, re);
});

Deno.test("two listener ports of one container port: the higher one is refused (PortUnavailable), the other served", async () => {
  const b = build(gateway([http("a", 81), http("b", 10081)]), {
    routes: [route("r", [toService("svc")])],
    ...backends("svc"),
  });
  const cond = (l: string, t: string) =>
    b.gateway.listeners.find((x) => x.name === l)!.conditions.find((c) => c.type === t)!;
  assert.equal(cond("a", "Programmed").status, "True");
  assert.equal(cond("b", "Accepted").status, "False");
  assert.equal(cond("b", "Accepted").reason, "PortUnavailable");
  const check = await checkRendered(renderGateway(b.proxy, templates));
  assert.ok(check.ok, check.output);
});
