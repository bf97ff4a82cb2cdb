/**
 * Precedence of matches across the routes of a Gateway (HTTPRouteRule.matches, HTTPRouteSpec.hostnames
 * and Listener docs): which rule answers a request when several match.
 */
import assert from "node:assert/strict";
import { compareRanked, type Ranked } from "../../lib/gateway/precedence.ts";
import type { RouteEntry } from "../../lib/gateway/model_types.ts";
import type { HTTPRouteRule } from "../../lib/gateway/api.ts";
import { backends, build, gateway, http, NS, route } from "./fixtures.ts";
import { type Request, serve } from "./serve.ts";

function entry(more: Partial<RouteEntry>): RouteEntry {
  return {
    hostname: "",
    path: { type: "PathPrefix", value: "/" },
    headers: [],
    queryParams: [],
    method: null,
    rule: "gw_x",
    route: `${NS}/r`,
    ...more,
  };
}

function ranked(e: Partial<RouteEntry>, more: Partial<Ranked> = {}): Ranked {
  return { entry: entry(e), created: 0, rule: 0, match: 0, ...more };
}

const h = (name: string, value = "x") => ({ name, type: "Exact" as const, value });

Deno.test("criteria in order: hostname, Exact, longest prefix, method, most headers, most query params", () => {
  const list = [
    ranked({ path: { type: "PathPrefix", value: "/" }, rule: "any-host" }),
    ranked({ hostname: "*.example.com", rule: "wildcard" }),
    ranked({ hostname: "a.example.com", path: { type: "PathPrefix", value: "/" }, rule: "prefix-root" }),
    ranked({ hostname: "a.example.com", path: { type: "PathPrefix", value: "/api" }, rule: "prefix-api" }),
    ranked({ hostname: "a.example.com", path: { type: "PathPrefix", value: "/api/v1" }, rule: "prefix-api-v1" }),
    ranked({ hostname: "a.example.com", path: { type: "Exact", value: "/api" }, rule: "exact" }),
    ranked({ hostname: "a.example.com", path: { type: "PathPrefix", value: "/api" }, method: "GET", rule: "method" }),
    ranked({
      hostname: "a.example.com",
      path: { type: "PathPrefix", value: "/api" },
      headers: [h("a")],
      rule: "1-header",
    }),
    ranked({
      hostname: "a.example.com",
      path: { type: "PathPrefix", value: "/api" },
      headers: [h("a"), h("b")],
      rule: "2-headers",
    }),
    ranked({
      hostname: "a.example.com",
      path: { type: "PathPrefix", value: "/api" },
      headers: [h("a")],
      queryParams: [h("q")],
      rule: "1-header-1-query",
    }),
  ];
  assert.deepEqual(list.reverse().sort(compareRanked).map((r) => r.entry.rule), [
    "exact",
    "prefix-api-v1",
    "method",
    "2-headers",
    "1-header-1-query",
    "1-header",
    "prefix-api",
    "prefix-root",
    "wildcard",
    "any-host",
  ]);
});

Deno.test("the listener's hostname orders first: a more specific listener's entries before another's exact ones", () => {
  const list = [
    ranked({ listenerHostname: "*.example.com", hostname: "a.b.example.com", rule: "wide-listener-exact-host" }),
    ranked({ listenerHostname: "*.b.example.com", hostname: "*.b.example.com", rule: "narrow-listener" }),
    ranked({ listenerHostname: "", hostname: "a.b.example.com", rule: "any-listener" }),
  ];
  assert.deepEqual(list.sort(compareRanked).map((r) => r.entry.rule), [
    "narrow-listener",
    "wide-listener-exact-host",
    "any-listener",
  ]);
});

Deno.test("ties: oldest route, then namespace/name, then rule order, then match order", () => {
  const list = [
    ranked({ route: "b/r", rule: "b-newer" }, { created: 2 }),
    ranked({ route: "b/r", rule: "b-old-rule1-match1" }, { created: 1, rule: 1, match: 1 }),
    ranked({ route: "b/r", rule: "b-old-rule1-match0" }, { created: 1, rule: 1, match: 0 }),
    ranked({ route: "b/r", rule: "b-old-rule0" }, { created: 1, rule: 0, match: 5 }),
    ranked({ route: "a/z", rule: "a-old" }, { created: 1, rule: 3 }),
  ];
  assert.deepEqual(list.sort(compareRanked).map((r) => r.entry.rule), [
    "a-old",
    "b-old-rule0",
    "b-old-rule1-match0",
    "b-old-rule1-match1",
    "b-newer",
  ]);
});

/** The Service each request reaches on port 80 of `gw` with `routes` (null: 404). */
function answers(routes: ReturnType<typeof route>[], requests: Request[], listeners = [http("a")]): (string | null)[] {
  const b = build(gateway(listeners), { routes, ...backends("v1", "v2", "v3") });
  const byRule = new Map(b.proxy.rules.map((r) => [r.name, r.targets[0]?.backend.split("_")[2] ?? "500"]));
  const port = b.proxy.ports.find((p) => p.port === 80)!;
  return requests.map((req) => {
    const e = serve(port, req);
    return e === null ? null : byRule.get(e.rule)!;
  });
}

const to = (service: string, matches: HTTPRouteRule["matches"]): HTTPRouteRule => ({
  matches,
  backendRefs: [{ name: service, port: 8080 }],
});

Deno.test("Exact beats every prefix, the longest prefix wins, element-wise (conformance HTTPRoutePathMatchOrder, HTTPRouteMatching)", () => {
  const r = route("r", [
    to("v1", [{ path: { type: "PathPrefix", value: "/match" } }]),
    to("v2", [{ path: { type: "PathPrefix", value: "/match/prefix/one" } }]),
    to("v3", [{ path: { type: "Exact", value: "/match/exact/one" } }]),
    to("v2", [{ path: { type: "PathPrefix", value: "/v2/" } }]),
  ]);
  assert.deepEqual(
    answers([r], [
      { host: "x", path: "/match/exact/one" },
      { host: "x", path: "/match/prefix/one/any" },
      { host: "x", path: "/match/prefix" },
      { host: "x", path: "/match/exact/one/x" },
      { host: "x", path: "/v2" },
      { host: "x", path: "/v2example" },
      { host: "x", path: "/other" },
    ]),
    ["v3", "v2", "v1", "v1", "v2", null, null],
  );
});

Deno.test("across routes: hostnames, then headers (conformance HTTPRouteMatchingAcrossRoutes)", () => {
  const part1 = route("matching-part1", [
    to("v1", [{ path: { type: "PathPrefix", value: "/" } }, { headers: [{ name: "version", value: "one" }] }]),
  ], {
    hostnames: ["example.com", "example.net"],
  });
  const part2 = route("matching-part2", [
    to("v2", [{ path: { type: "PathPrefix", value: "/v2" } }, { headers: [{ name: "version", value: "two" }] }]),
  ], {
    hostnames: ["example.com"],
  });
  assert.deepEqual(
    answers([part2, part1], [
      { host: "example.com", path: "/" },
      { host: "example.net", path: "/example" },
      { host: "example.com", path: "/example", headers: { Version: "one" } },
      { host: "example.com", path: "/v2" },
      { host: "example.net", path: "/v2" },
      { host: "example.com", path: "/v2/example" },
      { host: "example.com", path: "/", headers: { Version: "two" } },
    ]),
    ["v1", "v1", "v1", "v2", "v1", "v2", "v2"],
  );
});

Deno.test("more header matches win (conformance HTTPRouteHeaderMatching)", () => {
  const r = route("r", [
    to("v1", [{ headers: [{ name: "version", value: "one" }] }]),
    to("v2", [{ headers: [{ name: "version", value: "two" }] }]),
    to("v1", [{ headers: [{ name: "version", value: "two" }, { name: "color", value: "orange" }] }]),
    to("v1", [{ headers: [{ name: "color", value: "blue" }] }, { headers: [{ name: "color", value: "green" }] }]),
    to("v2", [{ headers: [{ name: "color", value: "red" }] }, { headers: [{ name: "color", value: "yellow" }] }]),
  ]);
  assert.deepEqual(
    answers([r], [
      { host: "x", path: "/", headers: { Version: "one" } },
      { host: "x", path: "/", headers: { Version: "two" } },
      { host: "x", path: "/", headers: { Version: "two", Color: "orange" } },
      { host: "x", path: "/", headers: { Color: "blue" } },
      { host: "x", path: "/", headers: { Color: "yellow" } },
      { host: "x", path: "/", headers: { Color: "purple" } },
      { host: "x", path: "/", headers: { Version: "three" } },
    ]),
    ["v1", "v2", "v1", "v1", "v2", null, null],
  );
});

Deno.test("an older route wins a tie; then namespace/name", () => {
  const newer = route("a-newer", [to("v1", [{ path: { value: "/x" } }])], { created: "2026-02-01T00:00:00Z" });
  const older = route("z-older", [to("v2", [{ path: { value: "/x" } }])], { created: "2026-01-01T00:00:00Z" });
  const twin = route("b-twin", [to("v3", [{ path: { value: "/x" } }])], { created: "2026-01-01T00:00:00Z" });
  assert.deepEqual(answers([newer, older], [{ host: "h", path: "/x" }]), ["v2"]);
  assert.deepEqual(answers([newer, older, twin], [{ host: "h", path: "/x" }]), ["v3"]);
});

Deno.test("the most specific listener hostname serves a request (conformance HTTPRouteListenerHostnameMatching)", () => {
  const listeners = [
    http("listener-1", 80, { hostname: "bar.com" }),
    http("listener-2", 80, { hostname: "foo.bar.com" }),
    http("listener-3", 80, { hostname: "*.bar.com" }),
    http("listener-4", 80, { hostname: "*.foo.com" }),
  ];
  const routes = [
    route("backend-v1", [{ backendRefs: [{ name: "v1", port: 8080 }] }], {
      parentRefs: [{ name: "gw", sectionName: "listener-1" }],
    }),
    route("backend-v2", [{ backendRefs: [{ name: "v2", port: 8080 }] }], {
      parentRefs: [{ name: "gw", sectionName: "listener-2" }],
    }),
    route("backend-v3", [{ backendRefs: [{ name: "v3", port: 8080 }] }], {
      parentRefs: [{ name: "gw", sectionName: "listener-3" }, { name: "gw", sectionName: "listener-4" }],
    }),
  ];
  const hosts = [
    "bar.com",
    "foo.bar.com",
    "baz.bar.com",
    "boo.bar.com",
    "multiple.prefixes.bar.com",
    "multiple.prefixes.foo.com",
    "foo.com",
    "no.matching.host",
  ];
  assert.deepEqual(
    answers(routes, hosts.map((host) => ({ host, path: "/" })), listeners),
    ["v1", "v2", "v3", "v3", "v3", "v3", null, null],
  );
});

Deno.test("listener isolation: a request for a more specific listener's host never reaches a wildcard listener's routes", () => {
  const listeners = [
    http("exact", 80, { hostname: "foo.example.com" }),
    http("wild", 80, { hostname: "*.example.com" }),
  ];
  const routes = [
    route("api", [to("v1", [{ path: { value: "/api" } }])], { parentRefs: [{ name: "gw", sectionName: "exact" }] }),
    route("all", [to("v2", [{ path: { value: "/" } }])], { parentRefs: [{ name: "gw", sectionName: "wild" }] }),
  ];
  assert.deepEqual(
    answers(routes, [
      { host: "foo.example.com", path: "/api" },
      { host: "foo.example.com", path: "/other" },
      { host: "bar.example.com", path: "/other" },
      { host: "foo.example.com:8080", path: "/api" },
    ], listeners),
    ["v1", null, "v2", "v1"],
  );
});
