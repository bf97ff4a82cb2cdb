/**
 * The chart installed into the real single-node cluster (lib/localnode) from the images built
 * here, as a platform engineer would (root only, like tests/dev/localnode/cluster_test.ts):
 * - `helm install` with the chart's defaults: the controller pod (non-root, read-only root
 *   filesystem, in-cluster service account) becomes Ready;
 * - an Ingress to a backend Deployment of 2 echo pods gets proxy pods (found by the labels
 *   app.kubernetes.io/managed-by=ingress-controller, app.kubernetes.io/name=haproxy, in any
 *   namespace) Running and Ready; requests through the proxy Service reach both backend pods
 *   (the time from `helm install` to that first answer is printed);
 * - TLS by SNI: two hosts, two Secrets, each host gets its own certificate;
 * - scaling the backend to 3 is followed without a reload (the proxy container's log shows no new
 *   start or reload of HAProxy; an Ingress change afterwards does reload it);
 * - HAProxy's stats page is not reachable on the proxy pod's address; the exporter sidecar's
 *   metrics are, and it reads the stats (haproxy_up 1);
 * - a killed proxy pod and a killed controller pod are recovered from: traffic is served again,
 *   and after the controller's restart a new Ingress change is served;
 * - after the ingresses are deleted, `helm uninstall` leaves nothing of ours: no object labelled
 *   app.kubernetes.io/managed-by=ingress-controller, no pods, no ClusterRole/Binding, IngressClass,
 *   kube-system RoleBinding;
 * - `deploy/manifests/` applied through the API (as kubectl apply would) runs a Ready controller.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImages } from "../../../lib/dev/images/build.ts";
import { type Cluster, startCluster } from "../../../lib/dev/localnode/mod.ts";
import { inside } from "../../../lib/dev/localnode/inside.ts";
import { eventually } from "../../../lib/dev/localenv/harness.ts";
import { applyManifests, parseManifests } from "../../../lib/dev/deploy/apply.ts";
import { chartDir, helm, NAMESPACE, RELEASE_NAME } from "../../../lib/dev/deploy/manifests.ts";
import {
  answering,
  api,
  CONTROLLER_LABELS,
  createEchoApp,
  echoIngress,
  pods,
  PROXY_LABELS,
  proxyService,
  readyPods,
} from "../../../lib/dev/deploy/in_cluster.ts";

const ignore = Deno.uid() !== 0; // containerd, runc and the kubelet need root
const APP_NS = "shop";

/**
 * A container's log as the kubelet wrote it under the cluster's directory (this cluster's API
 * server does not reach the kubelet's port, so `pods/log` is not served).
 */
async function containerLog(c: Cluster, ns: string, pod: string, container: string): Promise<string> {
  const root = join(c.dir, "pod-logs");
  for await (const e of Deno.readDir(root)) {
    if (!e.name.startsWith(`${ns}_${pod}_`)) continue;
    let text = "";
    for await (const f of Deno.readDir(join(root, e.name, container))) {
      text += await Deno.readTextFile(join(root, e.name, container, f.name));
    }
    return text;
  }
  throw new Error(`no log of ${ns}/${pod} under ${root}`);
}

/** How often the proxy pod started or reloaded HAProxy so far (the proxy command logs each apply). */
async function haproxyStarts(c: Cluster, pod: { metadata: { namespace?: string; name: string } }): Promise<number> {
  const log = await containerLog(c, pod.metadata.namespace!, pod.metadata.name, "haproxy");
  return log.split("\n").filter((l) => /proxy config applied kind="(start|reload)"/.test(l)).length;
}

const ingress = (name: string, hosts: string[], tls: { host: string; secret: string }[] = []) =>
  echoIngress(APP_NS, name, hosts, tls);

Deno.test(
  { name: "the chart installs a working controller into a real cluster and uninstalls cleanly", ignore },
  async (t) => {
    const dir = await Deno.makeTempDir({ prefix: "ic-install-" });
    // helm keeps its caches and release history out of the user's home.
    const helmEnv = {
      HELM_CACHE_HOME: join(dir, "helm/cache"),
      HELM_CONFIG_HOME: join(dir, "helm/config"),
      HELM_DATA_HOME: join(dir, "helm/data"),
    };
    let cluster: Cluster | null = null;
    try {
      const images = await buildImages(join(dir, "images"), () => {});
      cluster = await startCluster({ images: images.map((i) => i.archive) });
      const c = cluster;
      const kube = ["--kubeconfig", c.kubeconfig];

      // The application first: its backend, TLS Secrets and Ingress wait for a controller.
      const hosts = ["web.example", "a.example", "b.example"];
      const tls = [{ host: "a.example", secret: "a-tls" }, { host: "b.example", secret: "b-tls" }];
      const backends = await createEchoApp(c, APP_NS, "shop", hosts, { tls });

      const installed = performance.now();
      let firstRequestS = 0;
      await t.step("helm install: the controller pod becomes Ready", async () => {
        await helm(
          ["install", RELEASE_NAME, chartDir, "--namespace", NAMESPACE, "--create-namespace", ...kube],
          helmEnv,
        );
        await readyPods(c, CONTROLLER_LABELS, 1, { ns: NAMESPACE });
      });

      let svc: any;
      /** Adds a host to the Ingress and waits until the proxy answers for it. */
      const addHost = async (host: string) => {
        hosts.push(host);
        const path = `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`;
        await api(c, "PUT", path, { ...(await api(c, "GET", path)), spec: ingress("shop", hosts, tls).spec });
        await eventually(
          `answers for ${host}`,
          async () => (await answering(c, svc.spec.clusterIP, host, 1)).size === 1 || undefined,
          120_000,
        );
      };
      await t.step("the Ingress gets proxy pods Running and Ready; requests reach both backend pods", async () => {
        const seen = new Set<string>();
        svc = await eventually("the proxy Service", () => proxyService(c), 120_000);
        await eventually("answers from both echo pods through the proxy Service", async () => {
          for (const pod of await answering(c, svc.spec.clusterIP, "web.example", 8)) {
            if (seen.size === 0) firstRequestS = (performance.now() - installed) / 1000;
            seen.add(pod);
          }
          return seen.size === 2 || undefined;
        }, 240_000);
        assert.deepEqual([...seen].sort(), backends.map((p) => p.metadata.name).sort());
        const proxies = await readyPods(c, PROXY_LABELS, 1);
        assert.equal(proxies[0].status?.phase, "Running");
        console.log(`helm install → first request served through the proxy: ${firstRequestS.toFixed(1)} s`);
      });

      await t.step("TLS by SNI: each host gets its own certificate", async () => {
        for (const host of ["a.example", "b.example"]) {
          const answers = await eventually(`HTTPS for ${host}`, async () => {
            const out = await inside(c, [{ url: `https://${svc.spec.clusterIP}/tls`, host }]);
            return out[0].status === 200 ? out : undefined;
          }, 60_000);
          assert.equal(answers[0].altNames, `DNS:${host}`);
          assert.equal(JSON.parse(answers[0].body).host, host);
        }
      });

      await t.step(
        "the stats page is not reachable on the proxy pod's address; the exporter's metrics are",
        async () => {
          const [proxy] = await readyPods(c, PROXY_LABELS, 1);
          const ip = proxy.status!.podIP!;
          const [stats, metrics] = await inside(c, [{ url: `http://${ip}:56789/;csv` }, {
            url: `http://${ip}:56790/metrics`,
          }]);
          assert.equal(stats.status, 0, `the stats page answered: ${stats.status}`);
          assert.match(stats.body, /ECONNREFUSED/);
          assert.equal(metrics.status, 200);
          assert.match(metrics.body, /^haproxy_up 1$/m);
        },
      );

      await t.step("scaling the backend to 3 is followed without a reload", async () => {
        const [proxy] = await readyPods(c, PROXY_LABELS, 1);
        const before = await haproxyStarts(c, proxy);
        await api(
          c,
          "PATCH",
          `/apis/apps/v1/namespaces/${APP_NS}/deployments/echo/scale`,
          { spec: { replicas: 3 } },
          "application/merge-patch+json",
        );
        const three = await readyPods(c, "app=echo", 3, { ns: APP_NS });
        const seen = new Set<string>();
        await eventually("answers from the third pod", async () => {
          for (const pod of await answering(c, svc.spec.clusterIP, "web.example", 9)) seen.add(pod);
          return seen.size === 3 || undefined;
        }, 120_000);
        assert.deepEqual([...seen].sort(), three.map((p) => p.metadata.name).sort());
        assert.equal(await haproxyStarts(c, proxy), before, "HAProxy reloaded for an endpoint change");
        // A new host alone is a route change (map files, Runtime API: no reload either). The measure
        // can see a reload: an Ingress whose annotation gives its route a backend of its own is a
        // structural change.
        await addHost("route.example");
        assert.equal(await haproxyStarts(c, proxy), before, "HAProxy reloaded for a new host");
        const plain = ingress("shop-slow", ["slow.example"]);
        const own = {
          ...plain,
          metadata: { ...plain.metadata, annotations: { "ingress-controller.io/timeout-server": "31s" } },
        };
        await api(c, "POST", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses`, own);
        await eventually(
          "answers for slow.example",
          async () => (await answering(c, svc.spec.clusterIP, "slow.example", 1)).size === 1 || undefined,
          120_000,
        );
        await eventually("the reload logged", async () => await haproxyStarts(c, proxy) > before, 30_000);
      });

      await t.step("a killed proxy pod is replaced and traffic is served again", async () => {
        const [proxy] = await readyPods(c, PROXY_LABELS, 1);
        await api(
          c,
          "DELETE",
          `/api/v1/namespaces/${proxy.metadata.namespace}/pods/${proxy.metadata.name}?gracePeriodSeconds=0`,
        );
        await readyPods(c, PROXY_LABELS, 1, { not: [proxy.metadata.name] });
        const seen = new Set<string>();
        await eventually("answers from every echo pod again", async () => {
          for (const pod of await answering(c, svc.spec.clusterIP, "web.example", 9)) {
            seen.add(pod);
          }
          return seen.size === 3 || undefined;
        }, 120_000);
      });

      await t.step("a killed controller pod is replaced; a new Ingress change is served after it", async () => {
        const [old] = await readyPods(c, CONTROLLER_LABELS, 1, { ns: NAMESPACE });
        // Everything it did so far was allowed: the ClusterRole grants what the controller uses.
        const log = await containerLog(c, NAMESPACE, old.metadata.name, "controller");
        assert.match(log, /published proxy configuration/, "the controller's log");
        assert.doesNotMatch(log, /forbidden|\b403\b/i, "the controller was refused an API call");
        await api(c, "DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${old.metadata.name}?gracePeriodSeconds=0`);
        await readyPods(c, CONTROLLER_LABELS, 1, { ns: NAMESPACE, not: [old.metadata.name] });
        assert.ok(
          (await answering(c, svc.spec.clusterIP, "web.example", 3)).size > 0,
          "traffic is served across the controller's restart",
        );
        await addHost("after-restart.example");
      });

      await t.step("after the ingresses are deleted, helm uninstall leaves nothing of ours", async () => {
        await api(c, "DELETE", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`);
        await api(c, "DELETE", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop-slow`);
        const managed = encodeURIComponent("app.kubernetes.io/managed-by=ingress-controller");
        const kinds = [
          "/api/v1/pods",
          "/api/v1/services",
          "/api/v1/configmaps",
          "/api/v1/serviceaccounts",
          "/apis/apps/v1/deployments",
          "/apis/rbac.authorization.k8s.io/v1/roles",
          "/apis/rbac.authorization.k8s.io/v1/rolebindings",
          "/apis/policy/v1/poddisruptionbudgets",
        ];
        await eventually("the controller to remove the proxy objects", async () => {
          for (const k of kinds) {
            if ((await api(c, "GET", `${k}?labelSelector=${managed}`)).items.length > 0) return undefined;
          }
          return true;
        }, 120_000);
        await helm(["uninstall", RELEASE_NAME, "--namespace", NAMESPACE, "--wait", ...kube], helmEnv);
        await eventually(
          "the controller pod to be gone",
          async () => (await pods(c, CONTROLLER_LABELS, NAMESPACE)).length === 0 || undefined,
          120_000,
        );
        for (const k of kinds) {
          assert.deepEqual(
            (await api(c, "GET", `${k}?labelSelector=${managed}`)).items.map((o: any) => o.metadata.name),
            [],
            k,
          );
        }
        const release = encodeURIComponent(`app.kubernetes.io/instance=${RELEASE_NAME}`);
        for (
          const k of [
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "/apis/rbac.authorization.k8s.io/v1/rolebindings",
            "/apis/rbac.authorization.k8s.io/v1/roles",
            "/apis/networking.k8s.io/v1/ingressclasses",
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            "/api/v1/services",
            "/api/v1/serviceaccounts",
            "/apis/apps/v1/deployments",
          ]
        ) {
          assert.deepEqual(
            (await api(c, "GET", `${k}?labelSelector=${release}`)).items.map((o: any) => o.metadata.name),
            [],
            k,
          );
        }
        assert.deepEqual((await pods(c, "", NAMESPACE)).map((p) => p.metadata.name), []);
      });

      await t.step("deploy/manifests/ applied through the API runs a Ready controller", async () => {
        await api(c, "DELETE", `/api/v1/namespaces/${NAMESPACE}`);
        await eventually("the namespace to be gone", async () => {
          const res = await c.adminFetch(`/api/v1/namespaces/${NAMESPACE}`);
          await res.body?.cancel();
          return res.status === 404 || undefined;
        }, 120_000);
        const files = ["00-namespace.yaml", "ingress-controller.yaml"];
        for (const f of files) {
          const yaml = await Deno.readTextFile(new URL(`../../../deploy/manifests/${f}`, import.meta.url));
          await applyManifests((p, init) => c.adminFetch(p, init), parseManifests(yaml));
        }
        await readyPods(c, CONTROLLER_LABELS, 1, { ns: NAMESPACE });
      });
      // The figure for bench/install_bench.ts is printed above; assertions never time anything.
      assert.ok(firstRequestS > 0);
    } finally {
      await cluster?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
