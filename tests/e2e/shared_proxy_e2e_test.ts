/**
 * End to end, shared and dedicated proxies (docs/proxy-groups.md): the controller against the
 * real kube-apiserver, each proxy a real haproxy run by the proxy command, real traffic. Three
 * Ingresses in two namespaces served by one shared proxy, a dedicated one beside them, a route
 * conflict, a bad Secret, status addresses, and an ingress moved shared → dedicated → shared
 * under a bounded request loop that must not see one failed request. Runs inside a private network
 * namespace (lib/dev/localenv/netns.ts); outside one, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { dedicatedValue, proxyModeAnnotation, sharedProxyName } from "../../lib/controller/groups.ts";
import { CONTROLLER_NAME } from "../../lib/controller/class.ts";
import { proxyName } from "../../lib/controller/objects.ts";
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
  setDeploymentAvailable,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

const dedicated = { [proxyModeAnnotation]: dedicatedValue };

if (!inPrivateNetwork()) {
  Deno.test("shared proxy end-to-end tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the end-to-end tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("shared and dedicated proxies end to end", async (t) => {
    const cluster = await Cluster.start();
    const proxies: ProxyRun[] = [];
    const servers = await backends(["alpha", "beta", "gamma", "delta"], 30);
    const [alpha, beta, gamma, delta] = servers;
    try {
      const ops = await cluster.namespace("ops");
      const a = await cluster.namespace("team-a");
      const b = await cluster.namespace("team-b");
      for (
        const [ns, svc, be] of [[a, "svc-a", alpha], [a, "svc-b", beta], [b, "svc-c", gamma], [
          b,
          "svc-d",
          delta,
        ]] as const
      ) {
        await cluster.apply(resources.services, serviceObj(ns, svc));
        await cluster.apply(resources.endpointSlices, sliceObj(ns, svc, [be]));
      }
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "web" },
        spec: { controller: CONTROLLER_NAME },
      });
      const web = { className: "web" };
      await cluster.apply(resources.ingresses, ingressObj(a, "one", [{ host: "one.example", service: "svc-a" }], web));
      await cluster.apply(resources.ingresses, ingressObj(a, "two", [{ host: "two.example", service: "svc-b" }], web));
      await cluster.apply(
        resources.ingresses,
        ingressObj(b, "three", [{ host: "three.example", service: "svc-c" }], web),
      );
      const ctl = await controller(cluster, { operatorNamespace: ops, handoverGraceMs: 1500 });
      const shared = sharedProxyName("web");
      try {
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        const sharedProxy = await startProxy(cluster, ops, shared);
        proxies.push(sharedProxy);
        /** Proxy port by Service cluster IP: where a client following the ingress status goes. */
        const byAddress = new Map<string, ProxyRun>();
        const sharedSvc = await eventually("the shared Service", () => cluster.get(resources.services, ops, shared));
        byAddress.set(sharedSvc.spec.clusterIP, sharedProxy);
        const statusIp = async (ns: string, name: string): Promise<string | null> =>
          (await cluster.get(resources.ingresses, ns, name))?.status?.loadBalancer?.ingress?.[0]?.ip ?? null;

        await t.step(
          "three ingresses of two namespaces: one shared proxy routes each host to its backend",
          async () => {
            for (const [host, be] of [["one.example", "alpha"], ["two.example", "beta"], ["three.example", "gamma"]]) {
              await eventually(
                `${host} → ${be}`,
                async () => (await httpGet(sharedProxy.httpPort, host)).backend === be,
              );
            }
            await setDeploymentAvailable(cluster, ops, shared);
          },
        );

        await t.step(
          "a dedicated ingress beside them has its own proxy; the shared one does not route it",
          async () => {
            await cluster.apply(
              resources.ingresses,
              ingressObj(b, "own", [{ host: "own.example", service: "svc-d" }], { ...web, annotations: dedicated }),
            );
            await eventually("its ConfigMap", () => cluster.get(resources.configMaps, b, proxyName("own")));
            const own = await startProxy(cluster, b, proxyName("own"));
            proxies.push(own);
            await eventually(
              "own.example → delta",
              async () => (await httpGet(own.httpPort, "own.example")).backend === "delta",
            );
            assert.equal((await httpGet(sharedProxy.httpPort, "own.example")).status, 404);
            assert.equal((await httpGet(own.httpPort, "one.example")).status, 404);
          },
        );

        await t.step("status: every ingress shows the address of the Service serving it", async () => {
          const ownSvc = (await cluster.get(resources.services, b, proxyName("own")))!;
          for (
            const [ns, name, ip] of [
              [a, "one", sharedSvc.spec.clusterIP],
              [a, "two", sharedSvc.spec.clusterIP],
              [b, "three", sharedSvc.spec.clusterIP],
              [b, "own", ownSvc.spec.clusterIP],
            ]
          ) {
            await eventually(`status of ${ns}/${name}`, async () => (await statusIp(ns, name)) === ip);
          }
        });

        await t.step(
          "another namespace's rule on an owned host: the owner keeps it; the other gets an Event naming the owner",
          async () => {
            await cluster.apply(
              resources.ingresses,
              ingressObj(b, "late", [{ host: "one.example", service: "svc-c" }, {
                host: "late.example",
                service: "svc-c",
              }], web),
            );
            const ev = await eventually(
              "a HostAlreadyClaimed Event",
              async () => (await cluster.events(b, "late")).find((e) => e.reason === "HostAlreadyClaimed"),
            );
            assert.match(ev.message, new RegExp(`belongs to namespace ${a}`));
            await eventually(
              "late.example served",
              async () => (await httpGet(sharedProxy.httpPort, "late.example")).backend === "gamma",
            );
            for (let i = 0; i < 5; i++) {
              assert.equal((await httpGet(sharedProxy.httpPort, "one.example")).backend, "alpha");
            }
          },
        );

        await t.step("a bad Secret in one ingress leaves every other route serving", async () => {
          await cluster.apply(resources.secrets, {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "broken", namespace: b },
            type: "kubernetes.io/tls",
            stringData: { "tls.crt": "not a certificate", "tls.key": "not a key" },
          });
          await cluster.apply(
            resources.ingresses,
            ingressObj(b, "late", [{ host: "late.example", service: "svc-c" }], {
              ...web,
              tls: [{ hosts: ["late.example"], secretName: "broken" }],
            }),
          );
          await eventually(
            "an InvalidSecret Event on that ingress",
            async () => (await cluster.events(b, "late")).some((e) => e.reason === "InvalidSecret"),
          );
          await ctl.idle();
          for (
            const [host, be] of [["one.example", "alpha"], ["two.example", "beta"], ["three.example", "gamma"], [
              "late.example",
              "gamma",
            ]]
          ) {
            assert.equal((await httpGet(sharedProxy.httpPort, host)).backend, be, host);
          }
        });

        await t.step("shared → dedicated → shared under load: not one failed request", async () => {
          const failures: string[] = [];
          let requests = 0;
          let done = false;
          const addresses = new Set<string>();
          // A client that follows the ingress status, as DNS pointed at it would (bounded in count).
          const load = (async () => {
            while (!done && requests < 20_000) {
              requests++;
              const ip = await statusIp(a, "two");
              const proxy = ip ? byAddress.get(ip) : undefined;
              if (!proxy) {
                failures.push(`status ${ip} names no running proxy`);
                continue;
              }
              addresses.add(ip!);
              const r = await httpGet(proxy.httpPort, "two.example").catch((err) => ({
                status: 0,
                backend: String(err),
              }));
              if (r.backend !== "beta") failures.push(`${ip}: ${r.status} ${r.backend}`);
              // Paced, so the proxies and the controller keep their share of the machine.
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          })();
          try {
            await cluster.apply(
              resources.ingresses,
              ingressObj(a, "two", [{ host: "two.example", service: "svc-b" }], { ...web, annotations: dedicated }),
            );
            const name = proxyName("two");
            await eventually("the dedicated ConfigMap", () => cluster.get(resources.configMaps, a, name));
            const own = await startProxy(cluster, a, name, { followDeployment: true });
            proxies.push(own);
            const ownSvc = await eventually("the dedicated Service", () => cluster.get(resources.services, a, name));
            byAddress.set(ownSvc.spec.clusterIP, own);
            await eventually(
              "the dedicated proxy serves",
              async () => (await httpGet(own.httpPort, "two.example")).backend === "beta",
            );
            await setDeploymentAvailable(cluster, a, name);
            await eventually(
              "the shared proxy no longer routes two.example",
              async () => (await httpGet(sharedProxy.httpPort, "two.example")).status === 404,
            );
            assert.equal(await statusIp(a, "two"), (await cluster.get(resources.services, a, name))!.spec.clusterIP);
            // And back: the shared proxy (available) takes it again; the dedicated objects go.
            await cluster.apply(
              resources.ingresses,
              ingressObj(a, "two", [{ host: "two.example", service: "svc-b" }], web),
            );
            await eventually(
              "the status back on the shared Service",
              async () => (await statusIp(a, "two")) === sharedSvc.spec.clusterIP,
            );
            await eventually(
              "the dedicated Deployment removed",
              async () => (await cluster.get(resources.deployments, a, name)) === null,
            );
          } finally {
            done = true;
            await load;
          }
          assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${requests} requests failed`);
          assert.equal(addresses.size, 2, "the client followed the ingress to both proxies");
        });

        await t.step(
          "TLS Secrets of two namespaces, neither the proxy's own: each host gets its certificate by SNI",
          async () => {
            const ca = await createCA({ commonName: "shared e2e CA" });
            for (
              const [ns, name, host, svc] of [[a, "one", "one.example", "svc-a"], [
                b,
                "three",
                "three.example",
                "svc-c",
              ]]
            ) {
              const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
              await cluster.apply(resources.secrets, {
                apiVersion: "v1",
                kind: "Secret",
                metadata: { name: `${name}-tls`, namespace: ns },
                type: "kubernetes.io/tls",
                stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
              });
              await cluster.apply(
                resources.ingresses,
                ingressObj(ns, name, [{ host, service: svc }], {
                  ...web,
                  tls: [{ hosts: [host], secretName: `${name}-tls` }],
                }),
              );
            }
            for (const [host, be] of [["one.example", "alpha"], ["three.example", "gamma"]]) {
              await eventually(`https ${host} → ${be} with its own certificate`, async () => {
                const res = await httpsGet(sharedProxy.httpsPort, host).catch(() => null);
                return res?.backend === be && res.certCN === host;
              });
            }
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
