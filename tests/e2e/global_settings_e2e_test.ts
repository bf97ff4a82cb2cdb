/**
 * End to end, the controller's global ConfigMap, class parameters over it, access logs and the
 * ingress-nginx compatibility mode (README "Global settings", "Access logs", "Migrating from
 * ingress-nginx"): the controller against the real kube-apiserver, each shared proxy a real
 * haproxy run by the proxy command, real traffic. Runs inside a private network namespace
 * (lib/dev/localenv/netns.ts); outside one, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { CONTROLLER_NAME } from "../../lib/controller/class.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  httpsGet,
  ingressObj,
  resources,
  serviceObj,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { handshake } from "../serving/helpers.ts";

/** The global ConfigMap's documented name (written out: the test states the contract). */
const GLOBAL = "ingress-controller";
const NGINX = "nginx.ingress.kubernetes.io/";

if (!inPrivateNetwork()) {
  Deno.test("global settings end-to-end tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the end-to-end tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("global ConfigMap, class parameters, access logs and ingress-nginx compatibility end to end", async (t) => {
    const cluster = await Cluster.start();
    const proxies: ProxyRun[] = [];
    const [alpha] = await backends(["alpha"], 50);
    try {
      const ops = await cluster.namespace("ops");
      // The Ingresses live in the proxies' namespace: the proxy command reads Secrets of its own
      // namespace only (lib/proxy/command.ts), whatever docs/proxy-groups.md says of shared proxies.
      const app = ops;
      await cluster.apply(resources.services, serviceObj(app, "svc-a"));
      await cluster.apply(resources.endpointSlices, sliceObj(app, "svc-a", [alpha]));
      const ca = await createCA({ commonName: "globals CA" });
      const tlsSecret = async (ns: string, name: string, host: string) => {
        const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
        await cluster.apply(resources.secrets, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace: ns },
          type: "kubernetes.io/tls",
          stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
        });
      };
      const configMap = (name: string, data: Record<string, string>) =>
        cluster.apply(resources.configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name, namespace: ops },
          data,
        });
      await tlsSecret(ops, "default-cert", "default.example");
      await tlsSecret(app, "site-tls", "site.example");
      await tlsSecret(app, "legacy-tls", "legacy.example");
      await configMap(GLOBAL, {
        "max-connections": "321",
        "ssl-min-version": "TLSv1.3",
        "default-certificate": "default-cert",
        "access-log": "json",
        "timeout-server": "7s",
        "timeout-client": "soon",
      });
      await configMap("web-params", {
        "max-connections": "654",
        "ssl-min-version": "TLSv1.2",
        "access-log-sample": "10",
        "http2": "false",
      });
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "web" },
        spec: {
          controller: CONTROLLER_NAME,
          parameters: { kind: "ConfigMap", name: "web-params", namespace: ops, scope: "Namespace" },
        },
      });
      // An ingress-nginx class: this controller serves every class (no --ingress-class), so it serves this one too.
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "nginx" },
        spec: { controller: "k8s.io/ingress-nginx" },
      });
      await cluster.apply(
        resources.ingresses,
        ingressObj(app, "site", [{ host: "site.example", service: "svc-a" }], {
          className: "web",
          tls: [{ hosts: ["site.example"], secretName: "site-tls" }],
        }),
      );
      // As users write them for ingress-nginx.
      await cluster.apply(
        resources.ingresses,
        ingressObj(app, "legacy", [{ host: "legacy.example", service: "svc-a" }], {
          className: "nginx",
          tls: [{ hosts: ["legacy.example"], secretName: "legacy-tls" }],
          annotations: {
            [`${NGINX}ssl-redirect`]: "false",
            [`${NGINX}configuration-snippet`]: 'more_set_headers "X-Frame-Options: DENY";',
            [`${NGINX}mirror-target`]: "http://mirror.app.svc/$request_uri",
          },
        }),
      );
      const ctl = await controller(cluster, { operatorNamespace: ops });
      const webName = sharedProxyName("web"), nginxName = sharedProxyName("nginx");
      const webLines: string[] = [], nginxLines: string[] = [];
      try {
        const configOf = async (name: string) =>
          String((await cluster.get(resources.configMaps, ops, name))?.data?.["haproxy.cfg"] ?? "");
        await eventually(
          "both shared ConfigMaps",
          async () => (await configOf(webName)) && (await configOf(nginxName)),
        );
        const web = await startProxy(cluster, ops, webName, { accessLog: (l) => webLines.push(l) });
        proxies.push(web);
        const nginx = await startProxy(cluster, ops, nginxName, { accessLog: (l) => nginxLines.push(l) });
        proxies.push(nginx);
        await eventually(
          "site.example served",
          async () => (await httpsGet(web.httpsPort, "site.example")).status === 200,
        );
        await eventually(
          "legacy.example served",
          async () => (await httpGet(nginx.httpPort, "legacy.example")).status !== 503,
        );
        const metric = async (p: ProxyRun, name: string) => {
          const r = await fetch(`http://127.0.0.1:${p.statsPort}/metrics`);
          const m = new RegExp(`^${name} ([0-9.e+]+)$`, "m").exec(await r.text());
          return m ? Number(m[1]) : null;
        };

        await t.step("global values reach every proxy; the class's parameters override them", async () => {
          assert.equal(await metric(nginx, "haproxy_process_max_connections"), 321);
          assert.equal(await metric(web, "haproxy_process_max_connections"), 654);
          assert.match(await configOf(nginxName), /^\s+timeout server 7s$/m);
        });

        await t.step("the default certificate is served by SNI for a host without a certificate", async () => {
          assert.equal((await httpsGet(nginx.httpsPort, "unknown.example")).certCN, "default.example");
          assert.equal((await httpsGet(nginx.httpsPort, "legacy.example")).certCN, "legacy.example");
          assert.equal((await httpsGet(web.httpsPort, "other.example")).certCN, "default.example");
        });

        await t.step("ssl-min-version TLSv1.3 refuses TLS 1.2; the class set back to TLSv1.2 accepts it", async () => {
          await assert.rejects(
            handshake(nginx.httpsPort, "legacy.example", undefined, "TLSv1.2"),
            /alert|version|disconnected|ECONNRESET/i,
          );
          assert.equal((await handshake(nginx.httpsPort, "legacy.example", undefined, "TLSv1.3")).protocol, "TLSv1.3");
          assert.equal((await handshake(web.httpsPort, "site.example", undefined, "TLSv1.2")).protocol, "TLSv1.2");
        });

        await t.step("HTTP/2 by ALPN: on by default, off in the class that says so", async () => {
          assert.equal((await handshake(nginx.httpsPort, "legacy.example", ["h2", "http/1.1"])).alpn, "h2");
          assert.equal((await handshake(web.httpsPort, "site.example", ["h2", "http/1.1"])).alpn, "http/1.1");
        });

        await t.step("a bad key: a Warning Event on the ConfigMap, that key keeps its default", async () => {
          await eventually(
            "the Event",
            async () =>
              (await cluster.events(ops, GLOBAL)).some((e) =>
                e.type === "Warning" && e.reason === "InvalidSetting" && /timeout-client: "soon"/.test(e.message)
              ),
          );
          assert.match(await configOf(nginxName), /^\s+timeout client 60s$/m);
        });

        await t.step(
          "access logs: one parseable JSON line per request with the fields, none for the stats port",
          async () => {
            nginxLines.length = 0;
            for (let i = 0; i < 5; i++) {
              assert.equal((await httpsGet(nginx.httpsPort, "legacy.example", `/p${i}?q=1`)).status, 200);
            }
            await eventually("5 lines", () => nginxLines.length >= 5);
            assert.equal(nginxLines.length, 5);
            const entries = nginxLines.map((l) => JSON.parse(l));
            for (const [i, e] of entries.entries()) {
              assert.equal(e.method, "GET");
              assert.equal(e.host, "legacy.example");
              assert.equal(e.path, `/p${i}`);
              assert.equal(e.status, 200);
              assert.equal(e.client_ip, "127.0.0.1");
              assert.equal(e.tls, "TLSv1.3");
              assert.match(e.backend, /^be_ops_svc-a_80$/);
              assert.notEqual(e.server, "<NOSRV>");
              for (const f of ["tq", "tw", "tc", "tr", "ta", "bytes", "ts"]) assert.equal(typeof e[f], "number", f);
              assert.match(e.time, /^\d\d\/\w{3}\/\d{4}:/);
            }
            // Scrapes and the stats page are not traffic: no lines (a request after them, logged, as the marker).
            nginxLines.length = 0;
            for (const path of ["/metrics", "/"]) {
              assert.equal((await httpGet(nginx.statsPort, "stats", path)).status, 200);
            }
            assert.equal((await httpsGet(nginx.httpsPort, "legacy.example", "/after-stats")).status, 200);
            await eventually("the marker line", () => nginxLines.length >= 1);
            assert.deepEqual(nginxLines.map((l) => JSON.parse(l).path), ["/after-stats"]);
          },
        );

        await t.step("access-log-sample 10: 10 lines for 100 requests", async () => {
          webLines.length = 0;
          for (let i = 0; i < 100; i++) assert.equal((await httpGet(web.httpPort, "site.example", "/s")).status, 308);
          await eventually("about 10 lines", () => webLines.length >= 8);
          assert.ok(webLines.length >= 8 && webLines.length <= 12, `${webLines.length} lines for 100 requests`);
          for (const l of webLines) assert.equal(JSON.parse(l).status, 308);
        });

        await t.step("access-log off in the class: no lines", async () => {
          const applied = web.applied.length;
          await configMap("web-params", {
            "max-connections": "654",
            "ssl-min-version": "TLSv1.2",
            "http2": "false",
            "access-log": "off",
          });
          await eventually("the config without a log", async () => !/log-format/.test(await configOf(webName)));
          await eventually("the proxy applied it", () => web.applied.slice(applied).some((r) => r.kind === "reload"));
          webLines.length = 0;
          for (let i = 0; i < 20; i++) await httpGet(web.httpPort, "site.example", "/off");
          // A request on the other proxy, logged, as a marker that log lines had time to arrive.
          const before = nginxLines.length;
          await httpsGet(nginx.httpsPort, "legacy.example", "/marker");
          await eventually("the marker line", () => nginxLines.length > before);
          assert.deepEqual(webLines, []);
        });

        await t.step(
          "ingress-nginx compatibility: ssl-redirect false is served, unsupported keys get one Event",
          async () => {
            // The Ingress has TLS: without the translation, plain HTTP would be redirected (308).
            const plain = await httpGet(nginx.httpPort, "legacy.example", "/x");
            assert.equal(plain.status, 200);
            assert.equal(plain.backend, "alpha");
            const events = async () => (await cluster.events(app, "legacy")).filter((e) => /^Nginx/.test(e.reason));
            await eventually("the Events", async () => (await events()).length >= 2);
            // Every group is reconciled again after a global change; the Events are not repeated.
            await configMap(GLOBAL, {
              "max-connections": "322",
              "ssl-min-version": "TLSv1.3",
              "default-certificate": "default-cert",
              "access-log": "json",
              "timeout-server": "7s",
            });
            await eventually(
              "maxconn 322",
              async () => (await metric(nginx, "haproxy_process_max_connections")) === 322,
            );
            await ctl.idle();
            const list = await events();
            assert.equal(list.length, 2, JSON.stringify(list));
            const snippet = list.find((e) => e.message.startsWith(`${NGINX}configuration-snippet`));
            assert.equal(snippet?.reason, "NginxAnnotationRefused");
            assert.match(snippet!.message, /never executed.*use /);
            const mirror = list.find((e) => e.message.startsWith(`${NGINX}mirror-target`));
            assert.equal(mirror?.reason, "NginxAnnotationUnsupported");
          },
        );
      } finally {
        for (const p of proxies) await p.stop();
        await ctl.stop();
      }
    } finally {
      await alpha.close();
      await cluster.stop();
    }
  });
}
