/**
 * @module lib/dev/localenv/harness
 * The stack of the end-to-end tests: the real kube-apiserver (lib/localenv), an admin client,
 * test backends on addresses of the private namespace (lib/dev/localenv/netns.ts), the controller, and
 * (lib/dev/localenv/proxy_run.ts: a real haproxy driven by the proxy command on loopback ports).
 */
import http from "node:http";
import tls from "node:tls";
import { type ControlPlane, startControlPlane } from "./control_plane.ts";
import { type Backend, startBackend } from "./backend.ts";
import { ClusterClient, isStatus } from "../../cluster/client.ts";
import { collectionPath, type KubeObject, objectPath, resources, type ResourceType } from "../../cluster/resources.ts";
import { type ControllerDeps, type ControllerHandle, startController } from "../../controller/controller.ts";
import type { ControllerSettings } from "../../controller/settings.ts";
import { dedicatedValue, proxyModeAnnotation } from "../../controller/groups.ts";
import { CONTROLLER_NAME } from "../../controller/class.ts";
import { privateAddress } from "./netns.ts";
import { createCA, issueCertificate } from "../../pki/certs.ts";

export { resources };

/** Polls `fn` until it returns something other than undefined/false; fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 30_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== null && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `; last error: ${(last as Error).message}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export class Cluster {
  private constructor(readonly cp: ControlPlane, readonly client: ClusterClient) {}

  static async start(apiServerFlags: string[] = []): Promise<Cluster> {
    const cp = await startControlPlane({ apiServerFlags });
    try {
      return new Cluster(cp, await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 1 }));
    } catch (err) {
      await cp.stop();
      throw err;
    }
  }

  get kubeconfig(): string {
    return this.cp.adminKubeConfigPath;
  }

  async namespace(name: string): Promise<string> {
    await this.apply(resources.namespaces, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
    return name;
  }

  /** Server-side apply as the test (creates or updates). */
  apply(r: ResourceType, obj: KubeObject): Promise<KubeObject> {
    return this.client.request("PATCH", objectPath(r, obj.metadata.namespace, obj.metadata.name), {
      query: { fieldManager: "e2e-test", force: "true" },
      body: obj,
      contentType: "application/apply-patch+yaml",
    });
  }

  async get(r: ResourceType, ns: string | null, name: string): Promise<KubeObject | null> {
    try {
      return await this.client.request("GET", objectPath(r, ns, name));
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async list(r: ResourceType, ns: string | null, labelSelector?: string): Promise<KubeObject[]> {
    return (await this.client.request("GET", collectionPath(r, ns), { query: { labelSelector } })).items;
  }

  async remove(r: ResourceType, ns: string | null, name: string): Promise<void> {
    try {
      await this.client.request("DELETE", objectPath(r, ns, name));
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }

  /** Warning/Normal events about an object. */
  async events(ns: string, name: string): Promise<{ reason: string; message: string; type: string }[]> {
    const items = await this.list(resources.events, ns);
    return items.filter((e) => e.involvedObject?.name === name) as unknown as {
      reason: string;
      message: string;
      type: string;
    }[];
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.cp.stop();
  }
}

export function serviceObj(ns: string, name: string, port = 80): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns },
    spec: { ports: [{ name: "http", port, targetPort: "http", protocol: "TCP" }] },
  };
}

/** An EndpointSlice of `service` with the ready endpoints `backends` (all on one port). */
export function sliceObj(
  ns: string,
  service: string,
  backends: readonly Backend[],
  sliceName = `${service}-1`,
): KubeObject {
  const port = backends[0]?.port ?? 8080;
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: sliceName, namespace: ns, labels: { "kubernetes.io/service-name": service } },
    addressType: "IPv4",
    endpoints: backends.map((b) => ({ addresses: [b.address], conditions: { ready: true } })),
    ports: [{ name: "http", port, protocol: "TCP" }],
  };
}

export interface RuleSpec {
  host?: string;
  path?: string;
  pathType?: "Exact" | "Prefix" | "ImplementationSpecific";
  service: string;
  port?: number | string;
}

export function ingressObj(
  ns: string,
  name: string,
  rules: readonly RuleSpec[],
  opts: { className?: string; annotations?: Record<string, string>; tls?: { hosts: string[]; secretName: string }[] } =
    {},
): KubeObject {
  const byHost = new Map<string, RuleSpec[]>();
  for (const r of rules) byHost.set(r.host ?? "", [...(byHost.get(r.host ?? "") ?? []), r]);
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns, annotations: opts.annotations ?? {} },
    spec: {
      ...(opts.className ? { ingressClassName: opts.className } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      rules: [...byHost].map(([host, rs]) => ({
        ...(host ? { host } : {}),
        http: {
          paths: rs.map((r) => ({
            path: r.path ?? "/",
            pathType: r.pathType ?? "Prefix",
            backend: {
              service: {
                name: r.service,
                port: typeof r.port === "string" ? { name: r.port } : { number: r.port ?? 80 },
              },
            },
          })),
        },
      })),
    },
  };
}

/** An IngressClass whose controller is ours (`CONTROLLER_NAME`), or `controller`'s. */
export function ingressClassObj(name: string, controller = CONTROLLER_NAME): KubeObject {
  return { apiVersion: "networking.k8s.io/v1", kind: "IngressClass", metadata: { name }, spec: { controller } };
}

/** For each `[namespace, service, backends]`: the Service and an EndpointSlice of those backends' addresses. */
export async function serveBackends(
  cluster: Cluster,
  list: readonly (readonly [string, string, Backend | readonly Backend[]])[],
): Promise<void> {
  for (const [ns, svc, be] of list) {
    await cluster.apply(resources.services, serviceObj(ns, svc));
    await cluster.apply(resources.endpointSlices, sliceObj(ns, svc, Array.isArray(be) ? be : [be as Backend]));
  }
}

/** `ingressObj` with `ingress-controller.io/proxy: dedicated`: the ingress gets a proxy of its own. */
export function dedicatedIngressObj(...[ns, name, rules, opts = {}]: Parameters<typeof ingressObj>): KubeObject {
  return ingressObj(ns, name, rules, {
    ...opts,
    annotations: { ...opts.annotations, [proxyModeAnnotation]: dedicatedValue },
  });
}

/** A `kubernetes.io/tls` Secret for `host`, its certificate issued by a CA of its own. */
export async function tlsSecretObj(ns: string, name: string, host: string): Promise<KubeObject> {
  const ca = await createCA({ commonName: `${host} test CA` });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
  };
}

/** Plays the Deployment controller (the API server alone runs none): the Deployment reports `n` available replicas. */
export async function setDeploymentAvailable(cluster: Cluster, ns: string, name: string, n = 1): Promise<void> {
  await cluster.client.request("PATCH", objectPath(resources.deployments, ns, name, "status"), {
    body: { status: { replicas: n, readyReplicas: n, availableReplicas: n, updatedReplicas: n } },
    contentType: "application/merge-patch+json",
  });
}

/** Test backends on private addresses `first`, `first+1`, … all on `port`. */
export async function backends(names: readonly string[], first: number, port = 8080): Promise<Backend[]> {
  const out: Backend[] = [];
  for (const [i, name] of names.entries()) {
    out.push(await startBackend({ name, host: privateAddress(first + i), port }));
  }
  return out;
}

/** A controller on `cluster` with quick test settings (no rate limit, 5 ms coalescing, no resync). */
export function controller(
  cluster: Cluster,
  settings: Partial<ControllerSettings> = {},
  deps: ControllerDeps = {},
): Promise<ControllerHandle> {
  return startController({
    kubeconfig: cluster.kubeconfig,
    qps: 0,
    burst: 1,
    coalesceMs: 5,
    resyncPeriodMs: 0,
    ...settings,
  }, deps);
}

export interface Answer {
  status: number;
  body: string;
  /** The backend's name when a test backend answered. */
  backend: string | null;
  path: string | null;
}

/** GET through haproxy on `address` (default 127.0.0.1):`port` with `host` as the Host header (plain HTTP). */
export function httpGet(port: number, host: string, path = "/", address = "127.0.0.1"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: address, port, path, method: "GET", headers: { host }, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve(answer(res.statusCode ?? 0, body)));
        res.on("error", reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")));
    req.on("error", reject);
    req.end();
  });
}

/** GET over TLS with SNI `host`; also returns the subject CN of the certificate the proxy sent. */
export function httpsGet(
  port: number,
  host: string,
  path = "/",
): Promise<Answer & { certCN: string; certSAN: string }> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host: "127.0.0.1", port, servername: host, rejectUnauthorized: false }, () => {
      const cert = sock.getPeerCertificate();
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      let raw = "";
      sock.setEncoding("utf8");
      sock.on("data", (c) => (raw += c));
      sock.on("end", () => {
        const [head, ...rest] = raw.split("\r\n\r\n");
        const status = Number(head.split(" ")[1] ?? 0);
        let body = rest.join("\r\n\r\n");
        if (/transfer-encoding: chunked/i.test(head)) body = dechunk(body);
        resolve({
          ...answer(status, body),
          certCN: String(cert?.subject?.CN ?? ""),
          certSAN: String(cert?.subjectaltname ?? ""),
        });
        sock.destroy();
      });
    });
    sock.setTimeout(10_000, () => sock.destroy(new Error("no answer within 10 s")));
    sock.on("error", reject);
  });
}

function dechunk(s: string): string {
  let out = "";
  let rest = s;
  for (;;) {
    const nl = rest.indexOf("\r\n");
    if (nl < 0) return out;
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

function answer(status: number, body: string): Answer {
  try {
    const j = JSON.parse(body);
    return { status, body, backend: typeof j.name === "string" ? j.name : null, path: j.path ?? null };
  } catch {
    return { status, body, backend: null, path: null };
  }
}
