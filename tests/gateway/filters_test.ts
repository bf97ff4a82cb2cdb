/**
 * HTTPRouteFilter (HTTPHeaderFilter, HTTPRequestRedirectFilter, HTTPURLRewriteFilter,
 * HTTPPathModifier docs), and what the route's status says about a filter that is not served.
 */
import assert from "node:assert/strict";
import { readFilters } from "../../lib/gateway/filters.ts";
import type { HTTPRouteFilter } from "../../lib/gateway/api.ts";
import { backends, build, gateway, http, route, routeCondition, toService } from "./fixtures.ts";

function ok(filters: HTTPRouteFilter[], prefixOnly = true) {
  const r = readFilters(filters, "spec.rules[0]", prefixOnly);
  if (!r.ok) throw new Error(r.message);
  return r.filters;
}

function refused(filters: HTTPRouteFilter[], prefixOnly = true): [string, string] {
  const r = readFilters(filters, "spec.rules[0]", prefixOnly);
  assert.equal(r.ok, false, JSON.stringify(filters));
  const { reason, message } = r as { reason: string; message: string };
  return [reason, message];
}

Deno.test("RequestHeaderModifier and ResponseHeaderModifier: set, add and remove as written", () => {
  const f = ok([
    {
      type: "RequestHeaderModifier",
      requestHeaderModifier: {
        set: [{ name: "X-Header-Set", value: "set-overwrites-values" }],
        add: [{ name: "X-Add", value: "a,b" }],
        remove: ["X-Remove"],
      },
    },
    { type: "ResponseHeaderModifier", responseHeaderModifier: { set: [{ name: "X-Resp", value: "1" }] } },
  ]);
  assert.deepEqual(f.requestHeaders, {
    set: [{ name: "X-Header-Set", value: "set-overwrites-values" }],
    add: [{ name: "X-Add", value: "a,b" }],
    remove: ["X-Remove"],
  });
  assert.deepEqual(f.responseHeaders, { set: [{ name: "X-Resp", value: "1" }], add: [], remove: [] });
  assert.equal(f.redirect, null);
});

Deno.test("header edits: one action per header name (case-insensitive); names and values checked", () => {
  assert.match(
    refused([{
      type: "RequestHeaderModifier",
      requestHeaderModifier: { set: [{ name: "A", value: "1" }], remove: ["a"] },
    }])[1],
    /requestHeaderModifier\.remove\[0\]: header "a" appears in more than one action/,
  );
  assert.match(
    refused([{
      type: "RequestHeaderModifier",
      requestHeaderModifier: { add: [{ name: "A", value: "x\r\nInjected: 1" }] },
    }])[1],
    /add\[0\]\.value/,
  );
  assert.match(
    refused([{ type: "ResponseHeaderModifier", responseHeaderModifier: { set: [{ name: "A B", value: "1" }] } }])[1],
    /responseHeaderModifier\.set\[0\]\.name/,
  );
});

Deno.test("RequestRedirect: hostname and statusCode (302 by default), scheme, port and path", () => {
  assert.deepEqual(ok([{ type: "RequestRedirect", requestRedirect: { hostname: "example.org" } }]).redirect, {
    scheme: null,
    hostname: "example.org",
    port: null,
    path: null,
    statusCode: 302,
  });
  assert.deepEqual(
    ok([{
      type: "RequestRedirect",
      requestRedirect: {
        scheme: "https",
        port: 8443,
        statusCode: 301,
        path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/new" },
      },
    }]).redirect,
    {
      scheme: "https",
      hostname: null,
      port: 8443,
      path: { type: "ReplacePrefixMatch", value: "/new" },
      statusCode: 301,
    },
  );
  for (const code of [303, 307, 308]) {
    assert.equal(ok([{ type: "RequestRedirect", requestRedirect: { statusCode: code } }]).redirect!.statusCode, code);
  }
  assert.equal(refused([{ type: "RequestRedirect", requestRedirect: { statusCode: 404 } }])[0], "UnsupportedValue");
  assert.equal(refused([{ type: "RequestRedirect", requestRedirect: { scheme: "ftp" } }])[0], "UnsupportedValue");
  assert.equal(
    refused([{ type: "RequestRedirect", requestRedirect: { hostname: "*.example.org" } }])[0],
    "UnsupportedValue",
  );
  assert.equal(refused([{ type: "RequestRedirect", requestRedirect: { hostname: "a'b" } }])[0], "UnsupportedValue");
  assert.match(
    refused([{
      type: "RequestRedirect",
      requestRedirect: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/x" } },
    }], false)[1],
    /ReplacePrefixMatch needs PathPrefix matches/,
  );
});

Deno.test("URLRewrite: hostname and path; not together with RequestRedirect", () => {
  assert.deepEqual(
    ok([{
      type: "URLRewrite",
      urlRewrite: { hostname: "one.example.org", path: { type: "ReplaceFullPath", replaceFullPath: "/one" } },
    }]).rewrite,
    { hostname: "one.example.org", path: { type: "ReplaceFullPath", value: "/one" } },
  );
  assert.deepEqual(
    ok([{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "" } } }]).rewrite,
    {
      hostname: null,
      path: { type: "ReplacePrefixMatch", value: "" },
    },
  );
  assert.equal(
    refused([{ type: "RequestRedirect", requestRedirect: {} }, { type: "URLRewrite", urlRewrite: {} }])[0],
    "IncompatibleFilters",
  );
  assert.equal(
    refused([{ type: "URLRewrite", urlRewrite: { path: { type: "ReplaceFullPath", replaceFullPath: "/a b" } } }])[0],
    "UnsupportedValue",
  );
});

Deno.test("filter types not served (RequestMirror, ExtensionRef, unknown): UnsupportedValue", () => {
  for (const type of ["RequestMirror", "ExtensionRef", "SomethingNew"]) {
    const [reason, message] = refused([{ type }]);
    assert.equal(reason, "UnsupportedValue");
    assert.match(message, new RegExp(`spec\\.rules\\[0\\]\\.filters\\[0\\]\\.type "${type}" is not supported`));
  }
});

Deno.test("a rule with a filter not served answers 500 (the filter is never skipped); the route says why", () => {
  const gw = gateway([http("a")]);
  const rules = [
    {
      ...toService("web"),
      filters: [{ type: "ExtensionRef", extensionRef: { group: "x.io", kind: "Auth", name: "a" } }],
    },
    toService("web", 8080, { matches: [{ path: { value: "/ok" } }] }),
  ];
  const partial = build(gw, { routes: [route("r", rules)], ...backends("web") });
  const failing = partial.proxy.rules.find((r) => r.targets.length === 0)!;
  assert.deepEqual([failing.targets, failing.invalidWeight, failing.redirect, failing.requestHeaders], [
    [],
    0,
    null,
    null,
  ]);
  assert.ok(partial.proxy.ports[0].routes.some((e) => e.rule === failing.name), "its matches still lead to the 500");
  assert.equal(routeCondition(partial, "r", "Accepted")!.status, "True");
  const pi = routeCondition(partial, "r", "PartiallyInvalid")!;
  assert.deepEqual([pi.status, pi.reason], ["True", "UnsupportedValue"]);
  assert.match(pi.message, /^Dropped Rule: spec\.rules\[0\]\.filters\[0\]\.type "ExtensionRef"/);

  const all = build(gw, { routes: [route("r", [rules[0]])], ...backends("web") });
  const acc = routeCondition(all, "r", "Accepted")!;
  assert.deepEqual([acc.status, acc.reason], ["False", "UnsupportedValue"]);
  assert.equal(all.gateway.listeners[0].attachedRoutes, 0);
  assert.equal(routeCondition(all, "r", "PartiallyInvalid"), undefined);
  assert.deepEqual(
    all.proxy.ports[0].routes.map((e) => e.rule),
    [all.proxy.rules[0].name],
    "still answered 500, not skipped",
  );
  assert.deepEqual(all.proxy.rules[0].targets, []);
});

Deno.test("CORS: origins, methods, headers as written (origins lower-cased); maxAge defaults to 5 s", () => {
  const f = ok([{
    type: "CORS",
    cors: {
      allowOrigins: ["https://www.foo.com", "https://*.Bar.com", "http://a.test:8080", "*"],
      allowMethods: ["GET", "*"],
      allowHeaders: ["x-a", "*"],
      exposeHeaders: ["x-b"],
      allowCredentials: true,
    },
  }]);
  assert.deepEqual(f.cors, {
    allowOrigins: ["https://www.foo.com", "https://*.bar.com", "http://a.test:8080", "*"],
    allowCredentials: true,
    allowMethods: ["GET", "*"],
    allowHeaders: ["x-a", "*"],
    exposeHeaders: ["x-b"],
    maxAge: 5,
  });
  assert.deepEqual(ok([{ type: "CORS", cors: { maxAge: 3600 } }]).cors, {
    allowOrigins: [],
    allowCredentials: false,
    allowMethods: [],
    allowHeaders: [],
    exposeHeaders: [],
    maxAge: 3600,
  });
});

Deno.test("CORS: values the proxy cannot place are refused with the field named", () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ allowOrigins: ["https://a.com/path"] }, /cors\.allowOrigins\[0\] "https:\/\/a\.com\/path"/],
    [{ allowOrigins: ["https://a.*.com"] }, /allowOrigins\[0\]/],
    [{ allowOrigins: ["https://a.com'"] }, /allowOrigins\[0\]/],
    [{ allowOrigins: ["a.com"] }, /allowOrigins\[0\]/],
    [{ allowMethods: ["BREW"] }, /allowMethods\[0\] "BREW"/],
    [{ allowHeaders: ["x a"] }, /allowHeaders\[0\]/],
    [{ exposeHeaders: ["x'"] }, /exposeHeaders\[0\]/],
    [{ maxAge: 0 }, /maxAge 0/],
    [{ maxAge: 1.5 }, /maxAge 1\.5/],
  ];
  for (const [cors, message] of bad) {
    const [reason, text] = refused([{ type: "CORS", cors } as HTTPRouteFilter]);
    assert.equal(reason, "UnsupportedValue");
    assert.match(text, message);
  }
});

Deno.test("backendRef filters: the header modifiers only; others answer 500 with the reason", () => {
  const r = readFilters(
    [
      { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "Backend", value: "v1" }] } },
      { type: "ResponseHeaderModifier", responseHeaderModifier: { remove: ["server"] } },
    ],
    "spec.rules[0].backendRefs[0]",
    true,
    true,
  );
  assert.ok(r.ok);
  assert.deepEqual(r.filters.requestHeaders, { set: [{ name: "Backend", value: "v1" }], add: [], remove: [] });
  for (const f of [{ type: "URLRewrite", urlRewrite: {} }, { type: "CORS", cors: {} }]) {
    const no = readFilters([f], "spec.rules[0].backendRefs[0]", true, true);
    assert.equal(no.ok, false);
    assert.match(
      (no as { message: string }).message,
      /spec\.rules\[0\]\.backendRefs\[0\]\.filters\[0\]\.type "(URLRewrite|CORS)" is not supported on a backendRef/,
    );
  }
});
