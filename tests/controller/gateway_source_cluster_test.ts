/**
 * The Gateway API route source against the real kube-apiserver with the Gateway API's own CRDs
 * (v1.6.3, standard channel; no traffic: that is tests/gateway/*_traffic_test.ts and the
 * conformance suite): waiting for the CRDs, the GatewayClass's status, one proxy per Gateway in
 * the controller's namespace with the listener ports, the Gateway's and the routes' status (other
 * controllers' entries kept, one route on two Gateways, a GRPCRoute's own), a BackendTLSPolicy's
 * ancestors and its CA ConfigMap, and a Gateway's removal.
 */
import assert from "node:assert/strict";
import { gatewayProxyName } from "../../lib/controller/objects.ts";
import { GATEWAY_CONTROLLER_NAME } from "../../lib/gateway/model_types.ts";
import { gatewayFeatures } from "../../lib/gateway/features.ts";
import {
  Cluster,
  controller,
  eventually,
  resources,
  serviceObj,
  setDeploymentAvailable,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { installGatewayCrds } from "../../lib/dev/localenv/gateway_crds.ts";
import { createCA } from "../../lib/pki/certs.ts";
import type { Condition } from "../../lib/gateway/api.ts";

const gwApi = "gateway.networking.k8s.io/v1";

function gatewayObj(ns: string, name: string, cls: string, listeners: unknown[]): KubeObject {
  return {
    apiVersion: gwApi,
    kind: "Gateway",
    metadata: { name, namespace: ns },
    spec: { gatewayClassName: cls, listeners },
  };
}

function routeObj(ns: string, name: string, parents: unknown[], backend: string): KubeObject {
  return {
    apiVersion: gwApi,
    kind: "HTTPRoute",
    metadata: { name, namespace: ns },
    spec: {
      parentRefs: parents,
      hostnames: ["app.example"],
      rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: backend, port: 80 }] }],
    },
  };
}

const condition = (o: KubeObject | null, type: string) =>
  (o?.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

Deno.test("Gateway API source against a real API server", async (t) => {
  const cluster = await Cluster.start();
  try {
    const ops = await cluster.namespace("ops");
    const app = await cluster.namespace("app");
    await cluster.apply(resources.services, serviceObj(app, "web"));
    await cluster.apply(resources.endpointSlices, sliceObj(app, "web", [{ address: "10.9.0.1", port: 8080 } as any]));
    const ctl = await controller(cluster, { controllerId: "gw", operatorNamespace: ops, validateProxyConfig: true });
    try {
      await t.step("without the CRDs the controller runs and serves no Gateway", async () => {
        await ctl.idle();
        assert.equal(await cluster.get(resources.configMaps, ops, gatewayProxyName(`${app}/edge`)), null);
      });

      await t.step("once the CRDs are installed, our GatewayClass is Accepted with its features", async () => {
        await installGatewayCrds(cluster);
        for (const [name, controllerName] of [["ours", GATEWAY_CONTROLLER_NAME], ["theirs", "example.com/other"]]) {
          await eventually(`GatewayClass ${name} created`, async () => {
            try {
              await cluster.apply(resources.gatewayClasses, {
                apiVersion: gwApi,
                kind: "GatewayClass",
                metadata: { name },
                spec: { controllerName },
              });
              return true;
            } catch {
              return false; // the CRD is not established yet
            }
          }, 30_000);
        }
        // Discovery is asked every 10 s until the API appears.
        const ours = await eventually("our class Accepted", async () => {
          const c = await cluster.get(resources.gatewayClasses, null, "ours");
          return condition(c, "Accepted")?.status === "True" ? c : null;
        }, 30_000);
        assert.equal(condition(ours, "Accepted").observedGeneration, ours!.metadata.generation);
        assert.deepEqual(ours!.status.supportedFeatures.map((f: { name: string }) => f.name), [
          ...gatewayFeatures(false),
        ]);
        const theirs = await cluster.get(resources.gatewayClasses, null, "theirs");
        assert.equal(
          condition(theirs, "Accepted")?.status ?? "Unknown",
          "Unknown",
          "another controller's class is left alone",
        );
      });

      const edgeProxy = gatewayProxyName(`${app}/edge`);
      await t.step(
        "a Gateway gets its own proxy in the controller's namespace, one Service port per listener port",
        async () => {
          const edge = gatewayObj(app, "edge", "ours", [{ name: "http", port: 80, protocol: "HTTP" }, {
            name: "alt",
            port: 8081,
            protocol: "HTTP",
          }]);
          edge.spec.infrastructure = { labels: { team: "payments" }, annotations: { "example.com/cost": "edge" } };
          await cluster.apply(resources.gateways, edge);
          await cluster.apply(
            resources.gateways,
            gatewayObj(app, "foreign", "theirs", [{ name: "http", port: 80, protocol: "HTTP" }]),
          );
          const svc = await eventually(
            "the Gateway's proxy Service",
            () => cluster.get(resources.services, ops, edgeProxy),
          );
          assert.deepEqual(
            svc!.spec.ports.map((p: { port: number }) => p.port),
            [80, 8081],
          );
          assert.equal(svc!.metadata.annotations?.["ingress-controller.io/gateway"], `${app}/edge`);
          // spec.infrastructure and the Gateway API's name label, on the Service and the Deployment's pods
          assert.equal(svc!.metadata.labels?.["gateway.networking.k8s.io/gateway-name"], "edge");
          assert.equal(svc!.metadata.labels?.team, "payments");
          assert.equal(svc!.metadata.annotations?.["example.com/cost"], "edge");
          const deploy = await cluster.get(resources.deployments, ops, edgeProxy);
          assert.equal(deploy!.spec.template.metadata.labels.team, "payments");
          assert.equal(deploy!.spec.template.metadata.annotations["example.com/cost"], "edge");
          const gw = await eventually("the Gateway Accepted, with its address, not yet Programmed", async () => {
            const g = await cluster.get(resources.gateways, app, "edge");
            return condition(g, "Accepted")?.status === "True" && g?.status?.addresses?.length ? g : null;
          });
          assert.equal(gw!.status.addresses[0].value, svc!.spec.clusterIP);
          assert.equal(condition(gw, "Programmed").status, "False", "no proxy pod is available yet");
          assert.deepEqual(gw!.status.listeners.map((l: { name: string }) => l.name), ["http", "alt"]);
          await setDeploymentAvailable(cluster, ops, edgeProxy);
          await eventually("still Pending while the proxy Service routes to no ready pod", async () => {
            const g = await cluster.get(resources.gateways, app, "edge");
            return /proxy Service to route/.test(condition(g, "Programmed")?.message ?? "");
          });
          assert.equal(condition(await cluster.get(resources.gateways, app, "edge"), "Programmed").status, "False");
          // the EndpointSlice controller's slice for the proxy Service, with the ready pod
          await cluster.apply(
            resources.endpointSlices,
            sliceObj(ops, edgeProxy, [{ address: "10.9.0.9", port: 8080 } as any]),
          );
          await eventually("Programmed once a proxy pod is available and its Service routes to it", async () => {
            const g = await cluster.get(resources.gateways, app, "edge");
            return condition(g, "Programmed")?.status === "True" &&
              condition(g, "Programmed").observedGeneration === g!.metadata.generation;
          });
          assert.equal(await cluster.get(resources.services, ops, gatewayProxyName(`${app}/foreign`)), null);
        },
      );

      await t.step(
        "a route on two Gateways gets an entry per Gateway, and another controller's entry is kept",
        async () => {
          await cluster.apply(
            resources.gateways,
            gatewayObj(app, "second", "ours", [{ name: "http", port: 80, protocol: "HTTP" }]),
          );
          await cluster.apply(
            resources.httpRoutes,
            routeObj(
              app,
              "shop",
              [{ name: "edge", sectionName: "http" }, { name: "second" }, { name: "foreign" }],
              "web",
            ),
          );
          // Another controller's entry for its own Gateway, written as it would.
          const route = await cluster.get(resources.httpRoutes, app, "shop");
          await cluster.client.request(
            "PUT",
            `/apis/gateway.networking.k8s.io/v1/namespaces/${app}/httproutes/shop/status`,
            {
              body: {
                ...route,
                status: {
                  parents: [{
                    parentRef: { name: "foreign" },
                    controllerName: "example.com/other",
                    conditions: [{
                      type: "Accepted",
                      status: "True",
                      reason: "Accepted",
                      message: "theirs",
                      lastTransitionTime: new Date().toISOString(),
                      observedGeneration: route!.metadata.generation,
                    }],
                  }],
                },
              },
            },
          );
          const parents = await eventually("entries for both of our Gateways", async () => {
            const r = await cluster.get(resources.httpRoutes, app, "shop");
            const ps = r?.status?.parents ?? [];
            return ps.length === 3 ? ps : null;
          });
          const ours = parents!.filter((p: { controllerName: string }) => p.controllerName === GATEWAY_CONTROLLER_NAME);
          assert.deepEqual(ours.map((p: { parentRef: { name: string } }) => p.parentRef.name).sort(), [
            "edge",
            "second",
          ]);
          for (const p of ours) {
            const accepted = p.conditions.find((c: { type: string }) => c.type === "Accepted");
            assert.equal(accepted.status, "True", JSON.stringify(p));
          }
          assert.ok(parents!.some((p: { controllerName: string }) => p.controllerName === "example.com/other"));
          const cfg = Object.values((await cluster.get(resources.configMaps, ops, edgeProxy))?.data ?? {}).join("\n");
          assert.ok(cfg.includes("app.example"), "the route's host is in the Gateway's configuration");
        },
      );

      await t.step(
        "a route naming a missing Service: ResolvedRefs False/BackendNotFound and a Warning on the route",
        async () => {
          await cluster.apply(resources.httpRoutes, routeObj(app, "broken", [{ name: "edge" }], "missing"));
          const parent = await eventually("the route's parent status", async () => {
            const r = await cluster.get(resources.httpRoutes, app, "broken");
            return (r?.status?.parents ?? []).find((p: { parentRef: { name: string } }) => p.parentRef.name === "edge");
          });
          const resolved = parent.conditions.find((c: { type: string }) => c.type === "ResolvedRefs");
          assert.equal(resolved.status, "False");
          assert.equal(resolved.reason, "BackendNotFound");
          assert.equal(parent.conditions.find((c: { type: string }) => c.type === "Accepted").status, "True");
          await eventually(
            "a BackendNotFound Warning on the route itself",
            async () =>
              (await cluster.events(app, "broken")).some((e) => e.reason === "BackendNotFound" && e.type === "Warning"),
          );
        },
      );

      await t.step(
        "a GRPCRoute named as an HTTPRoute: its own parent status on grpcroutes/status, its methods in the config",
        async () => {
          await cluster.apply(resources.grpcRoutes, {
            apiVersion: gwApi,
            kind: "GRPCRoute",
            metadata: { name: "shop", namespace: app },
            spec: {
              parentRefs: [{ name: "edge" }],
              hostnames: ["rpc.example"],
              rules: [
                {
                  matches: [{ method: { service: "shop.v1.Cart", method: "Add" } }],
                  backendRefs: [{ name: "web", port: 80 }],
                },
                { matches: [{ method: { service: "shop.v1.Stock" } }], backendRefs: [{ name: "missing", port: 80 }] },
              ],
            },
          });
          const parent = await eventually("the GRPCRoute's parent status", async () => {
            const r = await cluster.get(resources.grpcRoutes, app, "shop");
            return (r?.status?.parents ?? []).find((p: { parentRef: { name: string } }) => p.parentRef.name === "edge");
          });
          assert.equal(parent.controllerName, GATEWAY_CONTROLLER_NAME);
          assert.equal(parent.conditions.find((c: { type: string }) => c.type === "Accepted").status, "True");
          const resolved = parent.conditions.find((c: { type: string }) => c.type === "ResolvedRefs");
          assert.deepEqual([resolved.status, resolved.reason], ["False", "BackendNotFound"]);
          const cfg = await eventually("the GRPCRoute's method in the Gateway's configuration", async () => {
            const text = Object.values((await cluster.get(resources.configMaps, ops, edgeProxy))?.data ?? {}).join(
              "\n",
            );
            return text.includes("/shop.v1.Cart/Add") ? text : null;
          });
          assert.match(cfg!, /grpc-status 14/);
          // the HTTPRoute of the same name keeps its own status
          const httpRoute = await cluster.get(resources.httpRoutes, app, "shop");
          const edge = httpRoute!.status.parents.find((p: { parentRef: { name: string } }) =>
            p.parentRef.name === "edge"
          );
          assert.equal(edge.conditions.find((c: { type: string }) => c.type === "Accepted").status, "True");
          assert.equal(edge.conditions.find((c: { type: string }) => c.type === "ResolvedRefs").status, "True");
        },
      );

      await t.step(
        "a TLS Passthrough listener: a TLSRoute of the same name as an HTTPRoute gets its own status; passthrough.map routes its SNI",
        async () => {
          await cluster.apply(
            resources.gateways,
            gatewayObj(app, "tls", "ours", [{
              name: "tls",
              port: 443,
              protocol: "TLS",
              hostname: "*.tls.example",
              tls: { mode: "Passthrough" },
            }]),
          );
          await cluster.apply(resources.tlsRoutes, {
            apiVersion: gwApi,
            kind: "TLSRoute",
            metadata: { name: "shop", namespace: app },
            spec: {
              parentRefs: [{ name: "tls" }],
              hostnames: ["a.tls.example"],
              rules: [{ backendRefs: [{ name: "web", port: 80 }] }],
            },
          });
          const parent = await eventually("the TLSRoute's parent status", async () => {
            const r = await cluster.get(resources.tlsRoutes, app, "shop");
            return (r?.status?.parents ?? []).find((p: { parentRef: { name: string } }) => p.parentRef.name === "tls");
          });
          for (const type of ["Accepted", "ResolvedRefs"]) {
            assert.equal(parent.conditions.find((c: { type: string }) => c.type === type).status, "True", type);
          }
          const gw = await eventually("the listener's attached route", async () => {
            const g = await cluster.get(resources.gateways, app, "tls");
            return g?.status?.listeners?.[0]?.attachedRoutes === 1 ? g : null;
          });
          assert.deepEqual(gw!.status.listeners[0].supportedKinds, [{
            group: "gateway.networking.k8s.io",
            kind: "TLSRoute",
          }]);
          // the HTTPRoute of the same namespace/name keeps its own entries
          const http = await cluster.get(resources.httpRoutes, app, "shop");
          assert.ok(
            !(http?.status?.parents ?? []).some((p: { parentRef: { name: string } }) => p.parentRef.name === "tls"),
          );
          const proxy = gatewayProxyName(`${app}/tls`);
          const data = await eventually("the proxy's passthrough.map", async () => {
            const cm = (await cluster.get(resources.configMaps, ops, proxy))?.data ?? {};
            return Object.values(cm).some((v) => String(v).includes(`443:a.tls.example be_${app}_web_80_tcp`))
              ? cm
              : null;
          });
          assert.ok(Object.values(data!).some((v) => String(v).includes("frontend tls_443")));
        },
      );

      await t.step(
        "a BackendTLSPolicy on the route's Service: an ancestor entry per Gateway, its CA ConfigMap listed for the proxy",
        async () => {
          const ca = await createCA({ commonName: "web CA" });
          await cluster.apply(resources.configMaps, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "web-ca", namespace: app },
            data: { "ca.crt": ca.certPem },
          });
          await cluster.apply(resources.backendTlsPolicies, {
            apiVersion: gwApi,
            kind: "BackendTLSPolicy",
            metadata: { name: "web-tls", namespace: app },
            spec: {
              targetRefs: [{ group: "", kind: "Service", name: "web", sectionName: "http" }],
              validation: {
                caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "web-ca" }],
                hostname: "web.internal",
              },
            },
          });
          const ancestors = (p: KubeObject | null) =>
            Object.fromEntries(
              ((p?.status?.ancestors ?? []) as { ancestorRef: { name: string }; conditions: Condition[] }[])
                .map((
                  a,
                ) => [a.ancestorRef.name, a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`).join(",")]),
            );
          const policy = await eventually("the policy's ancestors: both Gateways", async () => {
            const p = await cluster.get(resources.backendTlsPolicies, app, "web-tls");
            return Object.keys(ancestors(p)).length === 2 ? p : null;
          });
          assert.deepEqual(ancestors(policy), {
            edge: "Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs",
            second: "Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs",
          });
          for (const a of policy!.status.ancestors) {
            assert.equal(a.controllerName, GATEWAY_CONTROLLER_NAME);
            for (const c of a.conditions) assert.equal(c.observedGeneration, policy!.metadata.generation);
          }
          const data = (await cluster.get(resources.configMaps, ops, edgeProxy))!.data;
          assert.ok(
            JSON.parse(data["secrets.json"]).some((e: { kind?: string; file?: string }) =>
              e.kind === "configmap-ca" && e.file === `${app}_web-ca_configmap_ca.pem`
            ),
          );
          assert.match(
            data["haproxy.cfg"],
            /ssl verify required ca-file \S+_web-ca_configmap_ca\.pem sni str\(web\.internal\)/,
          );

          // The CA ConfigMap gone: NoValidCACertificate / InvalidCACertificateRef, a Warning, requests answered 500.
          await cluster.remove(resources.configMaps, app, "web-ca");
          await eventually("the policy refused for its CA", async () => {
            const a = ancestors(await cluster.get(resources.backendTlsPolicies, app, "web-tls"));
            return a.edge === "Accepted=False/NoValidCACertificate,ResolvedRefs=False/InvalidCACertificateRef";
          });
          await eventually(
            "a NoValidCACertificate Warning on the policy",
            async () =>
              (await cluster.events(app, "web-tls")).some((e) =>
                e.reason === "NoValidCACertificate" && e.type === "Warning"
              ),
          );
          const after = (await cluster.get(resources.configMaps, ops, edgeProxy))!.data;
          assert.match(after["haproxy.cfg"], /http-request deny deny_status 500/);
        },
      );

      await t.step("a Gateway deleted: its proxy goes, and so does its entry in the routes' status", async () => {
        await cluster.remove(resources.gateways, app, "second");
        await eventually(
          "the proxy of the deleted Gateway removed",
          async () => await cluster.get(resources.services, ops, gatewayProxyName(`${app}/second`)) === null,
        );
        await eventually("its entry gone from the route", async () => {
          const r = await cluster.get(resources.httpRoutes, app, "shop");
          const names = (r?.status?.parents ?? []).map((p: { parentRef: { name: string } }) => p.parentRef.name).sort();
          return JSON.stringify(names) === JSON.stringify(["edge", "foreign"]);
        });
        await eventually("and from the BackendTLSPolicy's ancestors", async () => {
          const p = await cluster.get(resources.backendTlsPolicies, app, "web-tls");
          const names = (p?.status?.ancestors ?? []).map((a: { ancestorRef: { name: string } }) => a.ancestorRef.name);
          return JSON.stringify(names) === JSON.stringify(["edge"]);
        });
      });
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});
