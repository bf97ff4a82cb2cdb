/**
 * End to end: the controller against the real kube-apiserver, publishing to a real haproxy run by
 * the proxy command, with real traffic. Runs inside a private network namespace (see
 * lib/dev/localenv/netns.ts: the API server refuses loopback addresses in EndpointSlices); outside one,
 * the single test below re-runs this file inside one and reports its result.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { exporterPort, proxyName, statsServiceName } from "../../lib/controller/objects.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import {
  backends,
  Cluster,
  controller,
  dedicatedIngressObj as ingressObj,
  eventually,
  httpGet,
  httpsGet,
  resources,
  serviceObj,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { startProxy } from "../../lib/dev/localenv/proxy_run.ts";

if (!inPrivateNetwork()) {
  Deno.test("end-to-end tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the end-to-end tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("controller end to end", async (t) => {
    const cluster = await Cluster.start();
    try {
      await t.step(
        "ingress → routes by host and path; path change; endpoint scaling without reload; TLS by SNI; delete",
        async () => {
          const ns = await cluster.namespace("shop");
          const [alpha, beta] = await backends(["alpha", "beta"], 2);
          const extra = await backends(["alpha-2", "alpha-3"], 10);
          const ctl = await controller(cluster);
          try {
            await cluster.apply(resources.services, serviceObj(ns, "svc-a"));
            await cluster.apply(resources.services, serviceObj(ns, "svc-b"));
            await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc-a", [alpha]));
            await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc-b", [beta]));
            await cluster.apply(
              resources.ingresses,
              ingressObj(ns, "web", [
                { host: "shop.example", path: "/a", service: "svc-a" },
                { host: "shop.example", path: "/b", service: "svc-b" },
              ]),
            );
            const name = proxyName("web");
            const cm = await eventually("the ConfigMap", () => cluster.get(resources.configMaps, ns, name));
            assert.deepEqual(Object.keys(cm.data).sort(), [
              "crt-list",
              "haproxy.cfg",
              "owned-hosts.map",
              "passthrough.map",
              "redirect-hosts.map",
              "routes-exact.map",
              "routes-prefix.map",
              "routes-regex.map",
              "secrets.json",
            ]);
            for (const r of [resources.configMaps, resources.deployments, resources.services]) {
              const o = await eventually(`the ${r.kind}`, () => cluster.get(r, ns, name));
              assert.equal(o.metadata.ownerReferences?.[0]?.kind, "Ingress");
              assert.equal(o.metadata.ownerReferences?.[0]?.controller, true);
            }
            const svc = (await cluster.get(resources.services, ns, name))!;
            // The public Service carries traffic only; metrics are on the ClusterIP stats Service (HAProxy's
            // stats page on no Service: it listens on the pod's loopback).
            type Port = { name: string; port: number };
            assert.deepEqual(svc.spec.ports.map((p: Port) => [p.name, p.port]), [["http", 80], ["https", 443]]);
            const stats = await eventually(
              "the stats Service",
              () => cluster.get(resources.services, ns, statsServiceName("web")),
            );
            assert.equal(stats.spec.type, "ClusterIP");
            assert.deepEqual(stats.spec.ports.map((p: Port) => [p.name, p.port]), [["metrics", exporterPort]]);
            assert.equal(stats.metadata.ownerReferences?.[0]?.kind, "Ingress");
            assert.equal(stats.metadata.ownerReferences?.[0]?.controller, true);
            // It selects the proxy pods.
            const podLabels = (await cluster.get(resources.deployments, ns, name))!.spec.template.metadata.labels;
            for (const [k, v] of Object.entries(stats.spec.selector as Record<string, string>)) {
              assert.equal(podLabels[k], v, k);
            }
            await eventually("status.loadBalancer from the proxy Service", async () => {
              const ing = await cluster.get(resources.ingresses, ns, "web");
              return ing?.status?.loadBalancer?.ingress?.[0]?.ip === svc.spec.clusterIP;
            });

            const proxy = await startProxy(cluster, ns, name, { followDeployment: true });
            try {
              const a = await eventually("a route to alpha", async () => {
                const r = await httpGet(proxy.httpPort, "shop.example", "/a/x");
                return r.status === 200 && r;
              });
              assert.equal(a.backend, "alpha");
              assert.equal((await httpGet(proxy.httpPort, "shop.example", "/b")).backend, "beta");
              assert.equal((await httpGet(proxy.httpPort, "other.example", "/a")).status, 404);

              // Change a path: /a becomes /new.
              const appliedBeforePath = proxy.applied.length;
              await cluster.apply(
                resources.ingresses,
                ingressObj(ns, "web", [
                  { host: "shop.example", path: "/new", service: "svc-a" },
                  { host: "shop.example", path: "/b", service: "svc-b" },
                ]),
              );
              await eventually(
                "the new path",
                async () => (await httpGet(proxy.httpPort, "shop.example", "/new")).backend === "alpha",
              );
              assert.equal((await httpGet(proxy.httpPort, "shop.example", "/a")).status, 404);
              // A path change is a route-only change: the maps change through the Runtime API, no reload.
              await eventually(
                "the path change's runtime result",
                () =>
                  proxy.applied.slice(appliedBeforePath).some((r) => r.kind === "runtime" && (r.mapsChanged ?? 0) > 0),
              );
              const pathKinds = proxy.applied.slice(appliedBeforePath).map((r) => r.kind);
              assert.ok(!pathKinds.includes("reload"), `the path change did not reload haproxy: ${pathKinds}`);

              // Steady state: reconciling again (a Service annotation that nothing renders) writes nothing.
              await ctl.idle();
              const { writes, reconciles } = ctl.stats();
              const touched = serviceObj(ns, "svc-b");
              touched.metadata.annotations = { "test.example/touched": "1" };
              await cluster.apply(resources.services, touched);
              await eventually("the ingress reconciled again", () => ctl.stats().reconciles > reconciles);
              await ctl.idle();
              assert.equal(ctl.stats().writes, writes, "no writes in steady state");

              // Scale the EndpointSlice up: traffic spreads over the three backends.
              const appliedBefore = proxy.applied.length;
              await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc-a", [alpha, ...extra]));
              const seen = await eventually("traffic on all three endpoints", async () => {
                const names = new Set<string>();
                for (let i = 0; i < 30; i++) {
                  names.add((await httpGet(proxy.httpPort, "shop.example", "/new")).backend ?? "?");
                }
                return names.size === 3 && names;
              });
              assert.deepEqual([...seen].sort(), ["alpha", "alpha-2", "alpha-3"]);
              // Scale down to one.
              await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc-a", [extra[1]]));
              await eventually("only alpha-3 answers", async () => {
                for (let i = 0; i < 10; i++) {
                  if ((await httpGet(proxy.httpPort, "shop.example", "/new")).backend !== "alpha-3") return false;
                }
                return true;
              });
              const kinds = proxy.applied.slice(appliedBefore).map((r) => r.kind);
              assert.ok(kinds.includes("runtime"), `endpoint changes went through the Runtime API: ${kinds}`);
              assert.ok(!kinds.includes("reload"), `endpoint changes did not reload haproxy: ${kinds}`);

              // TLS: a kubernetes.io/tls Secret for shop.example.
              const ca = await createCA({ commonName: "e2e CA" });
              const leaf = await issueCertificate(ca, {
                commonName: "shop.example",
                dnsNames: ["shop.example"],
                usages: ["serverAuth"],
              });
              await cluster.apply(resources.secrets, {
                apiVersion: "v1",
                kind: "Secret",
                metadata: { name: "shop-tls", namespace: ns },
                type: "kubernetes.io/tls",
                stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
              });
              await cluster.apply(
                resources.ingresses,
                ingressObj(ns, "web", [
                  { host: "shop.example", path: "/new", service: "svc-a" },
                  { host: "shop.example", path: "/b", service: "svc-b" },
                ], { tls: [{ hosts: ["shop.example"], secretName: "shop-tls" }] }),
              );
              const secure = await eventually("HTTPS with the Secret's certificate", async () => {
                const r = await httpsGet(proxy.httpsPort, "shop.example", "/b");
                return r.status === 200 && r;
              });
              assert.equal(secure.certCN, "shop.example");
              assert.equal(secure.backend, "beta");

              // Delete the ingress: its objects go, and so does its route.
              await cluster.remove(resources.ingresses, ns, "web");
              for (const r of [resources.configMaps, resources.deployments, resources.services]) {
                await eventually(`${r.kind} removed`, async () => (await cluster.get(r, ns, name)) === null);
              }
              await eventually(
                "the stats Service removed",
                async () => (await cluster.get(resources.services, ns, statsServiceName("web"))) === null,
              );
              // The proxy stops with its Deployment (startProxy's followDeployment), so its ports
              // refuse connections; any other outcome (an answer from anything but beta, a reset, a
              // timeout) is a failure, not "gone". The route is asked over HTTPS: since the TLS step,
              // plain HTTP for shop.example only answers 308 (which would look like "not beta").
              const gone = await eventually(
                "the route gone with the proxy Deployment",
                () =>
                  httpsGet(proxy.httpsPort, "shop.example", "/b").then(
                    (r) => r.backend === "beta" ? false : `answered ${r.status} from ${r.backend}`,
                    (err: NodeJS.ErrnoException) =>
                      err.code === "ECONNREFUSED" ? "refused" : `${err.code}: ${err.message}`,
                  ),
              );
              assert.equal(gone, "refused");
            } finally {
              await proxy.stop();
            }
          } finally {
            await ctl.stop();
            for (const b of [alpha, beta, ...extra]) await b.close();
          }
        },
      );

      await t.step("class filter: only the chosen class is handled; a class change removes the proxy", async () => {
        const ns = await cluster.namespace("classes");
        const ctl = await controller(cluster, { ingressClass: "edge" });
        try {
          await cluster.apply(resources.services, serviceObj(ns, "svc"));
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "by-annotation", [{ service: "svc" }], {
              annotations: { "kubernetes.io/ingress.class": "edge" },
            }),
          );
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "by-field", [{ service: "svc" }], { className: "edge" }),
          );
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "other", [{ service: "svc" }], { className: "internal" }),
          );
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "other-annotation", [{ service: "svc" }], {
              annotations: { "kubernetes.io/ingress.class": "internal" },
            }),
          );
          await cluster.apply(resources.ingresses, ingressObj(ns, "no-class", [{ service: "svc" }]));
          await eventually(
            "ConfigMaps of the edge ingresses",
            async () =>
              (await cluster.get(resources.configMaps, ns, proxyName("by-annotation"))) &&
              (await cluster.get(resources.configMaps, ns, proxyName("by-field"))),
          );
          await ctl.idle();
          assert.equal(await cluster.get(resources.configMaps, ns, proxyName("other")), null);
          assert.equal(await cluster.get(resources.configMaps, ns, proxyName("other-annotation")), null);
          assert.equal(await cluster.get(resources.configMaps, ns, proxyName("no-class")), null);
          // by-field moves to another class: it loses its proxy.
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "by-field", [{ service: "svc" }], { className: "internal" }),
          );
          await eventually(
            "objects of the re-classed ingress removed",
            async () =>
              (await cluster.get(resources.configMaps, ns, proxyName("by-field"))) === null &&
              (await cluster.get(resources.deployments, ns, proxyName("by-field"))) === null,
          );
          assert.ok(await cluster.get(resources.configMaps, ns, proxyName("by-annotation")));
        } finally {
          await ctl.stop();
        }
      });

      await t.step("namespace restriction: only the operator's namespace is watched and handled", async () => {
        const ops = await cluster.namespace("ops");
        const other = await cluster.namespace("elsewhere");
        const ctl = await controller(cluster, {
          restrictToOperatorNamespace: true,
          operatorNamespace: ops,
          controllerId: "ops",
        });
        try {
          for (const ns of [ops, other]) {
            await cluster.apply(resources.services, serviceObj(ns, "svc"));
            await cluster.apply(resources.ingresses, ingressObj(ns, "site", [{ service: "svc" }]));
          }
          await eventually("the ops ingress handled", () => cluster.get(resources.configMaps, ops, proxyName("site")));
          await ctl.idle();
          assert.equal(await cluster.get(resources.configMaps, other, proxyName("site")), null);
          for (const name of Object.keys(ctl.stats().lists)) {
            assert.ok(name.endsWith("@ops"), `informer ${name} is limited to the operator namespace`);
          }
        } finally {
          await ctl.stop();
        }
      });

      await t.step("an invalid ingress gets an Event and does not block a valid one", async () => {
        const ns = await cluster.namespace("mixed");
        const [b] = await backends(["good"], 20);
        const ctl = await controller(cluster, {
          restrictToOperatorNamespace: true,
          operatorNamespace: ns,
          controllerId: "mixed",
        });
        try {
          await cluster.apply(resources.services, serviceObj(ns, "svc"));
          await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [b]));
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "bad", [{
              host: "bad.example",
              path: "/x'\"y #{}",
              pathType: "ImplementationSpecific",
              service: "svc",
            }]),
          );
          await cluster.apply(resources.ingresses, ingressObj(ns, "good", [{ host: "good.example", service: "svc" }]));
          const name = proxyName("good");
          await eventually("the valid ingress published", () => cluster.get(resources.configMaps, ns, name));
          const events = await eventually("a Warning Event on the invalid ingress", async () => {
            const ev = await cluster.events(ns, "bad");
            return ev.some((e) => e.type === "Warning") && ev;
          });
          assert.ok(events.length > 0);
          assert.equal(await cluster.get(resources.configMaps, ns, proxyName("bad")), null);
          const proxy = await startProxy(cluster, ns, name);
          try {
            await eventually(
              "the valid ingress serves",
              async () => (await httpGet(proxy.httpPort, "good.example")).backend === "good",
            );
          } finally {
            await proxy.stop();
          }
        } finally {
          await ctl.stop();
          await b.close();
        }
      });

      await t.step("a custom template replaces the built-in one", async () => {
        const ns = await cluster.namespace("custom");
        const dir = await Deno.makeTempDir({ prefix: "ic-e2e-templates-" });
        await Deno.writeTextFile(
          `${dir}/default_backend.eta`,
          'backend <%= it.builtinDefaultBackend %>\n    http-request return status 404 content-type text/plain string "custom default backend"\n',
        );
        const ctl = await controller(cluster, {
          customTemplates: `${dir}/*.eta`,
          restrictToOperatorNamespace: true,
          operatorNamespace: ns,
          controllerId: "custom",
        });
        try {
          await cluster.apply(resources.services, serviceObj(ns, "svc"));
          await cluster.apply(resources.ingresses, ingressObj(ns, "site", [{ host: "site.example", service: "svc" }]));
          const cm = await eventually("the ConfigMap", () => cluster.get(resources.configMaps, ns, proxyName("site")));
          assert.match(cm.data["haproxy.cfg"], /custom default backend/);
          const proxy = await startProxy(cluster, ns, proxyName("site"));
          try {
            const r = await eventually("the custom default backend answers", async () => {
              const a = await httpGet(proxy.httpPort, "unknown.example");
              return a.status === 404 && a;
            });
            assert.equal(r.body, "custom default backend");
          } finally {
            await proxy.stop();
          }
        } finally {
          await ctl.stop();
          await Deno.remove(dir, { recursive: true });
        }
      });

      await t.step("--qps limits the controller's request rate", async () => {
        const ns = await cluster.namespace("throttled");
        await cluster.apply(resources.services, serviceObj(ns, "svc"));
        for (let i = 0; i < 8; i++) {
          await cluster.apply(resources.ingresses, ingressObj(ns, `i${i}`, [{ service: "svc" }]));
        }
        const qps = 5;
        const ctl = await controller(cluster, {
          qps,
          burst: 1,
          restrictToOperatorNamespace: true,
          operatorNamespace: ns,
          controllerId: "throttled",
          validateProxyConfig: false,
        });
        try {
          await ctl.synced;
          const t0 = performance.now();
          const r0 = ctl.client.requestsSent;
          // 8 ingresses need 8 × 4 writes; wait for the first 10 requests of that work.
          await eventually("10 requests", () => ctl.client.requestsSent - r0 >= 10, 60_000);
          const elapsed = (performance.now() - t0) / 1000;
          const sent = ctl.client.requestsSent - r0;
          // With a bucket of 1 refilled at --qps, `sent` requests cannot have gone out in less than
          // (sent - 1) / qps seconds (a lower bound: a slow machine only makes `elapsed` longer).
          assert.ok(
            elapsed >= ((sent - 1) / qps) * 0.98,
            `${sent} requests in ${elapsed.toFixed(2)} s at --qps ${qps}`,
          );
          await eventually(
            "all ingresses handled eventually",
            async () =>
              (await cluster.list(resources.configMaps, ns, "app.kubernetes.io/managed-by=ingress-controller"))
                .length === 8,
            60_000,
          );
        } finally {
          await ctl.stop();
        }
      });
    } finally {
      await cluster.stop();
    }
  });
}
