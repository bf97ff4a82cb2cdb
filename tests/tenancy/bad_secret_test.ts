/**
 * Tenancy: one tenant's bad Secret hurts only its own Ingress. Two tenant namespaces share one
 * proxy (the real kube-apiserver, the real controller, a real haproxy run by the proxy command).
 * Tenant B gives its Ingress a TLS Secret whose key does not match its certificate, then a
 * `backend-ca-secret` whose `ca.crt` is armoured garbage, then a chain the controller's check
 * passes but HAProxy refuses (a 192-bit CA in it: the proxy's own check is the safety net). After
 * each, tenant A's route and endpoint changes are still served, B's Ingress gets a Warning Event
 * saying why (where the controller can tell), B's CA route fails closed (503), and a freshly
 * started proxy of the shared group becomes ready and serves A. Runs inside a private network
 * namespace (lib/dev/localenv/netns.ts); outside one, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
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
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { caSecretOf, GARBAGE_CERT, goodPair, mismatchedPair, tlsSecretOf, weakChainPair } from "../pki/materials.ts";

const A = "ingress-controller.io/";

if (!inPrivateNetwork()) {
  Deno.test("tenancy: a bad Secret (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenancy: a bad Secret of one tenant hurts only its own Ingress in the shared proxy", async (t) => {
    const cluster = await Cluster.start();
    const proxies: ProxyRun[] = [];
    const servers = await backends(["alpha", "beta", "gamma", "delta"], 40);
    const [alpha, beta, gamma, delta] = servers;
    try {
      const ops = await cluster.namespace("ops");
      const a = await cluster.namespace("tenant-a");
      const b = await cluster.namespace("tenant-b");
      await serveBackends(cluster, [[a, "web", alpha], [a, "api", delta], [b, "shop", gamma]]);
      await cluster.apply(resources.ingressClasses, ingressClassObj("web"));
      const aCert = await goodPair("a.example");
      await cluster.apply(resources.secrets, tlsSecretOf(a, "a-tls", aCert) as KubeObject);
      const aIngress = (paths: { path: string; service: string }[]) =>
        ingressObj(a, "site", paths.map((p) => ({ host: "a.example", ...p })), {
          className: "web",
          tls: [{ hosts: ["a.example"], secretName: "a-tls" }],
        });
      await cluster.apply(resources.ingresses, aIngress([{ path: "/", service: "web" }]));
      const bIngress = (opts: { tls?: boolean; annotations?: Record<string, string> } = {}) =>
        ingressObj(b, "shop", [{ host: "b.example", service: "shop" }], {
          className: "web",
          ...(opts.tls ? { tls: [{ hosts: ["b.example"], secretName: "b-tls" }] } : {}),
          annotations: opts.annotations ?? {},
        });
      await cluster.apply(resources.ingresses, bIngress());

      const ctl = await controller(cluster, { operatorNamespace: ops });
      const shared = sharedProxyName("web");
      try {
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        const proxy = await startProxy(cluster, ops, shared);
        proxies.push(proxy);
        /** A's host over HTTPS answers from `backend` with A's own certificate. */
        const aServed = async (p: ProxyRun, backend: string, path = "/") => {
          const res = await httpsGet(p.httpsPort, "a.example", path).catch(() => null);
          return res?.backend === backend && res.certCN === "a.example";
        };
        /** Tenant A moves its root to another endpoint and adds a route: both must be served. */
        let round = 0;
        const aChangesServed = async () => {
          round++;
          const [from, to] = round % 2 === 1 ? [alpha, beta] : [beta, alpha];
          await cluster.apply(resources.endpointSlices, sliceObj(a, "web", [to]));
          await cluster.apply(
            resources.ingresses,
            aIngress([{ path: "/", service: "web" }, { path: `/v${round}`, service: "api" }]),
          );
          await eventually(`A's endpoint change (${from.name} → ${to.name})`, () => aServed(proxy, to.name));
          await eventually(`A's new route /v${round}`, () => aServed(proxy, "delta", `/v${round}`));
        };
        /** A proxy of the shared group started now (a new pod) becomes ready and serves A. */
        const freshProxyServesA = async () => {
          const fresh = await startProxy(cluster, ops, shared, { probes: true });
          proxies.push(fresh);
          try {
            await eventually("the fresh proxy ready", async () => {
              const res = await fetch(`http://127.0.0.1:${fresh.healthPort}/readyz`);
              await res.body?.cancel();
              return res.status === 200;
            });
            const backend = round % 2 === 1 ? "beta" : "alpha";
            assert.ok(await aServed(fresh, backend), "the fresh proxy serves A with its certificate");
            assert.ok(await aServed(fresh, "delta", `/v${round}`));
            return fresh;
          } finally {
            await fresh.stop();
            proxies.splice(proxies.indexOf(fresh), 1);
          }
        };

        await t.step("both tenants are served", async () => {
          await eventually("A over HTTPS", () => aServed(proxy, "alpha"));
          await eventually("B over HTTP", async () => (await httpGet(proxy.httpPort, "b.example")).backend === "gamma");
        });

        await t.step(
          "B's TLS Secret whose key is not its certificate's: a Warning saying so; A still changes",
          async () => {
            await cluster.apply(
              resources.secrets,
              tlsSecretOf(b, "b-tls", await mismatchedPair("b.example")) as KubeObject,
            );
            await cluster.apply(resources.ingresses, bIngress({ tls: true }));
            await ctl.idle();
            await aChangesServed();
            const ev = await eventually(
              "an InvalidSecret Event on B's Ingress",
              async () => (await cluster.events(b, "shop")).find((e) => e.reason === "InvalidSecret"),
            );
            assert.equal(ev.type, "Warning");
            assert.match(ev.message, /Secret tenant-b\/b-tls is unusable: tls\.key does not match the certificate/);
            assert.equal((await httpGet(proxy.httpPort, "b.example")).backend, "gamma", "B's route itself stays");
            await freshProxyServesA();
          },
        );

        await t.step(
          "B's CA bundle of armoured garbage: a Warning saying so, B's backend fails closed, A still changes",
          async () => {
            const ca = (await goodPair("ca.example")).ca.certPem;
            await cluster.apply(resources.secrets, caSecretOf(b, "b-ca", ca + GARBAGE_CERT) as KubeObject);
            await cluster.apply(
              resources.ingresses,
              bIngress({ annotations: { [`${A}backend-protocol`]: "h1-tls", [`${A}backend-ca-secret`]: "b-ca" } }),
            );
            await ctl.idle();
            await aChangesServed();
            const ev = await eventually(
              "an InvalidSecret Event naming b-ca",
              async () =>
                (await cluster.events(b, "shop")).find((e) => e.reason === "InvalidSecret" && /b-ca/.test(e.message)),
            );
            assert.match(ev.message, /Secret tenant-b\/b-ca is unusable: certificate 2 of ca\.crt cannot be parsed/);
            await eventually(
              "B's backend fails closed",
              async () => (await httpGet(proxy.httpPort, "b.example")).status === 503,
            );
            await freshProxyServesA();
          },
        );

        await t.step(
          "B's chain the controller passes but HAProxy refuses: the proxy leaves it out; A still changes",
          async () => {
            await cluster.apply(resources.ingresses, bIngress({ tls: true }));
            await cluster.apply(
              resources.secrets,
              tlsSecretOf(b, "b-tls", await weakChainPair("b.example")) as KubeObject,
            );
            await ctl.idle();
            await aChangesServed();
            await eventually(
              "the proxy leaves b-tls out",
              () => proxy.leftOut.at(-1)?.some((r) => /^tenant-b\/b-tls: HAProxy refuses its file/.test(r)),
            );
            const fresh = await freshProxyServesA();
            assert.ok(fresh.leftOut.flat().some((r) => /^tenant-b\/b-tls: HAProxy refuses its file/.test(r)));
          },
        );
      } finally {
        await ctl.stop();
      }
    } finally {
      for (const p of proxies) await p.stop();
      for (const s of servers) await s.close();
      await cluster.stop();
    }
  });
}
