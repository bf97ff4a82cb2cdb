import assert from "node:assert/strict";
import { buildModel, type ClusterLookup, lookupFromLists, type ModelInput } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render, RenderMemo } from "../../lib/render/render.ts";
import { DEFAULT_PROXY_OPTIONS } from "../../lib/render/proxy_options.ts";
import { skeleton, SLOT_LINE } from "../../lib/render/slots.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

const templates = await loadTemplates(null);

function lookupWith(endpoints: string[], v6: string[] = []): ClusterLookup {
  return lookupFromLists({
    services: [
      service("web", [{ name: "http", port: 80, targetPort: "web" }]),
      service("api", [{ port: 8080, targetPort: 9090 }]),
    ],
    endpointSlices: [
      endpointSlice("web", [{ name: "http", port: 8080 }], endpoints.map((address) => ({ address }))),
      endpointSlice("api", [{ name: "", port: 9090 }], v6.map((address) => ({ address })), {
        addressType: "IPv6",
      }),
    ],
    secrets: [tlsSecret("foo-tls"), tlsSecret("wild-tls")],
  });
}

const full = ingress({
  name: "full",
  tls: [{ hosts: ["foo.example.com"], secretName: "foo-tls" }, { hosts: ["*.example.org"], secretName: "wild-tls" }],
  defaultBackend: { service: "api", port: 8080 },
  rules: [
    {
      host: "foo.example.com",
      paths: [
        { path: "/", service: "web", port: "http" },
        { path: "/exact", pathType: "Exact", service: "api", port: 8080 },
      ],
    },
    { host: "*.example.org", paths: [{ path: "/impl", pathType: "ImplementationSpecific", service: "web", port: 80 }] },
    { paths: [{ path: "/any/", service: "web", port: "http" }] },
  ],
});

const cases: Record<string, ModelInput> = {
  full: { ingresses: [full], lookup: lookupWith(["10.0.0.2", "10.0.0.1"], ["fd00::2", "fd00::1"]) },
  "no TLS, built-in default backend": {
    ingresses: [ingress({ name: "plain", rules: [{ paths: [{ path: "/", service: "web", port: 80 }] }] })],
    lookup: lookupWith(["10.0.0.1"]),
  },
  "nothing servable": { ingresses: [ingress({ name: "empty" })], lookup: lookupWith([]) },
  "many endpoints, no endpoints": {
    ingresses: [full],
    lookup: lookupWith(Array.from({ length: 33 }, (_, i) => `10.0.${i >> 4}.${i & 15}`)),
  },
};

Deno.test("the contract's directives: binds, stats socket, crt-base, stats page", () => {
  const { config, crtList, secrets, maps } = render(buildModel(cases.full).model, templates);
  const lines = config.split("\n");
  const has = (l: string) => assert.ok(lines.includes(l), `missing line: ${l}`);
  has('    crt-base "${IC_CERT_DIR}"');
  has('    stats socket "${IC_RUNTIME_SOCKET}" mode 600 level admin expose-fd listeners');
  has('    bind "${IC_BIND_ADDR}:${IC_HTTP_PORT}"');
  // Without a default certificate of the administrator's, no Ingress's certificate answers an unknown name.
  has('    bind "${IC_BIND_ADDR}:${IC_HTTPS_PORT}" ssl crt-list "${IC_CERT_DIR}/crt-list" alpn h2,http/1.1 strict-sni');
  has('    bind "${IC_STATS_ADDR-127.0.0.1}:${IC_STATS_PORT}"');
  // The stats page lists every tenant's backends: never on the address clients reach.
  assert.ok(!config.includes('"${IC_BIND_ADDR}:${IC_STATS_PORT}"'));
  has("    http-request use-service prometheus-exporter if { path /metrics }");
  has("    http-request redirect scheme https code 308 if { var(txn.redirect) -m found }");
  has("    default_backend be_default_api_8080");
  assert.equal(crtList, "default_foo-tls.pem foo.example.com\ndefault_wild-tls.pem *.example.org\n");
  assert.deepEqual(secrets, [
    { file: "default_foo-tls.pem", namespace: "default", name: "foo-tls" },
    { file: "default_wild-tls.pem", namespace: "default", name: "wild-tls" },
  ]);
  const data = configMapData({ config, crtList, secrets, maps });
  assert.deepEqual(Object.keys(data), [
    "haproxy.cfg",
    "crt-list",
    "secrets.json",
    "routes-exact.map",
    "routes-prefix.map",
    "redirect-hosts.map",
    "routes-regex.map",
    "passthrough.map",
    "owned-hosts.map",
  ]);
  assert.equal(data["redirect-hosts.map"], ".example.org 1\nfoo.example.com 1\n");
  assert.deepEqual(JSON.parse(data["secrets.json"]), secrets);
});

Deno.test("routes: map files, element-wise prefix keys, exact, wildcard of one label, hostless", () => {
  const { config, maps } = render(buildModel(cases.full).model, templates);
  assert.doesNotMatch(config, /foo\.example\.com|example\.org|\/exact|\/impl|\/any/, "no route in haproxy.cfg");
  assert.match(config, /^ {4}use_backend %\[var\(txn\.route\)\] if \{ var\(txn\.route\) -m found \}$/m);
  assert.equal(maps["routes-exact.map"], "foo.example.com/exact be_default_api_8080\n");
  assert.equal(
    maps["routes-prefix.map"],
    ".example.org/impl/ be_default_web_80\n/any/ be_default_web_http\nfoo.example.com/ be_default_web_http\n",
  );
});

Deno.test("a route-only change changes the map files, not haproxy.cfg", () => {
  const a = render(buildModel(cases.full).model, templates);
  const moved = structuredClone(full);
  moved.spec!.rules![0].http!.paths[1].path = "/moved";
  moved.spec!.rules![2].http!.paths[0].backend.service = { name: "api", port: { number: 8080 } };
  const b = render(buildModel({ ...cases.full, ingresses: [moved] }).model, templates);
  assert.equal(b.config, a.config);
  assert.notEqual(b.maps["routes-exact.map"], a.maps["routes-exact.map"]);
  assert.match(b.maps["routes-prefix.map"], /^\/any\/ be_default_api_8080$/m);
});

Deno.test("routing lookups: only those some route could answer, each line the same text whichever others are there", () => {
  const routeLines = (config: string) =>
    config.split("\n").filter((l) => /^ {4}http-request set-var\(txn\.(route|wild|stop)\)/.test(l));
  const one = (
    paths: { path: string; pathType?: string; service: string; port: number | string }[],
    host = "a.example.com",
  ) =>
    buildModel({ ingresses: [ingress({ name: "one", rules: [{ host, paths }] })], lookup: lookupWith(["10.0.0.1"]) })
      .model;
  const prefixOnly = render(one([{ path: "/", service: "web", port: 80 }]), templates).config;
  // the request's host, one Prefix table: one lookup, and no owned-hosts check, wildcard part or host-less lookup
  assert.deepEqual(routeLines(prefixOnly).map((l) => l.trim()), [
    'http-request set-var(txn.route) var(txn.hostkey),concat(,txn.path,/),map_beg("${IC_CERT_DIR}/routes-prefix.map") if !{ var(txn.route) -m found }',
  ]);
  const directives = prefixOnly.split("\n").filter((l) => !/^\s*#/.test(l)).join("\n");
  assert.doesNotMatch(directives, /owned-hosts\.map|txn\.wild|txn\.stop|routes-exact\.map|routes-regex\.map/);
  // the host is checked once; every host lookup reads txn.hostkey, which an invalid host never gets
  assert.match(
    prefixOnly,
    /^ {4}http-request set-var\(txn\.hostkey\) var\(txn\.host\) if \{ var\(txn\.host\) -m reg \^\[\^\.\/\]\[\^\/\]\*\$ \}$/m,
  );
  assert.doesNotMatch(directives, /redirect-hosts\.map/, "no TLS, no redirect lookup");
  assert.match(prefixOnly, /^ {4}tune\.pattern\.cache-size 0$/m, "no regex route: no pattern cache");

  // the first Exact path of a host is a new lookup: haproxy.cfg changes (a reload), as for the first regex route
  const withExact = render(
    one([{ path: "/", service: "web", port: 80 }, { path: "/x", pathType: "Exact", service: "api", port: 8080 }]),
    templates,
  ).config;
  assert.notEqual(withExact, prefixOnly);
  assert.equal(routeLines(withExact).length, 2);
  assert.match(
    routeLines(withExact)[0],
    /var\(txn\.hostkey\),concat\(,txn\.path,\),map_str\("\$\{IC_CERT_DIR\}\/routes-exact\.map"\)$/,
  );

  // every group and kind of the full case; each line of the smaller configurations is one of its lines
  const all = render(buildModel(cases.full).model, templates).config;
  const allLines = routeLines(all);
  for (const l of [...routeLines(prefixOnly), ...routeLines(withExact)]) assert.ok(allLines.includes(l), l);
  assert.ok(allLines.some((l) => l.includes("set-var(txn.wild) var(txn.host),regsub(^[^.]+,)")), "wildcard part");
  assert.ok(allLines.some((l) => l.includes("str(),concat(,txn.path,/),map_beg")), "host-less prefixes");
  assert.ok(!allLines.some((l) => l.includes("str(),concat(,txn.path,),map_str")), "no host-less Exact path");
  assert.ok(
    all.split("\n").some((l) => /^ {4}http-request set-var\(txn\.redirect\) var\(txn\.host\),regsub/.test(l)),
    "wildcard redirect",
  );

  // owned hosts: the owned-hosts.map lookups and the built-in 404 for a stop
  const owned = buildModel(cases.full).model;
  owned.stops = [{ host: "*.example.org", stop: "catch-all" }, { host: "foo.example.com", stop: "404" }];
  const ownedConfig = render(owned, templates).config;
  assert.match(
    ownedConfig,
    /^ {4}http-request set-var\(txn\.stop\) var\(txn\.hostkey\),map_str\("\$\{IC_CERT_DIR\}\/owned-hosts\.map"\)/m,
  );
  assert.match(ownedConfig, /^ {4}http-request set-var\(txn\.stop\) var\(txn\.wild\),map_str/m);
  assert.match(ownedConfig, /^ {4}use_backend ic_default_404 if \{ var\(txn\.stop\) -m str 404 \}$/m);

  // a regex route: its lookups, and HAProxy's pattern cache for the regex list
  const regex = buildModel({
    ingresses: [ingress({
      name: "re",
      annotations: { "ingress-controller.io/path-regex": "true" },
      rules: [{
        host: "a.example.com",
        paths: [{ path: "/v[0-9]+", pathType: "ImplementationSpecific", service: "web", port: 80 }],
      }],
    })],
    lookup: lookupWith(["10.0.0.1"]),
  }).model;
  const regexConfig = render(regex, templates).config;
  assert.match(regexConfig, /var\(txn\.hostkey\),concat\(,txn\.path,\),map_reg/);
  assert.doesNotMatch(regexConfig, /cache-size/);
});

Deno.test("server slots: sorted endpoints; one per endpoint in a growable backend, else a power of two with unused slots disabled", () => {
  const { config } = render(buildModel(cases.full).model, templates);
  const section = (cfg: string, name: string) => cfg.split(`\nbackend ${name}\n`)[1].split("\n\n")[0].split("\n");
  assert.deepEqual(section(config, "be_default_web_http"), [
    "    balance roundrobin",
    "    server s1 10.0.0.1:8080",
    "    server s2 10.0.0.2:8080",
  ]);
  assert.match(
    section(config, "be_default_api_8080").join("\n"),
    /server s1 \[fd00::1\]:9090\n {4}server s2 \[fd00::2\]:9090$/,
  );
  const many = render(buildModel(cases["many endpoints, no endpoints"]).model, templates).config;
  const slots = section(many, "be_default_web_http").filter((l) => SLOT_LINE.test(l));
  assert.equal(slots.length, 33);
  assert.equal(slots.filter((l) => l.includes("disabled")).length, 0);
  // no endpoint: one slot, disabled
  assert.deepEqual(section(many, "be_default_api_8080").filter((l) => SLOT_LINE.test(l)), [
    "    server s1 127.0.0.1:1 disabled",
  ]);
  // balance source and cookie persistence cannot take added servers (lib/render/slots.ts): a power of two
  for (
    const [key, value] of [["load-balance", "source"], ["sticky-cookie", "true"]]
  ) {
    const pinned = {
      ...full,
      metadata: { ...full.metadata, annotations: { [`ingress-controller.io/${key}`]: value } },
    };
    const cfg = render(buildModel({ ...cases.full, ingresses: [pinned] }).model, templates).config;
    const web = cfg.split("\n").filter((l) => l.startsWith("backend be_default_web_http"));
    assert.equal(web.length, 1, key);
    const lines = section(cfg, web[0].slice("backend ".length)).filter((l) => SLOT_LINE.test(l));
    assert.deepEqual(lines.slice(2), ["    server s3 127.0.0.1:1 disabled", "    server s4 127.0.0.1:1 disabled"], key);
  }
});

Deno.test("deterministic: same state renders byte-identical output; endpoint-only changes keep the skeleton", () => {
  const a = render(buildModel(cases.full).model, templates);
  const b = render(buildModel({ ...cases.full, ingresses: [structuredClone(full)] }).model, templates);
  assert.equal(a.config, b.config);
  assert.equal(a.crtList, b.crtList);
  const moved = render(
    buildModel({ ingresses: [full], lookup: lookupWith(["10.9.9.9", "10.0.0.1", "10.0.0.7"], ["fd00::9"]) }).model,
    templates,
  );
  assert.notEqual(moved.config, a.config);
  assert.equal(skeleton(moved.config), skeleton(a.config));
  // 33 endpoints instead of 2 in growable backends: the same structure (the proxy adds servers)
  const grown = render(buildModel(cases["many endpoints, no endpoints"]).model, templates);
  assert.equal(skeleton(grown.config), skeleton(a.config));
});

Deno.test("no TLS: no https frontend, no redirect, empty crt-list", () => {
  const r = render(buildModel(cases["no TLS, built-in default backend"]).model, templates);
  assert.doesNotMatch(r.config, /frontend https|crt-list|redirect/);
  assert.equal(r.maps["redirect-hosts.map"], "");
  assert.match(r.config, /default_backend ic_default_404/);
  assert.equal(r.crtList, "");
  assert.deepEqual(r.secrets, []);
});

for (const [name, input] of Object.entries(cases)) {
  Deno.test(`haproxy -c accepts the rendered config: ${name}`, async () => {
    const r = render(buildModel(input).model, templates);
    const check = await validateConfig(r, { timeoutMs: 20_000 });
    assert.deepEqual(check.errors, []);
    assert.equal(check.ok, true);
  });
}

Deno.test("ssl-passthrough: the TCP frontend only while some host passes through; another host of a passed Service is a map change", () => {
  const passing = (hosts: string[]) =>
    buildModel({
      lookup: lookupWith(["10.0.0.1"]),
      ingresses: hosts.map((host, i) =>
        ingress({
          name: `pass-${i}`,
          annotations: { "ingress-controller.io/ssl-passthrough": "true" },
          rules: [{ host, paths: [{ path: "/", service: "api", port: 8080 }] }],
        })
      ),
    }).model;
  const none = render(passing([]), templates);
  assert.doesNotMatch(none.config, /mode tcp|https_sni|unix@/);
  const one = render(passing(["a.example.com"]), templates);
  const two = render(passing(["a.example.com", "b.example.com"]), templates);
  assert.match(one.config, /^frontend https_sni\n {4}mode tcp\n {4}bind "\$\{IC_BIND_ADDR\}:\$\{IC_HTTPS_PORT\}"$/m);
  assert.match(one.config, /^backend be_default_api_8080_tcp\n {4}balance roundrobin\n {4}mode tcp\n {4}server s1 /m);
  assert.equal(two.config, one.config, "haproxy.cfg unchanged: the second host is a line of passthrough.map");
  assert.equal(
    two.maps["passthrough.map"],
    "a.example.com be_default_api_8080_tcp\nb.example.com be_default_api_8080_tcp\n",
  );
});

Deno.test("crt-list: one Secret for 10,000 hosts spreads over lines HAProxy reads (65,535 characters, 2,048 words at most)", async () => {
  const hosts = Array.from({ length: 10_000 }, (_, i) => `host-${i}.tenant-with-a-long-name.example.com`);
  const r = render(
    buildModel({
      ingresses: hosts.map((host, i) =>
        ingress({
          name: `i${i}`,
          tls: [{ hosts: [host], secretName: "shared-tls" }],
          rules: [{ host, paths: [{ path: "/", service: "web", port: 80 }] }],
        })
      ),
      lookup: lookupFromLists({ services: [service("web", [{ port: 80 }])], secrets: [tlsSecret("shared-tls")] }),
    }).model,
    templates,
  );
  const lines = r.crtList.trimEnd().split("\n");
  assert.ok(lines.length > 1, "more than one line");
  for (const line of lines) {
    assert.ok(line.length < 65_535, `${line.length} characters`);
    assert.ok(line.split(" ").length <= 2_048, `${line.split(" ").length} words`);
    assert.equal(line.split(" ")[0], "default_shared-tls.pem");
  }
  assert.deepEqual(lines.flatMap((l) => l.split(" ").slice(1)).sort(), [...hosts].sort(), "every host once");
  const check = await validateConfig(r, { timeoutMs: 60_000 });
  assert.deepEqual(check.errors, []);
});

Deno.test("secrets.json lists each Secret once, in the order of its keys, and a render with a memo keeps the list", () => {
  // names whose order differs between a collator and code units: upper case, digits, dashes, dots
  const names = ["b-tls", "B.tls", "a10", "a9", "a-1", "z", "Zeta", "shared"];
  const ingresses = names.map((name, i) =>
    ingress({
      name: `i${i}`,
      tls: [{ hosts: [`h${i}.example.com`], secretName: name.toLowerCase() }, {
        hosts: [`s${i}.example.com`],
        secretName: "shared",
      }],
      rules: [{ host: `h${i}.example.com`, paths: [{ path: "/", service: "web", port: 80 }] }],
    })
  );
  const lookup = lookupFromLists({
    services: [service("web", [{ port: 80 }])],
    secrets: names.map((n) => tlsSecret(n.toLowerCase())),
  });
  const { model } = buildModel({ ingresses, lookup });
  const r = render(model, templates, {
    ...DEFAULT_PROXY_OPTIONS,
    defaultCertificate: { file: "default_shared.pem", namespace: "default", name: "shared" },
  });
  const key = (s: { kind?: string; file?: string; namespace: string; name: string }) =>
    `${s.kind ?? "tls"} ${s.file ?? ""} ${s.namespace}/${s.name}`;
  const keys = r.secrets.map(key);
  assert.equal(new Set(keys).size, keys.length, "no Secret twice");
  assert.deepEqual(keys, [...keys].sort((a, b) => a.localeCompare(b)));
  assert.deepEqual(
    r.secrets.map((s) => s.name).sort(),
    [...new Set(names.map((n) => n.toLowerCase()))].sort(),
  );
  const memo = new RenderMemo();
  const first = render(model, templates, DEFAULT_PROXY_OPTIONS, memo);
  assert.equal(render(model, templates, DEFAULT_PROXY_OPTIONS, memo).secrets, first.secrets, "the same list");
  assert.deepEqual(first.secrets, render(model, templates).secrets);
  const withDefault = render(model, templates, {
    ...DEFAULT_PROXY_OPTIONS,
    defaultCertificate: { file: "default_z.pem", namespace: "default", name: "z" },
  }, memo);
  assert.notEqual(withDefault.secrets, first.secrets, "another default certificate: the list is made again");
});
