/**
 * Regex paths (`path-regex`), their rewrites and `default-backend` in the model, the map files and
 * the configuration: what is refused (with a problem), the order of routes-regex.map, the lines
 * rendered, and that haproxy -c accepts targets with `%XX` escapes.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import { endpointSlice, ingress, type PathSpec, service } from "./fixtures.ts";

const A = "ingress-controller.io/";
const templates = await loadTemplates(null);
const lookup = lookupFromLists({
  services: [service("web", [{ port: 80 }]), service("pages", [{ name: "http", port: 8080 }, { port: 9090 }])],
  endpointSlices: [endpointSlice("web", [{ name: "", port: 8080 }], [{ address: "10.0.0.1" }])],
});
const re = (path: string): PathSpec => ({ path, pathType: "ImplementationSpecific", service: "web", port: 80 });

Deno.test("path-regex: invalid regexes drop their path with a Warning; ImplementationSpecific only", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "re",
      annotations: { [`${A}path-regex`]: "true" },
      rules: [{
        host: "a.example.com",
        paths: [
          re("/ok/(.*)"),
          re("/bad/(?{code})"),
          re("/quote'/"),
          re("/a${HOME}"),
          re("/x{99999}"),
          { path: "/prefix", pathType: "Prefix", service: "web", port: 80 },
          { path: "/p(x)", pathType: "Prefix", service: "web", port: 80 },
        ],
      }],
    })],
  });
  assert.deepEqual(model.routes.map((r) => [r.path, r.match]), [["/ok/(.*)", "regex"], ["/prefix", "prefix"]]);
  assert.deepEqual(problems.map((p) => [p.reason, p.message.replace(/^spec\.rules\[0\]\.http\./, "")]), [
    [
      "InvalidPath",
      'paths[1].path: "/bad/(?{code})" has "(?" at 5; only (?:…) groups are allowed (a path-regex path); path ignored',
    ],
    [
      "InvalidPath",
      `paths[2].path: "/quote'/" has the character "'" at 6, which is not allowed (a path-regex path); path ignored`,
    ],
    [
      "InvalidPath",
      'paths[3].path: "/a${HOME}" has $ at 2, allowed only before ), | or the end (a path-regex path); path ignored',
    ],
    [
      "InvalidPath",
      'paths[4].path: "/x{99999}" has { at 2 that is not a quantifier {m}, {m,} or {m,n} (write \\{ for the character) (a path-regex path); path ignored',
    ],
    [
      "InvalidPath",
      'paths[6].path: "/p(x)" is not an absolute path of letters, digits and -._~!*+,;=:@/%XX; path ignored',
    ],
  ]);
});

Deno.test("routes-regex.map: longest regex first per host, never sorted; map_reg lookups only with regex routes", () => {
  const build = (annotations: Record<string, string>) =>
    render(
      buildModel({
        lookup,
        ingresses: [ingress({
          name: "re",
          annotations,
          rules: [
            { host: "a.example.com", paths: [re("/a/.*"), re("/a/b/.*"), re("/z")] },
            { host: "*.example.org", paths: [re("/w")] },
            { paths: [re("/any|/other")] },
          ],
        })],
      }).model,
      templates,
    );
  const on = build({ [`${A}path-regex`]: "true" });
  assert.equal(
    on.maps["routes-regex.map"],
    [
      "^a[.]example[.]com(?=/)(?i:/a/b/.*) be_default_web_80",
      "^a[.]example[.]com(?=/)(?i:/a/.*) be_default_web_80",
      "^a[.]example[.]com(?=/)(?i:/z) be_default_web_80",
      "^[.]example[.]org(?=/)(?i:/w) be_default_web_80",
      "^(?=/)(?i:/any|/other) be_default_web_80",
      "",
    ].join("\n"),
  );
  assert.equal(on.config.match(/map_reg\(/g)?.length, 3, "exact host, wildcard, any host");
  const off = build({});
  assert.equal(off.maps["routes-regex.map"], "");
  assert.doesNotMatch(off.config, /map_reg/);
  assert.match(off.maps["routes-prefix.map"], /^a\.example\.com\/a\/\.\*\/ /m, "without path-regex: a prefix");
});

Deno.test("rewrite-target: $n on a regex path rewrites the whole path; on a prefix path it is a Warning", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "re",
      annotations: { [`${A}path-regex`]: "true", [`${A}rewrite-target`]: "/$2/x" },
      rules: [{
        host: "a.example.com",
        paths: [re("/api(/|$)(.*)"), { path: "/p", pathType: "Prefix", service: "web", port: 80 }],
      }],
    })],
  });
  assert.deepEqual(problems.map((p) => p.message), [
    "annotation ingress-controller.io/rewrite-target: $1…$9 need a regex path (path-regex and pathType " +
    "ImplementationSpecific); ignored for path /p",
  ]);
  const { config } = render(model, templates);
  assert.match(config, /^ {4}http-request replace-path '\^\(\?i:\/api\(\/\|\$\)\(\.\*\)\)' '\/\\2\/x'$/m);
});

Deno.test("rewrite targets with %XX escapes: haproxy -c accepts them (% doubled in the log-format target)", async () => {
  const ing = (name: string, annotations: Record<string, string>, path: PathSpec) =>
    ingress({ name, annotations, rules: [{ host: `${name}.example.com`, paths: [path] }] });
  const rendered = render(
    buildModel({
      lookup,
      ingresses: [
        ing("prefix", { [`${A}rewrite-target`]: "/a%2Fb" }, { path: "/p", service: "web", port: 80 }),
        ing("regex", { [`${A}path-regex`]: "true", [`${A}rewrite-target`]: "/%41/$1" }, re("/r/(.*)")),
      ],
    }).model,
    templates,
  );
  assert.match(rendered.config, /replace-path '\^\/p\(\/\.\*\)\?\$' '\/a%%2Fb\\1'/);
  assert.match(rendered.config, /replace-path '\^\(\?i:\/r\/\(\.\*\)\)' '\/%%41\/\\1'/);
  const check = await validateConfig(rendered, { timeoutMs: 20_000 });
  assert.deepEqual(check.errors, []);
});

Deno.test("path-regex all: every path of the Ingress is a regex, Exact and Prefix too (ingress-nginx's use-regex)", () => {
  const paths: PathSpec[] = [
    { path: "/api(/|$)(.*)", pathType: "Prefix", service: "web", port: 80 },
    { path: "/exact", pathType: "Exact", service: "web", port: 80 },
    re("/items/[0-9]+"),
  ];
  const { model, problems } = buildModel({
    lookup,
    ingresses: [
      ingress({ name: "all", annotations: { [`${A}path-regex`]: "all" }, rules: [{ host: "a.example.com", paths }] }),
      ingress({ name: "impl", annotations: { [`${A}path-regex`]: "true" }, rules: [{ host: "b.example.com", paths }] }),
    ],
  });
  assert.deepEqual(
    model.routes.filter((r) => r.host === "a.example.com").map((r) => [r.path, r.pathType, r.match]).sort(),
    [
      ["/api(/|$)(.*)", "Prefix", "regex"],
      ["/exact", "Exact", "regex"],
      ["/items/[0-9]+", "ImplementationSpecific", "regex"],
    ],
  );
  // true: the Prefix path that is no path is refused, the Exact one stays exact
  assert.deepEqual(
    model.routes.filter((r) => r.host === "b.example.com").map((r) => [r.path, r.match]).sort(),
    [["/exact", "exact"], ["/items/[0-9]+", "regex"]],
  );
  assert.deepEqual(problems.map((p) => [p.object, p.reason]), [["default/impl", "InvalidPath"]]);
  const regexMap = render(model, templates).maps["routes-regex.map"];
  assert.match(regexMap, /^\^a\[\.\]example\[\.\]com\(\?=\/\)\(\?i:\/exact\) /m);
});

Deno.test("default-backend: the Service's first port, a fallback line per backend; a missing Service is a Warning", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [
      ingress({
        name: "fb",
        annotations: { [`${A}default-backend`]: "pages" },
        rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
      ingress({
        name: "missing",
        annotations: { [`${A}default-backend`]: "nothing:80" },
        rules: [{ host: "b.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      }),
    ],
  });
  assert.deepEqual(problems.map((p) => [p.object, p.reason]), [["default/missing", "ServiceNotFound"]]);
  assert.match(problems[0].message, /default-backend: Service default\/nothing not found; requests get 503/);
  const route = model.routes.find((r) => r.host === "a.example.com")!;
  const backend = model.backends.find((b) => b.name === route.backend)!;
  assert.equal(backend.fallback, "be_default_pages_8080", "the first port");
  assert.ok(model.backends.some((b) => b.name === "be_default_pages_8080"), "the fallback has a backend section");
  // a missing Service with a port: kept like a route's (503 until it exists, then live); without a port: ignored
  const { config } = render(model, templates);
  const lines = config.split("\n").filter((l) => l.includes("nbsrv") && l.includes("use_backend"));
  const missing = model.backends.find((b) => b.name === model.routes.find((r) => r.host === "b.example.com")!.backend)!;
  assert.deepEqual(
    [...lines].sort(), // rendered in the order of the variants' names, which hash their settings
    [
      `    use_backend be_default_nothing_80 if { var(txn.route) -m str ${missing.name} } !{ nbsrv(${missing.name}) gt 0 }`,
      `    use_backend be_default_pages_8080 if { var(txn.route) -m str ${backend.name} } !{ nbsrv(${backend.name}) gt 0 }`,
    ].sort(),
  );
  // ingress-nginx's headers for its custom default backend: each route's names, in one variable
  const named = config.split("\n").filter((l) => l.includes("txn.ic_fb) str("));
  assert.deepEqual(
    [...named].sort(),
    [
      `    http-request set-var(txn.ic_fb) str(default:missing:web:80) if { var(txn.route) -m str ${missing.name} } !{ nbsrv(${missing.name}) gt 0 }`,
      `    http-request set-var(txn.ic_fb) str(default:fb:web:80) if { var(txn.route) -m str ${backend.name} } !{ nbsrv(${backend.name}) gt 0 }`,
    ].sort(),
  );
  assert.ok(config.includes("    http-request set-header X-Code 503 if { var(txn.ic_fb) -m found }\n"));
  const portless = buildModel({
    lookup,
    ingresses: [ingress({
      name: "portless",
      annotations: { [`${A}default-backend`]: "nothing" },
      rules: [{ host: "c.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    })],
  });
  assert.deepEqual(portless.problems.map((p) => p.message), [
    "annotation ingress-controller.io/default-backend: Service default/nothing not found; ignored",
  ]);
  assert.ok(portless.model.backends.every((b) => b.fallback === undefined));
});
