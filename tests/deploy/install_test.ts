/**
 * The chart installed into the real single-node cluster (lib/localnode) from the images built
 * here, as a platform engineer would (root only, like tests/localnode/cluster_test.ts):
 * - `helm install` with the chart's defaults: the controller pod (non-root, read-only root
 *   filesystem, in-cluster service account) becomes Ready;
 * - an Ingress to a backend Deployment of 2 echo pods gets proxy pods (found by the labels
 *   app.kubernetes.io/managed-by=ingress-controller, app.kubernetes.io/name=haproxy, in any
 *   namespace) Running and Ready; requests through the proxy Service reach both backend pods
 *   (the time from `helm install` to that first answer is printed);
 * - TLS by SNI: two hosts, two Secrets, each host gets its own certificate;
 * - scaling the backend to 3 is followed without a reload (HAProxy's worker start time, from the
 *   proxy's Prometheus endpoint, stays the same; an Ingress change afterwards does change it);
 * - a killed proxy pod and a killed controller pod are recovered from: traffic is served again,
 *   and after the controller's restart a new Ingress change is served;
 * - after the ingresses are deleted, `helm uninstall` leaves nothing of ours: no object labelled
 *   app.kubernetes.io/managed-by=ingress-controller, no pods, no ClusterRole/Binding, IngressClass,
 *   kube-system RoleBinding;
 * - `deploy/manifests/` applied through the API (as kubectl apply would) runs a Ready controller.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildImages } from "../../lib/images/build.ts";
import { type Cluster, startCluster } from "../../lib/localnode/mod.ts";
import { echoDeployment } from "../../lib/localnode/echo.ts";
import { eventually } from "../../lib/localenv/harness.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { applyManifests, parseManifests } from "../../lib/deploy/apply.ts";
import { chartDir, helm, NAMESPACE, RELEASE_NAME } from "../../lib/deploy/manifests.ts";
import { echoPod, inside } from "./inside.ts";

const ignore = Deno.uid() !== 0; // containerd, runc and the kubelet need root
const APP_NS = "shop";
const CLASS = "ingress-controller"; // the chart's default IngressClass
const PROXY_LABELS = "app.kubernetes.io/managed-by=ingress-controller,app.kubernetes.io/name=haproxy";
const CONTROLLER_LABELS = `app.kubernetes.io/instance=${RELEASE_NAME},app.kubernetes.io/component=controller`;

async function api(c: Cluster, method: string, path: string, body?: unknown, type = "application/json"): Promise<any> {
  const res = await c.adminFetch(path, {
    method,
    headers: { "content-type": type },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

interface Pod {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}
const isReady = (p: Pod) =>
  !p.metadata.deletionTimestamp && p.status?.phase === "Running" &&
  (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

async function pods(c: Cluster, selector: string, ns?: string): Promise<Pod[]> {
  const base = ns ? `/api/v1/namespaces/${ns}/pods` : "/api/v1/pods";
  return (await api(c, "GET", `${base}?labelSelector=${encodeURIComponent(selector)}`)).items;
}

/** Waits for exactly `n` Ready pods (none terminating), optionally none of `not`; says what it saw on timeout. */
async function readyPods(c: Cluster, selector: string, n: number, ns?: string, not: string[] = []): Promise<Pod[]> {
  let last: Pod[] = [];
  try {
    return await eventually(`${n} Ready pods with ${selector}`, async () => {
      last = await pods(c, selector, ns);
      const ready = last.filter((p) => isReady(p) && !not.includes(p.metadata.name));
      return ready.length === n && last.length === n ? ready : undefined;
    }, 240_000);
  } catch (err) {
    const seen = last.map((p) => `${p.metadata.name}: ${JSON.stringify(p.status)}`).join("; ");
    throw new Error(`${(err as Error).message}; pods: ${seen}`);
  }
}

/** The public proxy Service: found by the proxy labels (never by name), the one serving port 80. */
async function proxyService(c: Cluster): Promise<any> {
  const list = await api(c, "GET", `/api/v1/services?labelSelector=${encodeURIComponent(PROXY_LABELS)}`);
  const found = list.items.filter((s: any) => s.spec.ports.some((p: any) => p.port === 80));
  return found.length === 1 ? found[0] : undefined;
}

/** Pods answering `host` through the proxy Service (`count` requests). */
async function answering(c: Cluster, ip: string, host: string, count: number): Promise<Set<string>> {
  const out = await inside(c, Array.from({ length: count }, () => ({ url: `http://${ip}/shop`, host })));
  return new Set(out.map(echoPod).filter((p): p is string => p !== null));
}

/** HAProxy's current worker start time in the proxy pod (changes with every reload). */
async function workerStart(c: Cluster, podIP: string): Promise<number> {
  const [r] = await inside(c, [{ url: `http://${podIP}:56789/metrics` }]);
  const m = r.body.match(/^haproxy_process_start_time_seconds (\S+)$/m);
  if (!m) throw new Error(`no haproxy_process_start_time_seconds in the proxy's metrics (${r.status})`);
  return Number(m[1]);
}

function ingress(name: string, hosts: string[], tls: { host: string; secret: string }[] = []) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: APP_NS },
    spec: {
      ingressClassName: CLASS,
      tls: tls.map((t) => ({ hosts: [t.host], secretName: t.secret })),
      rules: hosts.map((host) => ({
        host,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "echo", port: { number: 80 } } } }],
        },
      })),
    },
  };
}

async function tlsSecret(c: Cluster, name: string, host: string): Promise<void> {
  const ca = await createCA({ commonName: `${host} test CA` });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  await api(c, "POST", `/api/v1/namespaces/${APP_NS}/secrets`, {
    metadata: { name },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": leaf.certPem + ca.certPem, "tls.key": leaf.keyPem },
  });
}

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
      await api(c, "POST", "/api/v1/namespaces", { metadata: { name: APP_NS } });
      await api(c, "POST", `/apis/apps/v1/namespaces/${APP_NS}/deployments`, echoDeployment(APP_NS, 2));
      await api(c, "POST", `/api/v1/namespaces/${APP_NS}/services`, {
        metadata: { name: "echo" },
        spec: { selector: { app: "echo" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
      });
      await tlsSecret(c, "a-tls", "a.example");
      await tlsSecret(c, "b-tls", "b.example");
      const hosts = ["web.example", "a.example", "b.example"];
      const tls = [{ host: "a.example", secret: "a-tls" }, { host: "b.example", secret: "b-tls" }];
      await api(c, "POST", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses`, ingress("shop", hosts, tls));
      const backends = await readyPods(c, "app=echo", 2, APP_NS);

      const installed = performance.now();
      let firstRequestS = 0;
      await t.step("helm install: the controller pod becomes Ready", async () => {
        await helm(
          ["install", RELEASE_NAME, chartDir, "--namespace", NAMESPACE, "--create-namespace", ...kube],
          helmEnv,
        );
        await readyPods(c, CONTROLLER_LABELS, 1, NAMESPACE);
      });

      let svc: any;
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

      await t.step("scaling the backend to 3 is followed without a reload", async () => {
        const [proxy] = await readyPods(c, PROXY_LABELS, 1);
        const before = await workerStart(c, proxy.status!.podIP!);
        await api(
          c,
          "PATCH",
          `/apis/apps/v1/namespaces/${APP_NS}/deployments/echo/scale`,
          { spec: { replicas: 3 } },
          "application/merge-patch+json",
        );
        const three = await readyPods(c, "app=echo", 3, APP_NS);
        const seen = new Set<string>();
        await eventually("answers from the third pod", async () => {
          for (const pod of await answering(c, svc.spec.clusterIP, "web.example", 9)) seen.add(pod);
          return seen.size === 3 || undefined;
        }, 120_000);
        assert.deepEqual([...seen].sort(), three.map((p) => p.metadata.name).sort());
        assert.equal(await workerStart(c, proxy.status!.podIP!), before, "HAProxy reloaded for an endpoint change");
        // The measure can see a reload: a new host is a configuration change.
        await api(c, "PUT", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`, {
          ...(await api(c, "GET", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`)),
          spec: ingress("shop", [...hosts, "reload.example"], tls).spec,
        });
        await eventually(
          "the new host",
          async () => (await answering(c, svc.spec.clusterIP, "reload.example", 1)).size === 1 || undefined,
          60_000,
        );
        assert.notEqual(await workerStart(c, proxy.status!.podIP!), before, "an Ingress change reloads HAProxy");
      });

      await t.step("a killed proxy pod is replaced and traffic is served again", async () => {
        const [proxy] = await readyPods(c, PROXY_LABELS, 1);
        await api(
          c,
          "DELETE",
          `/api/v1/namespaces/${proxy.metadata.namespace}/pods/${proxy.metadata.name}?gracePeriodSeconds=0`,
        );
        await readyPods(c, PROXY_LABELS, 1, undefined, [proxy.metadata.name]);
        const seen = new Set<string>();
        await eventually("answers from every echo pod again", async () => {
          for (const pod of await answering(c, svc.spec.clusterIP, "web.example", 9)) {
            seen.add(pod);
          }
          return seen.size === 3 || undefined;
        }, 120_000);
      });

      await t.step("a killed controller pod is replaced; a new Ingress change is served after it", async () => {
        const [old] = await readyPods(c, CONTROLLER_LABELS, 1, NAMESPACE);
      // Everything it did so far was allowed: the ClusterRole grants what the controller uses.
      const logRes = await c.adminFetch(`/api/v1/namespaces/${NAMESPACE}/pods/${old.metadata.name}/log`);
      const log = await logRes.text();
      assert.ok(logRes.ok && log.length > 0, `the controller's log: ${logRes.status}`);
      assert.doesNotMatch(log, /forbidden|\b403\b/i, "the controller was refused an API call");
        await api(c, "DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${old.metadata.name}?gracePeriodSeconds=0`);
        await readyPods(c, CONTROLLER_LABELS, 1, NAMESPACE, [old.metadata.name]);
        assert.ok(
          (await answering(c, svc.spec.clusterIP, "web.example", 3)).size > 0,
          "traffic while the controller restarted",
        );
        await api(c, "PUT", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`, {
          ...(await api(c, "GET", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`)),
          spec: ingress("shop", [...hosts, "after-restart.example"], tls).spec,
        });
        await eventually(
          "the host added after the restart",
          async () => (await answering(c, svc.spec.clusterIP, "after-restart.example", 1)).size === 1 || undefined,
          120_000,
        );
      });

      await t.step("after the ingresses are deleted, helm uninstall leaves nothing of ours", async () => {
        await api(c, "DELETE", `/apis/networking.k8s.io/v1/namespaces/${APP_NS}/ingresses/shop`);
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
          const yaml = await Deno.readTextFile(new URL(`../../deploy/manifests/${f}`, import.meta.url));
          await applyManifests((p, init) => c.adminFetch(p, init), parseManifests(yaml));
        }
        await readyPods(c, CONTROLLER_LABELS, 1, NAMESPACE);
      });
      // The figure for bench/install_bench.ts is printed above; assertions never time anything.
      assert.ok(firstRequestS > 0);
    } finally {
      await cluster?.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
