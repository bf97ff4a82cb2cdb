/**
 * @module tests/nginx/conversion_cases
 * One case per ingress-nginx conversion (lib/nginx/convert.ts `CONVERTERS`): the nginx annotations
 * that show the key (with what it needs beside it), exactly the annotations of ours the compatibility
 * mode writes for them and the key's verdict, how the key changes the rendered configuration, and
 * what a request through haproxy shows. tests/nginx/conversion_cases_test.ts requires a case for
 * every key and checks the translation and the rendering; tests/nginx/conversion_traffic_test.ts
 * serves every case from one real haproxy and runs each probe. Each case's Ingress is
 * `shop/case-<key>` for the host `<key>.nginx.test`, routed to the Service `web` unless it says
 * otherwise; the Services, their servers and the Secrets are those of {@link caseWorld}.
 */
import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { privateAddress } from "../../lib/dev/localenv/netns.ts";
import type { Verdict } from "../../lib/nginx/table.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import type { Reply } from "./curl_reply.ts";

export const NAMESPACE = "shop";
export const hostOf = (key: string) => `${key}.nginx.test`;

/** The one value the `auth` Secret's htpasswd line accepts. */
export const USER = { name: "admin", password: "admin-pw" };
/**
 * An endpoint address whose packets are dropped (conversion_traffic_test.ts routes it to a device
 * that sends nothing on): connections to it time out.
 */
export const UNREACHABLE_ADDRESS = "10.255.254.1";
/** Where the external authentication service of the auth-url cases listens (inside the private network). */
export const AUTH_ADDRESS = privateAddress(81);
const AUTH_URL = `http://${AUTH_ADDRESS}:4180/oauth2/auth`;

export interface RequestOptions {
  https?: boolean;
  /** Another Host (and SNI) than the case's. */
  host?: string;
  /** More curl arguments (headers, method, body, client certificate). */
  args?: string[];
  /** The CA that verifies the server's certificate (default: the proxy's site CA). */
  caPem?: string;
}

/** A request to the case's host through the proxy under test. */
export interface Ask {
  (path: string, opts?: RequestOptions): Promise<Reply>;
  /** `n` GETs one after the other over one kept-alive connection: their statuses. */
  statuses(path: string, n: number): Promise<number[]>;
}

export interface Variant {
  /** nginx annotations, without the prefix. */
  nginx: Record<string, string>;
  /** Exactly the annotations of ours written for them, without the prefix. */
  ours: Record<string, string>;
  /** The key's verdict in `nginx-check`. */
  verdict: Verdict;
  /** The verdicts of the other annotations that are not supported or translated. */
  others?: Record<string, Verdict>;
}

export interface Case {
  /** The first variant is rendered and served; the others only translated. */
  variants: readonly [Variant, ...Variant[]];
  /**
   * How the key changes the rendered files of the first variant, against the same Ingress without
   * it: each entry `<+|-> <file>: <text>` is a line added (+) or removed (-) in that file that
   * contains the text. Or why the key changes nothing (the other variants show what it does).
   */
  renders: readonly string[] | { nothing: string };
  /** The Ingress's one path (default `/`, Prefix, to `web`). */
  path?: {
    path: string;
    pathType: "Prefix" | "Exact" | "ImplementationSpecific";
    service: string;
    port?: number | string;
  };
  /** The host has a TLS section (the Secret `site-tls`, for `*.nginx.test`). */
  tls?: true;
  /** The Ingress is the canary of an Ingress `main-<key>` of the same host and path (to `web`). */
  canary?: true;
  /**
   * More Ingresses served beside the case's (traffic only), as ingress-nginx's e2e tests write them: by
   * name, their nginx annotations; each is `shop/case-<key>-<name>` for the host `<name>.<key>.nginx.test`
   * (plain HTTP), with the case's path; for a canary case, the canary alone (no main Ingress).
   */
  more?: Readonly<Record<string, Record<string, string>>>;
  /** What the controller (Warning Events) and then the proxy (log lines) warn about the `more` Ingresses. */
  moreProblems?: readonly string[];
  /** What a request through haproxy shows, where traffic can show it. */
  traffic?: (ask: Ask, host: string, pki: Pki) => Promise<void>;
}

const supported = (nginx: Record<string, string>, ours: Record<string, string>): Variant => ({
  nginx,
  ours,
  verdict: "supported",
});
const translated = (nginx: Record<string, string>, ours: Record<string, string>): Variant => ({
  nginx,
  ours,
  verdict: "translated",
});

const sticky = { affinity: "cookie" };
const cors = { "enable-cors": "true" };
const basic = { "auth-type": "basic", "auth-secret": "users" };
const clientCa = { "auth-tls-secret": "shop/client-ca" };
const httpsBackend = { "backend-protocol": "HTTPS" };
const TLS_BACKEND = { path: "/", pathType: "Prefix", service: "tls-backend", port: 443 } as const;
const preflight = (origin: string, method = "PUT") => [
  "-X",
  "OPTIONS",
  "-H",
  `Origin: ${origin}`,
  "-H",
  `Access-Control-Request-Method: ${method}`,
];

/** The Set-Cookie header of the first answer of a sticky route. */
async function cookieOf(ask: Ask): Promise<string> {
  const r = await ask("/");
  assert.equal(r.status, 200);
  return r.headers["set-cookie"] ?? "";
}

const statusAndBackend = (r: Reply) => [r.status, r.backend];

/** The backend of `n` requests (with the given curl arguments), as a set. */
async function backendsOf(ask: Ask, n: number, args: string[] = []): Promise<string[]> {
  const seen = new Set<string | null>();
  for (let i = 0; i < n; i++) seen.add((await ask("/", { args })).backend);
  return [...seen].map(String).sort();
}

/** By nginx key (without the prefix), as lib/nginx/convert.ts's CONVERTERS. */
export const CASES: Readonly<Record<string, Case>> = {
  // TLS and redirects
  "ssl-redirect": {
    tls: true,
    variants: [
      supported({ "ssl-redirect": "false" }, { "ssl-redirect": "false" }),
      supported({ "ssl-redirect": "False" }, { "ssl-redirect": "false" }),
    ],
    renders: ["- redirect-hosts.map: ssl-redirect.nginx.test 1"],
    traffic: async (ask) => {
      const r = await ask("/plain");
      assert.deepEqual([r.status, r.backend], [200, "web"], "a TLS host served over plain HTTP");
    },
  },
  "force-ssl-redirect": {
    variants: [translated({ "force-ssl-redirect": "true" }, { "force-ssl-redirect": "true" })],
    renders: [
      "+ redirect-hosts.map: force-ssl-redirect.nginx.test 1",
      "+ haproxy.cfg: http-request redirect scheme https code 308 if { var(txn.redirect) -m found }",
    ],
    traffic: async (ask, host) => {
      const r = await ask("/pay?order=7");
      assert.deepEqual([r.status, r.headers.location], [308, `https://${host}/pay?order=7`], "no TLS section");
    },
  },
  "preserve-trailing-slash": {
    tls: true,
    // false is ingress-nginx's default, which the compatibility mode applies without the key (COMPAT_DEFAULTS)
    variants: [
      supported({ "preserve-trailing-slash": "false" }, { "ssl-redirect-trailing-slash": "drop" }),
      supported({ "preserve-trailing-slash": "true" }, { "ssl-redirect-trailing-slash": "keep" }),
    ],
    renders: [
      "+ redirect-hosts.map: preserve-trailing-slash.nginx.test 308s",
      "+ haproxy.cfg: http-request redirect location https://%[var(txn.host)]%[pathq,regsub(/$,)] code 308 if { var(txn.redirect) -m str 308s }",
    ],
    traffic: async (ask, host) => {
      // ingress-nginx's lua_ingress.lua: one / ending the request URI is dropped
      const r = await ask("/docs/");
      assert.deepEqual([r.status, r.headers.location], [308, `https://${host}/docs`]);
      const root = await ask("/");
      assert.deepEqual([root.status, root.headers.location], [308, `https://${host}`]);
      const query = await ask("/docs/?page=2");
      assert.deepEqual([query.status, query.headers.location], [308, `https://${host}/docs/?page=2`]);
    },
  },
  "ssl-passthrough": {
    tls: true,
    path: TLS_BACKEND,
    variants: [supported({ "ssl-passthrough": "True" }, { "ssl-passthrough": "true" })],
    renders: [
      "+ passthrough.map: ssl-passthrough.nginx.test be_shop_tls-backend_443_tcp",
      "+ haproxy.cfg: use_backend %[var(sess.ic_pass)] if { var(sess.ic_pass) -m found }",
    ],
    traffic: async (ask, _host, pki) => {
      // the backend's own certificate (its CA, not the proxy's) and its answer: the proxy did not decrypt
      const r = await ask("/", { https: true, caPem: pki.backendCa });
      assert.deepEqual([r.status, r.backend, r.received["x-forwarded-for"]], [200, "tls-backend", undefined]);
    },
  },
  // paths, rewrites, redirects
  "use-regex": {
    // a Prefix path, as ingress-nginx's e2e tests write them: every path is a regex (buildLocation)
    path: { path: "/items/[0-9]+", pathType: "Prefix", service: "web" },
    variants: [
      translated({ "use-regex": "true" }, { "path-regex": "all" }),
      translated({ "use-regex": "false" }, { "path-regex": "false" }),
    ],
    renders: ["+ routes-regex.map: ^use-regex[.]nginx[.]test(?=/)(?i:/items/[0-9]+) be_shop_web_80"],
    traffic: async (ask) => {
      const r = await ask("/ITEMS/42/reviews");
      assert.deepEqual([r.status, r.backend], [200, "web"], "from the start, case-insensitively");
      assert.equal((await ask("/items/new")).status, 404);
    },
  },
  "rewrite-target": {
    path: { path: "/api(/|$)(.*)", pathType: "Prefix", service: "web" },
    variants: [
      translated({ "rewrite-target": "/$2" }, { "rewrite-target": "/$2", "path-regex": "all" }),
      translated({ "rewrite-target": "/$2", "use-regex": "true" }, { "rewrite-target": "/$2", "path-regex": "all" }),
      // ingress-nginx enforces regex locations with rewrite-target, whatever use-regex says
      translated({ "rewrite-target": "/$2", "use-regex": "false" }, { "rewrite-target": "/$2", "path-regex": "all" }),
    ],
    renders: [
      "+ routes-regex.map: ^rewrite-target[.]nginx[.]test(?=/)(?i:/api(/|$)(.*)) be_shop_web_80",
      "+ haproxy.cfg: http-request replace-path '^(?i:/api(/|$)(.*))' '/\\2'",
    ],
    traffic: async (ask) => {
      const r = await ask("/api/products/42?expand=price");
      assert.deepEqual([r.status, r.backend, r.target], [200, "web", "/products/42?expand=price"]);
    },
  },
  "app-root": {
    variants: [supported({ "app-root": "/store" }, { "app-root": "/store" })],
    renders: [
      "+ haproxy.cfg: http-request redirect location '%[ssl_fc,iif(https,http)]://%[req.hdr(host)]/store' code 302 if { path / }",
    ],
    traffic: async (ask) => {
      const r = await ask("/");
      // ingress-nginx's e2e (approot.go): Location http://<host>/foo
      assert.deepEqual([r.status, r.headers.location], [302, `http://${hostOf("app-root")}/store`]);
      assert.equal((await ask("/store")).backend, "web");
    },
  },
  "permanent-redirect": {
    variants: [
      supported({ "permanent-redirect": "https://new.example.org/" }, {
        "redirect-to": "https://new.example.org/",
        "redirect-code": "301",
      }),
    ],
    renders: ["+ haproxy.cfg: http-request redirect location 'https://new.example.org/' code 301"],
    traffic: async (ask) => {
      const r = await ask("/2019/hello?ref=x");
      assert.deepEqual([r.status, r.headers.location], [301, "https://new.example.org/"]);
    },
  },
  "permanent-redirect-code": {
    variants: [
      supported({ "permanent-redirect": "https://new.example.org/", "permanent-redirect-code": "308" }, {
        "redirect-to": "https://new.example.org/",
        "redirect-code": "308",
      }),
      // an invalid code is ignored: ingress-nginx's default, 301
      {
        nginx: { "permanent-redirect": "https://new.example.org/", "permanent-redirect-code": "399" },
        ours: { "redirect-to": "https://new.example.org/", "redirect-code": "301" },
        verdict: "refused",
      },
    ],
    renders: ["+ haproxy.cfg: http-request redirect location 'https://new.example.org/' code 308"],
    traffic: async (ask) => {
      const r = await ask("/old");
      assert.deepEqual([r.status, r.headers.location], [308, "https://new.example.org/"]);
    },
  },
  "temporal-redirect": {
    variants: [
      supported({ "temporal-redirect": "https://maintenance.example.org/" }, {
        "redirect-to": "https://maintenance.example.org/",
        "redirect-code": "302",
      }),
    ],
    renders: ["+ haproxy.cfg: http-request redirect location 'https://maintenance.example.org/' code 302"],
    traffic: async (ask) => {
      const r = await ask("/checkout");
      assert.deepEqual([r.status, r.headers.location], [302, "https://maintenance.example.org/"]);
    },
  },
  "temporal-redirect-code": {
    variants: [
      supported({ "temporal-redirect": "https://maintenance.example.org/", "temporal-redirect-code": "307" }, {
        "redirect-to": "https://maintenance.example.org/",
        "redirect-code": "307",
      }),
      {
        nginx: { "temporal-redirect": "https://maintenance.example.org/", "temporal-redirect-code": "200" },
        ours: { "redirect-to": "https://maintenance.example.org/", "redirect-code": "302" },
        verdict: "refused",
      },
    ],
    renders: ["+ haproxy.cfg: http-request redirect location 'https://maintenance.example.org/' code 307"],
    traffic: async (ask) => {
      const r = await ask("/checkout");
      assert.deepEqual([r.status, r.headers.location], [307, "https://maintenance.example.org/"]);
    },
  },
  "from-to-www-redirect": {
    variants: [translated({ "from-to-www-redirect": "true" }, { "www-redirect": "true" })],
    renders: [
      "+ routes-prefix.map: www.from-to-www-redirect.nginx.test/ be_shop_www_",
      "+ haproxy.cfg: http-request redirect prefix http://from-to-www-redirect.nginx.test code 308",
    ],
    traffic: async (ask, host) => {
      const r = await ask("/cart?x=1", { host: `www.${host}` });
      assert.deepEqual([r.status, r.headers.location], [308, `http://${host}/cart?x=1`]);
    },
  },
  "x-forwarded-prefix": {
    variants: [
      supported({ "x-forwarded-prefix": "/shop" }, { "request-headers-set": "X-Forwarded-Prefix: /shop" }),
      supported({ "x-forwarded-prefix": "/shop", "upstream-vhost": "shop.internal" }, {
        "request-headers-set": "Host: shop.internal\nX-Forwarded-Prefix: /shop",
      }),
      // an upstream-vhost that is not applied is not written with it, nor costs it its header
      {
        ...supported({ "x-forwarded-prefix": "/shop", "upstream-vhost": "$host" }, {
          "request-headers-set": "X-Forwarded-Prefix: /shop",
        }),
        others: { "upstream-vhost": "unsupported" },
      },
      {
        ...supported({ "x-forwarded-prefix": "/shop", "upstream-vhost": "bad_host!" }, {
          "request-headers-set": "X-Forwarded-Prefix: /shop",
        }),
        others: { "upstream-vhost": "refused" },
      },
    ],
    renders: ["+ haproxy.cfg: http-request set-header X-Forwarded-Prefix '/shop'"],
    traffic: async (ask, host) => {
      const r = await ask("/");
      assert.deepEqual([r.received["x-forwarded-prefix"], r.received.host], ["/shop", host]);
    },
  },
  "upstream-vhost": {
    variants: [
      supported({ "upstream-vhost": "shop.internal" }, { "request-headers-set": "Host: shop.internal" }),
      supported({ "upstream-vhost": "shop.internal", "x-forwarded-prefix": "/shop" }, {
        "request-headers-set": "Host: shop.internal\nX-Forwarded-Prefix: /shop",
      }),
      // a refused x-forwarded-prefix is not written with it (nor a header line hidden in its value)
      {
        ...supported({ "upstream-vhost": "shop.internal", "x-forwarded-prefix": "/shop\nX-Evil: 1" }, {
          "request-headers-set": "Host: shop.internal",
        }),
        others: { "x-forwarded-prefix": "refused" },
      },
    ],
    renders: ["+ haproxy.cfg: http-request set-header Host 'shop.internal'"],
    traffic: async (ask) => {
      const r = await ask("/");
      assert.deepEqual([r.backend, r.received.host], ["web", "shop.internal"]);
    },
  },
  // limits and access
  "proxy-body-size": {
    variants: [translated({ "proxy-body-size": "1k" }, { "max-body-size": "1k" })],
    renders: [
      "+ haproxy.cfg: http-request deny deny_status 413 if { req.hdr_val(content-length) gt 1024 }",
      "+ haproxy.cfg: http-request wait-for-body time 10s at-least 1025 if !{ req.hdr(content-length) -m found } { req.hdr(transfer-encoding) -m found }",
      "+ haproxy.cfg: http-request deny deny_status 413 if !{ req.hdr(content-length) -m found } { req.body_size gt 1024 }",
    ],
    traffic: async (ask) => {
      const body = (n: number) => ["--data-binary", "x".repeat(n)];
      assert.equal((await ask("/upload", { args: body(1025) })).status, 413);
      assert.equal((await ask("/upload", { args: body(1024) })).status, 200);
      // a chunked body (no Content-Length) is counted too, as nginx does, for limits up to 8 KiB
      const chunked = (n: number) => ask("/upload", { args: ["-H", "Transfer-Encoding: chunked", ...body(n)] });
      assert.equal((await chunked(4096)).status, 413);
      assert.deepEqual([(await chunked(1024)).status, (await chunked(1024)).backend], [200, "web"]);
      assert.deepEqual([(await ask("/")).status, (await ask("/")).backend], [200, "web"], "no body: no wait");
    },
  },
  "whitelist-source-range": {
    variants: [supported({ "whitelist-source-range": "10.0.0.0/8, 192.168.0.0/16" }, {
      "allow-list": "10.0.0.0/8, 192.168.0.0/16",
    })],
    renders: [
      "+ haproxy.cfg: acl ic_allow src 10.0.0.0/8 192.168.0.0/16",
      "+ haproxy.cfg: http-request deny deny_status 403 if !ic_allow",
    ],
    traffic: async (ask) => assert.deepEqual(statusAndBackend(await ask("/")), [403, null]),
  },
  "allowlist-source-range": {
    variants: [supported({ "allowlist-source-range": "10.0.0.0/8" }, { "allow-list": "10.0.0.0/8" })],
    renders: [
      "+ haproxy.cfg: acl ic_allow src 10.0.0.0/8",
      "+ haproxy.cfg: http-request deny deny_status 403 if !ic_allow",
    ],
    traffic: async (ask) => assert.equal((await ask("/")).status, 403),
  },
  "denylist-source-range": {
    variants: [supported({ "denylist-source-range": "127.0.0.0/8" }, { "deny-list": "127.0.0.0/8" })],
    renders: [
      "+ haproxy.cfg: acl ic_deny src 127.0.0.0/8",
      "+ haproxy.cfg: http-request deny deny_status 403 if ic_deny",
    ],
    traffic: async (ask) => assert.equal((await ask("/")).status, 403),
  },
  "limit-rps": {
    variants: [translated({ "limit-rps": "2" }, { "rate-limit-rps": "2" })],
    renders: [
      "+ haproxy.cfg: store http_req_rate(1s),conn_cur",
      "+ haproxy.cfg: http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 }",
    ],
    traffic: async (ask) => {
      const statuses = await ask.statuses("/", 12);
      assert.deepEqual([statuses.slice(0, 2), statuses.includes(429)], [[200, 200], true], statuses.join(" "));
    },
  },
  "limit-rpm": {
    variants: [translated({ "limit-rpm": "3" }, { "rate-limit-rpm": "3" })],
    renders: [
      "+ haproxy.cfg: store http_req_rate(60s),conn_cur",
      "+ haproxy.cfg: http-request deny deny_status 429 if { sc_http_req_rate(0) gt 3 }",
    ],
    traffic: async (ask) => {
      // a minute's budget of 3: the fourth request of the minute is over it, however slow the machine
      assert.deepEqual(await ask.statuses("/", 5), [200, 200, 200, 429, 429]);
    },
  },
  "limit-connections": {
    path: { path: "/", pathType: "Prefix", service: "scripted" },
    variants: [translated({ "limit-connections": "1" }, { "rate-limit-connections": "1" })],
    renders: ["+ haproxy.cfg: http-request deny deny_status 429 if { sc_conn_cur(0) gt 1 }"],
    traffic: async (ask) => {
      // one connection held open by a slow answer; a second one meanwhile is over the limit
      const slow = ask("/?delay=1500");
      await new Promise((r) => setTimeout(r, 400));
      const second = await ask("/");
      assert.deepEqual([(await slow).status, second.status], [200, 429]);
      assert.equal((await ask("/")).status, 200, "once the first is done");
    },
  },
  "limit-whitelist": {
    variants: [
      supported({ "limit-rps": "1", "limit-whitelist": "127.0.0.0/8" }, {
        "rate-limit-rps": "1",
        "rate-limit-allow-list": "127.0.0.0/8",
      }),
    ],
    renders: [
      "+ haproxy.cfg: acl ic_rate_allow src 127.0.0.0/8",
      "+ haproxy.cfg: http-request track-sc0 src if !ic_rate_allow",
    ],
    traffic: async (ask) => assert.deepEqual(new Set(await ask.statuses("/", 8)), new Set([200])),
  },
  "limit-allowlist": {
    variants: [
      supported({ "limit-rpm": "1", "limit-allowlist": "10.0.0.0/8, 127.0.0.0/8" }, {
        "rate-limit-rpm": "1",
        "rate-limit-allow-list": "10.0.0.0/8, 127.0.0.0/8",
      }),
    ],
    renders: [
      "+ haproxy.cfg: acl ic_rate_allow src 10.0.0.0/8 127.0.0.0/8",
      "+ haproxy.cfg: http-request track-sc0 src if !ic_rate_allow",
    ],
    traffic: async (ask) => assert.deepEqual(new Set(await ask.statuses("/", 4)), new Set([200])),
  },
  // timeouts and backends
  "proxy-connect-timeout": {
    path: { path: "/", pathType: "Prefix", service: "unreachable" },
    variants: [translated({ "proxy-connect-timeout": "1" }, { "timeout-connect": "1s" })],
    renders: ["+ haproxy.cfg: timeout connect 1s"],
    traffic: async (ask) => {
      // nginx answers 504 when the connection is not made in time; HAProxy 503 (the note says so)
      const r = await ask("/");
      assert.deepEqual([r.status, r.backend], [503, null]);
    },
  },
  "proxy-read-timeout": {
    path: { path: "/", pathType: "Prefix", service: "scripted" },
    variants: [
      translated({ "proxy-read-timeout": "1" }, { "timeout-server": "1s" }),
      translated({ "proxy-read-timeout": "120", "proxy-send-timeout": "30" }, { "timeout-server": "120s" }),
      translated({ "proxy-read-timeout": "30", "proxy-send-timeout": "120" }, { "timeout-server": "120s" }),
    ],
    renders: ["+ haproxy.cfg: timeout server 1s"],
    traffic: async (ask) => {
      assert.equal((await ask("/?delay=2500")).status, 504);
      assert.equal((await ask("/?delay=10")).status, 200);
    },
  },
  "proxy-send-timeout": {
    path: { path: "/", pathType: "Prefix", service: "scripted" },
    variants: [
      translated({ "proxy-send-timeout": "1" }, { "timeout-server": "1s" }),
      translated({ "proxy-send-timeout": "120", "proxy-read-timeout": "30" }, { "timeout-server": "120s" }),
      translated({ "proxy-send-timeout": "30", "proxy-read-timeout": "120" }, { "timeout-server": "120s" }),
    ],
    renders: ["+ haproxy.cfg: timeout server 1s"],
    traffic: async (ask) => assert.equal((await ask("/?delay=2500")).status, 504),
  },
  "load-balance": {
    variants: [
      translated({ "load-balance": "ewma" }, { "load-balance": "leastconn" }),
      supported({ "load-balance": "round_robin" }, { "load-balance": "roundrobin" }),
    ],
    renders: ["+ haproxy.cfg: balance leastconn", "- haproxy.cfg: balance roundrobin"],
  },
  "service-upstream": {
    path: { path: "/", pathType: "Prefix", service: "upstream", port: "http" },
    variants: [supported({ "service-upstream": "true" }, { "service-upstream": "true" })],
    renders: ["+ haproxy.cfg: server s1 127.0.0.1:9090", "- haproxy.cfg: server s1 127.0.0.1:8080"],
    traffic: async (ask) => assert.equal((await ask("/")).backend, "cluster-ip", "not the endpoint"),
  },
  "backend-protocol": {
    path: TLS_BACKEND,
    variants: [
      supported({ "backend-protocol": "HTTPS" }, { "backend-protocol": "h1-tls" }),
      supported({ "backend-protocol": "grpc" }, { "backend-protocol": "h2" }),
      supported({ "backend-protocol": "GRPCS" }, { "backend-protocol": "h2-tls" }),
      supported({ "backend-protocol": "HTTP" }, { "backend-protocol": "h1" }),
    ],
    renders: ["+ haproxy.cfg: default-server ssl verify none alpn http/1.1"],
    traffic: async (ask) => {
      const r = await ask("/invoices");
      assert.deepEqual([r.status, r.backend, r.target], [200, "tls-backend", "/invoices"]);
    },
  },
  "proxy-ssl-name": {
    path: TLS_BACKEND,
    variants: [
      translated({ ...httpsBackend, "proxy-ssl-name": "tls-backend.shop.svc" }, {
        "backend-protocol": "h1-tls",
        "backend-sni": "tls-backend.shop.svc",
      }),
    ],
    renders: ["+ haproxy.cfg: default-server ssl verify none sni str(tls-backend.shop.svc) alpn http/1.1"],
  },
  "proxy-ssl-server-name": {
    path: TLS_BACKEND,
    variants: [
      supported({ ...httpsBackend, "proxy-ssl-name": "tls-backend.shop.svc", "proxy-ssl-server-name": "on" }, {
        "backend-protocol": "h1-tls",
        "backend-sni": "tls-backend.shop.svc",
      }),
    ],
    renders: { nothing: "SNI is sent whenever proxy-ssl-name gives backend-sni" },
  },
  "proxy-ssl-secret": {
    path: TLS_BACKEND,
    variants: [
      translated({ ...httpsBackend, "proxy-ssl-secret": "shop/backend-ca", "proxy-ssl-verify": "on" }, {
        "backend-protocol": "h1-tls",
        "backend-ca-secret": "backend-ca",
      }),
    ],
    renders: ["+ haproxy.cfg: default-server ssl verify required ca-file shop_backend-ca_ca.pem alpn http/1.1"],
    traffic: async (ask) => assert.deepEqual(statusAndBackend(await ask("/")), [200, "tls-backend"]),
  },
  "proxy-ssl-verify": {
    path: TLS_BACKEND,
    variants: [
      translated({ ...httpsBackend, "proxy-ssl-secret": "other-ca", "proxy-ssl-verify": "on" }, {
        "backend-protocol": "h1-tls",
        "backend-ca-secret": "other-ca",
      }),
    ],
    renders: ["+ haproxy.cfg: default-server ssl verify required ca-file shop_other-ca_ca.pem alpn http/1.1"],
    // the backend's certificate is not signed by that CA: refused (without verification it answers, above)
    traffic: async (ask) => assert.deepEqual(statusAndBackend(await ask("/")), [503, null]),
  },
  // sessions
  "affinity": {
    path: { path: "/something", pathType: "Prefix", service: "web" },
    variants: [translated(sticky, { "sticky-cookie": "true" })],
    renders: ["+ haproxy.cfg: cookie INGRESSCOOKIE insert indirect nocache dynamic httponly"],
    traffic: async (ask) => {
      // as ingress-nginx's e2e "should set the path to /something on the generated cookie", which finds
      // Path=/something (the Ingress's path): here the cookie's Path is / (the note says so)
      const r = await ask("/something");
      const cookie = r.headers["set-cookie"] ?? "";
      assert.deepEqual([r.status, /^INGRESSCOOKIE=[^;]+/.test(cookie)], [200, true], cookie);
      assert.match(cookie, /;\s*path=\/(;|$)/i);
      const seen = new Set<string | null>();
      for (let i = 0; i < 6; i++) {
        seen.add((await ask("/something", { args: ["-H", `Cookie: ${cookie.split(";")[0]}`] })).backend);
      }
      assert.deepEqual([...seen], ["web"]);
    },
  },
  "affinity-mode": {
    variants: [
      translated({ ...sticky, "affinity-mode": "balanced" }, { "sticky-cookie": "true" }),
      supported({ ...sticky, "affinity-mode": "persistent" }, { "sticky-cookie": "true" }),
    ],
    renders: { nothing: "balanced is served as persistent, which sticky cookies are" },
  },
  "session-cookie-name": {
    variants: [supported({ ...sticky, "session-cookie-name": "route" }, {
      "sticky-cookie": "true",
      "sticky-cookie-name": "route",
    })],
    renders: ["+ haproxy.cfg: cookie route insert indirect nocache dynamic httponly"],
    traffic: async (ask) => assert.match(await cookieOf(ask), /^route=[^;]+/),
  },
  "session-cookie-max-age": {
    variants: [
      supported({ ...sticky, "session-cookie-max-age": "60" }, {
        "sticky-cookie": "true",
        "sticky-cookie-max-age": "60s",
      }),
      supported({ ...sticky, "session-cookie-max-age": "60", "session-cookie-expires": "3600" }, {
        "sticky-cookie": "true",
        "sticky-cookie-max-age": "60s",
      }),
      // an invalid max-age is ignored: expires applies
      {
        nginx: { ...sticky, "session-cookie-max-age": "1h", "session-cookie-expires": "3600" },
        ours: { "sticky-cookie": "true", "sticky-cookie-max-age": "3600s" },
        verdict: "refused",
      },
    ],
    renders: [
      "+ haproxy.cfg: cookie INGRESSCOOKIE insert indirect nocache dynamic httponly maxlife 60s attr Max-Age=60",
    ],
    traffic: async (ask) => assert.match(await cookieOf(ask), /Max-Age=60(;|$)/i),
  },
  "session-cookie-expires": {
    variants: [translated({ ...sticky, "session-cookie-expires": "3600" }, {
      "sticky-cookie": "true",
      "sticky-cookie-max-age": "3600s",
    })],
    renders: [
      "+ haproxy.cfg: cookie INGRESSCOOKIE insert indirect nocache dynamic httponly maxlife 3600s attr Max-Age=3600",
    ],
    traffic: async (ask) => assert.match(await cookieOf(ask), /Max-Age=3600(;|$)/i),
  },
  "session-cookie-secure": {
    variants: [supported({ ...sticky, "session-cookie-secure": "true" }, {
      "sticky-cookie": "true",
      "sticky-cookie-secure": "true",
    })],
    renders: ["+ haproxy.cfg: cookie INGRESSCOOKIE insert indirect nocache dynamic httponly secure"],
    traffic: async (ask) => assert.match(await cookieOf(ask), /;\s*Secure(;|$)/i),
  },
  "session-cookie-samesite": {
    variants: [
      supported({ ...sticky, "session-cookie-samesite": "Strict" }, {
        "sticky-cookie": "true",
        "sticky-cookie-samesite": "Strict",
      }),
      // ingress-nginx takes any case
      supported({ ...sticky, "session-cookie-samesite": " none" }, {
        "sticky-cookie": "true",
        "sticky-cookie-samesite": "None",
      }),
      {
        nginx: { ...sticky, "session-cookie-samesite": "sometimes" },
        ours: { "sticky-cookie": "true" },
        verdict: "refused",
      },
    ],
    renders: ["+ haproxy.cfg: cookie INGRESSCOOKIE insert indirect nocache dynamic httponly attr SameSite=Strict"],
    traffic: async (ask) => assert.match(await cookieOf(ask), /;\s*SameSite=Strict(;|$)/i),
  },
  // CORS
  "enable-cors": {
    variants: [translated(cors, { "cors-enable": "true" })],
    more: { auth: { ...cors, ...basic } },
    renders: [
      "+ haproxy.cfg: http-request return status 204 hdr Access-Control-Allow-Origin '%[var(txn.ic_cors_origin)]'",
      "+ haproxy.cfg: http-response set-header Access-Control-Allow-Origin '%[var(txn.ic_cors_origin)]'",
    ],
    traffic: async (ask, host) => {
      const pre = await ask("/v1/orders", { args: preflight("https://app.example.com") });
      assert.deepEqual([pre.status, pre.backend], [204, null], "the proxy answers the preflight");
      assert.equal(pre.headers["access-control-allow-origin"], "https://app.example.com");
      // ingress-nginx's defaults (its e2e "should enable cors" reads them in its configuration)
      assert.deepEqual(
        [
          pre.headers["access-control-allow-methods"],
          pre.headers["access-control-allow-headers"]?.replace(/ /g, ""),
          pre.headers["access-control-max-age"],
          pre.headers["access-control-allow-credentials"],
        ],
        [
          "GET, PUT, POST, DELETE, PATCH, OPTIONS",
          "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
          "1728000",
          "true",
        ],
      );
      const get = await ask("/v1/orders", { args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([get.backend, get.headers["access-control-allow-credentials"]], ["web", "true"]);
      // the differences the note gives: the Origin sent back (ingress-nginx: *), no Allow-Methods on the
      // answer, and none of the headers without an Origin (ingress-nginx's e2e "should not break
      // functionality - without `*`" finds Access-Control-Allow-Origin: * there)
      assert.deepEqual(
        [get.headers["access-control-allow-origin"], get.headers["access-control-allow-methods"]],
        ["https://app.example.com", undefined],
      );
      // ingress-nginx's e2e "should return status code 401 and cors headers when authentication and cors is
      // configured …" finds them on the 401: the proxy's own answers carry none here (the note says so)
      const denied = await ask("/", { host: `auth.${host}`, args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([denied.status, denied.headers["access-control-allow-origin"]], [401, undefined]);
      const plain = await ask("/v1/orders");
      assert.deepEqual([plain.status, plain.backend, plain.headers["access-control-allow-origin"]], [
        200,
        "web",
        undefined,
      ]);
    },
  },
  "cors-allow-origin": {
    variants: [
      translated({ ...cors, "cors-allow-origin": "https://app.example.com" }, {
        "cors-enable": "true",
        "cors-allow-origin": "https://app.example.com",
      }),
      // as ingress-nginx's e2e "should not break functionality with extra domain": * anywhere is any origin
      translated({ ...cors, "cors-allow-origin": "*, foo.bar.com" }, {
        "cors-enable": "true",
        "cors-allow-origin": "*",
      }),
      // and "should allow correct origins …": an origin without a scheme is skipped, not the list
      translated({ ...cors, "cors-allow-origin": "origin.cors.com:8080, https://origin2.cors.com" }, {
        "cors-enable": "true",
        "cors-allow-origin": "https://origin2.cors.com",
      }),
      {
        nginx: { ...cors, "cors-allow-origin": "origin.cors.com" },
        ours: { "cors-enable": "true" },
        verdict: "refused",
      },
    ],
    renders: ["+ haproxy.cfg: acl ic_cors_origin req.hdr(origin) -m str 'https://app.example.com'"],
    traffic: async (ask) => {
      const app = await ask("/", { args: ["-H", "Origin: https://app.example.com"] });
      assert.equal(app.headers["access-control-allow-origin"], "https://app.example.com");
      const other = await ask("/", { args: ["-H", "Origin: https://evil.example"] });
      assert.deepEqual([other.backend, other.headers["access-control-allow-origin"]], ["web", undefined]);
      // ingress-nginx matches origins case-insensitively; here exactly (the note says so)
      const upper = await ask("/", { args: ["-H", "Origin: https://APP.example.com"] });
      assert.deepEqual([upper.backend, upper.headers["access-control-allow-origin"]], ["web", undefined]);
    },
  },
  "cors-allow-methods": {
    variants: [translated({ ...cors, "cors-allow-methods": "GET, POST" }, {
      "cors-enable": "true",
      "cors-allow-methods": "GET, POST",
    })],
    renders: ["+ haproxy.cfg: hdr Access-Control-Allow-Methods 'GET, POST' hdr"],
    traffic: async (ask) => {
      const pre = await ask("/", { args: preflight("https://app.example.com", "POST") });
      assert.equal(pre.headers["access-control-allow-methods"]?.replace(/ /g, ""), "GET,POST");
      // on the preflight only (ingress-nginx: on every CORS answer)
      const get = await ask("/", { args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([get.backend, get.headers["access-control-allow-methods"]], ["web", undefined]);
    },
  },
  "cors-allow-headers": {
    variants: [translated({ ...cors, "cors-allow-headers": "X-Api-Key, Content-Type" }, {
      "cors-enable": "true",
      "cors-allow-headers": "X-Api-Key, Content-Type",
    })],
    renders: ["+ haproxy.cfg: hdr Access-Control-Allow-Headers 'X-Api-Key, Content-Type' hdr"],
    traffic: async (ask) => {
      const pre = await ask("/", { args: preflight("https://app.example.com") });
      assert.equal(pre.headers["access-control-allow-headers"]?.replace(/ /g, ""), "X-Api-Key,Content-Type");
      const get = await ask("/", { args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([get.backend, get.headers["access-control-allow-headers"]], ["web", undefined]);
    },
  },
  "cors-expose-headers": {
    variants: [translated({ ...cors, "cors-expose-headers": "X-Total-Count" }, {
      "cors-enable": "true",
      "cors-expose-headers": "X-Total-Count",
    })],
    renders: ["+ haproxy.cfg: http-response set-header Access-Control-Expose-Headers 'X-Total-Count'"],
    traffic: async (ask) => {
      const r = await ask("/", { args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([r.backend, r.headers["access-control-expose-headers"]], ["web", "X-Total-Count"]);
      // not on the preflight answer (ingress-nginx: there too)
      const pre = await ask("/", { args: preflight("https://app.example.com") });
      assert.deepEqual([pre.status, pre.headers["access-control-expose-headers"]], [204, undefined]);
    },
  },
  "cors-allow-credentials": {
    variants: [supported({ ...cors, "cors-allow-credentials": "false" }, {
      "cors-enable": "true",
      "cors-allow-credentials": "false",
    })],
    renders: [
      "- haproxy.cfg: http-response set-header Access-Control-Allow-Credentials 'true'",
      "+ haproxy.cfg: http-response set-header Access-Control-Allow-Origin '*'",
    ],
    traffic: async (ask) => {
      const pre = await ask("/", { args: preflight("https://app.example.com") });
      assert.deepEqual([pre.status, pre.headers["access-control-allow-credentials"]], [204, undefined]);
    },
  },
  "cors-max-age": {
    variants: [translated({ ...cors, "cors-max-age": "600" }, { "cors-enable": "true", "cors-max-age": "600" })],
    renders: ["+ haproxy.cfg: hdr Access-Control-Max-Age '600' if"],
    traffic: async (ask) => {
      const pre = await ask("/", { args: preflight("https://app.example.com") });
      assert.equal(pre.headers["access-control-max-age"], "600");
      const get = await ask("/", { args: ["-H", "Origin: https://app.example.com"] });
      assert.deepEqual([get.backend, get.headers["access-control-max-age"]], ["web", undefined]);
    },
  },
  // authentication
  "auth-type": {
    variants: [
      translated(basic, { "auth-basic-secret": "users" }),
      { nginx: { ...basic, "auth-type": "digest" }, ours: {}, verdict: "unsupported" },
    ],
    renders: ["+ haproxy.cfg: http-request auth realm 'Authentication Required' unless { http_auth(ul_shop_users) }"],
    traffic: async (ask) => {
      assert.equal((await ask("/")).status, 401);
      assert.equal((await ask("/", { args: ["-u", `${USER.name}:wrong`] })).status, 401);
      const ok = await ask("/", { args: ["-u", `${USER.name}:${USER.password}`] });
      assert.deepEqual([ok.status, ok.backend], [200, "web"]);
    },
  },
  "auth-secret": {
    variants: [
      translated({ ...basic, "auth-secret": "shop/users" }, { "auth-basic-secret": "users" }),
      supported({ "auth-secret": "users" }, {}),
    ],
    renders: ["+ haproxy.cfg: http-request auth realm 'Authentication Required' unless { http_auth(ul_shop_users) }"],
    more: { missing: { ...basic, "auth-secret": "no-such-secret" } },
    moreProblems: [
      "annotation ingress-controller.io/auth-basic-secret: Secret shop/no-such-secret not found; every request gets 401",
      "shop/no-such-secret: the Secret does not exist: its userlist denies everyone",
    ],
    traffic: async (ask, host) => {
      // ingress-nginx's e2e "should return status code 503 when authentication is configured with an
      // invalid secret": here 401 to everyone (the note says so), never the backend
      const missing = await ask("/", { host: `missing.${host}`, args: ["-u", `${USER.name}:${USER.password}`] });
      assert.deepEqual([missing.status, missing.backend], [401, null]);
      const anonymous = await ask("/");
      assert.deepEqual([anonymous.status, anonymous.headers["www-authenticate"]], [
        401,
        'Basic realm="Authentication Required"',
      ]);
      assert.equal((await ask("/", { args: ["-u", `${USER.name}:${USER.password}`] })).status, 200);
    },
  },
  "auth-secret-type": {
    variants: [
      supported({ ...basic, "auth-secret-type": "auth-file" }, { "auth-basic-secret": "users" }),
      // an invalid type is ignored: the default form, and the password is still asked for
      {
        nginx: { ...basic, "auth-secret-type": "htpasswd" },
        ours: { "auth-basic-secret": "users" },
        verdict: "refused",
      },
      // the auth-map form is not read, and ingress-nginx's basic auth is then off: no password is asked either
      { nginx: { ...basic, "auth-secret-type": "auth-map" }, ours: {}, verdict: "unsupported" },
    ],
    renders: { nothing: "auth-file is the default form" },
  },
  "auth-realm": {
    variants: [supported({ ...basic, "auth-realm": "Staff only" }, {
      "auth-basic-secret": "users",
      "auth-basic-realm": "Staff only",
    })],
    renders: ["+ haproxy.cfg: http-request auth realm 'Staff only' unless { http_auth(ul_shop_users) }"],
    traffic: async (ask) => assert.equal((await ask("/")).headers["www-authenticate"], 'Basic realm="Staff only"'),
  },
  "auth-url": {
    variants: [translated({ "auth-url": AUTH_URL }, { "auth-url": AUTH_URL })],
    renders: [
      "+ haproxy.cfg: http-request lua.ic_auth_request 'http://10.255.255.81:4180/oauth2/auth' '4180' '-' '-' '-'",
    ],
    traffic: async (ask) => {
      assert.equal((await ask("/")).status, 401);
      const ok = await ask("/", { args: ["-H", "Cookie: session=ok"] });
      assert.deepEqual([ok.status, ok.backend], [200, "web"]);
    },
  },
  "auth-signin": {
    variants: [
      translated({ "auth-url": AUTH_URL, "auth-signin": "https://$host/oauth2/start?rd=$escaped_request_uri" }, {
        "auth-url": AUTH_URL,
        "auth-signin": "/oauth2/start",
      }),
    ],
    renders: [
      "+ haproxy.cfg: http-request lua.ic_auth_request 'http://10.255.255.81:4180/oauth2/auth' '4180' '/oauth2/start' '-' '-'",
    ],
    traffic: async (ask, host) => {
      const r = await ask("/graph?q=up");
      assert.deepEqual([r.status, r.headers.location], [302, `/oauth2/start?rd=http://${host}/graph%3Fq%3Dup`]);
    },
  },
  "auth-response-headers": {
    variants: [
      supported({ "auth-url": AUTH_URL, "auth-response-headers": "X-Auth-Request-User" }, {
        "auth-url": AUTH_URL,
        "auth-response-headers": "X-Auth-Request-User",
      }),
    ],
    renders: [
      "+ haproxy.cfg: http-request lua.ic_auth_request 'http://10.255.255.81:4180/oauth2/auth' '4180' '-' 'X-Auth-Request-User' '-'",
    ],
    traffic: async (ask) => {
      const r = await ask("/", { args: ["-H", "Cookie: session=ok", "-H", "X-Auth-Request-User: mallory"] });
      assert.deepEqual([r.backend, r.received["x-auth-request-user"]], ["web", "alice"]);
      // as ingress-nginx's e2e "should overwrite Foo header with auth response": the client's own value
      // never reaches the backend, even when the auth answer has no such header
      const none = await ask("/", {
        args: ["-H", "Cookie: session=ok-anonymous", "-H", "X-Auth-Request-User: mallory"],
      });
      assert.deepEqual([none.status, none.backend, none.received["x-auth-request-user"]], [200, "web", undefined]);
    },
  },
  // client certificates
  "auth-tls-secret": {
    tls: true,
    variants: [
      translated(clientCa, { "client-cert-ca-secret": "client-ca" }),
      supported({ "auth-tls-secret": "client-ca", "auth-tls-verify-client": "off" }, {}),
    ],
    renders: [
      "+ crt-list: shop_site-tls.pem [ca-file shop_client-ca_ca.pem verify required] auth-tls-secret.nginx.test",
    ],
    traffic: async (ask, _host, pki) => {
      assert.ok((await ask("/", { https: true })).failed, "no client certificate: the handshake is refused");
      const ok = await ask("/", { https: true, args: pki.clientCertArgs });
      assert.deepEqual([ok.status, ok.backend], [200, "web"]);
    },
  },
  "auth-tls-verify-client": {
    tls: true,
    variants: [
      translated({ ...clientCa, "auth-tls-verify-client": "optional" }, {
        "client-cert-ca-secret": "client-ca",
        "client-cert-verify": "optional",
      }),
      translated({ ...clientCa, "auth-tls-verify-client": "on" }, {
        "client-cert-ca-secret": "client-ca",
        "client-cert-verify": "required",
      }),
      supported({ ...clientCa, "auth-tls-verify-client": "off" }, {}),
      // an invalid value is ignored: the default, on (the certificate is required, never skipped)
      {
        nginx: { ...clientCa, "auth-tls-verify-client": "yes" },
        ours: { "client-cert-ca-secret": "client-ca" },
        verdict: "refused",
      },
      // not translated: no certificate is asked for, as with off
      { nginx: { ...clientCa, "auth-tls-verify-client": "optional_no_ca" }, ours: {}, verdict: "unsupported" },
    ],
    renders: [
      "+ crt-list: shop_site-tls.pem [ca-file shop_client-ca_ca.pem verify optional] auth-tls-verify-client.nginx.test",
    ],
    traffic: async (ask, _host, pki) => {
      assert.equal((await ask("/", { https: true })).backend, "web", "optional: no certificate is let through");
      assert.equal((await ask("/", { https: true, args: pki.clientCertArgs })).backend, "web");
      // a certificate of another CA: the handshake is refused (ingress-nginx answers 400; the note says so)
      const stranger = await ask("/", { https: true, args: pki.strangerCertArgs });
      assert.deepEqual([stranger.status, !!stranger.failed], [0, true]);
    },
  },
  "auth-tls-pass-certificate-to-upstream": {
    tls: true,
    variants: [
      translated({ ...clientCa, "auth-tls-pass-certificate-to-upstream": "true" }, {
        "client-cert-ca-secret": "client-ca",
        "client-cert-header": "ssl-client-cert",
      }),
      supported({ ...clientCa, "auth-tls-pass-certificate-to-upstream": "false" }, {
        "client-cert-ca-secret": "client-ca",
      }),
    ],
    renders: [
      "+ haproxy.cfg: http-request set-header ssl-client-cert %[ssl_c_der,base64] if ic_cert_sni ic_cert_used ic_cert_valid",
    ],
    traffic: async (ask, _host, pki) => {
      const r = await ask("/", { https: true, args: pki.clientCertArgs });
      assert.equal(r.received["ssl-client-cert"], pki.clientCertDer, "base64 DER");
    },
  },
  // canary
  "canary": {
    canary: true,
    variants: [supported({ canary: "true", "canary-by-header": "X-Canary" }, {
      canary: "true",
      "canary-header": "X-Canary",
    })],
    renders: [
      "+ haproxy.cfg: use_backend be_shop_canary_80 if",
      "+ haproxy.cfg: { req.hdr(X-Canary) -m str 'always' }",
    ],
    more: { alone: { canary: "true", "canary-by-header": "X-Canary" } },
    moreProblems: [
      "spec.rules[0].http.paths[0]: no other Ingress of namespace shop routes this host and path; canary ignored",
    ],
    traffic: async (ask, host) => {
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "X-Canary: always"]), ["canary"]);
      assert.deepEqual(await backendsOf(ask, 4), ["web"]);
      // ingress-nginx's e2e "should return 404 status for requests to the canary if no matching ingress is
      // found": a canary without a main Ingress serves nothing
      const alone = await ask("/", { host: `alone.${host}`, args: ["-H", "X-Canary: always"] });
      assert.deepEqual([alone.status, alone.backend], [404, null]);
    },
  },
  "canary-by-header": {
    canary: true,
    variants: [supported({ canary: "true", "canary-by-header": "X-Beta" }, {
      canary: "true",
      "canary-header": "X-Beta",
    })],
    renders: ["+ haproxy.cfg: { req.hdr(X-Beta) -m str 'always' }"],
    traffic: async (ask) => {
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "X-Beta: always"]), ["canary"]);
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "X-Beta: never"]), ["web"]);
    },
  },
  "canary-by-header-value": {
    canary: true,
    variants: [supported({ canary: "true", "canary-by-header": "X-Beta", "canary-by-header-value": "yes-please" }, {
      canary: "true",
      "canary-header": "X-Beta",
      "canary-header-value": "yes-please",
    })],
    renders: [
      "+ haproxy.cfg: { req.hdr(X-Beta) -m str 'yes-please' }",
      "- haproxy.cfg: { req.hdr(X-Beta) -m str 'always' }",
    ],
    traffic: async (ask) => {
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "X-Beta: yes-please"]), ["canary"]);
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "X-Beta: always"]), ["web"]);
    },
  },
  "canary-by-cookie": {
    canary: true,
    variants: [supported({ canary: "true", "canary-by-cookie": "beta" }, { canary: "true", "canary-cookie": "beta" })],
    renders: ["+ haproxy.cfg: { req.cook(beta) -m str always }"],
    traffic: async (ask) => {
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "Cookie: beta=always"]), ["canary"]);
      assert.deepEqual(await backendsOf(ask, 4, ["-H", "Cookie: beta=never"]), ["web"]);
    },
  },
  "canary-weight": {
    canary: true,
    variants: [supported({ canary: "true", "canary-weight": "100" }, { canary: "true", "canary-weight": "100" })],
    renders: ["+ haproxy.cfg: { rand(100) lt 100 }"],
    traffic: async (ask) => assert.deepEqual(await backendsOf(ask, 8), ["canary"]),
  },
  "canary-weight-total": {
    canary: true,
    variants: [
      translated({ canary: "true", "canary-weight": "30", "canary-weight-total": "30" }, {
        canary: "true",
        "canary-weight": "100",
      }),
      supported({ canary: "true", "canary-weight": "30", "canary-weight-total": "100" }, {
        canary: "true",
        "canary-weight": "30",
      }),
      // an invalid total is ignored: ingress-nginx's default, 100
      {
        nginx: { canary: "true", "canary-weight": "30", "canary-weight-total": "ten" },
        ours: { canary: "true", "canary-weight": "30" },
        verdict: "refused",
      },
    ],
    renders: ["+ haproxy.cfg: { rand(100) lt 100 }", "- haproxy.cfg: { rand(100) lt 30 }"],
    traffic: async (ask) => assert.deepEqual(await backendsOf(ask, 8), ["canary"]),
  },
  // errors
  "default-backend": {
    path: { path: "/", pathType: "Prefix", service: "empty" },
    variants: [translated({ "default-backend": "fallback" }, { "default-backend": "fallback" })],
    renders: ["+ haproxy.cfg: use_backend be_shop_fallback_80 if", "+ haproxy.cfg: !{ nbsrv(be_shop_empty_80"],
    traffic: async (ask) => assert.deepEqual(statusAndBackend(await ask("/")), [200, "fallback"]),
  },
  "custom-http-errors": {
    path: { path: "/", pathType: "Prefix", service: "scripted" },
    variants: [translated({ "default-backend": "fallback", "custom-http-errors": "404,503" }, {
      "default-backend": "fallback",
      "error-codes": "404,503",
    })],
    renders: [
      "+ haproxy.cfg: http-response lua.ic_error_page 'be_shop_fallback_80' '404,503' 'shop' 'case-custom-http-errors' 'scripted' '80'",
    ],
    traffic: async (ask) => {
      const page = await ask("/?status=404");
      assert.deepEqual([page.backend, page.received["x-code"]], ["fallback", "404"]);
      const kept = await ask("/?status=500");
      assert.deepEqual([kept.status, kept.backend], [500, "scripted"]);
    },
  },
};

/** The certificates of the cases' world. */
export interface Pki {
  /** The proxy's certificate for `*.nginx.test` and its CA. */
  site: { certPem: string; keyPem: string };
  siteCa: string;
  /** The TLS backend's certificate (for `tls-backend.shop.svc` and ssl-passthrough's host) and its CA. */
  backend: { certPem: string; keyPem: string };
  backendCa: string;
  /** The client certificates' CA, and curl's arguments presenting a client certificate it signed. */
  clientCa: string;
  clientCertArgs: string[];
  /** curl's arguments presenting a client certificate of another CA. */
  strangerCertArgs: string[];
  /** That client certificate as base64 DER. */
  clientCertDer: string;
  /** An htpasswd line for {@link USER} (bcrypt). */
  htpasswd: string;
}

/** The certificates, with the client certificate's files written to `dir`. */
export async function makePki(dir: string): Promise<Pki> {
  const siteCa = await createCA({ commonName: "nginx cases site CA" });
  const backendCa = await createCA({ commonName: "nginx cases backend CA" });
  const clientCa = await createCA({ commonName: "nginx cases client CA" });
  const site = await issueCertificate(siteCa, {
    commonName: "nginx.test",
    dnsNames: ["nginx.test", "*.nginx.test"],
    usages: ["serverAuth"],
  });
  const backend = await issueCertificate(backendCa, {
    commonName: "tls-backend.shop.svc",
    dnsNames: ["tls-backend.shop.svc", hostOf("ssl-passthrough")],
    usages: ["serverAuth"],
  });
  const client = await issueCertificate(clientCa, { commonName: "alice", usages: ["clientAuth"] });
  await Deno.writeTextFile(`${dir}/client.pem`, client.certPem);
  await Deno.writeTextFile(`${dir}/client.key`, client.keyPem);
  const stranger = await issueCertificate(backendCa, { commonName: "mallory", usages: ["clientAuth"] });
  await Deno.writeTextFile(`${dir}/stranger.pem`, stranger.certPem);
  await Deno.writeTextFile(`${dir}/stranger.key`, stranger.keyPem);
  const der = client.certPem.replace(/-----[A-Z ]+-----|\s/g, "");
  return {
    site,
    siteCa: siteCa.certPem,
    backend,
    backendCa: backendCa.certPem,
    clientCa: clientCa.certPem,
    clientCertArgs: ["--cert", `${dir}/client.pem`, "--key", `${dir}/client.key`],
    strangerCertArgs: ["--cert", `${dir}/stranger.pem`, "--key", `${dir}/stranger.key`],
    clientCertDer: der,
    htpasswd: `${USER.name}:${bcrypt.hashSync(USER.password, 5)}`,
  };
}

/** Where the world's servers listen on 127.0.0.1 (`clusterIp`: the Service `upstream`'s cluster IP port). */
export interface Ports {
  web: number;
  canary: number;
  fallback: number;
  /** Answers `?status=<code>` with that code and `?delay=<ms>` that late. */
  scripted: number;
  /** HTTPS, with {@link Pki.backend}. */
  tls: number;
  clusterIp: number;
}

export const RENDER_PORTS: Ports = {
  web: 8080,
  canary: 8081,
  fallback: 8082,
  scripted: 8083,
  tls: 8443,
  clusterIp: 9090,
};

/** The Ingresses of one case, for its nginx annotations (without the prefix) plus `more` (full names). */
export function caseIngresses(
  key: string,
  nginx: Record<string, string>,
  more: Record<string, string> = {},
): V1Ingress[] {
  const c = CASES[key];
  const host = hostOf(key);
  const p = c.path ?? { path: "/", pathType: "Prefix", service: c.canary ? "canary" : "web" };
  const annotations = {
    ...Object.fromEntries(Object.entries(nginx).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])),
    ...more,
  };
  const rule = { host, paths: [{ path: p.path, pathType: p.pathType, service: p.service, port: p.port ?? 80 }] };
  const tls = c.tls ? [{ hosts: [host], secretName: "site-tls" }] : undefined;
  const one = ingress({ namespace: NAMESPACE, name: `case-${key}`, annotations, rules: [rule], tls });
  if (!c.canary) return [one];
  const main = ingress({
    namespace: NAMESPACE,
    name: `main-${key}`,
    created: "2025-01-01T00:00:00Z",
    rules: [{ host, paths: [{ ...rule.paths[0], service: "web" }] }],
    tls,
  });
  return [main, one];
}

/** The case's {@link Case.more} Ingresses. */
export function moreIngresses(key: string): V1Ingress[] {
  return Object.entries(CASES[key].more ?? {}).flatMap(([name, nginx]) =>
    caseIngresses(key, nginx).slice(-1).map((ing) => {
      const host = `${name}.${hostOf(key)}`;
      return {
        ...ing,
        metadata: { ...ing.metadata, name: `${ing.metadata!.name}-${name}` },
        spec: { ...ing.spec, tls: undefined, rules: ing.spec!.rules!.map((r) => ({ ...r, host })) },
      };
    })
  );
}

/** The Services, EndpointSlices and Secrets every case may use. */
export function caseWorld(
  ports: Ports,
  pki: Pick<Pki, "site" | "backendCa" | "siteCa" | "clientCa" | "htpasswd">,
): { services: V1Service[]; endpointSlices: V1EndpointSlice[]; secrets: V1Secret[] } {
  /** A Service (its one port named http) whose one endpoint is 127.0.0.1:`target`, or without endpoints. */
  const one = (name: string, target: number | null, servicePort = 80, address = "127.0.0.1") => ({
    service: service(name, [{ name: "http", port: servicePort }], NAMESPACE),
    slice: target === null
      ? null
      : endpointSlice(name, [{ name: "http", port: target }], [{ address }], { namespace: NAMESPACE }),
  });
  const list = [
    one("web", ports.web),
    one("unreachable", 80, 80, UNREACHABLE_ADDRESS),
    one("canary", ports.canary),
    one("fallback", ports.fallback),
    one("scripted", ports.scripted),
    one("empty", null),
    one("tls-backend", ports.tls, 443),
    // service-upstream: what listens on the cluster IP, not the endpoint, answers
    one("upstream", ports.web, ports.clusterIp),
  ];
  const upstream = list[list.length - 1].service;
  upstream.spec!.clusterIP = "127.0.0.1";
  const secret = (name: string, data: Record<string, string>, type = "Opaque"): V1Secret => ({
    apiVersion: "v1",
    kind: "Secret",
    type,
    metadata: { namespace: NAMESPACE, name },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)])),
  });
  return {
    services: list.map((s) => s.service),
    endpointSlices: list.flatMap((s) => s.slice ? [s.slice] : []),
    secrets: [
      secret("site-tls", { "tls.crt": pki.site.certPem, "tls.key": pki.site.keyPem }, "kubernetes.io/tls"),
      secret("users", { auth: `${pki.htpasswd}\n` }),
      secret("client-ca", { "ca.crt": pki.clientCa }),
      secret("backend-ca", { "ca.crt": pki.backendCa }),
      secret("other-ca", { "ca.crt": pki.siteCa }),
    ],
  };
}
