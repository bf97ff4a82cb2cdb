/**
 * Two tenants in one shared proxy, end to end: the real kube-apiserver, the real controller, a real
 * haproxy run by the proxy command, real traffic (docs/host-ownership.md). Tenant `bank` serves
 * login.bank.test; tenant `evil` (a namespace allowed to create Ingresses, Services and Secrets in
 * itself only) tries to take its traffic: a canary on its route (ours and the ingress-nginx form),
 * more paths on its host, a wildcard, host-less rules and a default backend, passthrough (also
 * through a wildcard), a certificate without hosts, HTTP→HTTPS redirects, and a dedicated proxy
 * past the administrator's risk limit. Every attempt fails closed for evil only, with a Warning
 * Event on evil's Ingress. Runs inside a private network namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  httpsGet,
  ingressClassObj,
  ingressObj,
  resources,
  serveBackends,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

const A = "ingress-controller.io/";
const N = "nginx.ingress.kubernetes.io/";

if (!inPrivateNetwork()) {
  Deno.test("tenant isolation of hosts (runs in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenant isolation of hosts in a shared proxy", async (t) => {
    const cluster = await Cluster.start();
    const servers = await backends(["bank", "evil"], 60);
    let proxy: ProxyRun | null = null;
    try {
      const ops = await cluster.namespace("ops");
      const bank = await cluster.namespace("bank");
      const evil = await cluster.namespace("evil");
      await serveBackends(cluster, [[bank, "web", servers[0]], [evil, "web", servers[1]]]);
      const ca = await createCA({ commonName: "tenancy CA" });
      const secret = async (ns: string, name: string, commonName: string, dnsNames: string[]) => {
        const leaf = await issueCertificate(ca, { commonName, dnsNames, usages: ["serverAuth"] });
        await cluster.apply(resources.secrets, {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name, namespace: ns },
          type: "kubernetes.io/tls",
          stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
        });
      };
      await secret(bank, "login-tls", "login.bank.test", ["login.bank.test"]);
      // A certificate evil may hold (any CA will issue one for a host it controls), naming bank's hosts too.
      await secret(evil, "grab-tls", "evil.test", ["evil.test", "*.bank.test", "login.bank.test", "plain.bank.test"]);
      await cluster.apply(resources.ingressClasses, ingressClassObj("web"));
      const web = { className: "web" };
      // bank's Ingresses come first: they are the older ones.
      await cluster.apply(
        resources.ingresses,
        ingressObj(bank, "login", [{ host: "login.bank.test", path: "/login", service: "web" }], {
          ...web,
          tls: [{ hosts: ["login.bank.test"], secretName: "login-tls" }],
        }),
      );
      await cluster.apply(
        resources.ingresses,
        ingressObj(bank, "plain", [{ host: "plain.bank.test", path: "/", service: "web" }], web),
      );
      // Creation times have a resolution of one second: evil's are younger.
      await new Promise((r) => setTimeout(r, 1100));
      const ctl = await controller(cluster, { operatorNamespace: ops });
      const shared = sharedProxyName("web");
      const events = async (name: string, reason: string) =>
        (await cluster.events(evil, name)).filter((e) => e.reason === reason && e.type === "Warning");
      const bankServes = async (what: string) => {
        for (let i = 0; i < 10; i++) {
          const login = await httpsGet(proxy!.httpsPort, "login.bank.test", "/login");
          assert.deepEqual([login.backend, login.certCN], ["bank", "login.bank.test"], `${what}: request ${i}`);
        }
      };
      let marks = 0;
      /** Applies `o`, then waits until the proxy serves a new host of evil's: everything before it is applied too. */
      const apply = async (o: KubeObject) => {
        await cluster.apply(resources.ingresses, o);
        const host = `mark-${++marks}.evil.test`;
        await cluster.apply(resources.ingresses, ingressObj(evil, "mark", [{ host, path: "/", service: "web" }], web));
        await eventually(
          `the proxy serves ${host}`,
          async () => (await httpGet(proxy!.httpPort, host, "/").catch(() => null))?.backend === "evil",
        );
      };
      try {
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        proxy = await startProxy(cluster, ops, shared);
        await eventually("bank's route over HTTPS", async () => {
          const r = await httpsGet(proxy!.httpsPort, "login.bank.test", "/login").catch(() => null);
          return r?.backend === "bank";
        });

        await t.step("a canary of another namespace on bank's route gets nothing, ours or the nginx form", async () => {
          await cluster.apply(resources.configMaps, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "ingress-controller", namespace: ops },
            data: { "nginx-compat": "true" },
          });
          await apply(
            ingressObj(evil, "canary", [{ host: "login.bank.test", path: "/login", service: "web" }], {
              ...web,
              annotations: { [`${A}canary`]: "true", [`${A}canary-weight`]: "100" },
            }),
          );
          await apply(
            ingressObj(evil, "nginx-canary", [{ host: "login.bank.test", path: "/login", service: "web" }], {
              ...web,
              annotations: { [`${N}canary`]: "true", [`${N}canary-by-header`]: "X-Evil", [`${N}canary-weight`]: "100" },
            }),
          );
          await eventually(
            "CanaryWithoutMain on evil's canaries",
            async () =>
              (await events("canary", "CanaryWithoutMain")).length > 0 &&
              (await events("nginx-canary", "CanaryWithoutMain")).length > 0,
          );
          await bankServes("with evil's canaries");
          const withHeader = await httpGet(proxy!.httpPort, "plain.bank.test", "/");
          assert.equal(withHeader.backend, "bank");
        });

        await t.step(
          "more paths on bank's host (Exact /, a longer prefix, ACME): not served, a Warning naming bank",
          async () => {
            await apply(
              ingressObj(evil, "takeover", [
                { host: "login.bank.test", path: "/", pathType: "Exact", service: "web" },
                { host: "login.bank.test", path: "/login/admin", service: "web" },
                { host: "login.bank.test", path: "/.well-known/acme-challenge/", service: "web" },
              ], web),
            );
            const ev = await eventually(
              "HostAlreadyClaimed",
              async () => (await events("takeover", "HostAlreadyClaimed"))[0],
            );
            assert.match(ev.message, /host login\.bank\.test belongs to namespace bank/);
            assert.equal((await httpGet(proxy!.httpPort, "login.bank.test", "/")).status, 308, "bank's TLS redirect");
            for (const path of ["/", "/.well-known/acme-challenge/token"]) {
              assert.equal((await httpsGet(proxy!.httpsPort, "login.bank.test", path)).status, 404, path);
            }
            assert.equal((await httpsGet(proxy!.httpsPort, "login.bank.test", "/login/admin")).backend, "bank");
            // An Ingress that owns none of its hosts shows no address.
            const status = (await cluster.get(resources.ingresses, evil, "takeover"))?.status?.loadBalancer?.ingress;
            assert.ok(!status || status.length === 0, JSON.stringify(status));
            await eventually(
              "bank's Ingress shows the proxy's address",
              async () =>
                ((await cluster.get(resources.ingresses, bank, "login"))?.status?.loadBalancer?.ingress ?? []).length >
                  0,
            );
          },
        );

        await t.step(
          "a wildcard, host-less rules and a default backend never catch bank's unrouted paths",
          async () => {
            // (its wildcard also passes TLS connections through: bank's host under it must not go along)
            await apply(
              ingressObj(evil, "catchall", [
                { host: "*.bank.test", path: "/", service: "web" },
                { path: "/", service: "web" },
              ], { ...web, annotations: { [`${A}ssl-passthrough`]: "true" } }),
            );
            await eventually(
              "evil's wildcard serves a host no one owns",
              async () => (await httpGet(proxy!.httpPort, "other.bank.test", "/")).backend === "evil",
            );
            assert.equal(
              (await httpGet(proxy!.httpPort, "unknown.test", "/")).backend,
              "evil",
              "the catch-all is evil's",
            );
            assert.equal((await httpGet(proxy!.httpPort, "plain.bank.test", "/")).backend, "bank");
            assert.equal((await httpsGet(proxy!.httpsPort, "login.bank.test", "/other")).status, 404);
          },
        );

        await t.step(
          "passthrough: on bank's host refused; evil's wildcard passthrough leaves bank's TLS alone",
          async () => {
            await apply(
              ingressObj(evil, "pass", [{ host: "login.bank.test", path: "/", service: "web" }], {
                ...web,
                annotations: { [`${A}ssl-passthrough`]: "true" },
              }),
            );
            await eventually(
              "a Warning on evil/pass",
              async () => (await events("pass", "HostAlreadyClaimed")).length > 0,
            );
            await bankServes("with evil's passthrough");
          },
        );

        await t.step("a certificate without hosts serves only evil's own hosts, never as the default", async () => {
          await apply(
            ingressObj(evil, "certs", [{ host: "evil.test", path: "/", service: "web" }], {
              ...web,
              tls: [{ hosts: [], secretName: "grab-tls" }, { hosts: ["plain.bank.test"], secretName: "grab-tls" }],
            }),
          );
          await eventually("evil.test over HTTPS with evil's certificate", async () => {
            const r = await httpsGet(proxy!.httpsPort, "evil.test", "/").catch(() => null);
            return r?.backend === "evil" && r.certCN === "evil.test";
          });
          await bankServes("with evil's certificate without hosts");
          // plain.bank.test has no certificate of bank's: none is shown, neither evil's nor a default.
          await assert.rejects(httpsGet(proxy!.httpsPort, "plain.bank.test", "/"));
          await assert.rejects(httpsGet(proxy!.httpsPort, "nobody.test", "/"));
        });

        await t.step("redirects of another namespace do not reach bank's host", async () => {
          await apply(
            ingressObj(evil, "redirect", [{ host: "plain.bank.test", path: "/x", service: "web" }], {
              ...web,
              annotations: { [`${A}force-ssl-redirect`]: "true" },
            }),
          );
          await eventually(
            "a Warning on evil/redirect",
            async () => (await events("redirect", "HostAlreadyClaimed")).length > 0,
          );
          const r = await httpGet(proxy!.httpPort, "plain.bank.test", "/");
          assert.deepEqual([r.status, r.backend], [200, "bank"]);
        });

        await t.step(
          "annotation-risk-limit reaches the keys read outside backends: proxy: dedicated and redirects, ours and nginx's",
          async () => {
            await cluster.apply(resources.configMaps, {
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name: "ingress-controller", namespace: ops },
              data: { "nginx-compat": "true", "annotation-risk-limit": "medium" },
            });
            await apply(
              ingressObj(evil, "own", [{ host: "own.evil.test", path: "/", service: "web" }], {
                ...web,
                annotations: { [`${A}proxy`]: "dedicated", [`${A}force-ssl-redirect`]: "true" },
              }),
            );
            // The nginx forms of medium-risk keys are off as well: no redirect, no canary by header.
            await apply(
              ingressObj(evil, "nginx-own", [{ host: "nginx.evil.test", path: "/", service: "web" }], {
                ...web,
                annotations: { [`${N}force-ssl-redirect`]: "true" },
              }),
            );
            for (const host of ["own.evil.test", "nginx.evil.test"]) {
              const r = await httpGet(proxy!.httpPort, host, "/");
              assert.deepEqual([r.status, r.backend], [200, "evil"], `${host}: redirected past the risk limit`);
            }
            await eventually(
              "own.evil.test on the shared proxy",
              async () => (await httpGet(proxy!.httpPort, "own.evil.test", "/")).backend === "evil",
            );
            await eventually(
              "no dedicated proxy in evil's namespace",
              async () => (await cluster.get(resources.deployments, evil, proxyName("own"))) === null,
            );
            const ev = await eventually(
              "the proxy annotation reported disabled",
              async () =>
                (await cluster.events(evil, "own")).find((e) =>
                  /ingress-controller\.io\/proxy is disabled/.test(e.message)
                ),
            );
            assert.equal(ev.type, "Warning");
          },
        );

        await t.step("bank's own Ingresses still merge paths on its host", async () => {
          await apply(ingressObj(bank, "api", [{ host: "login.bank.test", path: "/api", service: "web" }], web));
          await eventually(
            "bank's second Ingress on its host",
            async () => (await httpsGet(proxy!.httpsPort, "login.bank.test", "/api/x")).backend === "bank",
          );
          await bankServes("at the end");
        });
      } finally {
        await ctl.stop();
      }
    } finally {
      await proxy?.stop();
      for (const s of servers) await s.close();
      await cluster.stop();
    }
  });
}
