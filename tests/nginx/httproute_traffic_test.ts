/**
 * The migration preview's promise, through real proxies: the Ingresses of
 * tests/nginx/fixtures/wild.yaml whose features have a Gateway API form (TLS with the redirect to
 * HTTPS, the `(/|$)(.*)` rewrite, app-root, from-to-www-redirect, force-ssl-redirect with a weighted
 * canary, a header canary, permanent-redirect, upstream-vhost with x-forwarded-prefix, plain
 * routes), one Ingress with this controller's header keys, one with its hsts, and three CORS Ingresses (ingress-nginx's
 * defaults, listed origins with credentials, a wildcard origin without) are served by the controller
 * in ingress-nginx compatibility mode, and the HTTPRoutes
 * `nginx-check --output httproute` prints for them (run as the command runs) are applied beside
 * them, on a Gateway with the listeners and ReferenceGrants the preview suggests, against the real
 * kube-apiserver with the Gateway API's CRDs. The same requests through the Ingress proxy and the
 * Gateway's proxy (each a real haproxy run by the proxy command) get the same status, backend,
 * path and Host at the backend, forwarded headers, redirect Location and CORS headers (preflights
 * and simple requests), but for the CORS differences the preview's verdicts and notes name, each
 * checked here as the note says. Runs in a private network namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  resources,
  sliceObj,
  tlsSecretObj,
} from "../../lib/dev/localenv/harness.ts";
import { installGatewayCrds } from "../../lib/dev/localenv/gateway_crds.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { gatewayProxyName } from "../../lib/controller/objects.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { NGINX_CONTROLLER } from "../../lib/controller/controller.ts";
import { GATEWAY_CONTROLLER_NAME } from "../../lib/gateway/model_types.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { HTTPRoute } from "../../lib/gateway/api.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { runNginxCheck } from "../../lib/nginx/command.ts";
import { planMigration } from "../../lib/nginx/to_httproute.ts";

const FIXTURE = new URL("./fixtures/wild.yaml", import.meta.url).pathname;
/** The fixture's Ingresses whose features all have a Gateway API form (or none that a plain GET shows). */
const MIGRATED = [
  "shop/storefront-api",
  "shop/storefront-web",
  "payments/checkout",
  "payments/checkout-canary",
  "shop/search",
  "shop/search-beta",
  "api/public-api",
  "marketing/old-blog",
  "marketing/blog",
  "ci/jenkins",
  "default/hello-world",
];
/** Service → its port in the Ingresses (a port named `http`, as the fixture's storefront-web names it). */
const SERVICES: Record<string, number> = {
  "shop/storefront-api": 8080,
  "shop/storefront-web": 80,
  "payments/checkout": 80,
  "payments/checkout-v2": 80,
  "shop/search": 80,
  "shop/search-beta": 80,
  "api/public-api": 3000,
  "marketing/wordpress": 80,
  "ci/jenkins": 8080,
  "default/hello-world": 80,
  "default/headers": 80,
  "shop/assets": 80,
};
/** Header edits in this controller's own keys (ingress-nginx has no typed form; its snippets are refused). */
const HEADERS_INGRESS = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: {
    name: "headers",
    namespace: "default",
    annotations: {
      "ingress-controller.io/request-headers-add": "X-Trace: on",
      "ingress-controller.io/request-headers-delete": "X-Debug",
      "ingress-controller.io/response-headers-set": "X-Frame-Options: DENY",
    },
  },
  spec: {
    ingressClassName: "nginx",
    rules: [{
      host: "headers.example.com",
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "headers", port: { number: 80 } } } }],
      },
    }],
  },
};
/**
 * A Prefix path on shop.example.com, where storefront-api's use-regex and rewrite-target make every
 * path a regex (ingress-nginx's enforceRegexModifier): `/assets/` matches as `^/assets`.
 */
const ASSETS_INGRESS = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  // and this controller's hsts: a Strict-Transport-Security set on the HTTPS answers
  metadata: {
    name: "assets",
    namespace: "shop",
    annotations: { "ingress-controller.io/hsts": "true", "ingress-controller.io/hsts-include-subdomains": "true" },
  },
  spec: {
    ingressClassName: "nginx",
    tls: [{ hosts: ["shop.example.com"], secretName: "shop-example-com-tls" }],
    rules: [{
      host: "shop.example.com",
      http: {
        paths: [{
          path: "/assets/",
          pathType: "Prefix",
          backend: { service: { name: "assets", port: { number: 80 } } },
        }],
      },
    }],
  },
};
/** CORS Ingresses in ingress-nginx's annotations, on api/public-api's Service (without its rate limit). */
const corsIngress = (name: string, host: string, annotations: Record<string, string>) => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: {
    name,
    namespace: "api",
    annotations: Object.fromEntries(
      Object.entries(annotations).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v]),
    ),
  },
  spec: {
    ingressClassName: "nginx",
    rules: [{
      host,
      http: {
        paths: [{
          path: "/",
          pathType: "Prefix",
          backend: { service: { name: "public-api", port: { number: 3000 } } },
        }],
      },
    }],
  },
});
const CORS_INGRESSES = [
  // ingress-nginx's defaults: every origin, credentials, six methods, nine headers, 20 days
  corsIngress("cors-open", "open.example.com", { "enable-cors": "true" }),
  corsIngress("cors-app", "app-api.example.com", {
    "enable-cors": "true",
    "cors-allow-origin": "https://app.example.com, https://admin.example.com",
    "cors-allow-methods": "GET, PUT, DELETE",
    "cors-allow-headers": "Content-Type,Authorization",
    "cors-allow-credentials": "true",
    "cors-max-age": "3600",
  }),
  corsIngress("cors-widgets", "widgets.example.com", {
    "enable-cors": "true",
    "cors-allow-origin": "https://*.example.org",
    "cors-allow-methods": "GET, POST",
    "cors-allow-headers": "Content-Type, X-Api-Key",
    "cors-expose-headers": "X-Request-Id",
    "cors-allow-credentials": "false",
    "cors-max-age": "600",
  }),
];
const GATEWAY = { namespace: "infra", name: "edge" };

// deno-lint-ignore no-explicit-any
type Obj = any;

/** What a client sees of one answer, in the terms both proxies must agree on. */
interface Seen {
  status: number;
  backend: string | null;
  /** The request target and Host the backend received, and the forwarded headers of the mapped features. */
  target: string | null;
  host: string | null;
  forwardedPrefix: string | null;
  /** A request header added and one removed (at the backend), a response header set (at the client). */
  trace: string | null;
  debug: string | null;
  frameOptions: string | null;
  /** The subject of the certificate served (HTTPS). */
  certificate: string | null;
  /** Location resolved against the request URL (the Ingress path writes app-root's as a path alone). */
  location: string | null;
  /** The CORS headers of the answer, and its Vary. */
  allowOrigin: string | null;
  allowCredentials: string | null;
  allowMethods: string | null;
  allowHeaders: string | null;
  exposeHeaders: string | null;
  maxAge: string | null;
  vary: string | null;
  /** Strict-Transport-Security (hsts). */
  sts: string | null;
}

function ask(
  port: number,
  scheme: "http" | "https",
  host: string,
  path: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const opts = { host: "127.0.0.1", port, path, method, headers: { host, ...headers }, agent: false };
    const done = (res: http.IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        let b: Obj = null;
        try {
          b = JSON.parse(body);
        } catch { /* not a backend's answer */ }
        const loc = res.headers.location;
        const header = (name: string) => (res.headers[name] as string | undefined) ?? null;
        resolve({
          status: res.statusCode ?? 0,
          backend: b?.name ?? null,
          target: b?.target ?? null,
          host: b?.host ?? null,
          forwardedPrefix: b?.headers?.["x-forwarded-prefix"] ?? null,
          trace: b?.headers?.["x-trace"] ?? null,
          debug: b?.headers?.["x-debug"] ?? null,
          frameOptions: (res.headers["x-frame-options"] as string | undefined) ?? null,
          location: loc ? new URL(loc, `${scheme}://${host}${path}`).href : null,
          certificate: scheme === "https"
            ? String((res.socket as import("node:tls").TLSSocket).getPeerCertificate().subject?.CN ?? "")
            : null,
          allowOrigin: header("access-control-allow-origin"),
          allowCredentials: header("access-control-allow-credentials"),
          allowMethods: header("access-control-allow-methods"),
          allowHeaders: header("access-control-allow-headers"),
          exposeHeaders: header("access-control-expose-headers"),
          maxAge: header("access-control-max-age"),
          vary: header("vary"),
          sts: header("strict-transport-security"),
        });
      });
      res.on("error", reject);
    };
    const req = scheme === "https"
      ? https.request({ ...opts, servername: host, rejectUnauthorized: false }, done)
      : http.request(opts, done);
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", reject);
    req.end();
  });
}

if (!inPrivateNetwork()) {
  Deno.test("nginx-check --output httproute against real proxies (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the migration traffic test failed inside the private network namespace: see above");
  });
} else {
  Deno.test("the HTTPRoutes nginx-check prints serve what their Ingresses serve", async (t) => {
    const objects: Obj[] = parseAllDocuments(await Deno.readTextFile(FIXTURE)).map((d) => d.toJS()).filter((o) => o)
      .map((o: Obj) => ({ ...o, metadata: { namespace: "default", ...o.metadata } }));
    const ingresses = [
      ...objects.filter((o) => o.kind === "Ingress" && MIGRATED.includes(`${o.metadata.namespace}/${o.metadata.name}`)),
      HEADERS_INGRESS,
      ASSETS_INGRESS,
      ...CORS_INGRESSES,
    ];
    assert.equal(ingresses.length, MIGRATED.length + 2 + CORS_INGRESSES.length);
    const services: KubeObject[] = Object.entries(SERVICES).map(([id, port]) => {
      const [ns, name] = id.split("/");
      return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: ns },
        spec: { ports: [{ name: "http", port, targetPort: "http", protocol: "TCP" }] },
      };
    });
    const dir = await Deno.makeTempDir({ prefix: "ic-httproute-traffic-" });
    const input = join(dir, "ingresses.yaml");
    await Deno.writeTextFile(input, [...ingresses, ...services].map((o) => stringify(o)).join("---\n"));

    // the command, as a user runs it on their manifests, and later on the cluster
    const preview = async (file: string, kubeconfig: string) => {
      let printed = "";
      await runNginxCheck(
        { file, output: "httproute", gateway: GATEWAY, kubeconfig, namespace: "" },
        (text) => (printed += text),
      );
      const id = (r: HTTPRoute) => `${r.metadata.namespace}/${r.metadata.name}`;
      return parseAllDocuments(printed).map((d) => d.toJS() as HTTPRoute).sort((a, b) => id(a).localeCompare(id(b)));
    };
    const routes = await preview(input, "");
    assert.ok(routes.length >= 10, JSON.stringify(routes));
    const plan = planMigration(ingresses, GATEWAY, services);

    const cluster = await Cluster.start();
    const proxies: ProxyRun[] = [];
    const servers = await backends(Object.keys(SERVICES).map((id) => id.split("/")[1]), 40);
    try {
      await installGatewayCrds(cluster);
      const ops = await cluster.namespace("ops");
      for (const ns of new Set([GATEWAY.namespace, ...Object.keys(SERVICES).map((id) => id.split("/")[0])])) {
        await cluster.namespace(ns);
      }
      for (const [i, svc] of services.entries()) {
        await cluster.apply(resources.services, svc);
        await cluster.apply(
          resources.endpointSlices,
          sliceObj(svc.metadata.namespace!, svc.metadata.name, [servers[i]]),
        );
      }
      await cluster.apply(resources.secrets, await tlsSecretObj("shop", "shop-example-com-tls", "shop.example.com"));
      await cluster.apply(resources.secrets, await tlsSecretObj("payments", "checkout-tls", "checkout.example.com"));
      // the Ingresses, in ingress-nginx's class: compatibility mode
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "nginx" },
        spec: { controller: NGINX_CONTROLLER },
      });
      for (const ing of ingresses) await cluster.apply(resources.ingresses, ing);
      // from the cluster: the same routes (the Services there name the ports)
      assert.deepEqual(await preview("", cluster.kubeconfig), routes);
      // the Gateway with the listeners the preview suggests, the grants, and the printed routes
      await eventually("the Gateway API's CRDs serve objects", async () => {
        try {
          await cluster.apply(resources.gatewayClasses, {
            apiVersion: "gateway.networking.k8s.io/v1",
            kind: "GatewayClass",
            metadata: { name: "migrated" },
            spec: { controllerName: GATEWAY_CONTROLLER_NAME },
          });
          return true;
        } catch {
          return false;
        }
      }, 30_000);
      await cluster.apply(resources.gateways, {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace },
        spec: { gatewayClassName: "migrated", listeners: plan.listeners },
      });
      for (const g of plan.grants) await cluster.apply(resources.referenceGrants, g);
      for (const r of routes) await cluster.apply(resources.httpRoutes, r);

      const ctl = await controller(cluster, { operatorNamespace: ops, validateProxyConfig: true });
      try {
        const ingressProxy = sharedProxyName("nginx");
        const gatewayProxy = gatewayProxyName(`${GATEWAY.namespace}/${GATEWAY.name}`);
        for (const name of [ingressProxy, gatewayProxy]) {
          await eventually(`ConfigMap ${name}`, () => cluster.get(resources.configMaps, ops, name), 60_000);
        }
        const viaIngress = await startProxy(cluster, ops, ingressProxy);
        proxies.push(viaIngress);
        const viaGateway = await startProxy(cluster, ops, gatewayProxy);
        proxies.push(viaGateway);

        await t.step("every printed route is Accepted with its references resolved", async () => {
          for (const r of routes) {
            await eventually(`${r.metadata.namespace}/${r.metadata.name} Accepted and ResolvedRefs`, async () => {
              const got = await cluster.get(resources.httpRoutes, r.metadata.namespace!, r.metadata.name);
              const conds = (got?.status?.parents ?? []).flatMap((p: Obj) => p.conditions);
              return ["Accepted", "ResolvedRefs"].every((type) =>
                conds.some((c: Obj) => c.type === type && c.status === "True")
              );
            }, 60_000);
          }
        });

        const through = (via: ProxyRun, gateway: boolean, scheme: "http" | "https") =>
          gateway ? containerPort(scheme === "http" ? 80 : 443) : scheme === "http" ? via.httpPort : via.httpsPort;
        const both = async (scheme: "http" | "https", host: string, path: string, headers = {}, method = "GET") => {
          const a = await ask(through(viaIngress, false, scheme), scheme, host, path, headers, method);
          const b = await ask(through(viaGateway, true, scheme), scheme, host, path, headers, method);
          return { ingress: a, gateway: b };
        };
        await eventually("both proxies serve", async () => {
          const { ingress, gateway } = await both("http", "hello.example.com", "/").catch(() => ({
            ingress: null,
            gateway: null,
          }));
          return ingress?.backend === "hello-world" && gateway?.backend === "hello-world";
        }, 60_000);

        const cases: [string, "http" | "https", string, string, Record<string, string>, Partial<Seen>][] = [
          ["rewrite (/|$)(.*) → /$2", "https", "shop.example.com", "/api/users?id=7", {}, {
            backend: "storefront-api",
            target: "/users?id=7",
            certificate: "shop.example.com",
          }],
          ["rewrite of the bare prefix", "https", "shop.example.com", "/api", {}, { target: "/" }],
          ["redirect to HTTPS (308)", "http", "shop.example.com", "/api/users", {}, {
            status: 308,
            location: "https://shop.example.com/api/users",
          }],
          ["app-root (302)", "https", "shop.example.com", "/", {}, {
            status: 302,
            location: "https://shop.example.com/store",
          }],
          ["the storefront", "https", "shop.example.com", "/store/cart", {}, {
            backend: "storefront-web",
            target: "/store/cart",
          }],
          ["from-to-www-redirect (308)", "https", "www.shop.example.com", "/store?x=1", {}, {
            status: 308,
            location: "https://shop.example.com/store?x=1",
            certificate: "shop.example.com",
          }],
          ["force-ssl-redirect", "http", "checkout.example.com", "/pay", {}, {
            status: 308,
            location: "https://checkout.example.com/pay",
          }],
          ["header canary: the value", "http", "search.example.com", "/q", { "X-Canary": "beta" }, {
            backend: "search-beta",
          }],
          ["header canary: another value", "http", "search.example.com", "/q", { "X-Canary": "alpha" }, {
            backend: "search",
          }],
          ["header canary: no header", "http", "search.example.com", "/q", {}, { backend: "search" }],
          ["ssl-redirect false, no TLS", "http", "api.example.com", "/v1/items", {}, { backend: "public-api" }],
          ["permanent-redirect (301)", "http", "news.example.com", "/2019/post", {}, {
            status: 301,
            location: "https://blog.example.com/",
          }],
          ["upstream-vhost, x-forwarded-prefix, rewrite", "http", "www.example.com", "/blog/wp-admin/", {}, {
            backend: "wordpress",
            target: "/wp-admin/",
            host: "wordpress.marketing.svc.cluster.local",
            forwardedPrefix: "/blog",
          }],
          ["request and response header edits", "http", "headers.example.com", "/", { "X-Debug": "1" }, {
            backend: "headers",
            trace: "on",
            debug: null,
            frameOptions: "DENY",
          }],
          ["a plain route", "http", "jenkins.example.com", "/job/x", {}, { backend: "jenkins" }],
          ["a Prefix path on a regex host", "https", "shop.example.com", "/assets/app.js", {}, {
            backend: "assets",
            target: "/assets/app.js",
            sts: "max-age=15768000; includeSubDomains",
          }],
          ["hsts: not on the redirect to HTTPS", "http", "shop.example.com", "/assets/app.js", {}, {
            status: 308,
            sts: null,
          }],
          ["a Prefix path on a regex host matches as ^/assets", "https", "shop.example.com", "/assetsv2/app.js", {}, {
            backend: "assets",
          }],
          ["a host nobody serves", "http", "nobody.example.com", "/", {}, { status: 404, backend: null }],
        ];
        for (const [what, scheme, host, path, headers, expected] of cases) {
          await t.step(`${what}: ${scheme}://${host}${path}`, async () => {
            const { ingress, gateway } = await both(scheme, host, path, headers);
            assert.deepEqual(gateway, ingress, "the Gateway's proxy answers as the Ingress's");
            for (const [k, v] of Object.entries(expected)) {
              assert.equal(ingress[k as keyof Seen], v, `${k}: ${JSON.stringify(ingress)}`);
            }
            if (expected.status === undefined) assert.equal(ingress.status, 200);
          });
        }

        await t.step(
          "the redirect to HTTPS: the Ingress drops a / ending the path, the Gateway keeps it, as the preview notes",
          async () => {
            const { ingress, gateway } = await both("http", "shop.example.com", "/store/cart/?x=1");
            assert.deepEqual([ingress.status, ingress.location], [308, "https://shop.example.com/store/cart/?x=1"]);
            const dir = await both("http", "shop.example.com", "/store/cart/");
            assert.deepEqual([dir.ingress.status, dir.ingress.location], [308, "https://shop.example.com/store/cart"]);
            assert.deepEqual([dir.gateway.status, dir.gateway.location], [308, "https://shop.example.com/store/cart/"]);
            assert.deepEqual(gateway, ingress, "a / before the query is not the end of the path");
            const web = plan.ingresses.find((m) => m.name === "storefront-web")!;
            assert.ok(
              web.notes.some((n) => n.startsWith("the redirect to HTTPS: the Ingress drops a / ending the path")),
            );
          },
        );

        // CORS: the same answers, but where the preview says the Gateway differs (the note or verdict named)
        const migration = (name: string) => plan.ingresses.find((m) => m.namespace === "api" && m.name === name)!;
        const said = (name: string, re: RegExp) =>
          assert.ok(
            [...migration(name).verdicts, ...migration(name).notes].some((l) => re.test(l)),
            `${name}: the preview says ${re}`,
          );
        const preflight = (origin: string, method: string, headers?: string) => ({
          Origin: origin,
          "Access-Control-Request-Method": method,
          ...(headers ? { "Access-Control-Request-Headers": headers } : {}),
        });
        const NGINX_METHODS = "GET, PUT, POST, DELETE, PATCH, OPTIONS";
        const NGINX_HEADERS = "DNT, Keep-Alive, User-Agent, X-Requested-With, If-Modified-Since, Cache-Control, " +
          "Content-Type, Range, Authorization";
        const backendAnswer = { status: 200, backend: "public-api", target: "/data" };
        const noAnswer = { status: 204, backend: null, target: null, host: null };
        const corsCases: [
          string,
          string,
          "GET" | "OPTIONS",
          Record<string, string>,
          Partial<Seen>,
          Partial<Seen>,
          [string, RegExp] | null,
        ][] = [
          [
            "ingress-nginx's defaults, a preflight",
            "open.example.com",
            "OPTIONS",
            preflight("https://x.example.net", "PUT"),
            {
              status: 204,
              backend: null,
              allowOrigin: "https://x.example.net",
              allowCredentials: "true",
              allowMethods: NGINX_METHODS,
              allowHeaders: NGINX_HEADERS,
              maxAge: "1728000",
              vary: "Origin",
            },
            { allowCredentials: null },
            ["cors-open", /allowCredentials is not written with the origin \*/],
          ],
          [
            "ingress-nginx's defaults, a simple request",
            "open.example.com",
            "GET",
            { Origin: "https://x.example.net" },
            {
              backend: "public-api",
              allowOrigin: "https://x.example.net",
              allowCredentials: "true",
              allowMethods: null,
              maxAge: null,
              vary: "Origin",
            },
            { allowCredentials: null },
            ["cors-open", /allowCredentials is not written with the origin \*/],
          ],
          [
            "ingress-nginx's defaults, no Origin",
            "open.example.com",
            "GET",
            {},
            {
              backend: "public-api",
              allowOrigin: null,
              vary: null,
            },
            {},
            null,
          ],
          [
            "listed origins, a preflight",
            "app-api.example.com",
            "OPTIONS",
            {
              ...preflight("https://admin.example.com", "DELETE", "authorization"),
            },
            {
              status: 204,
              allowOrigin: "https://admin.example.com",
              allowCredentials: "true",
              allowMethods: "GET, PUT, DELETE",
              allowHeaders: "Content-Type, Authorization",
              exposeHeaders: null,
              maxAge: "3600",
              vary: "Origin",
            },
            {},
            null,
          ],
          [
            "listed origins, a simple request",
            "app-api.example.com",
            "GET",
            { Origin: "https://app.example.com" },
            {
              backend: "public-api",
              allowOrigin: "https://app.example.com",
              allowCredentials: "true",
              allowMethods: null,
              vary: "Origin",
            },
            {},
            null,
          ],
          [
            "listed origins, a simple request from another",
            "app-api.example.com",
            "GET",
            {
              Origin: "https://evil.example.com",
            },
            { backend: "public-api", allowOrigin: null, allowCredentials: null, vary: null },
            {},
            null,
          ],
          [
            "listed origins, a preflight from another",
            "app-api.example.com",
            "OPTIONS",
            {
              ...preflight("https://evil.example.com", "DELETE"),
            },
            { ...backendAnswer, allowOrigin: null, allowCredentials: null },
            noAnswer,
            [
              "cors-app",
              /answers a preflight .* from an origin it does not allow itself, 204 without CORS headers/,
            ],
          ],
          [
            "a wildcard origin, one label: a preflight",
            "widgets.example.com",
            "OPTIONS",
            {
              ...preflight("https://a.example.org", "POST", "x-api-key"),
            },
            {
              status: 204,
              allowOrigin: "https://a.example.org",
              allowCredentials: null,
              allowMethods: "GET, POST",
              allowHeaders: "Content-Type, X-Api-Key",
              exposeHeaders: null,
              maxAge: "600",
              vary: "Origin",
            },
            { exposeHeaders: "X-Request-Id" },
            ["cors-widgets", /exposeHeaders \(X-Request-Id\), also on the preflight/],
          ],
          [
            "a wildcard origin, one label: a simple request",
            "widgets.example.com",
            "GET",
            {
              Origin: "https://a.example.org",
            },
            {
              backend: "public-api",
              allowOrigin: "https://a.example.org",
              exposeHeaders: "X-Request-Id",
              vary: "Origin",
            },
            {},
            null,
          ],
          [
            "a wildcard origin, two labels: a preflight",
            "widgets.example.com",
            "OPTIONS",
            {
              ...preflight("https://a.b.example.org", "POST"),
            },
            { ...backendAnswer, allowOrigin: null },
            {
              ...noAnswer,
              allowOrigin: "https://a.b.example.org",
              allowMethods: "GET, POST",
              allowHeaders: "Content-Type, X-Api-Key",
              exposeHeaders: "X-Request-Id",
              maxAge: "600",
              vary: "Origin",
            },
            ["cors-widgets", /the Gateway's \* matches one or more labels, the Ingress's .* exactly one/],
          ],
          [
            "a wildcard origin, two labels: a simple request",
            "widgets.example.com",
            "GET",
            {
              Origin: "https://a.b.example.org",
            },
            { backend: "public-api", allowOrigin: null, exposeHeaders: null, vary: null },
            {
              allowOrigin: "https://a.b.example.org",
              exposeHeaders: "X-Request-Id",
              vary: "Origin",
            },
            ["cors-widgets", /the Gateway's \* matches one or more labels/],
          ],
        ];
        for (const [what, host, method, headers, expected, gatewayDiffers, note] of corsCases) {
          await t.step(`CORS, ${what}: ${method} http://${host}/data`, async () => {
            const { ingress, gateway } = await both("http", host, "/data", headers, method);
            for (const [k, v] of Object.entries(expected)) {
              assert.equal(ingress[k as keyof Seen], v, `Ingress ${k}: ${JSON.stringify(ingress)}`);
            }
            if (expected.status === undefined) assert.equal(ingress.status, 200);
            assert.deepEqual(
              gateway,
              { ...ingress, ...gatewayDiffers },
              "the Gateway's answer, but what the preview says",
            );
            if (Object.keys(gatewayDiffers).length > 0) {
              assert.ok(note !== null, "a difference the preview names");
              said(...note!);
            }
          });
        }

        await t.step("canary-weight 20: both send about a fifth of the requests to the canary", async () => {
          const share = async (gateway: boolean) => {
            const seen = new Map<string, number>();
            for (let i = 0; i < 100; i++) {
              const via = gateway ? viaGateway : viaIngress;
              const a = await ask(through(via, gateway, "https"), "https", "checkout.example.com", "/");
              seen.set(String(a.backend), (seen.get(String(a.backend)) ?? 0) + 1);
            }
            return seen;
          };
          for (const gateway of [false, true]) {
            const seen = await share(gateway);
            assert.deepEqual([...seen.keys()].sort(), ["checkout", "checkout-v2"], JSON.stringify([...seen]));
            const canary = seen.get("checkout-v2")!;
            assert.ok(
              canary >= 10 && canary <= 30,
              `${gateway ? "Gateway" : "Ingress"}: ${canary} of 100 to the canary`,
            );
          }
        });
      } finally {
        for (const p of proxies) await p.stop();
        await ctl.stop();
      }
    } finally {
      for (const s of servers) await s.close();
      await cluster.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
