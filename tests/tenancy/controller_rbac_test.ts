/**
 * Tenancy, the controller's own identity: whoever gets the controller's token must not be able to
 * run a Deployment in a tenant's namespace (as any of that namespace's ServiceAccounts), nor change
 * a tenant's Roles, nor grant themselves more. With the real kube-apiserver (RBAC on) and the Helm
 * chart's RBAC objects applied as `helm install` would, acting with a token of the chart's
 * ServiceAccount:
 * - in a tenant namespace, creating a Deployment, Service, ConfigMap, ServiceAccount or
 *   PodDisruptionBudget is refused (403), and so are changing or deleting a tenant's Role, binding
 *   a ClusterRole the controller does not hold, and creating a Role with rights it does not hold;
 *   in its own namespace a Deployment is allowed;
 * - the real controller run with that token serves two tenants from the shared proxy (a real
 *   haproxy): it writes the proxy's objects in its own namespace and, in tenant A's namespace, only
 *   the shared proxy's Secret-reading Role and RoleBinding; tenant B's `proxy: dedicated` Ingress
 *   is served by the shared proxy with a `DedicatedProxyDisabled` Warning, and nothing is written in
 *   tenant B's namespace; no reconcile fails;
 * - the chart with `dedicatedProxies.enabled=true` gives B's Ingress its proxy in B's namespace;
 *   back to the default, the Ingress returns to the shared proxy and the objects the controller may
 *   no longer delete are named in a `DedicatedProxyLeftBehind` Warning.
 * Runs inside a private network namespace (lib/dev/localenv/netns.ts); outside one, the single test
 * below re-runs this file there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { dedicatedValue, proxyModeAnnotation, sharedProxyName } from "../../lib/controller/groups.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import { reconciles } from "../../lib/controller/metrics.ts";
import { ClusterClient, isStatus } from "../../lib/cluster/client.ts";
import { apiVersionOf, collectionPath, objectPath } from "../../lib/cluster/resources.ts";
import { applyManifests, type ManifestObject, parseManifests } from "../../lib/dev/deploy/apply.ts";
import { NAMESPACE, renderChart } from "../../lib/dev/deploy/manifests.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  httpsGet,
  ingressObj,
  resources,
  serveBackends,
  serviceObj,
  setDeploymentAvailable,
  tlsSecretObj,
} from "../../lib/dev/localenv/harness.ts";
import { startProxy } from "../../lib/dev/localenv/proxy_run.ts";

const CLASS = "ingress-controller";
const MANAGED = "app.kubernetes.io/managed-by=ingress-controller";
/** What `helm install` creates that matters here: the identity, its RBAC, the settings and the class. */
const KINDS = [
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "ConfigMap",
  "IngressClass",
];

/** Applies the chart (rendered with `args`) as helm would, RBAC before the settings it goes with. */
async function installChart(cluster: Cluster, args: string[] = []): Promise<void> {
  const objs = parseManifests(await renderChart(args)).filter((o) => KINDS.includes(o.kind));
  const order = (o: ManifestObject) => KINDS.indexOf(o.kind);
  await applyManifests((p, init) => cluster.cp.adminFetch(p, init), objs.sort((x, y) => order(x) - order(y)));
}

/** Rejects unless the API server refused the request as forbidden. */
async function forbidden(what: string, request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (err) {
    assert.ok(isStatus(err, 403), `${what}: ${err}`);
    return;
  }
  assert.fail(`${what}: allowed`);
}

const failedReconciles = async () =>
  (await reconciles.get()).values.find((v) => v.labels.result === "failed")?.value ?? 0;

if (!inPrivateNetwork()) {
  Deno.test("tenancy: controller RBAC (runs in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenancy: the controller's identity writes proxy objects in its own namespace only", async (t) => {
    const cluster = await Cluster.start();
    const [alpha, beta] = await backends(["alpha", "beta"], 30);
    const dir = await Deno.makeTempDir({ prefix: "ic-tenancy-rbac-" });
    let as: ClusterClient | null = null;
    try {
      await cluster.namespace(NAMESPACE);
      const a = await cluster.namespace("tenant-a");
      const b = await cluster.namespace("tenant-b");
      await installChart(cluster);
      const token = await cluster.cp.mintToken({ namespace: NAMESPACE, serviceAccount: "ingress-controller" });
      const kubeconfig = await cluster.cp.writeKubeConfig(
        "ingress-controller",
        { token },
        join(dir, "controller.kubeconfig"),
      );
      as = await ClusterClient.create({ kubeconfig, qps: 0, burst: 1 });
      const client = as;

      await t.step("with the controller's token, nothing can be run or granted in a tenant's namespace", async () => {
        // Tenant B's own objects: a ServiceAccount that may do anything in B, and B's admin Role.
        await cluster.apply(resources.serviceAccounts, {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "deployer", namespace: b },
        });
        await cluster.apply(resources.roles, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "tenant-admin", namespace: b },
          rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
        });
        const post = (r: (typeof resources)[keyof typeof resources], ns: string, body: unknown, dryRun = false) =>
          client.request("POST", collectionPath(r, ns), { body, ...(dryRun ? { query: { dryRun: "All" } } : {}) });
        const deployment = (ns: string) => ({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "takeover", namespace: ns },
          spec: {
            selector: { matchLabels: { app: "takeover" } },
            template: {
              metadata: { labels: { app: "takeover" } },
              spec: { serviceAccountName: "deployer", containers: [{ name: "c", image: "busybox" }] },
            },
          },
        });
        const objectIn = (r: (typeof resources)[keyof typeof resources], extra: Record<string, unknown> = {}) =>
          [r, {
            apiVersion: apiVersionOf(r),
            kind: r.kind,
            metadata: { name: "takeover", namespace: b },
            ...extra,
          }] as const;
        for (
          const [r, body] of [
            [resources.deployments, deployment(b)] as const,
            [resources.services, serviceObj(b, "takeover")] as const,
            objectIn(resources.configMaps),
            objectIn(resources.serviceAccounts),
            objectIn(resources.podDisruptionBudgets, {
              spec: { maxUnavailable: 1, selector: { matchLabels: { app: "takeover" } } },
            }),
          ]
        ) await forbidden(`a ${r.kind} in ${b}`, post(r, b, body));
        await forbidden(
          "changing tenant-b's Role",
          client.request("PATCH", objectPath(resources.roles, b, "tenant-admin"), {
            body: { rules: [] },
            contentType: "application/merge-patch+json",
          }),
        );
        await forbidden(
          "deleting tenant-b's Role",
          client.request("DELETE", objectPath(resources.roles, b, "tenant-admin")),
        );
        await forbidden(
          // (cluster-admin: the test cluster has no controller-manager to fill aggregated ones like admin.)
          "binding the cluster-admin ClusterRole in tenant-b",
          post(resources.roleBindings, b, {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: "x", namespace: b },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "ServiceAccount", name: "ingress-controller", namespace: NAMESPACE }],
          }),
        );
        await forbidden(
          "a Role in tenant-b granting Deployments",
          post(resources.roles, b, {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: sharedProxyName(CLASS), namespace: b },
            rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["create"] }],
          }),
        );
        // Its own namespace is where the shared proxy lives.
        await post(resources.deployments, NAMESPACE, deployment(NAMESPACE), true);
      });

      // The tenants: A serves HTTPS with a Secret of its own; B asks for a proxy of its own.
      await serveBackends(cluster, [[a, "shop", alpha], [b, "blog", beta]]);
      await cluster.apply(resources.secrets, await tlsSecretObj(a, "shop-tls", "shop.example"));
      const cls = { className: CLASS };
      await cluster.apply(
        resources.ingresses,
        ingressObj(a, "shop", [{ host: "shop.example", service: "shop" }], {
          ...cls,
          tls: [{ hosts: ["shop.example"], secretName: "shop-tls" }],
        }),
      );
      await cluster.apply(
        resources.ingresses,
        ingressObj(b, "blog", [{ host: "blog.example", service: "blog" }], {
          ...cls,
          annotations: { [proxyModeAnnotation]: dedicatedValue },
        }),
      );

      const failedBefore = await failedReconciles();
      const ctl = await controller(cluster, {
        kubeconfig,
        operatorNamespace: NAMESPACE,
        ingressClass: CLASS,
        rbac: true,
        handoverGraceMs: 300,
      });
      const shared = sharedProxyName(CLASS);
      try {
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, NAMESPACE, shared));
        const proxy = await startProxy(cluster, NAMESPACE, shared);
        try {
          await t.step("the controller, as that identity, serves both tenants from the shared proxy", async () => {
            await eventually("tenant A over HTTPS", async () => {
              const r = await httpsGet(proxy.httpsPort, "shop.example");
              return r.status === 200 && r.backend === "alpha" && r.certCN === "shop.example";
            }, 60_000);
            await eventually("tenant B's dedicated Ingress on the shared proxy", async () => {
              const r = await httpGet(proxy.httpPort, "blog.example");
              return r.status === 200 && r.backend === "beta";
            });
            const events = await eventually("the Warning on B's Ingress", async () => {
              const evs = await cluster.events(b, "blog");
              return evs.some((e) => e.reason === "DedicatedProxyDisabled") && evs;
            });
            const warning = events.find((e) => e.reason === "DedicatedProxyDisabled")!;
            assert.equal(warning.type, "Warning");
            assert.match(warning.message, /dedicated proxies are turned off/);
            assert.match(warning.message, new RegExp(`shared proxy ${NAMESPACE}/${shared}`));
            // Its status is the shared proxy's address (ingresses/status is granted cluster-wide).
            const svc = (await cluster.get(resources.services, NAMESPACE, shared))!;
            await eventually("B's status", async () => {
              const ing = await cluster.get(resources.ingresses, b, "blog");
              return ing?.status?.loadBalancer?.ingress?.[0]?.ip === svc.spec.clusterIP;
            });
            await ctl.idle();
            // In A's namespace only the shared proxy's Role and RoleBinding for A's Secret; nothing in B's.
            const inA = await Promise.all(
              [resources.roles, resources.roleBindings, resources.deployments, resources.services, resources.configMaps]
                .map((r) => cluster.list(r, a, MANAGED)),
            );
            assert.deepEqual(inA.map((l) => l.map((o) => o.metadata.name)), [[shared], [shared], [], [], []]);
            assert.deepEqual(inA[0][0].rules, [
              { apiGroups: [""], resources: ["secrets"], resourceNames: ["shop-tls"], verbs: ["get", "list", "watch"] },
            ]);
            for (
              const r of [
                resources.deployments,
                resources.services,
                resources.configMaps,
                resources.serviceAccounts,
                resources.roles,
                resources.roleBindings,
                resources.podDisruptionBudgets,
              ]
            ) {
              assert.deepEqual(await cluster.list(r, b, MANAGED), [], `${r.plural} in ${b}`);
            }
            assert.equal(await cluster.get(resources.deployments, NAMESPACE, shared) !== null, true);
            // Everything it tried was allowed: no informer waits on a 403, no reconcile failed.
            assert.deepEqual(ctl.unsynced(), []);
            assert.equal(await failedReconciles(), failedBefore, "a reconcile failed (refused by the API server?)");
          });

          await t.step("dedicatedProxies.enabled gives B its proxy in B's namespace", async () => {
            await installChart(cluster, ["--set", "dedicatedProxies.enabled=true"]);
            const mine = proxyName("blog");
            await eventually("B's dedicated Deployment", () => cluster.get(resources.deployments, b, mine), 60_000);
            await setDeploymentAvailable(cluster, b, mine);
            await ctl.idle();
            assert.deepEqual(ctl.unsynced(), []);
          });

          await t.step(
            "back to the default: B returns to the shared proxy; what may not be deleted is named",
            async () => {
              await setDeploymentAvailable(cluster, NAMESPACE, shared);
              await installChart(cluster);
              const left = await eventually("the left-behind Warning on B's Ingress", async () => {
                const evs = await cluster.events(b, "blog");
                return evs.find((e) => e.reason === "DedicatedProxyLeftBehind");
              }, 60_000);
              assert.match(
                left.message,
                new RegExp(`former dedicated proxy ${b}/${proxyName("blog")}: delete its objects`),
              );
              assert.equal((await httpGet(proxy.httpPort, "blog.example")).backend, "beta");
              const svc = (await cluster.get(resources.services, NAMESPACE, shared))!;
              await eventually("B's status back on the shared proxy", async () => {
                const ing = await cluster.get(resources.ingresses, b, "blog");
                return ing?.status?.loadBalancer?.ingress?.[0]?.ip === svc.spec.clusterIP;
              });
            },
          );
        } finally {
          await proxy.stop();
        }
      } finally {
        await ctl.stop();
      }
    } finally {
      as?.close();
      for (const be of [alpha, beta]) await be.close();
      await cluster.stop();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
