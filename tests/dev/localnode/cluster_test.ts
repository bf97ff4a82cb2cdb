/**
 * The real single-node cluster (lib/localnode) with the images built here:
 * - a Deployment of the echo backend (2 replicas) and a Service: both pods become Ready, and
 *   requests to the Service's cluster IP (kube-proxy) from inside the cluster's network reach both;
 * - the DNS add-on (CoreDNS, built from its Go module) is Ready in kube-system and answers for
 *   Service names at the pods' nameserver address; an unknown name has no address;
 * - the controller (run on the host against the cluster, with --rbac) turns an Ingress into its
 *   proxy Deployment; the pod of the proxy image starts `proxy`, reads its ConfigMap through the
 *   API with its own service account, and serves traffic to the echo pods through HAProxy;
 * - after stop() nothing is left: no process of the namespace, no cgroup, no directory.
 */
import assert from "node:assert/strict";
import { buildImages } from "../../../lib/dev/images/build.ts";
import { type Cluster, net, requestsInside, startCluster } from "../../../lib/dev/localnode/mod.ts";
import { startController } from "../../../lib/controller/controller.ts";
import { proxyName } from "../../../lib/controller/objects.ts";
import { processExists } from "../../../lib/dev/localenv/process.ts";
import { log } from "../../../lib/log/logger.ts";
import { eventually } from "../../../lib/dev/localenv/harness.ts";
import { echoDeployment } from "../../../lib/dev/localnode/echo.ts";

const NS = "cluster-e2e";
// containerd, runc and the kubelet need root (the README's commands run as root on CI).
const ignore = Deno.uid() !== 0;

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
  }, 180_000);
}

/** A records of `names` asked of the DNS server at `server`:53 from inside the cluster's network (empty: none). */
async function resolveInside(c: Cluster, server: string, names: string[]): Promise<string[][]> {
  const script = `
const [server, ...names] = Deno.args;
const out = [];
for (const n of names) {
  try { out.push(await Deno.resolveDns(n, "A", { nameServer: { ipAddr: server, port: 53 } })); } catch { out.push([]); }
}
console.log(JSON.stringify(out));`;
  const [cmd, ...args] = c.enter;
  const out = await new Deno.Command(cmd, {
    args: [...args, Deno.execPath(), "eval", "--ext=js", script, server, ...names],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test({
  name: "a real node runs the echo backend behind a Service and the controller's proxy Deployment",
  ignore,
}, async (t) => {
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
      await api(c, "POST", `/apis/apps/v1/namespaces/${NS}/deployments`, echoDeployment(NS, 2));
      const svc = await api(c, "POST", `/api/v1/namespaces/${NS}/services`, {
        metadata: { name: "echo", namespace: NS },
        spec: { selector: { app: "echo" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
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

    await t.step("the DNS add-on (CoreDNS in kube-system) answers for Services at the pods' nameserver", async () => {
      const [dnsPod] = await eventually("a Ready CoreDNS pod", async () => {
        const list = await api(c, "GET", `/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-dns`);
        const ready = (list.items as Pod[]).filter(isReady);
        return ready.length === 1 ? ready : undefined;
      }, 120_000);
      assert.ok(dnsPod.status?.podIP);
      const svc = await api(c, "GET", `/api/v1/namespaces/${NS}/services/echo`);
      const kube = await api(c, "GET", "/api/v1/namespaces/default/services/kubernetes");
      const answers = await eventually("answers from 10.0.0.10", async () => {
        const out = await resolveInside(c, net.dnsIp, [
          `echo.${NS}.svc.cluster.local`,
          "kubernetes.default.svc.cluster.local",
        ]);
        return out.every((a) => a.length > 0) ? out : undefined;
      }, 60_000);
      assert.deepEqual(answers, [[svc.spec.clusterIP], [kube.spec.clusterIP]]);
      // A name the cluster does not have is an error (NXDOMAIN), not an address.
      assert.deepEqual(await resolveInside(c, net.dnsIp, [`missing.${NS}.svc.cluster.local`]), [[]]);
      // Pods get it as their nameserver (kubelet clusterDNS): the echo pods' resolv.conf.
      const sandboxes = `${c.dir}/containerd/root/io.containerd.grpc.v1.cri/sandboxes`;
      const confs: string[] = [];
      for await (const e of Deno.readDir(sandboxes)) {
        confs.push(await Deno.readTextFile(`${sandboxes}/${e.name}/resolv.conf`).catch(() => ""));
      }
      assert.ok(
        confs.some((t) => t.includes(`nameserver ${net.dnsIp}`) && t.includes(`search ${NS}.svc.cluster.local`)),
        confs.join("\n---\n"),
      );
    });

    await t.step(
      "the controller's proxy Deployment runs `proxy` with its service account and serves the ingress",
      async () => {
        const ctl = await startController({ kubeconfig: c.kubeconfig, rbac: true, resyncPeriodMs: 600_000 });
        try {
          await api(c, "POST", `/apis/networking.k8s.io/v1/namespaces/${NS}/ingresses`, {
            // A proxy of its own, in its namespace (the shared proxies are tests/e2e/shared_proxy_e2e_test.ts).
            metadata: { name: "web", namespace: NS, annotations: { "ingress-controller.io/proxy": "dedicated" } },
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

Deno.test({
  name: "deno task cluster leaves nothing behind when it is killed (SIGKILL) with a pod running",
  ignore,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-cluster-crash-" });
  const kubeconfigOut = `${dir}/kubeconfig`;
  const enterOut = `${dir}/enter`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../../lib/dev/localnode/main.ts", import.meta.url).pathname],
    env: { KUBECONFIG_OUT: kubeconfigOut, CLUSTER_ENTER_OUT: enterOut },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  let killed = false;
  try {
    const enter = await eventually("the enter command", async () => {
      if (killed) throw new Error("stopped");
      return (await Deno.readTextFile(enterOut).catch(() => "")).trim() || undefined;
    }, 600_000);
    assert.match(enter, /^nsenter --net=\/proc\/\d+\/ns\/net$/);
    const pid1 = Number(enter.match(/\/proc\/(\d+)\//)![1]);
    const clusterDir = (await Deno.readTextFile(`/proc/${pid1}/cmdline`)).split("\0").find((a) =>
      a.includes("/ic-cluster-")
    )!;
    const cgroups = [...Deno.readDirSync("/sys/fs/cgroup")].map((e) => `/sys/fs/cgroup/${e.name}${clusterDir.slice(4)}`)
      .filter((d) => d.includes("/ic-cluster-"));
    // A pod, so that containers, their mounts, veths and cgroups exist when the runner dies.
    const { parse } = await import("yaml");
    const kc = parse(await Deno.readTextFile(kubeconfigOut));
    const b64 = (s: string) => atob(s);
    const client = Deno.createHttpClient({
      caCerts: [b64(kc.clusters[0].cluster["certificate-authority-data"])],
      cert: b64(kc.users[0].user["client-certificate-data"]),
      key: b64(kc.users[0].user["client-key-data"]),
    });
    const server = kc.clusters[0].cluster.server;
    try {
      await eventually("the default service account", async () => {
        const res = await fetch(`${server}/api/v1/namespaces/default/serviceaccounts/default`, { client });
        await res.body?.cancel();
        return res.ok || undefined;
      });
      const res = await fetch(`${server}/api/v1/namespaces/default/pods`, {
        client,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          metadata: { name: "echo" },
          spec: { containers: [{ name: "echo", image: "ingress-controller-test/echo:dev", imagePullPolicy: "Never" }] },
        }),
      });
      assert.ok(res.ok, await res.text());
      await eventually("the pod to run", async () => {
        const pod = await (await fetch(`${server}/api/v1/namespaces/default/pods/echo`, { client })).json();
        return pod.status?.phase === "Running" || undefined;
      }, 120_000);
    } finally {
      client.close();
    }
    const shims = await new Deno.Command("pgrep", { args: ["-f", clusterDir], stdout: "piped" }).output();
    assert.ok(new TextDecoder().decode(shims.stdout).trim().split("\n").length > 3, "no cluster processes found");

    child.kill("SIGKILL");
    killed = true;
    await child.status;
    await eventually("everything to be gone", async () => {
      const left = await new Deno.Command("pgrep", { args: ["-f", clusterDir], stdout: "piped" }).output();
      const procs = new TextDecoder().decode(left.stdout).trim();
      const dirs = [clusterDir, ...cgroups].filter((d) => {
        try {
          Deno.statSync(d);
          return true;
        } catch {
          return false;
        }
      });
      return !procs && !processExists(pid1) && dirs.length === 0 ? true : undefined;
    }, 60_000);
  } finally {
    if (!killed) child.kill("SIGKILL");
    await child.status;
    await output;
    await Deno.remove(dir, { recursive: true });
  }
});
