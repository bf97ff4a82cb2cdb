/**
 * The rendered configuration routes real traffic as the Ingress semantics say: a real haproxy runs
 * the rendered config (with the IC_* environment the proxy command sets) in front of real test
 * backends, and curl sends requests by Host, path and SNI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { type Backend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

async function tlsSecretFrom(name: string, ca: Awaited<ReturnType<typeof createCA>>, dnsNames: string[]) {
  const leaf = await issueCertificate(ca, { commonName: dnsNames[0], dnsNames, usages: ["serverAuth"] });
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: { namespace: "default", name },
      data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
    },
    pem: `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n`,
  };
}

Deno.test("rendered config routes by host, path type, wildcard, default backend, TLS SNI and redirect", async () => {
  const names = ["web", "api", "wild", "dflt", "secure"];
  const backends: Backend[] = [];
  try {
    for (const name of names) backends.push(await startBackend({ name }));
    const port = (name: string) => backends[names.indexOf(name)].port;
    const ca1 = await createCA({ commonName: "routing-test-ca-1" });
    const ca2 = await createCA({ commonName: "routing-test-ca-2" });
    const secure = await tlsSecretFrom("secure-tls", ca1, ["secure.example.com"]);
    const wild = await tlsSecretFrom("wild-tls", ca2, ["*.example.org"]);
    const dir = await Deno.makeTempDir({ prefix: "ic-routing-ca-" });
    try {
      await Deno.writeTextFile(join(dir, "ca1.pem"), ca1.certPem);
      await Deno.writeTextFile(join(dir, "ca2.pem"), ca2.certPem);

      const objects = {
        ingresses: [
          ingress({
            name: "routes",
            defaultBackend: { service: "dflt", port: 80 },
            rules: [
              {
                host: "foo.example.com",
                paths: [
                  { path: "/app/", pathType: "Prefix", service: "web", port: "http" },
                  { path: "/app/exact", pathType: "Exact", service: "api", port: 80 },
                  { path: "/legacy", pathType: "ImplementationSpecific", service: "api", port: 80 },
                ],
              },
              { paths: [{ path: "/any", pathType: "Prefix", service: "api", port: 80 }] },
            ],
          }),
          ingress({
            name: "secure",
            tls: [{ hosts: ["secure.example.com"], secretName: "secure-tls" }, {
              hosts: ["*.example.org"],
              secretName: "wild-tls",
            }],
            rules: [
              { host: "secure.example.com", paths: [{ path: "/", service: "secure", port: 80 }] },
              { host: "*.example.org", paths: [{ path: "/", service: "wild", port: 80 }] },
            ],
          }),
        ],
        lookup: lookupFromLists({
          services: names.map((n) => service(n, [{ name: "http", port: 80, targetPort: "web" }])),
          endpointSlices: names.map((n) =>
            endpointSlice(n, [{ name: "http", port: port(n) }], [{ address: "127.0.0.1" }])
          ),
          secrets: [secure.secret, wild.secret],
        }),
      };
      const pems = { "default_secure-tls.pem": secure.pem, "default_wild-tls.pem": wild.pem };
      await withProxy(objects, pems, async ({ http, https, stats }) => {
        const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
        const cases: [string, string, string][] = [
          ["foo.example.com", "/app", "web"],
          ["foo.example.com", "/app/", "web"],
          ["foo.example.com", "/app/x/y?q=1", "web"],
          ["foo.example.com", "/apple", "dflt"], // element-wise prefix: /app does not match /apple
          ["foo.example.com", "/app/exact", "api"],
          ["foo.example.com", "/app/exact/more", "web"], // Exact does not match below itself
          ["foo.example.com", "/legacy/x", "api"], // ImplementationSpecific is a prefix match
          ["FOO.Example.com:8080", "/app", "web"], // host compared without port, lower-cased
          ["other.example.com", "/any/thing", "api"], // rule without host
          ["other.example.com", "/anything", "dflt"],
          ["b.example.net", "/", "dflt"],
        ];
        for (const [host, path, want] of cases) {
          const got = await get(host, path);
          assert.equal(got.status, 200, `${host}${path}: ${got.body}`);
          assert.equal(got.backend, want, `${host}${path}`);
        }
        const redirect = await get("secure.example.com", "/p?x=1");
        assert.equal(redirect.status, 308);
        assert.equal(redirect.location, "https://secure.example.com/p?x=1");
        assert.equal((await get("a.example.org", "/")).status, 308);
        assert.equal((await get("a.b.example.org", "/")).backend, "dflt", "a wildcard matches exactly one label");

        const tls = (host: string, ca: string) =>
          curl([
            "--resolve",
            `${host}:${https}:127.0.0.1`,
            "--cacert",
            join(dir, ca),
            `https://${host}:${https}/hello`,
          ]);
        const s = await tls("secure.example.com", "ca1.pem");
        assert.equal(s.backend, "secure");
        assert.equal(JSON.parse(s.body).headers["x-forwarded-proto"], "https");
        assert.equal((await tls("x.example.org", "ca2.pem")).backend, "wild");
        // the certificate chosen by SNI is the one of the matching Secret (the other CA fails)
        const wrong = await new Deno.Command("curl", {
          args: [
            "-sS",
            "--resolve",
            `x.example.org:${https}:127.0.0.1`,
            "--cacert",
            join(dir, "ca1.pem"),
            `https://x.example.org:${https}/`,
          ],
          stdout: "null",
          stderr: "null",
        }).output();
        assert.equal(wrong.success, false);

        const metrics = await curl([`http://127.0.0.1:${stats}/metrics`]);
        assert.equal(metrics.status, 200);
        assert.match(metrics.body, /^haproxy_process_/m);
        const page = await curl([`http://127.0.0.1:${stats}/;csv`]);
        assert.match(page.body, /^# pxname,svname,/);
        assert.match(page.body, /^be_default_web_http,s1,/m);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    for (const b of backends) await b.close();
  }
});

Deno.test("without a default backend an unmatched request gets the built-in 404", async () => {
  await using web = await startBackend({ name: "web" });
  const objects = {
    ingresses: [
      ingress({ name: "one", rules: [{ host: "a.example.com", paths: [{ path: "/", service: "web", port: 80 }] }] }),
    ],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }])],
      endpointSlices: [endpointSlice("web", [{ name: "", port: web.port }], [{ address: "127.0.0.1" }])],
    }),
  };
  await withProxy(objects, {}, async ({ http }) => {
    assert.equal((await curl(["-H", "Host: a.example.com", `http://127.0.0.1:${http}/x`])).backend, "web");
    const miss = await curl(["-H", "Host: b.example.com", `http://127.0.0.1:${http}/x`]);
    assert.equal(miss.status, 404);
    assert.match(miss.body, /no route/);
  });
});

Deno.test("request paths are normalized before routing: dot segments, escaped dots, double slashes", async () => {
  const names = ["public", "admin", "tilde", "cafe", "dflt"];
  const backends = await Promise.all(names.map((name) => startBackend({ name })));
  try {
    const port = (name: string) => backends[names.indexOf(name)].port;
    const objects = {
      ingresses: [
        ingress({
          name: "paths",
          defaultBackend: { service: "dflt", port: 80 },
          rules: [{
            host: "paths.example.com",
            paths: [
              { path: "/public", service: "public", port: 80 },
              { path: "/admin", service: "admin", port: 80 },
              { path: "/%7euser", service: "tilde", port: 80 }, // an escaped unreserved character
              { path: "/caf%c3%a9", service: "cafe", port: 80 }, // lower-case hex in an escape
            ],
          }],
        }),
      ],
      lookup: lookupFromLists({
        services: names.map((n) => service(n, [{ port: 80 }])),
        endpointSlices: names.map((n) => endpointSlice(n, [{ name: "", port: port(n) }], [{ address: "127.0.0.1" }])),
      }),
    };
    await withProxy(objects, {}, async ({ http }) => {
      // [request path, backend, the request target that backend must receive]
      const cases: [string, string, string][] = [
        ["/public/../admin/x", "admin", "/admin/x"],
        ["/public/%2e%2e/admin/x", "admin", "/admin/x"],
        ["/public/%2E%2E/admin", "admin", "/admin"],
        ["/public/.%2e/admin", "admin", "/admin"],
        ["//admin", "admin", "/admin"],
        ["/./admin/x", "admin", "/admin/x"],
        ["/admin/../public/x", "public", "/public/x"],
        ["/../../admin", "admin", "/admin"],
        ["/public//x", "public", "/public/x"],
        ["/%70ublic/x", "public", "/public/x"],
        ["/public/x?next=/../admin", "public", "/public/x?next=/../admin"], // the query is not a path
        ["/~user/a", "tilde", "/~user/a"],
        ["/caf%C3%A9/menu", "cafe", "/caf%C3%A9/menu"],
        ["/caf%c3%a9", "cafe", "/caf%C3%A9"],
      ];
      for (const [path, backend, target] of cases) {
        const got = await curl(["-H", "Host: paths.example.com", `http://127.0.0.1:${http}${path}`]);
        assert.equal(got.status, 200, `${path}: ${got.body}`);
        assert.deepEqual({ backend: got.backend, target: got.target }, { backend, target }, path);
      }
    });
  } finally {
    for (const b of backends) await b.close();
  }
});

Deno.test("map routing keeps the rule order: longest path, fall-through, one wildcard label, no key confusion", async () => {
  const names = ["exact-host", "exact-path", "long", "wild", "wild-exact", "hostless", "impl", "root", "dflt"];
  const backends = await Promise.all(names.map((name) => startBackend({ name })));
  try {
    const port = (name: string) => backends[names.indexOf(name)].port;
    const p = (path: string, svc: string, pathType = "Prefix") => ({ path, pathType, service: svc, port: 80 });
    const objects = {
      ingresses: [
        ingress({
          name: "order",
          defaultBackend: { service: "dflt", port: 80 },
          rules: [
            {
              host: "a.example.com",
              paths: [
                p("/app", "exact-host"),
                p("/app/v1/", "long"), // trailing slash ignored; longer than /app: wins below /app/v1
                p("/app/v1", "exact-path", "Exact"), // Exact before Prefix at equal length
                p("/impl", "impl", "Prefix"),
                p("/impl", "exact-host", "ImplementationSpecific"), // same table key: Prefix (older in order) wins
              ],
            },
            { host: "*.example.com", paths: [p("/", "wild"), p("/w", "wild-exact", "Exact")] },
            { paths: [p("/shared", "hostless"), p("/", "root", "Exact")] },
          ],
        }),
      ],
      lookup: lookupFromLists({
        services: names.map((n) => service(n, [{ port: 80 }])),
        endpointSlices: names.map((n) => endpointSlice(n, [{ name: "", port: port(n) }], [{ address: "127.0.0.1" }])),
      }),
    };
    await withProxy(objects, {}, async ({ http }) => {
      const cases: [string, string, string][] = [
        ["a.example.com", "/app", "exact-host"],
        ["a.example.com", "/app/v1", "exact-path"],
        ["a.example.com", "/app/v1/", "long"],
        ["a.example.com", "/app/v1/x", "long"],
        ["a.example.com", "/app/v10", "exact-host"], // element-wise: /app/v1 does not match /app/v10
        ["a.example.com", "/impl/x", "impl"],
        ["a.example.com", "/other", "wild"], // the host has rules, none matches: falls to the wildcard
        ["a.example.com", "/w", "wild-exact"],
        ["b.example.com", "/w/x", "wild"],
        ["b.example.com", "/shared", "wild"], // the wildcard's root prefix comes before host-less rules
        ["x.y.example.com", "/shared/z", "hostless"], // two labels: not the wildcard
        ["example.com", "/shared", "hostless"], // no label: not the wildcard
        [".example.com", "/w", "dflt"], // an empty first label is no label
        ["x.y.example.com", "/", "root"],
        ["x.y.example.com", "/x", "dflt"],
        ["a.example.com/app", "/v1", "dflt"], // a host with a slash never forms another route's key
        ["a.example.com/app", "/shared", "hostless"],
        ["weird_label.example.com", "/w", "wild-exact"], // any characters but a dot form the one label
      ];
      for (const [host, path, want] of cases) {
        const got = await curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
        assert.equal(got.status, 200, `${host}${path}: ${got.body}`);
        assert.equal(got.backend, want, `${host}${path}`);
      }
      // a request without a path (OPTIONS *) matches root prefixes only
      const options = (host: string) =>
        curl(["-X", "OPTIONS", "--request-target", "*", "-H", `Host: ${host}`, `http://127.0.0.1:${http}/`]);
      assert.equal((await options("b.example.com")).backend, "wild");
      assert.equal((await options("x.y.example.com")).backend, "dflt");
    });
  } finally {
    for (const b of backends) await b.close();
  }
});

Deno.test("a request without a path (OPTIONS *) is routed by a host-less root prefix", async () => {
  await using web = await startBackend({ name: "web" });
  await using other = await startBackend({ name: "other" });
  const objects = {
    ingresses: [ingress({
      name: "root",
      rules: [
        { host: "a.example.com", paths: [{ path: "/x", service: "other", port: 80 }] },
        { paths: [{ path: "/", service: "web", port: 80 }] },
      ],
    })],
    lookup: lookupFromLists({
      services: [service("web", [{ port: 80 }]), service("other", [{ port: 80 }])],
      endpointSlices: [
        endpointSlice("web", [{ name: "", port: web.port }], [{ address: "127.0.0.1" }]),
        endpointSlice("other", [{ name: "", port: other.port }], [{ address: "127.0.0.1" }]),
      ],
    }),
  };
  await withProxy(objects, {}, async ({ http }) => {
    for (const host of ["a.example.com", "b.example.com"]) {
      const got = await curl([
        "-X",
        "OPTIONS",
        "--request-target",
        "*",
        "-H",
        `Host: ${host}`,
        `http://127.0.0.1:${http}/`,
      ]);
      assert.equal(got.backend, "web", host);
    }
  });
});
