/**
 * The ingress-nginx compatibility suite: the Ingresses of tests/nginx/fixtures/wild.yaml, written as
 * platform teams write them for ingress-nginx, go unchanged through the compatibility mode (as the
 * controller's `#translated`: nginx/translate.ts), the model and the renderer, and a real haproxy
 * run by the proxy's own Applier serves them in front of real servers on loopback. Each Ingress's
 * behaviour is checked as ingress-nginx documents it (redirects, rewrites, CORS, basic and external
 * auth, 413, 403, cookie pinning, canary split, gRPC, HTTPS backends), and `nginx-check` (the real
 * command) reports every annotation with the verdict the traffic shows. Only the pod addresses and the
 * cert-manager certificates are replaced by loopback ones; cluster DNS is a DNS server of the test
 * (lib/dev/localenv/dns.ts), through which the proxy resolves the oauth2-proxy's Service name to its
 * private address, so this runs in a private network namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render } from "../../lib/render/render.ts";
import { MAP_FILES, type MapFile } from "../../lib/render/maps.ts";
import { parseSecretRefs, secretContents, type TlsSecretLike } from "../../lib/proxy/files.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { compatIngress, translateIngress } from "../../lib/nginx/translate.ts";
import { handlesIngress } from "../../lib/controller/class.ts";
import { NGINX_CONTROLLER } from "../../lib/controller/controller.ts";
import { proxyUnderTest } from "../proxy/fixtures.ts";
import { call, startGrpcServer } from "../render/grpc.ts";
import { backendNames } from "../render/live.ts";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { startDnsServer } from "../../lib/dev/localenv/dns.ts";
import { curlReply, type Reply } from "./curl_reply.ts";

const FIXTURE = new URL("./fixtures/wild.yaml", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;
const AUTH_HOST = "oauth2-proxy.auth.svc.cluster.local";
/** Where the oauth2-proxy Service's name resolves (its port is the fixture's, 4180). */
const AUTH_ADDRESS = privateAddress(80);

// deno-lint-ignore no-explicit-any
type Obj = any;

/** Every object of the file, `List` items flattened. */
function objectsOf(text: string): Obj[] {
  return parseAllDocuments(text as string)
    // deno-lint-ignore no-explicit-any
    .map((d: any) => d.toJS())
    .filter((o: Obj) => o)
    .flatMap((o: Obj) => (o.kind === "List" ? o.items : [o]))
    .map((o: Obj) => ({ ...o, metadata: { namespace: "default", ...o.metadata } }));
}

/** The verdicts this suite observes in traffic, by `<namespace>/<ingress> <annotation without prefix>`. */
const VERDICTS: Record<string, string> = {
  "api/public-api cors-allow-credentials": "translated",
  "api/public-api cors-allow-headers": "translated",
  "api/public-api cors-allow-methods": "translated",
  "api/public-api cors-allow-origin": "translated",
  "api/public-api enable-cors": "translated",
  "api/public-api limit-rps": "translated",
  "api/public-api ssl-redirect": "supported",
  "ci/jenkins configuration-snippet": "refused",
  "ci/jenkins proxy-body-size": "translated",
  "ci/jenkins proxy-buffering": "unsupported",
  "grpc/greeter backend-protocol": "supported",
  "internal/admin whitelist-source-range": "supported",
  "legacy/billing backend-protocol": "supported",
  "marketing/blog rewrite-target": "translated",
  "marketing/blog upstream-vhost": "supported",
  "marketing/blog use-regex": "translated",
  "marketing/blog x-forwarded-prefix": "supported",
  "marketing/old-blog permanent-redirect": "supported",
  "monitoring/grafana auth-realm": "supported",
  "monitoring/grafana auth-secret": "translated",
  "monitoring/grafana auth-type": "translated",
  "monitoring/prometheus auth-response-headers": "supported",
  "monitoring/prometheus auth-signin": "translated",
  "monitoring/prometheus auth-url": "translated",
  // its Ingress is redirected to HTTPS by ssl-redirect's default anyway
  "payments/checkout force-ssl-redirect": "translated",
  "payments/checkout-canary canary": "supported",
  "payments/checkout-canary canary-weight": "supported",
  "shop/search-beta canary": "supported",
  "shop/search-beta canary-by-header": "supported",
  "shop/search-beta canary-by-header-value": "supported",
  "shop/storefront-api proxy-body-size": "translated",
  "shop/storefront-api proxy-connect-timeout": "translated",
  "shop/storefront-api proxy-read-timeout": "translated",
  "shop/storefront-api proxy-send-timeout": "translated",
  "shop/storefront-api rewrite-target": "translated",
  "shop/storefront-api use-regex": "translated",
  "shop/storefront-web affinity": "translated",
  "shop/storefront-web affinity-mode": "supported",
  "shop/storefront-web app-root": "supported",
  "shop/storefront-web from-to-www-redirect": "translated",
  "shop/storefront-web session-cookie-max-age": "supported",
  "shop/storefront-web session-cookie-name": "supported",
  "shop/storefront-web ssl-redirect": "translated",
};

/** oauth2-proxy's /oauth2/auth: 202 with the user for the cookie `_oauth2_proxy=ok`, else 401. */
function startOauth2Proxy() {
  const server = Deno.serve({ hostname: AUTH_ADDRESS, port: 4180, onListen: () => {} }, (req) => {
    if ((req.headers.get("cookie") ?? "").includes("_oauth2_proxy=ok")) {
      return new Response(null, {
        status: 202,
        headers: { "X-Auth-Request-User": "alice", "X-Auth-Request-Email": "alice@example.com" },
      });
    }
    return new Response("Unauthorized", { status: 401 });
  });
  return { port: server.addr.port, [Symbol.asyncDispose]: () => server.shutdown() };
}

if (!inPrivateNetwork()) {
  Deno.test("ingress-nginx compatibility traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname, { resolver: true });
    assert.equal(
      code,
      0,
      "the compatibility tests failed inside the private network namespace: see their output above",
    );
  });
} else {Deno.test("wild.yaml: ingress-nginx Ingresses served unchanged behave as ingress-nginx documents; nginx-check tells the same", async (t) => {
    const objects = objectsOf(await Deno.readTextFile(FIXTURE));
    const ofKind = (kind: string) =>
      objects.filter((o) => o.kind === kind);
    const ingresses = ofKind("Ingress");
    assert.ok(ingresses.length >= 16, `${ingresses.length} Ingresses`);
    // all of ingress-nginx's class (by ingressClassName or the legacy annotation): compatibility mode serves them
    const [nginxClass] = ofKind("IngressClass");
    assert.equal(nginxClass.spec.controller, NGINX_CONTROLLER);
    for (const ing of ingresses) assert.ok(handlesIngress(ing, nginxClass.metadata.name), ing.metadata.name);

    // the servers behind the Services: one per pod, named <service>-<n>
    const cleanup: AsyncDisposable[] = [];
    const dir = await Deno.makeTempDir({ prefix: "ic-compat-" });
    try {
      const ca = await createCA({ commonName: "letsencrypt-staging-lookalike" });
      const caFile = join(dir, "ca.pem");
      await Deno.writeTextFile(caFile, ca.certPem);
      const billingCert = await issueCertificate(await createCA({ commonName: "billing-self-signed" }), {
        commonName: "billing.legacy.svc",
        dnsNames: ["billing.legacy.svc"],
        usages: ["serverAuth"],
      });
      const greeter = await startGrpcServer("greeter");
      cleanup.push(greeter);
      const oauth2 = startOauth2Proxy();
      cleanup.push(oauth2);
      cleanup.push(await startDnsServer({ [AUTH_HOST]: [AUTH_ADDRESS] }));
      const endpointSlices: Obj[] = [];
      for (const slice of ofKind("EndpointSlice")) {
        const service = slice.metadata.labels["kubernetes.io/service-name"];
        for (const [i] of slice.endpoints.entries()) {
          let port: number;
          if (service === "greeter") port = greeter.port;
          else if (service === "billing") {
            const server = Deno.serve(
              {
                hostname: "127.0.0.1",
                port: 0,
                cert: billingCert.certPem,
                key: billingCert.keyPem,
                onListen: () => {},
              },
              (req) => Response.json({ name: "billing-0", target: new URL(req.url).pathname, headers: {} }),
            );
            cleanup.push({ [Symbol.asyncDispose]: () => server.shutdown() });
            port = server.addr.port;
          } else {
            const backend = await startBackend({ name: `${service}-${i}` });
            cleanup.push(backend);
            port = backend.port;
          }
          endpointSlices.push({
            ...slice,
            metadata: { ...slice.metadata, name: `${slice.metadata.name}-${i}` },
            ports: slice.ports.map((p: Obj) => ({ ...p, port })),
            endpoints: [{ ...slice.endpoints[i], addresses: ["127.0.0.1"] }],
          });
        }
      }
      // cert-manager's certificates: one per TLS Secret, for the hosts the Ingresses list with it
      const secrets: (TlsSecretLike & Obj)[] = [];
      for (const s of ofKind("Secret")) {
        if (s.type !== "kubernetes.io/tls") {
          secrets.push(s);
          continue;
        }
        const hosts = [
          ...new Set(
            ingresses.flatMap((i) =>
              (i.spec.tls ?? []).filter((t: Obj) => t.secretName === s.metadata.name).flatMap((t: Obj) => t.hosts)
            ),
          ),
        ] as string[];
        const leaf = await issueCertificate(ca, { commonName: hosts[0], dnsNames: hosts, usages: ["serverAuth"] });
        secrets.push({ ...s, data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) } });
      }
      // served as written: the proxy resolves the oauth2-proxy Service's name through the test's DNS server
      const served = ingresses;

      // the compatibility mode, as the controller's #translated
      const translated = served.map((ing) => {
        const { annotations } = compatIngress(ing);
        return { ...ing, metadata: { ...ing.metadata, annotations: { ...ing.metadata.annotations, ...annotations } } };
      });
      const { model, problems } = buildModel({
        ingresses: translated,
        lookup: lookupFromLists({ services: ofKind("Service"), endpointSlices, secrets }),
        allowLoopbackEndpoints: true,
      });
      assert.deepEqual(problems.map((p) => p.message), []);
      const data = configMapData(render(model, await loadTemplates(null)));
      const contents = secretContents(
        parseSecretRefs(data["secrets.json"]),
        (ref) => secrets.find((s) => s.metadata.namespace === ref.namespace && s.metadata.name === ref.name) ?? null,
        (id, reason) => assert.fail(`${id}: ${reason}`),
      );
      if ("waiting" in contents) throw new Error(`a Secret is missing: ${JSON.stringify(contents.waiting)}`);
      const config = data["haproxy.cfg"];

      await using proxy = await proxyUnderTest();
      const applied = await proxy.applier.apply({
        config,
        crtList: data["crt-list"],
        maps: new Map(MAP_FILES.map((f: MapFile) => [f, data[f]])),
        ...contents,
      });
      assert.ok(applied.ok, JSON.stringify(applied));

      const { bind, httpPort, httpsPort } = proxy;
      const request = async (url: string, args: string[] = []): Promise<Reply> => {
        const u = new URL(url);
        const port = u.protocol === "https:" ? httpsPort : httpPort;
        const reply = await curlReply([
          "--cacert",
          caFile,
          "--connect-to",
          `${u.hostname}:${u.port || (u.protocol === "https:" ? 443 : 80)}:${bind}:${port}`,
          ...args,
          url,
        ], join(dir, "body"));
        assert.ok(reply.failed === null, `curl ${url}: ${reply.failed}`);
        return reply;
      };
      // an upload of exactly 50m (nginx's m is MiB): at the limit, not over it
      const upload = join(dir, "upload.bin");
      await Deno.writeFile(upload, new Uint8Array(50 * 1024 * 1024));
      /** curl joins its --data-binary parts with `&`: 50m and two bytes */
      const overLimit = ["--http1.1", "--data-binary", `@${upload}`, "--data-binary", "x"];

      await t.step(
        "storefront-api: /api(/|$)(.*) with rewrite-target /$2; 413 over 50m; HTTPS redirect by default",
        async () => {
          const r = await request("https://shop.example.com/api/products/42?expand=price");
          assert.deepEqual([r.status, r.backend, r.target], [200, "storefront-api-0", "/products/42?expand=price"]);
          assert.equal((await request("https://shop.example.com/api")).target, "/");
          const plain = await request("http://shop.example.com/api/products");
          assert.deepEqual([plain.status, plain.headers.location], [308, "https://shop.example.com/api/products"]);
          // HTTP/1.1 with Expect: 100-continue (curl's way for large bodies): the answer comes before the body
          const big = await request("https://shop.example.com/api/upload", overLimit);
          assert.equal(big.status, 413);
          const limit = await request("https://shop.example.com/api/upload", [
            "--http1.1",
            "--data-binary",
            `@${upload}`,
          ]);
          assert.deepEqual([limit.status, limit.target], [200, "/upload"]);
          // the timeouts cannot be waited for here (an hour); they reach the Ingress's backend
          assert.match(config, /timeout server 3600s/);
          assert.match(config, /timeout connect 30s/);
        },
      );

      await t.step("storefront-web: app-root 302, www twin 308, session cookie pins a shopper to one pod", async () => {
        const root = await request("https://shop.example.com/");
        assert.deepEqual([root.status, root.headers.location], [302, "https://shop.example.com/store"]);
        const www = await request("https://www.shop.example.com/store/cart?x=1");
        assert.deepEqual([www.status, www.headers.location], [308, "https://shop.example.com/store/cart?x=1"]);
        const first = await request("https://shop.example.com/store");
        assert.equal(first.status, 200);
        const cookie = first.headers["set-cookie"] ?? "";
        assert.match(cookie, /^route=[^;]+;/);
        assert.match(cookie, /Max-Age=172800/i);
        const pinned = new Set<string | null>();
        for (let i = 0; i < 10; i++) {
          pinned.add(
            (await request("https://shop.example.com/store", ["-H", `Cookie: ${cookie.split(";")[0]}`])).backend,
          );
        }
        assert.deepEqual([...pinned], [first.backend]);
        const spread = new Set<string | null>();
        for (let i = 0; i < 10; i++) spread.add((await request("https://shop.example.com/store")).backend);
        assert.deepEqual([...spread].sort(), ["storefront-web-0", "storefront-web-1"]);
      });

      await t.step(
        "checkout: HTTP redirected to HTTPS (force-ssl-redirect)",
        async () => {
          const r = await request("http://checkout.example.com/pay?order=7");
          assert.deepEqual([r.status, r.headers.location], [308, "https://checkout.example.com/pay?order=7"]);
        },
      );

      await t.step("checkout-canary: canary-weight 20 within ±5% over 2,000 requests", async () => {
        const { get, close } = backendNames(bind, httpsPort, ca.certPem);
        try {
          const seen: Record<string, number> = {};
          for (let i = 0; i < 2000; i++) {
            const name = await get("checkout.example.com");
            seen[name] = (seen[name] ?? 0) + 1;
          }
          assert.deepEqual(Object.keys(seen).sort(), ["checkout-0", "checkout-v2-0"]);
          const canary = seen["checkout-v2-0"];
          assert.ok(canary >= 300 && canary <= 500, `${canary} of 2,000 to the canary (want 400 ± 100)`);
        } finally {
          close();
        }
      });

      await t.step(
        "search-beta: X-Canary: beta reaches the canary, any other value or none the main Service",
        async () => {
          assert.equal(
            (await request("http://search.example.com/q", ["-H", "X-Canary: beta"])).backend,
            "search-beta-0",
          );
          assert.equal((await request("http://search.example.com/q", ["-H", "X-Canary: alpha"])).backend, "search-0");
          assert.equal((await request("http://search.example.com/q")).backend, "search-0");
        },
      );

      await t.step("public-api: CORS preflight and credentials; limit-rps answers 429 over 5 a second", async () => {
        const pre = await request("http://api.example.com/v1/orders", [
          "-X",
          "OPTIONS",
          "-H",
          "Origin: https://app.example.com",
          "-H",
          "Access-Control-Request-Method: PUT",
        ]);
        assert.equal(pre.status, 204);
        assert.equal(pre.headers["access-control-allow-origin"], "https://app.example.com");
        assert.equal(pre.headers["access-control-allow-credentials"], "true");
        assert.match(pre.headers["access-control-allow-methods"], /PUT/);
        assert.match(pre.headers["access-control-allow-headers"], /Authorization/);
        const get = await request("http://api.example.com/v1/orders", ["-H", "Origin: https://app.example.com"]);
        assert.deepEqual([get.status, get.backend], [200, "public-api-0"]);
        assert.equal(get.headers["access-control-allow-origin"], "https://app.example.com");
        assert.equal(get.headers["access-control-allow-credentials"], "true");
        const other = await request("http://api.example.com/v1/orders", ["-H", "Origin: https://evil.example"]);
        assert.equal(other.headers["access-control-allow-origin"], undefined);
        // ssl-redirect "false" and no TLS: plain HTTP served
        // over one kept-alive connection, so the 30 fall within a second even on a loaded machine
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        const status = () =>
          new Promise<number>((resolve, reject) => {
            const headers = { host: "api.example.com" };
            const req = http.request({ host: bind, port: httpPort, path: "/v1/orders", headers, agent }, (res) => {
              res.resume();
              res.on("end", () => resolve(res.statusCode ?? 0));
            });
            req.on("error", reject);
            req.end();
          });
        const statuses = await Promise.all(Array.from({ length: 30 }, status)).finally(() => agent.destroy());
        assert.ok(statuses.includes(429), `30 quick requests: ${statuses.join(" ")}`);
        assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
      });

      await t.step("grafana: basic auth with the realm; the htpasswd -B user gets in", async () => {
        const anonymous = await request("http://grafana.example.com/");
        assert.equal(anonymous.status, 401);
        assert.equal(anonymous.headers["www-authenticate"], 'Basic realm="Authentication Required - Grafana"');
        assert.equal((await request("http://grafana.example.com/", ["-u", "admin:wrong"])).status, 401);
        const ok = await request("http://grafana.example.com/", ["-u", "admin:grafana-admin-pw"]);
        assert.deepEqual([ok.status, ok.backend], [200, "grafana-0"]);
      });

      await t.step("prometheus: oauth2-proxy sign-in redirect, then the user's headers reach the backend", async () => {
        const anonymous = await request("http://prometheus.example.com/graph?g0.expr=up");
        assert.equal(anonymous.status, 302);
        assert.equal(
          anonymous.headers.location,
          "/oauth2/start?rd=http://prometheus.example.com/graph%3Fg0.expr%3Dup",
        );
        const ok = await request("http://prometheus.example.com/graph", ["-H", "Cookie: _oauth2_proxy=ok"]);
        assert.deepEqual([ok.status, ok.backend], [200, "prometheus-0"]);
        assert.equal(ok.received["x-auth-request-user"], "alice");
        assert.equal(ok.received["x-auth-request-email"], "alice@example.com");
      });

      await t.step("admin: a client outside whitelist-source-range gets 403", async () => {
        const r = await request("http://admin.example.com/");
        assert.deepEqual([r.status, r.backend], [403, null]);
      });

      await t.step("greeter: a gRPC call over TLS gets the server's reply", async () => {
        const r = await call("https://greeter.example.com/helloworld.Greeter/SayHello", "world", [
          "--cacert",
          caFile,
          "--connect-to",
          `greeter.example.com:443:${bind}:${httpsPort}`,
        ], dir);
        assert.deepEqual([r.httpVersion, r.status, r.trailers["grpc-status"]], ["2", 200, "0"]);
        assert.equal(r.message, "greeter greets world at /helloworld.Greeter/SayHello over h2c");
      });

      await t.step("billing: backend-protocol HTTPS reaches a self-signed HTTPS pod", async () => {
        const r = await request("http://billing.example.com/invoices");
        assert.deepEqual([r.status, r.backend, r.target], [200, "billing-0", "/invoices"]);
      });

      await t.step("old-blog: permanent-redirect answers 301 to the URL as written", async () => {
        const r = await request("http://news.example.com/2019/05/hello?ref=x");
        assert.deepEqual([r.status, r.headers.location], [301, "https://blog.example.com/"]);
      });

      await t.step("blog: /blog(/|$)(.*) rewritten, with upstream-vhost as Host and X-Forwarded-Prefix", async () => {
        const r = await request("http://www.example.com/blog/wp-admin/edit.php?post=3");
        assert.deepEqual([r.status, r.backend, r.target], [200, "wordpress-0", "/wp-admin/edit.php?post=3"]);
        assert.equal(r.received.host, "wordpress.marketing.svc.cluster.local");
        assert.equal(r.received["x-forwarded-prefix"], "/blog");
      });

      await t.step("jenkins: the configuration-snippet is never executed; proxy-body-size 0 is no limit", async () => {
        const r = await request("http://jenkins.example.com/job/build/");
        assert.deepEqual([r.status, r.backend], [200, "jenkins-0"]);
        assert.equal(r.headers["x-snippet-ran"], undefined);
        assert.doesNotMatch(config, /X-Snippet-Ran|more_set_headers|return 418/);
        const big = await request("http://jenkins.example.com/job/build/upload", overLimit);
        assert.equal(big.status, 200);
      });

      await t.step("hello-world: the legacy class annotation, plain HTTP", async () => {
        const r = await request("http://hello.example.com/");
        assert.deepEqual([r.status, r.backend], [200, "hello-world-0"]);
      });

      await t.step(
        "nginx-check -f wild.yaml --output json reports each annotation with the verdict served above",
        async () => {
          const out = await new Deno.Command(Deno.execPath(), {
            args: ["run", "-A", join(ROOT, "main.ts"), "nginx-check", "-f", FIXTURE, "--output", "json"],
            stdout: "piped",
            stderr: "piped",
          }).output();
          assert.ok(out.success, new TextDecoder().decode(out.stderr));
          const rows = JSON.parse(new TextDecoder().decode(out.stdout)) as {
            namespace: string;
            ingress: string;
            annotation: string;
            verdict: string;
          }[];
          const got = Object.fromEntries(
            rows.map((
              r,
            ) => [
              `${r.namespace}/${r.ingress} ${r.annotation.replace(/^nginx\.ingress\.kubernetes\.io\//, "")}`,
              r.verdict,
            ]),
          );
          assert.deepEqual(got, VERDICTS);
          // the compatibility mode applies exactly what the report calls supported or translated
          for (const ing of served) {
            for (const row of translateIngress(ing).rows) {
              assert.equal(row.verdict, VERDICTS[`${row.namespace}/${row.ingress} ${row.annotation.slice(28)}`]);
            }
          }
        },
      );
    } finally {
      for (const c of cleanup.reverse()) await c[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    }
  });}
