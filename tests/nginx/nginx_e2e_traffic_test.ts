/**
 * What ingress-nginx's own end-to-end tests assert (kubernetes/ingress-nginx `test/e2e/annotations/`:
 * approot.go, forcesslredirect.go, preservetrailingslash.go, default_backend.go, rewrite.go,
 * xforwardedprefix.go), with Ingresses written as those tests write them (Prefix paths,
 * `nginx.ingress.kubernetes.io/*` annotations) and served in compatibility mode as the controller
 * serves them (nginx/translate.ts `compatIngress`), through a real haproxy: status codes, the exact
 * `Location`, the headers the backend receives. And the `Server` header (`server-header`) that
 * ingress-nginx sends and the Ingress conformance suite asserts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { V1Ingress } from "@kubernetes/client-node";
import { lookupFromLists } from "../../lib/render/model.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { compatIngress } from "../../lib/nginx/translate.ts";
import { NGINX_PREFIX } from "../../lib/nginx/table.ts";
import { DEFAULT_PROXY_OPTIONS } from "../../lib/render/proxy_options.ts";
import { FIXTURE_CERT, ingress, loopbackServices, type PathSpec, pemFile, tlsSecret } from "../render/fixtures.ts";
import { withProxy } from "../render/live.ts";
import { curlReply, type Reply } from "./curl_reply.ts";

const N = NGINX_PREFIX;

/** An Ingress as ingress-nginx's e2e framework's NewSingleIngress writes it, served in compatibility mode. */
function nginxIngress(
  name: string,
  host: string,
  annotations: Record<string, string>,
  paths: PathSpec[] = [{ path: "/", service: "echo", port: 80 }],
  tls = false,
): V1Ingress {
  const ing = ingress({
    name,
    annotations,
    rules: [{ host, paths }],
    tls: tls ? [{ hosts: [host], secretName: "site-tls" }] : undefined,
  });
  const { annotations: ours } = compatIngress(ing);
  return { ...ing, metadata: { ...ing.metadata, annotations: { ...ing.metadata!.annotations, ...ours } } };
}

/** The compatibility mode's Warning Events for this Ingress (nginx_translations.ts sends one per row). */
function warnings(ing: V1Ingress): string[] {
  return compatIngress(ing).rows.filter((r) => r.verdict === "unsupported" || r.verdict === "refused")
    .map((r) => r.annotation);
}

Deno.test("ingress-nginx's e2e assertions through haproxy in compatibility mode", async (t) => {
  await using echo = await startBackend({ name: "echo" });
  await using fallback = await startBackend({ name: "fallback" });
  const dir = await Deno.makeTempDir({ prefix: "ic-nginx-e2e-" });
  const ingresses = [
    // approot.go
    nginxIngress("approot", "approot.bar.com", { [`${N}app-root`]: "/foo" }),
    nginxIngress("escaped", "escaped.bar.com", { [`${N}app-root`]: "/a%20b" }),
    // forcesslredirect.go: no TLS section
    nginxIngress("forcesslredirect", "forcesslredirect.bar.com", { [`${N}force-ssl-redirect`]: "true" }),
    // preservetrailingslash.go, and the same without it (ingress-nginx's default: false)
    nginxIngress(
      "preservetrailingslash",
      "preserve.bar.com",
      { [`${N}ssl-redirect`]: "true", [`${N}preserve-trailing-slash`]: "true" },
      undefined,
      true,
    ),
    nginxIngress("sslredirect", "sslredirect.bar.com", {}, undefined, true),
    // default_backend.go: the Ingress's Service does not exist
    nginxIngress("default-backend", "default-backend", { [`${N}default-backend`]: "fallback" }, [
      { path: "/", service: "invalid", port: 80 },
    ]),
    // rewrite.go "should use ~* location modifier if regex annotation is present"
    nginxIngress("foo", "rewrite.bar.com", {}, [{ path: "/foo", service: "echo", port: 80 }]),
    nginxIngress(
      "regex",
      "rewrite.bar.com",
      { [`${N}use-regex`]: "true", [`${N}rewrite-target`]: "/new/backend" },
      [{ path: "/foo.+", service: "echo", port: 80 }],
    ),
    // rewrite.go "should use correct longest path match": one Ingress's regex makes the host's paths regexes
    nginxIngress("kube-lego", "longest.bar.com", {}, [{
      path: "/.well-known/acme/challenge",
      service: "echo",
      port: 80,
    }]),
    nginxIngress("rewrite-index", "longest.bar.com", { [`${N}rewrite-target`]: "/new/backend" }),
    // rewrite.go "should fail to use longest match for documented warning"
    nginxIngress("foo-bar", "warning.bar.com", {}, [{ path: "/foo/bar/bar", service: "echo", port: 80 }]),
    nginxIngress(
      "regex-warning",
      "warning.bar.com",
      { [`${N}use-regex`]: "true", [`${N}rewrite-target`]: "/new/backend" },
      [{ path: "/foo/bar/[a-z]{3}", service: "echo", port: 80 }],
    ),
    // rewrite.go "should allow for custom rewrite parameters"
    nginxIngress(
      "params",
      "params.bar.com",
      { [`${N}use-regex`]: "true", [`${N}rewrite-target`]: "/new/backend/$1" },
      [{ path: "/foo/bar/(.+)", service: "echo", port: 80 }],
    ),
    // xforwardedprefix.go
    nginxIngress("xfp", "xfp.baz.com", { [`${N}x-forwarded-prefix`]: "/test/value", [`${N}rewrite-target`]: "/foo" }),
    nginxIngress("noxfp", "noxfp.baz.com", { [`${N}x-forwarded-prefix`]: "", [`${N}rewrite-target`]: "/foo" }),
  ];
  const world = loopbackServices([
    { name: "echo", servicePort: 80, port: echo.port },
    { name: "fallback", servicePort: 80, port: fallback.port },
  ]);
  const objects = {
    ingresses,
    lookup: lookupFromLists({ ...world, secrets: [tlsSecret("site-tls")] }),
  };
  const pems = { "default_site-tls.pem": pemFile(FIXTURE_CERT) };
  try {
    // the Service "invalid" of default_backend.go is missing: its route's problem is expected
    await withProxy(objects, pems, async ({ http }) => {
      const get = (host: string, path: string, args: string[] = []): Promise<Reply> =>
        curlReply([...args, "-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`], join(dir, "body"));

      await t.step("app-root: 302 to http://<host>/foo (approot.go)", async () => {
        const r = await get("approot.bar.com", "/");
        assert.deepEqual([r.status, r.headers.location], [302, "http://approot.bar.com/foo"]);
        const escaped = await get("escaped.bar.com", "/");
        assert.deepEqual([escaped.status, escaped.headers.location], [302, "http://escaped.bar.com/a%20b"]);
        assert.equal((await get("approot.bar.com", "/foo")).backend, "echo", "only / is redirected");
      });

      await t.step("force-ssl-redirect without TLS: 308 to https://<host>, the trailing slash dropped", async () => {
        const r = await get("forcesslredirect.bar.com", "/");
        assert.deepEqual([r.status, r.headers.location], [308, "https://forcesslredirect.bar.com"]);
      });

      await t.step(
        "ssl-redirect with preserve-trailing-slash: 308 to https://<host>/ (preservetrailingslash.go)",
        async () => {
          const r = await get("preserve.bar.com", "/");
          assert.deepEqual([r.status, r.headers.location], [308, "https://preserve.bar.com/"]);
          const docs = await get("preserve.bar.com", "/docs/?a=1");
          assert.deepEqual([docs.status, docs.headers.location], [308, "https://preserve.bar.com/docs/?a=1"]);
        },
      );

      await t.step("ssl-redirect by default (TLS): one trailing / of the URI dropped, as lua_ingress.lua", async () => {
        const cases: [string, string][] = [
          ["/", "https://sslredirect.bar.com"],
          ["/docs/", "https://sslredirect.bar.com/docs"],
          ["/docs", "https://sslredirect.bar.com/docs"],
          ["/docs/?page=2", "https://sslredirect.bar.com/docs/?page=2"],
          ["/search?q=/", "https://sslredirect.bar.com/search?q="],
        ];
        for (const [path, location] of cases) {
          const r = await get("sslredirect.bar.com", path);
          assert.deepEqual([r.status, r.headers.location], [308, location], path);
        }
      });

      await t.step(
        "default-backend: the Service without endpoints hands over, with X-Code 503 and the route's names (default_backend.go)",
        async () => {
          const r = await get("default-backend", "/alma/armud", [
            "-H",
            "x-request-id: something-unique",
            "-H",
            "Accept: text/html",
          ]);
          assert.deepEqual([r.status, r.backend, r.target], [200, "fallback", "/alma/armud"]);
          assert.deepEqual(
            {
              code: r.received["x-code"],
              format: r.received["x-format"],
              namespace: r.received["x-namespace"],
              ingress: r.received["x-ingress-name"],
              service: r.received["x-service-name"],
              port: r.received["x-service-port"],
              id: r.received["x-request-id"],
            },
            {
              code: "503",
              format: "text/html",
              namespace: "default",
              ingress: "default-backend",
              service: "invalid",
              port: "80",
              id: "something-unique",
            },
          );
          // without the client's X-Request-ID, a new one (ingress-nginx's $req_id)
          const fresh = await get("default-backend", "/", ["-H", "Accept:"]);
          assert.equal(fresh.backend, "fallback");
          assert.match(
            fresh.received["x-request-id"] ?? "",
            /^[0-9a-f]{32}$/,
            "32 hex digits, as ingress-nginx's $req_id",
          );
          assert.equal(fresh.received["x-format"], undefined, "no Accept, no X-Format");
          // a route with endpoints is served as usual, without these headers
          const served = await get("rewrite.bar.com", "/foo");
          assert.deepEqual([served.backend, served.received["x-code"]], ["echo", undefined]);
        },
      );

      await t.step(
        "use-regex and rewrite-target on Prefix paths: regexes, the whole path rewritten (rewrite.go)",
        async () => {
          const plain = await get("rewrite.bar.com", "/foo");
          assert.deepEqual([plain.status, plain.backend, plain.target], [200, "echo", "/foo"]);
          const rewritten = await get("rewrite.bar.com", "/foo/bar");
          assert.deepEqual([rewritten.status, rewritten.target], [200, "/new/backend"]);
          const capital = await get("rewrite.bar.com", "/FOO/bar");
          assert.deepEqual([capital.status, capital.target], [200, "/new/backend"], "~*: case-insensitive");
          // every path of the host is a regex, the longest first: the other Ingress's path is not rewritten
          const acme = await get("longest.bar.com", "/.well-known/acme/challenge");
          assert.deepEqual([acme.status, acme.target], [200, "/.well-known/acme/challenge"]);
          const index = await get("longest.bar.com", "/anything");
          assert.deepEqual([index.status, index.target], [200, "/new/backend"]);
          // ingress-nginx's documented warning: the longer regex wins over another Ingress's exact string
          const warned = await get("warning.bar.com", "/foo/bar/bar");
          assert.deepEqual([warned.status, warned.target], [200, "/new/backend"]);
          const params = await get("params.bar.com", "/foo/bar/bar");
          assert.deepEqual([params.status, params.target], [200, "/new/backend/bar"]);
        },
      );

      await t.step(
        "x-forwarded-prefix: the header, and none (without a Warning) for an empty value (xforwardedprefix.go)",
        async () => {
          const xfp = await get("xfp.baz.com", "/");
          assert.deepEqual([xfp.status, xfp.target, xfp.received["x-forwarded-prefix"]], [200, "/foo", "/test/value"]);
          const none = await get("noxfp.baz.com", "/");
          assert.deepEqual([none.status, none.target, none.received["x-forwarded-prefix"]], [200, "/foo", undefined]);
          assert.deepEqual(warnings(ingresses.find((i) => i.metadata!.name === "noxfp")!), []);
        },
      );

      await t.step("Server: on the backend's answers and the proxy's own (redirects, 404)", async () => {
        assert.equal((await get("rewrite.bar.com", "/foo")).headers.server, "ingress-controller");
        assert.equal((await get("approot.bar.com", "/")).headers.server, "ingress-controller");
        assert.equal((await get("sslredirect.bar.com", "/")).headers.server, "ingress-controller");
        const unknown = await get("nowhere.example", "/");
        assert.deepEqual([unknown.status, unknown.headers.server], [404, "ingress-controller"]);
      });
    }, { allowProblems: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("server-header: the backend's own Server is kept; another value, or none", async () => {
  const own = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("own", { headers: { Server: "gunicorn" } }),
  );
  await using echo = await startBackend({ name: "echo" });
  const dir = await Deno.makeTempDir({ prefix: "ic-server-header-" });
  try {
    const world = loopbackServices([
      { name: "echo", servicePort: 80, port: echo.port },
      { name: "own", servicePort: 80, port: own.addr.port },
    ]);
    const objects = {
      ingresses: [
        ingress({ name: "a", rules: [{ host: "echo.example", paths: [{ path: "/", service: "echo", port: 80 }] }] }),
        ingress({ name: "b", rules: [{ host: "own.example", paths: [{ path: "/", service: "own", port: 80 }] }] }),
      ],
      lookup: lookupFromLists(world),
    };
    for (const [serverHeader, expected] of [["nginx", "nginx"], ["", undefined]] as const) {
      await withProxy(objects, {}, async ({ http }) => {
        const get = (host: string) =>
          curlReply(["-H", `Host: ${host}`, `http://127.0.0.1:${http}/`], join(dir, "body"));
        assert.equal((await get("echo.example")).headers.server, expected, `server-header ${serverHeader}`);
        assert.equal((await get("own.example")).headers.server, "gunicorn", "the backend's own is kept");
        assert.equal((await get("nowhere.example")).headers.server, expected);
      }, { proxy: { ...DEFAULT_PROXY_OPTIONS, serverHeader } });
    }
  } finally {
    await own.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
