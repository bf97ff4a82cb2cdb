/**
 * @module lib/dev/localnode/rollout
 * A rolling update of a Deployment under steady load, on the real node: a load process inside the
 * cluster's network namespace sends GET requests to a Service's cluster IP (kube-proxy) while the
 * Deployment's pod template gets a new annotation (what `kubectl rollout restart` does); the load
 * stops once the rollout is complete and no pod of an older revision is left, and the counts are
 * returned. Bounded in requests and time. {@link proxiedEcho} sets up what is measured: the echo
 * backend (2 pods) behind an Ingress served by the controller's proxy Deployment.
 *
 * Counting: half the workers reuse keep-alive connections, half open a new connection per request.
 * A request fails when it gets no complete 200 answer. The one exception is what every real HTTP
 * client does for idempotent requests: a request written on a *reused* keep-alive connection that
 * the server closed before sending any byte of a response is retried once on a new connection;
 * such retries are counted (`retried`), and a retried request that fails again is a failure.
 */
import { startController } from "../../controller/controller.ts";
import { proxyName } from "../../controller/objects.ts";
import { dedicatedValue, proxyModeAnnotation } from "../../controller/groups.ts";
import { eventually } from "../localenv/harness.ts";
import { echoDeployment } from "./echo.ts";
import { type Cluster, requestsInside } from "./mod.ts";

export interface LoadResult {
  /** Requests sent (a retry is not a new request). */
  sent: number;
  ok: number;
  failed: number;
  /** Requests retried once after a reused connection closed before any response byte. */
  retried: number;
  /** Failure messages and how often. */
  errors: Record<string, number>;
  /** Answers per backend pod (the echo body's `pod`). */
  byPod: Record<string, number>;
}

const loadScript = `
import http from "node:http";
const [url, host, stopFile, maxRequests, maxMs] = Deno.args;
const deadline = Date.now() + Number(maxMs);
const r = { sent: 0, ok: 0, failed: 0, retried: 0, errors: {}, byPod: {} };
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 2 });
let stopped = false;
const stopWatch = setInterval(() => { try { Deno.statSync(stopFile); stopped = true; } catch {} }, 100);
const one = (agent) => new Promise((resolve) => {
  let gotByte = false;
  const req = http.get(url, { agent, timeout: 10000, headers: { host } }, (res) => {
    gotByte = true;
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (c) => body += c);
    res.on("error", (e) => resolve({ error: "response: " + e.message }));
    res.on("end", () => {
      if (res.statusCode !== 200) return resolve({ error: "status " + res.statusCode });
      try { resolve({ pod: JSON.parse(body).pod }); } catch { resolve({ error: "body: " + body.slice(0, 80) }); }
    });
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", (e) => resolve({ error: e.code || e.message, retryable: !gotByte && req.reusedSocket }));
});
const worker = async (agent) => {
  while (!stopped && r.sent < Number(maxRequests) && Date.now() < deadline) {
    r.sent++;
    let a = await one(agent);
    if (a.error && a.retryable) { r.retried++; a = await one(false); }
    if (a.error) { r.failed++; r.errors[a.error] = (r.errors[a.error] ?? 0) + 1; }
    else { r.ok++; r.byPod[a.pod] = (r.byPod[a.pod] ?? 0) + 1; }
  }
};
await Promise.all([worker(keepAlive), worker(keepAlive), worker(false), worker(false)]);
clearInterval(stopWatch);
keepAlive.destroy();
console.log(JSON.stringify(r));
`;

export interface LoadHandle {
  /** Stops the load and returns its counts. */
  stop(): Promise<LoadResult>;
}

/** Starts the load inside the cluster's network (bounded by `maxRequests` and `maxMs`). */
export async function startLoad(
  cluster: Pick<Cluster, "enter">,
  url: string,
  opts: { host: string; maxRequests?: number; maxMs?: number },
): Promise<LoadHandle> {
  const dir = await Deno.makeTempDir({ prefix: "ic-load-" });
  const stopFile = `${dir}/stop`;
  const [cmd, ...args] = cluster.enter;
  const child = new Deno.Command(cmd, {
    args: [
      ...args,
      Deno.execPath(),
      "eval",
      "--ext=js",
      loadScript,
      url,
      opts.host,
      stopFile,
      String(opts.maxRequests ?? 200_000),
      String(opts.maxMs ?? 300_000),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.status]);
  return {
    async stop() {
      await Deno.writeTextFile(stopFile, "");
      const [out, err, status] = await output;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      if (!status.success) throw new Error(`the load process failed (exit ${status.code}): ${err}`);
      return JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
    },
  };
}

interface PodLike {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
}

/**
 * Restarts the pods of `deployment` (a pod-template annotation, as `kubectl rollout restart`) and
 * resolves once the rollout is complete: every replica updated and available, and no pod of an
 * older revision left (terminating ones included: their drain is part of what is measured).
 */
export async function rolloutRestart(
  cluster: Pick<Cluster, "adminFetch">,
  namespace: string,
  deployment: string,
  timeoutMs = 300_000,
): Promise<{ oldPods: string[]; newPods: string[] }> {
  const api = async (path: string, init?: RequestInit) => {
    const res = await cluster.adminFetch(path, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${deployment}`;
  const before = await api(path);
  const selector = Object.entries(before.spec.selector.matchLabels as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`).join(",");
  const pods = async () =>
    (await api(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`))
      .items as PodLike[];
  const oldPods = (await pods()).map((p) => p.metadata.name);
  const patched = await api(path, {
    method: "PATCH",
    headers: { "content-type": "application/strategic-merge-patch+json" },
    body: JSON.stringify({
      spec: {
        template: { metadata: { annotations: { "ingress-controller.io/restarted-at": new Date().toISOString() } } },
      },
    }),
  });
  const generation = patched.metadata.generation as number;
  const end = performance.now() + timeoutMs;
  for (;;) {
    const d = await api(path);
    const s = d.status ?? {};
    const want = d.spec.replicas ?? 1;
    const current = await pods();
    const done = (s.observedGeneration ?? 0) >= generation && s.updatedReplicas === want &&
      s.availableReplicas === want && s.replicas === want &&
      current.every((p) => !oldPods.includes(p.metadata.name));
    if (done) return { oldPods, newPods: current.map((p) => p.metadata.name) };
    if (performance.now() > end) {
      throw new Error(`the rollout of ${namespace}/${deployment} did not complete: ${JSON.stringify(s)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

export interface ProxiedEcho extends AsyncDisposable {
  /** The proxy objects' name (Deployment, Service). */
  name: string;
  /** The proxy Service's cluster IP. */
  clusterIP: string;
  /** The first Ready proxy pod, as the API server lists it. */
  pod: any;
  /** Stops the controller. */
  stop(): Promise<void>;
}

/**
 * In namespace `ns` (created here): the echo Deployment (2 pods) and Service, the controller (on
 * the host, `--rbac`) and an Ingress `web` for host `web.example`; resolves once a proxy pod is
 * Ready and requests through the proxy Service's cluster IP reach both echo pods.
 */
export async function proxiedEcho(cluster: Cluster, ns: string): Promise<ProxiedEcho> {
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await cluster.adminFetch(path, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  await api("POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await api("POST", `/apis/apps/v1/namespaces/${ns}/deployments`, echoDeployment(ns, 2));
  await api("POST", `/api/v1/namespaces/${ns}/services`, {
    metadata: { name: "echo", namespace: ns },
    spec: { selector: { app: "echo" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
  });
  const ctl = await startController({ kubeconfig: cluster.kubeconfig, rbac: true, resyncPeriodMs: 600_000 });
  try {
    // A dedicated proxy: its objects live in `ns`, named after the Ingress (docs/proxy-groups.md).
    await api("POST", `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, {
      metadata: { name: "web", namespace: ns, annotations: { [proxyModeAnnotation]: dedicatedValue } },
      spec: {
        rules: [{
          host: "web.example",
          http: {
            paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "echo", port: { number: 80 } } } }],
          },
        }],
      },
    });
    const name = proxyName("web");
    const selector = encodeURIComponent(`app.kubernetes.io/instance=${name}`);
    const isReady = (p: any) =>
      (p.status?.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True");
    const pod = await eventually("a Ready proxy pod", async () => {
      const list = await api("GET", `/api/v1/namespaces/${ns}/pods?labelSelector=${selector}`);
      return list.items.find(isReady);
    }, 240_000).catch(async (err) => {
      const list = await api("GET", `/api/v1/namespaces/${ns}/pods`);
      throw new Error(`${err.message}; pods: ${JSON.stringify(list.items.map((p: any) => p.status))}`);
    });
    const clusterIP = (await api("GET", `/api/v1/namespaces/${ns}/services/${name}`)).spec.clusterIP as string;
    const seen = new Set<string>();
    await eventually("answers from both echo pods through the proxy Service", async () => {
      for (const a of await requestsInside(cluster, `http://${clusterIP}/`, { host: "web.example", count: 10 })) {
        if (a.status === 200) seen.add(JSON.parse(a.body).pod);
      }
      return seen.size === 2 || undefined;
    }, 120_000);
    const stop = () => ctl.stop();
    return { name, clusterIP, pod, stop, [Symbol.asyncDispose]: stop };
  } catch (err) {
    await ctl.stop();
    throw err;
  }
}
