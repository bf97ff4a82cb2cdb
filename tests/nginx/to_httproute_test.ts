/**
 * The migration preview (lib/nginx/to_httproute.ts, lib/nginx/httproute_yaml.ts): for each
 * ingress-nginx annotation with a Gateway API form, the match or filter the HTTPRoute gets, as the
 * Gateway API reference defines them (RequestRedirect, URLRewrite ReplacePrefixMatch and
 * ReplaceFullPath, Request/ResponseHeaderModifier, weighted backendRefs, header matches); the
 * verdicts of those without one; the Ingresses withheld because the route would open them; the TLS
 * listeners and ReferenceGrants suggested; and that every emitted rule is one this controller's
 * Gateway model reads without a problem.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import type { HTTPRoute } from "../../lib/gateway/api.ts";
import { readMatch } from "../../lib/gateway/matches.ts";
import { readFilters } from "../../lib/gateway/filters.ts";
import {
  backendRequestTimeout,
  type IngressObject,
  openEndedRegex,
  parseGatewayRef,
  planMigration,
  prefixRewriteOf,
} from "../../lib/nginx/to_httproute.ts";
import { httpRouteYaml } from "../../lib/nginx/httproute_yaml.ts";
import { nginxCheck } from "./nginx_check_run.ts";
import { filter, GW, ing, N, only, rulesOf, verdict } from "./httproute_fixtures.ts";

Deno.test("a plain Ingress: one route on every listener, PathPrefix and Exact, port numbers", () => {
  const { routes, m } = only([ing("web", {}, { paths: [{ path: "/" }, { path: "/health", pathType: "Exact" }] })]);
  assert.equal(routes.length, 1);
  assert.equal(m.withheld, null);
  const r = routes[0];
  assert.deepEqual(r.metadata, { name: "web", namespace: "app" });
  assert.deepEqual(r.spec.parentRefs, [{ name: "edge", namespace: "infra" }]);
  assert.deepEqual(r.spec.hostnames, ["app.example.com"]);
  assert.deepEqual(rulesOf(r), [
    { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "web", port: 80 }] },
    { matches: [{ path: { type: "Exact", value: "/health" } }], backendRefs: [{ name: "web", port: 80 }] },
  ]);
});

Deno.test("TLS with the default ssl-redirect: the route on the HTTPS port, a 308 to https on the HTTP port, a listener", () => {
  const { routes, plan } = only([ing("web", {}, { tls: [{ hosts: ["app.example.com"], secretName: "app-tls" }] })]);
  assert.deepEqual(routes.map((r) => r.metadata.name), ["web", "web-https-redirect"]);
  assert.deepEqual(routes[0].spec.parentRefs, [{ name: "edge", namespace: "infra", port: 443 }]);
  assert.deepEqual(routes[1].spec.parentRefs, [{ name: "edge", namespace: "infra", port: 80 }]);
  assert.deepEqual(rulesOf(routes[1]), [{
    filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 308 } }],
  }]);
  const https = plan.listeners.find((l) => l.protocol === "HTTPS")!;
  assert.equal(https.hostname, "app.example.com");
  assert.equal(https.port, 443);
  assert.deepEqual(https.tls?.certificateRefs, [{ kind: "Secret", name: "app-tls", namespace: "app" }]);
  assert.deepEqual(https.allowedRoutes?.namespaces?.selector?.matchLabels, { "kubernetes.io/metadata.name": "app" });
  assert.deepEqual(plan.grants.map((g) => [g.metadata.namespace, g.spec.from[0].namespace, g.spec.to]), [
    ["app", "infra", [{ group: "", kind: "Secret", name: "app-tls" }]],
  ]);
  // the Gateway in the certificate's namespace needs no grant
  assert.deepEqual(
    planMigration([ing("web", {}, { ns: "infra", tls: [{ secretName: "app-tls" }] })], GW).grants,
    [],
  );
});

Deno.test("ssl-redirect false keeps one route on every listener; ssl-redirect-code and force-ssl-redirect", () => {
  const off = only([ing("web", { "ssl-redirect": "false" }, { tls: [{ secretName: "app-tls" }] })]);
  assert.deepEqual(off.routes.map((r) => r.metadata.name), ["web"]);
  assert.deepEqual(off.routes[0].spec.parentRefs, [{ name: "edge", namespace: "infra" }]);
  assert.equal(verdict(off.m.verdicts, "ssl-redirect"), `${N}ssl-redirect: nothing to carry over (false)`);

  const code = only([
    ing("web", { "ingress-controller.io/ssl-redirect-code": "301" }, { tls: [{ secretName: "app-tls" }] }),
  ]);
  assert.equal(filter(rulesOf(code.routes[1])[0], "RequestRedirect")?.requestRedirect?.statusCode, 301);

  // without TLS (terminated in front of the proxy): every host redirected
  const force = only([ing("web", { "force-ssl-redirect": "true" })]);
  assert.deepEqual(force.routes.map((r) => [r.metadata.name, r.spec.parentRefs?.[0].port]), [
    ["web", 443],
    ["web-https-redirect", 80],
  ]);
  assert.match(verdict(force.m.verdicts, "force-ssl-redirect")!, /RequestRedirect scheme https/);
});

Deno.test("permanent-redirect and temporal-redirect: RequestRedirect with scheme, host, port, full path and code", () => {
  const perm = only([ing("old", { "permanent-redirect": "https://blog.example.com/new" })]);
  assert.deepEqual(rulesOf(perm.routes[0]), [{
    matches: [{ path: { type: "PathPrefix", value: "/" } }],
    filters: [{
      type: "RequestRedirect",
      requestRedirect: {
        scheme: "https",
        hostname: "blog.example.com",
        path: { type: "ReplaceFullPath", replaceFullPath: "/new" },
        statusCode: 301,
      },
    }],
  }]);
  const code = only([ing("old", { "permanent-redirect": "http://x.example:8080/", "permanent-redirect-code": "308" })]);
  assert.deepEqual(filter(rulesOf(code.routes[0])[0], "RequestRedirect")?.requestRedirect, {
    scheme: "http",
    hostname: "x.example",
    port: 8080,
    path: { type: "ReplaceFullPath", replaceFullPath: "/" },
    statusCode: 308,
  });
  const temp = only([ing("old", { "temporal-redirect": "https://maintenance.example.com" })]);
  const r = filter(rulesOf(temp.routes[0])[0], "RequestRedirect")?.requestRedirect;
  assert.equal(r?.statusCode, 302);
  assert.equal(r?.hostname, "maintenance.example.com");
  assert.equal(rulesOf(temp.routes[0])[0].backendRefs, undefined, "a redirect rule has no backends");
});

Deno.test("rewrite-target without captures: every path a regex whose whole path is replaced (ReplaceFullPath); our own key on a Prefix path: ReplacePrefixMatch", () => {
  // ingress-nginx (buildLocation with enforceRegex): `location ~* "^/api"` and `rewrite (?i)/api /v2 break`
  // whatever the pathType: /api, /apis and /api/x all become /v2
  for (const pathType of ["Prefix", "Exact", "ImplementationSpecific"]) {
    const api = only([ing("api", { "rewrite-target": "/v2" }, { paths: [{ path: "/api", pathType }] })]);
    const rule = rulesOf(api.routes[0])[0];
    assert.deepEqual(rule.matches, [{ path: { type: "RegularExpression", value: "/api.*" } }], pathType);
    assert.deepEqual(filter(rule, "URLRewrite")?.urlRewrite, {
      path: { type: "ReplaceFullPath", replaceFullPath: "/v2" },
    }, pathType);
    assert.match(api.m.notes.join("\n"), /case-sensitively/, pathType);
  }
  const regex = only([
    ing("api", { "rewrite-target": "/" }, { paths: [{ path: "/old/[a-z]+", pathType: "ImplementationSpecific" }] }),
  ]);
  const rule = rulesOf(regex.routes[0])[0];
  assert.deepEqual(rule.matches, [{ path: { type: "RegularExpression", value: "/old/[a-z]+.*" } }]);
  assert.deepEqual(filter(rule, "URLRewrite")?.urlRewrite, { path: { type: "ReplaceFullPath", replaceFullPath: "/" } });
  // this controller's own key without path-regex: the matched prefix is replaced, the match stays a prefix
  const ours = only([ing("api", { "ingress-controller.io/rewrite-target": "/v2" }, { paths: [{ path: "/api" }] })]);
  const own = rulesOf(ours.routes[0])[0];
  assert.deepEqual(own.matches, [{ path: { type: "PathPrefix", value: "/api" } }]);
  assert.deepEqual(filter(own, "URLRewrite")?.urlRewrite, {
    path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2" },
  });
  const exact = only([
    ing("api", { "ingress-controller.io/rewrite-target": "/v2" }, { paths: [{ path: "/api", pathType: "Exact" }] }),
  ]);
  assert.deepEqual(rulesOf(exact.routes[0])[0].matches, [{ path: { type: "Exact", value: "/api" } }]);
  assert.deepEqual(filter(rulesOf(exact.routes[0])[0], "URLRewrite")?.urlRewrite, {
    path: { type: "ReplaceFullPath", replaceFullPath: "/v2" },
  });
  assert.doesNotMatch(ours.m.notes.join("\n"), /case-sensitively/, "no regex, no note");
});

Deno.test("rewrite-target with captures: the P(/|$)(.*) idiom is a prefix rewrite; other captures have no form", () => {
  const idiom = only([
    ing("api", { "use-regex": "true", "rewrite-target": "/$2" }, {
      paths: [{ path: "/api(/|$)(.*)", pathType: "ImplementationSpecific" }],
    }),
  ]);
  const rule = rulesOf(idiom.routes[0])[0];
  assert.deepEqual(rule.matches, [{ path: { type: "PathPrefix", value: "/api" } }]);
  assert.deepEqual(filter(rule, "URLRewrite")?.urlRewrite, {
    path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" },
  });
  assert.match(verdict(idiom.m.verdicts, "rewrite-target")!, /PathPrefix \/api with URLRewrite ReplacePrefixMatch \//);

  const other = only([
    ing("api", { "use-regex": "true", "rewrite-target": "/x/$1" }, {
      paths: [{ path: "/api/([0-9]+)", pathType: "ImplementationSpecific" }],
    }),
  ]);
  const r2 = rulesOf(other.routes[0])[0];
  assert.deepEqual(r2.matches, [{ path: { type: "RegularExpression", value: "/api/([0-9]+).*" } }]);
  assert.equal(filter(r2, "URLRewrite"), undefined);
  assert.match(verdict(other.m.verdicts, "rewrite-target")!, /no Gateway API form served here.*stays an Ingress/);
  assert.match(other.m.notes.join("\n"), /\/api\/\(\[0-9\]\+\): served without its rewrite/);

  assert.deepEqual(prefixRewriteOf("/a/b(/|$)(.*)", "/v2/$2"), { prefix: "/a/b", replace: "/v2/" });
  assert.equal(prefixRewriteOf("/a.b(/|$)(.*)", "/$2"), null, "`.` is a regex there, not a literal");
  assert.equal(prefixRewriteOf("/a(/|$)(.*)", "/$1"), null);
  assert.equal(prefixRewriteOf("/a(.*)", "/$1"), null);
});

Deno.test("openEndedRegex: the Ingress's open end kept in a regex the Gateway matches whole", () => {
  assert.equal(openEndedRegex("/api"), "/api.*");
  assert.equal(openEndedRegex("/api$"), "/api$");
  assert.equal(openEndedRegex("/a$|/b"), "/a$|/b.*");
  assert.equal(openEndedRegex("/(a|b)"), "/(a|b).*");
  assert.equal(openEndedRegex("/[|]x"), "/[|]x.*");
  assert.equal(openEndedRegex("/x.*"), "/x.*");
  assert.equal(openEndedRegex("/x\\$"), "/x\\$.*");
});

Deno.test("use-regex or rewrite-target: every path of the host is a regex, other Ingresses' too, as the Ingress serves it", () => {
  // ingress-nginx's own e2e form: a regex written on a Prefix path, with rewrite-target
  const prefixIdiom = only([
    ing("api", { "rewrite-target": "/$2" }, { paths: [{ path: "/api(/|$)(.*)", pathType: "Prefix" }] }),
  ]);
  assert.deepEqual(rulesOf(prefixIdiom.routes[0])[0].matches, [{ path: { type: "PathPrefix", value: "/api" } }]);
  assert.deepEqual(filter(rulesOf(prefixIdiom.routes[0])[0], "URLRewrite")?.urlRewrite, {
    path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" },
  });

  const plan = planMigration([
    ing("items", { "use-regex": "true" }, { paths: [{ path: "/items/[0-9]+" }] }),
    ing("site", {}, {
      paths: [
        { path: "/", service: "site" },
        { path: "/shop/", service: "shop" },
        { path: "/about", pathType: "Exact", service: "about" },
      ],
    }),
    ing("legacy", { "ingress-controller.io/rewrite-target": "/" }, { paths: [{ path: "/old", service: "legacy" }] }),
    ing("other", {}, { host: "other.example.com", paths: [{ path: "/shop" }] }),
  ], GW);
  const matchesOf = (name: string) =>
    plan.ingresses.find((m) => m.name === name)!.routes.flatMap((r) => rulesOf(r)).map((r) => r.matches?.[0].path);
  const notesOf = (name: string) => plan.ingresses.find((m) => m.name === name)!.notes.join("\n");
  assert.deepEqual(matchesOf("items"), [{ type: "RegularExpression", value: "/items/[0-9]+.*" }]);
  // `^/` matches every path, as PathPrefix / does, and both come after the host's other regexes;
  // a Prefix path loses its trailing / (as in the model); Exact paths match from the start too
  assert.deepEqual(matchesOf("site"), [
    { type: "PathPrefix", value: "/" },
    { type: "RegularExpression", value: "/shop.*" },
    { type: "RegularExpression", value: "/about.*" },
  ]);
  assert.match(notesOf("site"), /app\.example\.com \/shop\/ \(Prefix\): a regex, as every path of the host/);
  assert.match(notesOf("site"), /case-sensitively/);
  // a route that rewrites its prefix keeps its match, as in the model (which warns)
  assert.deepEqual(matchesOf("legacy"), [{ type: "PathPrefix", value: "/old" }]);
  assert.deepEqual(matchesOf("other"), [{ type: "PathPrefix", value: "/shop" }], "another host: no regex");
  assert.doesNotMatch(notesOf("other"), /regex|case-sensitively/);

  // a regex the subset refuses: left out, as the model drops it
  const bad = only([ing("bad", { "use-regex": "true" }, { paths: [{ path: "/a\\1", pathType: "Prefix" }] })]);
  assert.deepEqual(bad.routes, []);
  assert.match(bad.m.notes.join("\n"), /\/a\\1: as a regex \(path-regex\) it .*; left out/);
  // use-regex false: nothing changes
  const off = only([ing("off", { "use-regex": "false" }, { paths: [{ path: "/x" }] })]);
  assert.deepEqual(rulesOf(off.routes[0])[0].matches, [{ path: { type: "PathPrefix", value: "/x" } }]);
});

Deno.test("the P(/|$)(.*) idiom as PathPrefix comes after the host's regexes: a shorter regex that matches under P is named", () => {
  const plan = planMigration([
    ing("api", { "rewrite-target": "/$2" }, { paths: [{ path: "/api(/|$)(.*)", pathType: "Prefix" }] }),
    ing("a", {}, { paths: [{ path: "/a", service: "a" }, { path: "/b", service: "b" }] }),
  ], GW);
  const api = plan.ingresses.find((m) => m.name === "api")!;
  assert.match(
    api.notes.join("\n"),
    /app\.example\.com \/api\(\/\|\$\)\(\.\*\): the Gateway tries the regex \/a before PathPrefix \/api, the Ingress tried this longer regex first/,
  );
  assert.doesNotMatch(api.notes.join("\n"), /regex [^P]*\/b/, "/b matches nothing under /api");
  const alone = planMigration([
    ing("api", { "rewrite-target": "/$2" }, { paths: [{ path: "/api(/|$)(.*)", pathType: "Prefix" }] }),
    ing("site", {}, { paths: [{ path: "/", service: "site" }] }),
  ], GW);
  assert.doesNotMatch(alone.ingresses[0].notes.join("\n"), /tries the regex/, "/ stays after /api in both");
  assert.match(alone.ingresses[1].notes.join("\n"), /\/ \(Prefix\): a regex, as every path of the host/);
  assert.doesNotMatch(alone.ingresses[1].notes.join("\n"), /case-sensitively/, "/ matches every path in any case");
});

Deno.test("the redirect to HTTPS: the Ingress drops a / ending the path (ingress-nginx's default), the RequestRedirect keeps it", () => {
  const tls = { tls: [{ hosts: ["app.example.com"], secretName: "app-tls" }] };
  const drop = only([ing("web", {}, tls)]);
  assert.match(
    drop.m.notes.join("\n"),
    /the Ingress drops a \/ ending the path \(GET \/docs\/ → https:\/\/<host>\/docs\)/,
  );
  const dropped = only([ing("web", { "preserve-trailing-slash": "false" }, tls)]);
  assert.match(verdict(dropped.m.verdicts, "preserve-trailing-slash")!, /no Gateway API form served here/);
  const keep = only([ing("web", { "preserve-trailing-slash": "true" }, tls)]);
  assert.doesNotMatch(keep.m.notes.join("\n"), /drops a \//);
  assert.match(verdict(keep.m.verdicts, "preserve-trailing-slash")!, /keeps the path as sent/);
  const plain = only([ing("web", {})]);
  assert.doesNotMatch(plain.m.notes.join("\n"), /drops a \//, "no redirect, nothing dropped");
  // the compatibility mode's defaults are no key of a canary's own
  const canary = planMigration([
    ing("web", {}, tls),
    ing("web-canary", { canary: "true", "canary-weight": "10" }, { ...tls, paths: [{ path: "/", service: "v2" }] }),
  ], GW);
  assert.doesNotMatch(canary.ingresses[1].notes.join("\n"), /not carried/);
});

Deno.test("upstream-vhost, x-forwarded-prefix and our header keys: URLRewrite hostname and header modifiers", () => {
  const { routes, m } = only([
    ing("blog", {
      "upstream-vhost": "wordpress.internal",
      "x-forwarded-prefix": "/blog",
      "ingress-controller.io/request-headers-add": "X-Trace: on",
      "ingress-controller.io/request-headers-delete": "X-Debug",
      "ingress-controller.io/response-headers-set": "X-Frame-Options: DENY",
      "ingress-controller.io/response-headers-delete": "Server",
    }),
  ]);
  const rule = rulesOf(routes[0])[0];
  assert.deepEqual(filter(rule, "URLRewrite")?.urlRewrite, { hostname: "wordpress.internal" });
  assert.deepEqual(filter(rule, "RequestHeaderModifier")?.requestHeaderModifier, {
    set: [{ name: "X-Forwarded-Prefix", value: "/blog" }],
    add: [{ name: "X-Trace", value: "on" }],
    remove: ["X-Debug"],
  });
  assert.deepEqual(filter(rule, "ResponseHeaderModifier")?.responseHeaderModifier, {
    set: [{ name: "X-Frame-Options", value: "DENY" }],
    remove: ["Server"],
  });
  assert.match(verdict(m.verdicts, "upstream-vhost")!, /URLRewrite hostname/);
});

Deno.test("app-root: an Exact / rule redirecting (302) to the root, before the paths", () => {
  const { routes } = only([ing("web", { "app-root": "/store" })]);
  assert.deepEqual(rulesOf(routes[0])[0], {
    matches: [{ path: { type: "Exact", value: "/" } }],
    filters: [{
      type: "RequestRedirect",
      requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/store" }, statusCode: 302 },
    }],
  });
  assert.equal(rulesOf(routes[0]).length, 2);
});

Deno.test("from-to-www-redirect: a route for the twin host redirecting (308) to the host", () => {
  const { routes } = only([ing("web", { "from-to-www-redirect": "true" }, { host: "shop.example.com" })]);
  const www = routes.find((r) => r.metadata.name === "web-www")!;
  assert.deepEqual(www.spec.hostnames, ["www.shop.example.com"]);
  assert.deepEqual(rulesOf(www), [{
    filters: [{ type: "RequestRedirect", requestRedirect: { hostname: "shop.example.com", statusCode: 308 } }],
  }]);
});

Deno.test("canaries join the main Ingress's route: weights, a header rule, always/never without a value", () => {
  const main = ing("web", {});
  const weighted = ing("web-canary", { canary: "true", "canary-weight": "20" }, {
    paths: [{ path: "/", service: "v2" }],
  });
  const w = planMigration([main, weighted], GW);
  assert.equal(w.ingresses[1].routes.length, 0, "a canary has no route of its own");
  assert.match(w.ingresses[1].notes.join("\n"), /merged into the HTTPRoute of app\/web/);
  assert.deepEqual(rulesOf(w.ingresses[0].routes[0]), [{
    matches: [{ path: { type: "PathPrefix", value: "/" } }],
    backendRefs: [{ name: "web", port: 80, weight: 80 }, { name: "v2", port: 80, weight: 20 }],
  }]);

  const total = ing("c", {
    canary: "true",
    "canary-weight": "1",
    "canary-weight-total": "4",
    "proxy-body-size": "1m",
  }, {
    paths: [{ path: "/", service: "v2" }],
  });
  const t = planMigration([main, total], GW);
  assert.deepEqual(rulesOf(t.ingresses[0].routes[0])[0].backendRefs?.map((b) => b.weight), [75, 25]);
  assert.match(t.ingresses[1].notes.join("\n"), /its own max-body-size is not carried to its backendRef/);

  const header = ing("c", { canary: "true", "canary-by-header": "X-Canary", "canary-by-header-value": "beta" }, {
    paths: [{ path: "/", service: "v2" }],
  });
  assert.deepEqual(rulesOf(planMigration([main, header], GW).ingresses[0].routes[0]), [
    {
      matches: [{ path: { type: "PathPrefix", value: "/" }, headers: [{ name: "X-Canary", value: "beta" }] }],
      backendRefs: [{ name: "v2", port: 80 }],
    },
    { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: "web", port: 80 }] },
  ]);

  const always = ing("c", { canary: "true", "canary-by-header": "X-Canary", "canary-weight": "100" }, {
    paths: [{ path: "/", service: "v2" }],
  });
  const a = rulesOf(planMigration([main, always], GW).ingresses[0].routes[0]);
  assert.deepEqual(a.map((r) => [r.matches?.[0].headers?.[0]?.value ?? null, r.backendRefs?.map((b) => b.name)]), [
    ["always", ["v2"]],
    ["never", ["web"]],
    [null, ["v2"]],
  ]);

  // a canary of another namespace never joins (as the Ingress: ignored)
  const foreign = ing("c", { canary: "true", "canary-weight": "50" }, { ns: "other", paths: [{ path: "/" }] });
  const f = planMigration([main, foreign], GW);
  assert.deepEqual(rulesOf(f.ingresses[0].routes[0])[0].backendRefs, [{ name: "web", port: 80 }]);
  assert.match(f.ingresses[1].notes.join("\n"), /nothing to merge into/);
  assert.match(verdict(f.ingresses[1].verdicts, "canary-weight")!, /weights/);
});

Deno.test("withheld: authentication, address lists and TLS backends are never emitted as routes", () => {
  for (
    const [annotations, lost] of [
      [{ "auth-type": "basic", "auth-secret": "users" }, /basic authentication/],
      [{ "whitelist-source-range": "10.0.0.0/8" }, /allow-list/],
      [{ "auth-url": "http://auth.example.com/check" }, /external authentication/],
      [{ "backend-protocol": "HTTPS" }, /TLS to the backend/],
      [{ "ssl-passthrough": "true" }, /TLS passthrough/],
    ] as const
  ) {
    const { m } = only([ing("admin", annotations)]);
    assert.match(m.withheld ?? "", lost, JSON.stringify(annotations));
    assert.match(m.withheld!, /keep the Ingress/);
    const out = httpRouteYaml(planMigration([ing("admin", annotations)], GW));
    const docs = parseAllDocuments(out).map((d) => d.toJS()).filter((x) => x);
    assert.deepEqual(docs, [], "nothing to apply: " + out);
    assert.match(out, /NOT EMITTED/);
  }
  // a gRPC backend has a form: appProtocol on the Service
  const grpc = only([ing("g", { "backend-protocol": "GRPC" })]);
  assert.equal(grpc.m.withheld, null);
  assert.match(verdict(grpc.m.verdicts, "backend-protocol")!, /appProtocol: kubernetes.io\/h2c/);
});

Deno.test("named ports: looked up in the Services given, else the route is withheld", () => {
  const named = ing("web", {}, { paths: [{ path: "/", port: "http" }] });
  const svc = { metadata: { namespace: "app", name: "web" }, spec: { ports: [{ name: "http", port: 8080 }] } };
  const found = planMigration([named], GW, [svc]);
  assert.deepEqual(rulesOf(found.ingresses[0].routes[0])[0].backendRefs, [{ name: "web", port: 8080 }]);
  const missing = planMigration([named], GW);
  assert.match(missing.ingresses[0].withheld ?? "", /port "http" is named/);
});

Deno.test("verdicts: each annotation says what it becomes, or that it stays an Ingress annotation", () => {
  const { m } = only([
    ing("api", {
      "limit-rps": "5",
      "enable-cors": "true",
      "proxy-read-timeout": "60",
      "configuration-snippet": "return 418;",
      "affinity": "cookie",
      "cert-manager.io/cluster-issuer": "letsencrypt",
      "kubernetes.io/ingress.class": "nginx",
    }),
  ]);
  assert.match(
    verdict(m.verdicts, "limit-rps")!,
    /no Gateway API form served here \(rate-limit-rps\); stays an Ingress/,
  );
  assert.match(verdict(m.verdicts, "enable-cors")!, /^\S+: the CORS filter on each rule to a backend/);
  assert.match(verdict(m.verdicts, "proxy-read-timeout")!, /timeouts\.backendRequest/);
  // the larger of proxy-read/send-timeout is our timeout-server: the rule's backendRequest timeout
  assert.deepEqual(m.routes.flatMap(rulesOf).map((r) => r.timeouts), [{ backendRequest: "1m" }]);
  assert.match(verdict(m.verdicts, "configuration-snippet")!, /refused by this controller.*nothing to carry over/);
  assert.match(verdict(m.verdicts, "affinity")!, /sessionPersistence/);
  assert.ok(m.verdicts.some((v) => v.startsWith("cert-manager.io/cluster-issuer: annotate the Gateway")));
  assert.equal(m.verdicts.length, 6, "other annotations get no verdict");
});

/** The CORS filter of every rule of an Ingress's routes (one per rule, the same on each). */
Deno.test("hsts: a Strict-Transport-Security set on the response, replacing a response-headers-* edit of it as the Ingress does", () => {
  const O = "ingress-controller.io/";
  const tls = { tls: [{ hosts: ["app.example.com"], secretName: "app-tls" }] };
  const { m, routes } = only([
    ing("h", {
      [O + "hsts"]: "true",
      [O + "hsts-max-age"]: "31536000",
      [O + "hsts-include-subdomains"]: "true",
      [O + "response-headers-set"]: "X-Frame-Options: DENY\nStrict-Transport-Security: max-age=1",
    }, tls),
  ]);
  const main = routes.find((r) => r.metadata.name === "h")!;
  assert.deepEqual(filter(rulesOf(main)[0], "ResponseHeaderModifier")?.responseHeaderModifier, {
    set: [
      { name: "X-Frame-Options", value: "DENY" },
      { name: "Strict-Transport-Security", value: "max-age=31536000; includeSubDomains" },
    ],
  });
  // the route is on the HTTPS listener only (the redirect to HTTPS): the header only on HTTPS, as here
  assert.equal(main.spec.parentRefs?.[0].port, 443);
  assert.ok(!m.notes.some((n) => n.startsWith("Strict-Transport-Security")));
  assert.match(
    m.verdicts.find((v) => v.startsWith(O + "hsts:"))!,
    /ResponseHeaderModifier set Strict-Transport-Security/,
  );
  assert.match(m.verdicts.find((v) => v.startsWith(O + "hsts-max-age:"))!, /max-age of the Strict-Transport-Security/);
  const f = readFilters(rulesOf(main)[0].filters, "rules[0]", true);
  assert.ok(f.ok, JSON.stringify(f));

  // on every listener: the header reaches plain HTTP answers too, where browsers ignore it (RFC 6797 8.1)
  const plain = only([ing("h", { [O + "hsts"]: "true", [O + "hsts-preload"]: "true", "ssl-redirect": "false" }, tls)]);
  assert.deepEqual(filter(rulesOf(plain.routes[0])[0], "ResponseHeaderModifier")?.responseHeaderModifier, {
    set: [{ name: "Strict-Transport-Security", value: "max-age=15768000; preload" }],
  });
  assert.ok(plain.m.notes.some((n) => /plain HTTP answers too .*RFC 6797/.test(n)), plain.m.notes.join("\n"));

  // off: nothing, and its keys carry nothing
  const off = only([ing("h", { [O + "hsts-max-age"]: "60" })]);
  assert.equal(filter(rulesOf(off.routes[0])[0], "ResponseHeaderModifier"), undefined);
  assert.match(off.m.verdicts.find((v) => v.startsWith(O + "hsts-max-age:"))!, /nothing to carry over \(hsts is off\)/);
});

Deno.test("timeout-server as a Gateway API duration (GEP-2257: h m s ms, up to five digits each)", () => {
  assert.equal(backendRequestTimeout("30s"), "30s");
  assert.equal(backendRequestTimeout("90s"), "1m30s");
  assert.equal(backendRequestTimeout("1500ms"), "1s500ms");
  assert.equal(backendRequestTimeout("999999m"), "16666h39m");
  for (const bad of [null, "", "10", "1h", "1.5s"]) assert.equal(backendRequestTimeout(bad), null, String(bad));
  for (const v of ["30s", "90s", "1500ms", "999999m"]) {
    assert.match(backendRequestTimeout(v)!, /^(?:[0-9]{1,5}h)?(?:[0-9]{1,5}m)?(?:[0-9]{1,5}s)?(?:[0-9]{1,5}ms)?$/);
  }
});

Deno.test("the CRD's limits: at most 16 rules and 16 hostnames a route", () => {
  const paths = Array.from({ length: 20 }, (_, i) => ({ path: `/p${i}` }));
  const many = only([ing("big", {}, { paths })]);
  assert.deepEqual(many.routes.map((r) => [r.metadata.name, rulesOf(r).length]), [["big", 16], ["big-2", 4]]);
  const hosts: IngressObject = {
    metadata: { namespace: "app", name: "hosts", annotations: { [N + "force-ssl-redirect"]: "true" } },
    spec: {
      rules: Array.from({ length: 18 }, (_, i) => ({
        host: `h${i}.example.com`,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
        },
      })),
    },
  };
  const h = only([hosts]);
  assert.deepEqual(h.routes.map((r) => [r.metadata.name, r.spec.hostnames?.length]), [
    ["hosts", 16],
    ["hosts-2", 2],
    ["hosts-https-redirect", 16],
    ["hosts-https-redirect-2", 2],
  ]);
});

Deno.test("parseGatewayRef: NAMESPACE/NAME only", () => {
  assert.deepEqual(parseGatewayRef("infra/edge"), { namespace: "infra", name: "edge" });
  for (const bad of ["", "edge", "infra/", "/edge", "a/b/c", "Infra/edge", "infra/ed ge"]) {
    assert.equal(typeof parseGatewayRef(bad), "string", bad);
  }
});

Deno.test("the YAML: only HTTPRoutes to apply, verdicts as comments, every rule one our Gateway model reads", async () => {
  const file = new URL("./fixtures/wild.yaml", import.meta.url).pathname;
  const text = await Deno.readTextFile(file);
  // deno-lint-ignore no-explicit-any
  const objects = parseAllDocuments(text).map((d) => d.toJS() as any).filter((o) => o);
  const ingresses = objects.filter((o) => o.kind === "Ingress")
    .map((o) => ({ ...o, metadata: { namespace: "default", ...o.metadata } }));
  const services = objects.filter((o) => o.kind === "Service");
  const out = httpRouteYaml(planMigration(ingresses, GW, services));
  const docs = parseAllDocuments(out);
  assert.ok(docs.every((d) => d.errors.length === 0));
  const routes = docs.map((d) => d.toJS() as HTTPRoute);
  assert.ok(routes.every((r) => r.kind === "HTTPRoute" && r.apiVersion === "gateway.networking.k8s.io/v1"));
  const names = routes.map((r) => `${r.metadata.namespace}/${r.metadata.name}`);
  for (const kept of ["monitoring/grafana", "monitoring/prometheus", "internal/admin", "legacy/billing"]) {
    assert.ok(!names.includes(kept), `${kept} is withheld`);
  }
  for (const served of ["shop/storefront-api", "shop/storefront-web", "payments/checkout", "marketing/blog"]) {
    assert.ok(names.includes(served), served);
  }
  assert.ok(!names.some((n) => n.includes("canary") || n.endsWith("search-beta")), "canaries merge");
  assert.match(out, /^# {3}nginx\.ingress\.kubernetes\.io\/limit-rps: no Gateway API form served here/m);
  for (const r of routes) {
    assert.ok((r.spec.rules ?? []).length <= 16);
    for (const [i, rule] of (r.spec.rules ?? []).entries()) {
      const where = `${r.metadata.name}.rules[${i}]`;
      const matches = rule.matches ?? [{}];
      for (const m of matches) assert.equal(readMatch(m, where).ok, true, `${where}: ${JSON.stringify(m)}`);
      const prefixOnly = matches.every((m) => (m.path?.type ?? "PathPrefix") === "PathPrefix");
      const f = readFilters(rule.filters, where, prefixOnly);
      assert.ok(f.ok, `${where}: ${JSON.stringify(f)}`);
    }
  }
});

Deno.test("nginx-check --output httproute through main.ts: YAML to apply; --gateway is required and checked", async () => {
  const run = nginxCheck;
  const fixture = new URL("./fixtures/grpc-canary.yaml", import.meta.url).pathname;
  const ok = await run(["-f", fixture, "-o", "httproute", "--gateway", "infra/edge"]);
  assert.equal(ok.code, 0, ok.stderr);
  const routes = parseAllDocuments(ok.stdout).map((d) => d.toJS() as HTTPRoute);
  assert.deepEqual(routes.map((r) => r.metadata.name), ["greeter", "greeter-https-redirect", "legacy"]);
  assert.equal(routes[2].metadata.name, "legacy", "ssl-passthrough false withholds nothing");
  assert.match(ok.stdout, /^# {3}nginx\.ingress\.kubernetes\.io\/ssl-passthrough: nothing to carry over \(false\)$/m);
  assert.deepEqual(routes[0].spec.parentRefs, [{ name: "edge", namespace: "infra", port: 443 }]);
  const none = await run(["-f", fixture, "-o", "httproute"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--gateway: "" is not NAMESPACE\/NAME of a Gateway/);
  const bad = await run(["-f", fixture, "-o", "httproute", "--gateway", "edge"]);
  assert.equal(bad.code, 2);
});
