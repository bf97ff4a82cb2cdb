/**
 * @module demo/stack
 * The demo's cluster side, run inside the private network namespace by demo/main.ts: the test
 * API server and etcd, two sample backends, the sample Namespace/Service/EndpointSlice/Ingress,
 * the controller, and haproxy driven by the proxy command. It exposes the API server and the
 * proxy's HTTP port as unix sockets in `dir` and writes `dir/ready.json` when traffic flows.
 * Stops everything, in order, on SIGTERM/SIGINT or when its stdin (held by demo/main.ts) ends.
 */
import http from "node:http";
import { join } from "node:path";
import { startControlPlane } from "../localenv/control_plane.ts";
import { startBackend } from "../localenv/backend.ts";
import { ensureHaproxy } from "../localenv/haproxy.ts";
import { freePorts } from "../localenv/ports.ts";
import { ClusterClient } from "../../cluster/client.ts";
import { type KubeObject, objectPath, resources, type ResourceType } from "../../cluster/resources.ts";
import { startController } from "../../controller/controller.ts";
import { sharedProxyName } from "../../controller/groups.ts";
import { log } from "../../log/logger.ts";
import { runProxy } from "../../proxy/command.ts";
import { privateAddress } from "../localenv/netns.ts";
import { type Forwarder, unixToTcp } from "../localenv/forward.ts";
import { register } from "../localenv/cleanup.ts";

export const demo = { namespace: "demo", ingress: "web", service: "web", host: "demo.example" } as const;

export interface StackInfo {
  namespace: string;
  ingress: string;
  host: string;
  /** Where the controller put the proxy serving the sample Ingress: its own namespace, not the Ingress's. */
  proxyNamespace: string;
  /** The proxy's name, also its objects' `app.kubernetes.io/instance` label. */
  proxy: string;
  /** Admin kubeconfig as written by the test environment (server inside the namespace). */
  kubeconfig: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  configPath: string;
  apiSocket: string;
  httpSocket: string;
}

function sampleObjects(backends: { address: string; port: number }[]): [ResourceType, KubeObject][] {
  const ns = demo.namespace;
  return [
    [resources.namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } }],
    [resources.services, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: demo.service, namespace: ns },
      spec: { ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }] },
    }],
    [resources.endpointSlices, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${demo.service}-1`, namespace: ns, labels: { "kubernetes.io/service-name": demo.service } },
      addressType: "IPv4",
      endpoints: backends.map((b) => ({ addresses: [b.address], conditions: { ready: true } })),
      ports: [{ name: "http", port: backends[0].port, protocol: "TCP" }],
    }],
    [resources.ingresses, {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: demo.ingress, namespace: ns },
      spec: {
        rules: [{
          host: demo.host,
          http: {
            paths: [{
              path: "/",
              pathType: "Prefix",
              backend: { service: { name: demo.service, port: { number: 80 } } },
            }],
          },
        }],
      },
    }],
  ];
}

/** Runs the stack until `signal` aborts. */
export async function runStack(dir: string, signal: AbortSignal): Promise<void> {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    log.info("demo: starting etcd and kube-apiserver");
    const cp = await startControlPlane();
    cleanups.push(() => cp.stop());
    const backends = [
      await startBackend({ name: "sample-backend-1", host: privateAddress(2), port: 8080 }),
      await startBackend({ name: "sample-backend-2", host: privateAddress(3), port: 8080 }),
    ];
    for (const b of backends) cleanups.push(() => b.close());
    const client = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 });
    cleanups.push(() => Promise.resolve(client.close()));
    for (const [r, obj] of sampleObjects(backends)) {
      await client.request("PATCH", objectPath(r, obj.metadata.namespace, obj.metadata.name), {
        query: { fieldManager: "demo", force: "true" },
        body: obj,
        contentType: "application/apply-patch+yaml",
      });
    }
    log.info("demo: sample Namespace, Service, EndpointSlice and Ingress applied", { namespace: demo.namespace });

    const ctl = await startController({ kubeconfig: cp.adminKubeConfigPath, resyncPeriodMs: 600_000 });
    cleanups.push(() => ctl.stop());
    // The sample ingress has no class and the demo cluster no default class: the shared proxy of
    // class-less ingresses, in the controller's namespace, serves it.
    // Its objects (ConfigMap, Deployment, Services, PodDisruptionBudget) carry app.kubernetes.io/instance=<proxy>.
    const proxy = sharedProxyName("");
    const proxyNamespace = ctl.settings.operatorNamespace;
    await waitFor("the controller to publish the proxy configuration", signal, async () => {
      try {
        await client.request("GET", objectPath(resources.configMaps, proxyNamespace, proxy));
        return true;
      } catch {
        return false;
      }
    });

    const [httpPort, httpsPort, statsPort] = freePorts(3);
    const workDir = join(dir, "proxy");
    await Deno.mkdir(workDir, { recursive: true });
    const stopProxy = new AbortController();
    const proxyDone = runProxy({
      kubeconfig: cp.adminKubeConfigPath,
      namespace: proxyNamespace,
      configmap: proxy,
      haproxy: await ensureHaproxy(),
      workDir,
      bindAddress: "127.0.0.1",
      httpPort,
      httpsPort,
      statsPort,
    }, stopProxy.signal).catch((err) => log.error("demo: proxy failed", { error: String(err) }));
    cleanups.push(async () => {
      stopProxy.abort();
      await proxyDone;
    });
    await waitFor("traffic through haproxy", signal, () => answers(httpPort, demo.host));

    const apiSocket = join(dir, "api.sock");
    const httpSocket = join(dir, "http.sock");
    const apiPort = Number(new URL(cp.server).port);
    const forwarders: Forwarder[] = [
      unixToTcp(apiSocket, "127.0.0.1", apiPort),
      unixToTcp(httpSocket, "127.0.0.1", httpPort),
    ];
    cleanups.push(() => Promise.all(forwarders.map((f) => f.close())));
    const info: StackInfo = {
      namespace: demo.namespace,
      ingress: demo.ingress,
      host: demo.host,
      proxyNamespace,
      proxy,
      kubeconfig: cp.adminKubeConfigPath,
      caPem: cp.caPem,
      certPem: cp.admin.certPem,
      keyPem: cp.admin.keyPem,
      configPath: join(workDir, "haproxy.cfg"),
      apiSocket,
      httpSocket,
    };
    await Deno.writeTextFile(join(dir, "ready.json.tmp"), JSON.stringify(info));
    await Deno.rename(join(dir, "ready.json.tmp"), join(dir, "ready.json"));
    log.info("demo: ready");
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  } finally {
    log.info("demo: stopping");
    for (const c of cleanups.reverse()) {
      await c().catch((err) => log.warn("demo: cleanup step failed", { error: String(err) }));
    }
  }
}

/** Whether haproxy on 127.0.0.1:`port` answers 200 for `host` (node:http: fetch may not set Host). */
function answers(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path: "/", headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
    });
    req.setTimeout(2000, () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

async function waitFor(what: string, signal: AbortSignal, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (signal.aborted) throw new Error(`demo stopped while waiting for ${what}`);
    if (Date.now() > end) throw new Error(`demo: gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

if (import.meta.main) {
  const dir = Deno.args[0];
  if (!dir) throw new Error("usage: stack.ts <dir>");
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  // On a signal the stack stops its parts in order (the controller releases its Lease while the
  // API server still runs); the test environment's own stop comes after.
  register(() => {
    stop.abort();
    return running.catch(() => {});
  }, { first: true });
  // demo/main.ts holds our stdin open: if it is gone, stop as on a signal and remove its directory.
  let orphaned = false;
  (async () => {
    for await (const _ of Deno.stdin.readable) { /* nothing is sent */ }
    orphaned = !stop.signal.aborted;
    stop.abort();
  })();
  try {
    running = runStack(dir, stop.signal);
    await running;
    if (orphaned) await Deno.remove(dir, { recursive: true }).catch(() => {});
    Deno.exit(0);
  } catch (err) {
    log.error("demo failed", { error: err instanceof Error ? err.message : String(err) });
    Deno.exit(1);
  }
}
