import assert from "node:assert/strict";
import { buildModel, type ClusterLookup, lookupFromLists } from "../../lib/render/model.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

const lookup: ClusterLookup = lookupFromLists({
  services: [
    service("web", [{ name: "http", port: 80, targetPort: "web" }, { name: "admin", port: 81, targetPort: 9000 }]),
    service("api", [{ port: 8080, targetPort: 9090 }]),
    service("other", [{ name: "http", port: 80 }], "team-b"),
  ],
  endpointSlices: [
    endpointSlice("web", [{ name: "http", port: 8080 }, { name: "admin", port: 9000 }], [
      { address: "10.0.0.2" },
      { address: "10.0.0.10" },
      { address: "10.0.0.3", ready: false },
      { address: "10.0.0.1", ready: true },
    ]),
    endpointSlice("web", [{ name: "http", port: 8080 }, { name: "admin", port: 9000 }], [{ address: "10.0.0.2" }], {
      name: "web-second",
    }),
    endpointSlice("api", [{ name: "", port: 9090 }], [{ address: "fd00::1" }], { addressType: "IPv6" }),
    endpointSlice("api", [{ name: "", port: 9090 }], [{ address: "10.1.0.1" }], { name: "api-v4" }),
  ],
  secrets: [tlsSecret("foo-tls"), tlsSecret("opaque", "default", "Opaque")],
});

Deno.test("path types: Exact, Prefix and ImplementationSpecific, ordered longest first, Exact before prefix", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "paths",
      rules: [{
        host: "foo.example.com",
        paths: [
          { path: "/", pathType: "Prefix", service: "web", port: 80 },
          { path: "/app/", pathType: "Prefix", service: "web", port: 80 },
          { path: "/app", pathType: "Exact", service: "api", port: 8080 },
          { path: "/legacy", pathType: "ImplementationSpecific", service: "api", port: 8080 },
        ],
      }],
    })],
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(
    model.routes.map((r) => [r.path, r.pathType, r.match, r.backend]),
    [
      ["/legacy", "ImplementationSpecific", "prefix", "be_default_api_8080"],
      ["/app", "Exact", "exact", "be_default_api_8080"],
      ["/app", "Prefix", "prefix", "be_default_web_80"],
      ["/", "Prefix", "prefix", "be_default_web_80"],
    ],
  );
});

Deno.test("hosts: exact hosts first, then wildcards, then rules without host", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "hosts",
      rules: [
        { paths: [{ path: "/", service: "web", port: 80 }] },
        { host: "*.example.com", paths: [{ path: "/", service: "web", port: 80 }] },
        { host: "a.example.com", paths: [{ path: "/", service: "api", port: 8080 }] },
      ],
    })],
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(model.routes.map((r) => r.host), ["a.example.com", "*.example.com", ""]);
});

Deno.test("named and numbered Service ports resolve through targetPort to the EndpointSlice port", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "ports",
      rules: [{
        paths: [
          { path: "/a", service: "web", port: "http" },
          { path: "/b", service: "web", port: 81 },
          { path: "/c", service: "api", port: 8080 },
        ],
      }],
    })],
  });
  assert.deepEqual(problems, []);
  const byName = Object.fromEntries(model.backends.map((b) => [b.name, b]));
  // ready endpoints only, deduplicated across slices, sorted by address then port
  assert.deepEqual(byName["be_default_web_http"].servers, [
    { address: "10.0.0.1", port: 8080 },
    { address: "10.0.0.10", port: 8080 },
    { address: "10.0.0.2", port: 8080 },
  ]);
  assert.deepEqual(byName["be_default_web_81"].servers.map((s) => s.port), [9000, 9000, 9000]);
  assert.deepEqual(byName["be_default_api_8080"].servers, [
    { address: "10.1.0.1", port: 9090 },
    { address: "[fd00::1]", port: 9090 },
  ]);
  assert.equal(byName["be_default_web_http"].slots, 3, "roundrobin: one slot per endpoint");
});

Deno.test("default backend: the ingress's spec.defaultBackend, else none (built-in 404)", () => {
  const withDefault = buildModel({
    lookup,
    ingresses: [ingress({ name: "d", defaultBackend: { service: "web", port: "http" } })],
  });
  assert.equal(withDefault.model.defaultBackend, "be_default_web_http");
  assert.equal(withDefault.servable, true);
  assert.deepEqual(withDefault.problems, []);

  const none = buildModel({ lookup, ingresses: [ingress({ name: "n", rules: [] })] });
  assert.equal(none.model.defaultBackend, null);
  assert.equal(none.servable, false);
  assert.deepEqual(none.problems.map((p) => p.reason), ["NothingToServe"]);
});

Deno.test("TLS from a kubernetes.io/tls Secret with SNI hosts and HTTP→HTTPS redirect", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "tls",
      tls: [{ hosts: ["foo.example.com", "*.foo.example.com"], secretName: "foo-tls" }],
      rules: [{ host: "foo.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    })],
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(model.tls, [{
    file: "default_foo-tls.pem",
    namespace: "default",
    name: "foo-tls",
    hosts: ["*.foo.example.com", "foo.example.com"],
  }]);
  assert.deepEqual(model.redirectHosts, ["*.foo.example.com", "foo.example.com"]);
  assert.deepEqual(model.refs.secrets, ["default/foo-tls"]);
});

Deno.test("ssl-redirect annotation false keeps TLS but drops the redirect; invalid value is a problem", () => {
  const off = buildModel({
    lookup,
    ingresses: [ingress({
      name: "t",
      annotations: { "ingress.kubernetes.io/ssl-redirect": "false" },
      tls: [{ hosts: ["foo.example.com"], secretName: "foo-tls" }],
    })],
  });
  assert.equal(off.model.tls.length, 1);
  assert.deepEqual(off.model.redirectHosts, []);

  const bad = buildModel({
    lookup,
    ingresses: [ingress({
      name: "t",
      annotations: { "ingress.kubernetes.io/ssl-redirect": "no\nway" },
      tls: [{ hosts: ["foo.example.com"], secretName: "foo-tls" }],
    })],
  });
  assert.deepEqual(bad.model.redirectHosts, ["foo.example.com"]);
  assert.ok(bad.problems.some((p) => p.reason === "InvalidAnnotation"));
});

Deno.test("a missing or non-TLS Secret drops TLS for its hosts with a problem", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "t",
      tls: [{ hosts: ["a.example.com"], secretName: "missing" }, { hosts: ["b.example.com"], secretName: "opaque" }],
      rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
    })],
  });
  assert.deepEqual(model.tls, []);
  assert.deepEqual(model.redirectHosts, []);
  assert.deepEqual(problems.map((p) => p.reason).sort(), ["InvalidSecret", "SecretNotFound"]);
  assert.equal(model.routes.length, 1);
});

Deno.test("several ingresses for one host merge; the oldest wins a conflict and the loser gets a problem", () => {
  const older = ingress({
    name: "zz-older",
    created: "2026-01-01T00:00:00Z",
    rules: [{ host: "foo.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
  });
  const newer = ingress({
    name: "aa-newer",
    created: "2026-02-01T00:00:00Z",
    rules: [{
      host: "foo.example.com",
      paths: [{ path: "/", service: "api", port: 8080 }, { path: "/api", service: "api", port: 8080 }],
    }],
  });
  for (const order of [[older, newer], [newer, older]]) {
    const { model, problems } = buildModel({ lookup, ingresses: order });
    assert.deepEqual(model.ingresses, ["default/zz-older", "default/aa-newer"]);
    assert.deepEqual(model.routes.map((r) => [r.path, r.backend, r.ingress]), [
      ["/api", "be_default_api_8080", "default/aa-newer"],
      ["/", "be_default_web_80", "default/zz-older"],
    ]);
    assert.equal(problems.length, 1);
    assert.equal(problems[0].object, "default/aa-newer");
    assert.equal(problems[0].kind, "Ingress");
    assert.equal(problems[0].reason, "RouteConflict");
    assert.match(problems[0].message, /default\/zz-older/);
  }
});

Deno.test("equal creation times: namespace/name decides; default backend conflict is reported", () => {
  const a = ingress({ name: "a", defaultBackend: { service: "web", port: 80 } });
  const b = ingress({ name: "b", defaultBackend: { service: "api", port: 8080 } });
  const { model, problems } = buildModel({ lookup, ingresses: [b, a] });
  assert.equal(model.defaultBackend, "be_default_web_80");
  assert.deepEqual(problems.map((p) => [p.object, p.reason]), [["default/b", "DefaultBackendConflict"]]);
});

Deno.test("one invalid rule, path or backend does not fail the rest of the ingress", () => {
  const { model, problems, servable } = buildModel({
    lookup,
    ingresses: [ingress({
      name: "mixed",
      rules: [
        { host: "Bad_Host.example.com", paths: [{ path: "/", service: "web", port: 80 }] },
        {
          host: "ok.example.com",
          paths: [
            { path: "/good", service: "web", port: 80 },
            { path: "/bad path", service: "web", port: 80 },
            { path: "/x", pathType: "Regex", service: "web", port: 80 },
            { path: "/nosvc", service: "nosuch", port: 80 },
            { path: "/noport", service: "web", port: 99 },
          ],
        },
      ],
    })],
  });
  assert.equal(servable, true);
  assert.deepEqual(model.routes.map((r) => r.path), ["/noport", "/nosvc", "/good"]);
  const nosvc = model.backends.find((b) => b.name === "be_default_nosuch_80");
  assert.deepEqual(nosvc?.servers, []);
  assert.deepEqual(
    problems.map((p) => p.reason).sort(),
    ["InvalidHost", "InvalidPath", "InvalidPathType", "PortNotFound", "ServiceNotFound"],
  );
});

Deno.test("invalid ingress names and other namespaces are refused", () => {
  const res = buildModel({
    lookup,
    namespace: "default",
    ingresses: [
      ingress({ name: "Bad\nName", rules: [{ paths: [{ path: "/", service: "web", port: 80 }] }] }),
      ingress({ namespace: "team-b", name: "x", rules: [{ paths: [{ path: "/", service: "other", port: 80 }] }] }),
    ],
  });
  assert.deepEqual(res.model.ingresses, []);
  assert.deepEqual(res.problems.map((p) => p.reason), ["InvalidName", "NamespaceRefused"]);
});

Deno.test("endpoint slices with invalid addresses or ports give EndpointSlice problems", () => {
  const res = buildModel({
    lookup: lookupFromLists({
      services: [service("web", [{ name: "http", port: 80 }])],
      endpointSlices: [
        endpointSlice("web", [{ name: "http", port: 8080 }], [{ address: "10.0.0.1\nserver x" }, {
          address: "10.0.0.2",
        }]),
      ],
    }),
    ingresses: [ingress({ name: "x", rules: [{ paths: [{ path: "/", service: "web", port: 80 }] }] })],
  });
  assert.deepEqual(res.model.backends[0].servers, [{ address: "10.0.0.2", port: 8080 }]);
  assert.deepEqual(res.problems.map((p) => [p.kind, p.object, p.reason]), [
    ["EndpointSlice", "default/web-abc", "InvalidEndpoints"],
  ]);
});

/** The servers and problem messages of a backend fed one IPv4 and one IPv6 slice. */
function endpointsOf(v4: string[], v6: string[], allowLoopbackEndpoints?: boolean) {
  const res = buildModel({
    lookup: lookupFromLists({
      services: [service("web", [{ name: "http", port: 80 }])],
      endpointSlices: [
        endpointSlice("web", [{ name: "http", port: 8080 }], v4.map((address) => ({ address })), { name: "v4" }),
        endpointSlice("web", [{ name: "http", port: 8080 }], v6.map((address) => ({ address })), {
          name: "v6",
          addressType: "IPv6",
        }),
      ],
    }),
    ingresses: [ingress({ name: "x", rules: [{ paths: [{ path: "/", service: "web", port: 80 }] }] })],
    allowLoopbackEndpoints,
  });
  return {
    servers: res.model.backends[0].servers.map((s) => s.address),
    problems: res.problems.map((p) => `${p.kind} ${p.object} ${p.reason}: ${p.message}`),
  };
}

Deno.test("endpoint addresses the API server refuses are dropped: unspecified, loopback, link-local", () => {
  const v4 = ["0.0.0.0", "127.0.0.1", "127.255.0.9", "169.254.169.254", "169.254.0.1", "224.0.0.251"];
  const v6 = [
    "::",
    "::1",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:0.0.0.0",
    "::ffff:169.254.169.254",
    "fe80::1",
    "FEBF::1",
    "ff02::1",
    "ff12::fb",
  ];
  const got = endpointsOf([...v4, "10.0.0.1", "169.255.0.1", "224.0.1.1"], [...v6, "fd00::1", "fec0::1"]);
  assert.deepEqual(got.servers, ["10.0.0.1", "169.255.0.1", "224.0.1.1", "[fd00::1]", "[fec0::1]"]);
  assert.equal(got.problems.length, v4.length + v6.length, got.problems.join("\n"));
  const has = (address: string, why: RegExp) =>
    assert.ok(
      got.problems.some((p) => p.includes(`address ${JSON.stringify(address)} `) && why.test(p)),
      `${address}: ${got.problems.join("\n")}`,
    );
  has("0.0.0.0", /^EndpointSlice default\/v4 InvalidEndpoints: .* may not be unspecified .*; endpoint ignored$/);
  has("::", /default\/v6 .* may not be unspecified/);
  has("::ffff:0.0.0.0", /may not be unspecified/);
  for (const a of ["127.0.0.1", "127.255.0.9", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
    has(a, /may not be in the loopback range \(127\.0\.0\.0\/8, ::1\/128\)/);
  }
  for (const a of ["169.254.169.254", "169.254.0.1", "::ffff:169.254.169.254", "fe80::1", "FEBF::1"]) {
    has(a, /may not be in the link-local range/);
  }
  for (const a of ["224.0.0.251", "ff02::1", "ff12::fb"]) has(a, /may not be in the link-local multicast range/);
});

Deno.test("allowLoopbackEndpoints (local tests only) admits loopback, never unspecified or link-local", () => {
  const got = endpointsOf(["127.0.0.2", "0.0.0.0", "169.254.1.1"], ["::1", "::", "fe80::1"], true);
  assert.deepEqual(got.servers, ["127.0.0.2", "[::1]"]);
  assert.equal(got.problems.length, 4, got.problems.join("\n"));
});

Deno.test("slot count: one per endpoint in a growable backend, else the next power of two", () => {
  const many = Array.from({ length: 9 }, (_, i) => ({ address: `10.0.1.${i + 1}` }));
  const res = buildModel({
    lookup: lookupFromLists({
      services: [service("web", [{ name: "http", port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "http", port: 8080 }], many)],
    }),
    ingresses: [ingress({ name: "x", rules: [{ paths: [{ path: "/", service: "web", port: "http" }] }] })],
  });
  assert.equal(res.model.backends[0].servers.length, 9);
  assert.equal(res.model.backends[0].slots, 9);
  const source = buildModel({
    lookup: lookupFromLists({
      services: [service("web", [{ name: "http", port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "http", port: 8080 }], many)],
    }),
    ingresses: [ingress({
      name: "x",
      annotations: { "ingress-controller.io/load-balance": "source" },
      rules: [{ paths: [{ path: "/", service: "web", port: "http" }] }],
    })],
  });
  assert.equal(source.model.backends[0].slots, 16, "balance source cannot take added servers");
});

Deno.test("deterministic: input order does not change the model", () => {
  const ings = [
    ingress({ name: "b", rules: [{ host: "b.example.com", paths: [{ path: "/", service: "web", port: 80 }] }] }),
    ingress({ name: "a", rules: [{ host: "a.example.com", paths: [{ path: "/", service: "api", port: 8080 }] }] }),
    ingress({ name: "c", tls: [{ hosts: ["c.example.com"], secretName: "foo-tls" }] }),
  ];
  const one = JSON.stringify(buildModel({ lookup, ingresses: ings }));
  const two = JSON.stringify(buildModel({ lookup, ingresses: [...ings].reverse() }));
  assert.equal(one, two);
});

Deno.test("a TLS host claimed by two Secrets keeps the older ingress's Secret", () => {
  const lk = lookupFromLists({ secrets: [tlsSecret("one"), tlsSecret("two")] });
  const { model, problems } = buildModel({
    lookup: lk,
    ingresses: [
      ingress({
        name: "newer",
        created: "2026-03-01T00:00:00Z",
        tls: [{ hosts: ["a.example.com", "b.example.com"], secretName: "two" }],
      }),
      ingress({
        name: "older",
        created: "2026-01-01T00:00:00Z",
        tls: [{ hosts: ["a.example.com"], secretName: "one" }],
      }),
    ],
  });
  assert.deepEqual(model.tls.map((c) => [c.file, c.hosts]), [
    ["default_one.pem", ["a.example.com"]],
    ["default_two.pem", ["b.example.com"]],
  ]);
  const tlsProblems = problems.filter((p) => p.reason !== "NothingToServe");
  assert.deepEqual(tlsProblems.map((p) => [p.object, p.reason]), [["default/newer", "TLSHostConflict"]]);
  assert.match(tlsProblems[0].message, /default\/one of ingress default\/older/);
});

Deno.test("global and class layers reach the backend settings; the Ingress wins; a risk cut-off disables its key", () => {
  const ing = (annotations?: Record<string, string>) =>
    ingress({
      name: "site",
      annotations,
      rules: [{ host: "a.example", paths: [{ path: "/", service: "api", port: 8080 }] }],
    });
  const backendOf = (r: ReturnType<typeof buildModel>) => r.model.backends.find((b) => b.service === "api")!;
  const settingsOf = (r: ReturnType<typeof buildModel>) => backendOf(r).settings;
  const plain = buildModel({ ingresses: [ing()], lookup });
  assert.equal(settingsOf(plain)?.timeouts.server ?? null, null);

  const global = buildModel({ ingresses: [ing()], lookup, layers: { global: { "timeout-server": "40s" } } });
  assert.equal(settingsOf(global)?.timeouts.server, "40s");
  const byClass = buildModel({
    ingresses: [ing()],
    lookup,
    layers: { global: { "timeout-server": "40s" }, class: { "timeout-server": "50s" } },
  });
  assert.equal(settingsOf(byClass)?.timeouts.server, "50s");
  const own = buildModel({
    ingresses: [ing({ "ingress-controller.io/timeout-server": "70s" })],
    lookup,
    layers: { global: { "timeout-server": "40s" }, class: { "timeout-server": "50s" } },
  });
  assert.equal(settingsOf(own)?.timeouts.server, "70s");

  const cors = { "ingress-controller.io/cors-enable": "true" };
  const allowed = buildModel({ ingresses: [ing(cors)], lookup });
  assert.ok(settingsOf(allowed)?.cors, "CORS set by the Ingress");
  const cut = buildModel({ ingresses: [ing(cors)], lookup, disableRiskAtOrAbove: "low" });
  assert.equal(settingsOf(cut)?.cors ?? null, null);
  assert.ok(cut.problems.some((p) => /disabled \(risk/.test(p.message)), JSON.stringify(cut.problems));
});

Deno.test("ssl-passthrough: each host's root path Service gets a mode tcp copy of its backend; no root path is a problem", () => {
  const { model, problems } = buildModel({
    lookup,
    ingresses: [
      ingress({
        name: "pass",
        annotations: {
          "ingress-controller.io/ssl-passthrough": "true",
          "ingress-controller.io/load-balance": "source",
        },
        rules: [
          { host: "a.example.com", paths: [{ path: "/", service: "web", port: "http" }] },
          {
            host: "*.b.example.com",
            paths: [{ path: "/", pathType: "ImplementationSpecific", service: "api", port: 8080 }],
          },
          { host: "c.example.com", paths: [{ path: "/c", service: "web", port: "http" }] },
        ],
      }),
      ingress({
        name: "plain",
        rules: [{ host: "d.example.com", paths: [{ path: "/", service: "web", port: "http" }] }],
      }),
    ],
  });
  assert.deepEqual(model.passthrough, [
    { host: "*.b.example.com", backend: "be_default_api_8080_tcp" },
    { host: "a.example.com", backend: "be_default_web_http_tcp" },
  ]);
  const tcp = model.backends.find((b) => b.name === "be_default_web_http_tcp")!;
  const http = model.backends.find((b) => b.name === "be_default_web_http")!;
  assert.deepEqual(
    [tcp.mode, tcp.servers, tcp.slots, tcp.balance, tcp.settings],
    ["tcp", http.servers, 4, "source", undefined],
  );
  // the HTTP routes stay (plain HTTP and clients without SNI)
  assert.ok(model.routes.some((r) => r.host === "a.example.com" && r.backend.startsWith("be_default_web_http_")));
  assert.deepEqual(problems.map((p) => [p.object, p.reason]), [["default/pass", "InvalidAnnotation"]]);
  assert.match(problems[0].message, /ssl-passthrough: host c\.example\.com has no root path/);
});
