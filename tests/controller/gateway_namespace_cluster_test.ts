/**
 * `--gateway-proxies-in-gateway-namespace` against the real kube-apiserver with the Gateway API's
 * CRDs: each Gateway's proxy objects in the Gateway's own namespace, named after it, found by the
 * Gateway API's label `gateway.networking.k8s.io/gateway-name` with the Gateway's infrastructure
 * labels and annotations (what the GatewayInfrastructure conformance test lists); the class claims
 * GatewayInfrastructure; a user's object of the proxy's name is left untouched and
 * reported on the Gateway; proxies made in the controller's namespace before move to the Gateway's.
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
  setDeploymentAvailable,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { installGatewayCrds } from "../../lib/dev/localenv/gateway_crds.ts";

const gwApi = "gateway.networking.k8s.io/v1";
const NAME_LABEL = "gateway.networking.k8s.io/gateway-name";

function gatewayObj(ns: string, name: string): KubeObject {
  return {
    apiVersion: gwApi,
    kind: "Gateway",
    metadata: { name, namespace: ns },
    spec: {
      gatewayClassName: "ours",
      listeners: [{ name: "http", port: 8080, protocol: "HTTP" }],
      infrastructure: { labels: { key2: "value2" }, annotations: { key1: "value1" } },
    },
  };
}

const condition = (o: KubeObject | null, type: string) =>
  (o?.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

Deno.test("Gateway proxies in their Gateways' namespaces, against a real API server", async (t) => {
  const cluster = await Cluster.start();
  try {
    const ops = await cluster.namespace("ops");
    const app = await cluster.namespace("app");
    await installGatewayCrds(cluster);
    await eventually("GatewayClass created", async () => {
      try {
        await cluster.apply(resources.gatewayClasses, {
          apiVersion: gwApi,
          kind: "GatewayClass",
          metadata: { name: "ours" },
          spec: { controllerName: GATEWAY_CONTROLLER_NAME },
        });
        return true;
      } catch {
        return false; // the CRD is not established yet
      }
    }, 30_000);
    const base = { controllerId: "gw", operatorNamespace: ops, rbac: true };

    await t.step("by default the proxy is in the controller's namespace", async () => {
      const ctl = await controller(cluster, base);
      try {
        await cluster.apply(resources.gateways, gatewayObj(app, "edge"));
        await eventually(
          "the proxy in the controller's namespace",
          () => cluster.get(resources.deployments, ops, gatewayProxyName(`${app}/edge`)),
          40_000,
        );
        await eventually("the class's features without GatewayInfrastructure", async () => {
          const cls = await cluster.get(resources.gatewayClasses, null, "ours");
          const names = (cls?.status?.supportedFeatures ?? []).map((f: { name: string }) => f.name);
          return JSON.stringify(names) === JSON.stringify([...gatewayFeatures(false)]);
        });
      } finally {
        await ctl.stop();
      }
    });

    const ctl = await controller(cluster, { ...base, gatewayProxiesInGatewayNamespace: true });
    try {
      await t.step("with the option the class claims GatewayInfrastructure", async () => {
        await eventually("the class's features", async () => {
          const cls = await cluster.get(resources.gatewayClasses, null, "ours");
          const names = (cls?.status?.supportedFeatures ?? []).map((f: { name: string }) => f.name);
          return names.includes("GatewayInfrastructure") &&
            JSON.stringify(names) === JSON.stringify([...gatewayFeatures(true)]);
        }, 40_000);
      });

      await t.step("the proxy moves to the Gateway's namespace, named after it; the old one goes", async () => {
        const deploy = await eventually(
          "the proxy Deployment in the Gateway's namespace",
          () => cluster.get(resources.deployments, app, "edge"),
          40_000,
        );
        assert.equal(deploy!.metadata.annotations?.["ingress-controller.io/gateway"], `${app}/edge`);
        const all = [
          [resources.configMaps, "edge"],
          [resources.services, "edge"],
          [resources.services, "edge-stats"],
          [resources.serviceAccounts, "edge"],
          [resources.roles, "edge"],
          [resources.roleBindings, "edge"],
          [resources.podDisruptionBudgets, "edge"],
        ] as const;
        await eventually("every object of the proxy in the Gateway's namespace", async () => {
          for (const [r, name] of all) if (!await cluster.get(r, app, name)) return false;
          return true;
        }, 40_000);
        assert.equal(deploy!.spec.template.spec.serviceAccountName, "edge");
        await eventually(
          "nothing of it left in the controller's namespace",
          async () =>
            (await cluster.list(resources.deployments, ops)).length === 0 &&
            (await cluster.list(resources.services, ops)).length === 0 &&
            (await cluster.list(resources.configMaps, ops, "app.kubernetes.io/managed-by=ingress-controller"))
                .length === 0,
          40_000,
        );
      });

      await t.step(
        "what the GatewayInfrastructure test lists carries the infrastructure labels and annotations",
        async () => {
          const selector = `${NAME_LABEL}=edge`;
          const accounts = await cluster.list(resources.serviceAccounts, app, selector);
          const services = await cluster.list(resources.services, app, selector);
          assert.deepEqual(accounts.map((o) => o.metadata.name), ["edge"]);
          // the public Service only: the stats Service is not the Gateway's entry point
          assert.deepEqual(services.map((o) => o.metadata.name), ["edge"]);
          for (const o of [...accounts, ...services]) {
            assert.equal(o.metadata.labels?.key2, "value2", String(o.kind));
            assert.equal(o.metadata.annotations?.key1, "value1", String(o.kind));
          }
          const deploy = await cluster.get(resources.deployments, app, "edge");
          assert.equal(deploy!.metadata.labels?.[NAME_LABEL], "edge");
          assert.equal(deploy!.spec.template.metadata.labels[NAME_LABEL], "edge");
          assert.equal(deploy!.spec.template.metadata.labels.key2, "value2");
          assert.equal(deploy!.spec.template.metadata.annotations.key1, "value1");
          await setDeploymentAvailable(cluster, app, "edge");
          // the EndpointSlice controller's slice for the proxy Service: Programmed waits for a ready endpoint
          // deno-lint-ignore no-explicit-any
          await cluster.apply(
            resources.endpointSlices,
            sliceObj(app, "edge", [{ address: "10.9.0.9", port: 8080 } as any]),
          );
          await eventually("the Gateway Programmed", async () => {
            const g = await cluster.get(resources.gateways, app, "edge");
            return condition(g, "Programmed")?.status === "True";
          });
        },
      );

      await t.step("a user's object of the proxy's name is left untouched, and the Gateway says so", async () => {
        await cluster.apply(resources.services, {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "taken", namespace: app, labels: { mine: "yes" } },
          spec: { selector: { app: "mine" }, ports: [{ port: 9999, targetPort: 9999 }] },
        });
        await cluster.apply(resources.gateways, gatewayObj(app, "taken"));
        const g = await eventually("the Gateway not Programmed, naming the conflict", async () => {
          const g = await cluster.get(resources.gateways, app, "taken");
          const p = condition(g, "Programmed");
          return p?.status === "False" && /not this controller's/.test(p.message) ? g : null;
        }, 40_000);
        assert.equal(condition(g, "Programmed").reason, "Invalid");
        await eventually(
          "an OwnershipConflict Warning on the Gateway",
          async () =>
            (await cluster.events(app, "taken")).some((e) =>
              e.reason === "OwnershipConflict" && e.type === "Warning" && e.message.includes(`Service ${app}/taken`)
            ),
        );
        const svc = await cluster.get(resources.services, app, "taken");
        assert.deepEqual(svc!.spec.ports.map((p: { port: number }) => p.port), [9999]);
        assert.equal(svc!.metadata.labels?.[NAME_LABEL], undefined);
        assert.equal(svc!.metadata.annotations?.["ingress-controller.io/gateway"], undefined);
      });

      await t.step("parametersRef: a ConfigMap of the Gateway's namespace; missing or wrong refuses it", async () => {
        const withParams = gatewayObj(app, "tuned");
        withParams.spec.infrastructure.parametersRef = { group: "", kind: "ConfigMap", name: "tuned-params" };
        await cluster.apply(resources.gateways, withParams);
        const accepted = (want: string, message: RegExp) =>
          eventually(`Accepted ${want} (${message})`, async () => {
            const g = await cluster.get(resources.gateways, app, "tuned");
            const a = condition(g, "Accepted");
            return a?.status === want && message.test(a.message) &&
                a.observedGeneration === g!.metadata.generation
              ? a
              : null;
          }, 40_000);
        const missing = await accepted(
          "False",
          new RegExp(`ConfigMap ${app}/tuned-params not found`),
        );
        assert.equal(missing.reason, "InvalidParameters");
        const params = (data: Record<string, string>) =>
          cluster.apply(resources.configMaps, {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "tuned-params", namespace: app },
            data,
          });
        await params({ "replicas": "2", "timeout-server": "7s" });
        await accepted("True", /./);
        const deploy = await eventually("the proxy with 2 replicas", async () => {
          const d = await cluster.get(resources.deployments, app, "tuned");
          return d?.spec?.replicas === 2 ? d : null;
        }, 40_000);
        assert.ok(deploy);
        await eventually("the timeout in its configuration", async () => {
          const cfg = Object.values((await cluster.get(resources.configMaps, app, "tuned"))?.data ?? {}).join("\n");
          return /timeout server\s+7s/.test(cfg);
        }, 40_000);
        await params({ "replicas": "2", "default-certificate": "ops/tls" });
        const bad = await accepted("False", /default-certificate/);
        assert.equal(bad.reason, "InvalidParameters");
        await eventually(
          "an InvalidParameters Warning on the Gateway",
          async () =>
            (await cluster.events(app, "tuned")).some((e) =>
              e.reason === "InvalidParameters" && e.message.includes("default-certificate")
            ),
        );
      });

      await t.step("a Gateway deleted: its objects in its namespace go", async () => {
        await cluster.remove(resources.gateways, app, "edge");
        await eventually(
          "the proxy of the deleted Gateway removed",
          async () =>
            await cluster.get(resources.deployments, app, "edge") === null &&
            await cluster.get(resources.services, app, "edge") === null &&
            await cluster.get(resources.serviceAccounts, app, "edge") === null,
          40_000,
        );
        assert.ok(await cluster.get(resources.services, app, "taken"), "the user's Service stays");
      });
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});
