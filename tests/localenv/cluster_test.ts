/**
 * The real single-node cluster (lib/localenv/cluster) with the images built here:
 * - a Deployment of the echo backend (2 replicas) and a Service: both pods become Ready, and
 *   requests to the Service's cluster IP (kube-proxy) from inside the cluster's network reach both;
 * - the controller (run on the host against the cluster, with --rbac) turns an Ingress into its
 *   proxy Deployment; the pod of the proxy image starts `proxy`, reads its ConfigMap through the
 *   API with its own service account, and serves traffic to the echo pods through HAProxy;
 * - after stop() nothing is left: no process of the namespace, no cgroup, no directory.
 */
import assert from "node:assert/strict";
import { buildImages } from "../../lib/images/build.ts";
import { type Cluster, requestsInside, startCluster } from "../../lib/localenv/cluster/mod.ts";
import { startController } from "../../lib/controller/controller.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import { processExists } from "../../lib/localenv/process.ts";
import { log } from "../../lib/log/logger.ts";

const NS = "cluster-e2e";

async function api(cluster: Cluster, method: string, path: string, body?: unknown): Promise<any> {
  const res = await cluster.adminFetch(path, {
    method,
    headers: { "content-type": method === "PATCH" ? "application/apply-patch+yaml" : "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

interface Pod {
  metadata: { name: string; labels?: Record<string, string> };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}
const isReady = (p: Pod) => (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

async function readyPods(cluster: Cluster, selector: string, n: number): Promise<Pod[]> {
  return await eventually(`${n} Ready pods with ${selector}`, async () => {
    const list = await api(
      cluster,
      "GET",
      `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(selector)}`,
    );
    const ready = (list.items as Pod[]).filter(isReady);
    return ready.length === n ? ready : undefined;
  });
}

Deno.test("a real node runs the echo backend behind a Service and the controller's proxy Deployment", async (t) => {
  log.configure({ level: "warn" });
  const dir = await Deno.makeTempDir({ prefix: "ic-cluster-images-" });
  let cluster: Cluster | null = null;
  let pid1 = 0;
  try {
    const images = await buildImages(dir, () => {});
    cluster = await startCluster({ images: images.map((i) => i.archive) });
    pid1 = cluster.pid;
    const c = cluster;
    await api(c, "POST", "/api/v1/namespaces", { metadata: { name: NS } });

    await t.step("echo Deployment (2 replicas) + Service: requests to the cluster IP reach both pods", async () => {
      const labels = { app: "echo" };
      await api(c, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, {
        metadata: { name: "echo", namespace: NS },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [{
                name: "echo",
                image: "ingress-controller-test/echo:dev",
                imagePullPolicy: "Never",
                env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
                ports: [{ name: "http", containerPort: 8080 }],
                readinessProbe: { httpGet: { path: "/ready", port: 8080 }, periodSeconds: 1 },
              }],
            },
          },
        },
      });
      const svc = await api(c, "POST", `/api/v1/namespaces/${NS}/services`, {
        metadata: { name: "echo", namespace: NS },
        spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: "http" }] },
      });
      const pods = await readyPods(c, "app=echo", 2);
      const names = new Set(pods.map((p) => p.metadata.name));
      const seen = new Set<string>();
      await eventually("answers from both pods through the cluster IP", async () => {
        for (const a of await requestsInside(c, `http://${svc.spec.clusterIP}/via/service`, { count: 20 })) {
          if (a.status !== 200) continue;
          const body = JSON.parse(a.body);
          assert.equal(body.path, "/via/service");
          seen.add(body.pod);
        }
        return seen.size === 2 ? true : undefined;
      }, 60_000);
      assert.deepEqual([...seen].sort(), [...names].sort());
    });

    await t.step(
      "the controller's proxy Deployment runs `proxy` with its service account and serves the ingress",
      async () => {
        const ctl = await startController({ kubeconfig: c.kubeconfig, rbac: true, resyncPeriodMs: 600_000 });
        try {
          await api(c, "POST", `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`, {
            metadata: { name: "web", namespace: NS },
            spec: {
              rules: [{
                host: "web.example",
                http: {
                  paths: [{
                    path: "/",
                    pathType: "Prefix",
                    backend: { service: { name: "echo", port: { number: 80 } } },
                  }],
                },
              }],
            },
          });
          const name = proxyName("web");
          const deployment = await eventually(
            "the proxy Deployment",
            () => api(c, "GET", `/apis/apps/v1/namespaces/${NS}/deployments/${name}`),
          );
          assert.equal(deployment.spec.template.spec.serviceAccountName, name);
          const [pod] = await readyPods(c, `app.kubernetes.io/instance=${name}`, 1).catch(async (err) => {
            const list = await api(c, "GET", `/api/v1/namespaces/${NS}/pods`);
            throw new Error(`${err.message}; pods: ${JSON.stringify(list.items.map((p: any) => p.status))}`);
          });
          assert.ok(pod.status?.podIP);
          const svc = await api(c, "GET", `/api/v1/namespaces/${NS}/services/${name}`);
          const seen = new Set<string>();
          await eventually("answers through the proxy Service", async () => {
            for (
              const a of await requestsInside(c, `http://${svc.spec.clusterIP}/through/proxy`, {
                host: "web.example",
                count: 10,
              })
            ) {
              if (a.status !== 200) continue;
              const body = JSON.parse(a.body);
              assert.equal(body.path, "/through/proxy");
              seen.add(body.pod);
            }
            return seen.size === 2 ? true : undefined;
          }, 120_000);
        } finally {
          await ctl.stop();
        }
      },
    );
  } finally {
    await cluster?.stop();
    await Deno.remove(dir, { recursive: true });
  }
  // Nothing is left: PID 1 (and with it every process of the namespace) and the directory are gone.
  assert.ok(cluster);
  assert.ok(!processExists(pid1), `the cluster's PID 1 (${pid1}) is still there`);
  assert.equal(await Deno.stat(cluster.dir).then(() => true, () => false), false);
});
