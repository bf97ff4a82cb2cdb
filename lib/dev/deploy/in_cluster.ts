/**
 * @module deploy/in_cluster
 * What the install test and the install benchmark do in the real single-node cluster
 * (lib/localnode): API calls as the admin, waiting for Ready pods, finding the proxy by its labels
 * (never by name: where the proxies live is the controller's business), requests through it, and
 * an application (echo backend, TLS Secrets, Ingress) to install the chart for.
 */
import { echoDeployment } from "../localnode/echo.ts";
import { echoPod, inside } from "../localnode/inside.ts";
import type { Cluster } from "../localnode/mod.ts";
import { eventually } from "../localenv/harness.ts";
import { createCA, issueCertificate } from "../../pki/certs.ts";
import { RELEASE_NAME } from "./manifests.ts";

/** Everything the controller creates for a proxy carries the first; its pods also the second. */
export const PROXY_LABELS = "app.kubernetes.io/managed-by=ingress-controller,app.kubernetes.io/name=haproxy";
export const CONTROLLER_LABELS = `app.kubernetes.io/instance=${RELEASE_NAME},app.kubernetes.io/component=controller`;
/** The chart's default IngressClass. */
export const CLASS = "ingress-controller";

/** One API call as the admin; the parsed answer, or an error naming the call and the server's answer. */
export async function api(
  c: Pick<Cluster, "adminFetch">,
  method: string,
  path: string,
  body?: unknown,
  type = "application/json",
): Promise<any> {
  const res = await c.adminFetch(path, {
    method,
    headers: { "content-type": type },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

export interface Pod {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

const isReady = (p: Pod) =>
  !p.metadata.deletionTimestamp && p.status?.phase === "Running" &&
  (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/** Pods with the label selector, in `ns` or in every namespace. */
export async function pods(c: Pick<Cluster, "adminFetch">, selector: string, ns?: string): Promise<Pod[]> {
  const base = ns ? `/api/v1/namespaces/${ns}/pods` : "/api/v1/pods";
  return (await api(c, "GET", `${base}?labelSelector=${encodeURIComponent(selector)}`)).items;
}

/**
 * Waits until exactly `n` pods match and all are Ready (none terminating, none named in `not`);
 * on timeout the error shows what was seen.
 */
export async function readyPods(
  c: Pick<Cluster, "adminFetch">,
  selector: string,
  n: number,
  opts: { ns?: string; not?: string[]; timeoutMs?: number } = {},
): Promise<Pod[]> {
  let last: Pod[] = [];
  try {
    return await eventually(`${n} Ready pods with ${selector}`, async () => {
      last = await pods(c, selector, opts.ns);
      const ready = last.filter((p) => isReady(p) && !(opts.not ?? []).includes(p.metadata.name));
      return ready.length === n && last.length === n ? ready : undefined;
    }, opts.timeoutMs ?? 240_000);
  } catch (err) {
    const seen = last.map((p) => `${p.metadata.name}: ${JSON.stringify(p.status)}`).join("; ");
    throw new Error(`${(err as Error).message}; pods: ${seen}`);
  }
}

/** The public proxy Service: the one with the proxy labels that serves port 80 (undefined: none yet). */
export async function proxyService(c: Pick<Cluster, "adminFetch">): Promise<any> {
  const list = await api(c, "GET", `/api/v1/services?labelSelector=${encodeURIComponent(PROXY_LABELS)}`);
  const found = list.items.filter((s: any) => s.spec.ports.some((p: any) => p.port === 80));
  return found.length === 1 ? found[0] : undefined;
}

/** The echo pods answering `count` requests for `host` at http://`ip`/. */
export async function answering(
  c: Pick<Cluster, "enter">,
  ip: string,
  host: string,
  count: number,
): Promise<Set<string>> {
  const out = await inside(c, Array.from({ length: count }, () => ({ url: `http://${ip}/app`, host })));
  return new Set(out.map(echoPod).filter((p): p is string => p !== null));
}

/** An Ingress of the chart's class sending every host to the Service `echo` port 80. */
export function echoIngress(ns: string, name: string, hosts: string[], tls: { host: string; secret: string }[] = []) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns },
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

/** A kubernetes.io/tls Secret for `host` (leaf then its own CA). */
export async function createTlsSecret(c: Pick<Cluster, "adminFetch">, ns: string, name: string, host: string) {
  const ca = await createCA({ commonName: `${host} test CA` });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  await api(c, "POST", `/api/v1/namespaces/${ns}/secrets`, {
    metadata: { name },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": leaf.certPem + ca.certPem, "tls.key": leaf.keyPem },
  });
}

/**
 * The application the chart is installed for: namespace `ns`, the echo backend (`replicas` pods)
 * behind the Service `echo`, and the Ingress `name` for `hosts` (with `tls`, whose Secrets are
 * made here). Returns once the backend pods are Ready.
 */
export async function createEchoApp(
  c: Pick<Cluster, "adminFetch">,
  ns: string,
  name: string,
  hosts: string[],
  opts: { replicas?: number; tls?: { host: string; secret: string }[] } = {},
): Promise<Pod[]> {
  const replicas = opts.replicas ?? 2;
  await api(c, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
  await api(c, "POST", `/apis/apps/v1/namespaces/${ns}/deployments`, echoDeployment(ns, replicas));
  await api(c, "POST", `/api/v1/namespaces/${ns}/services`, {
    metadata: { name: "echo" },
    spec: { selector: { app: "echo" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
  });
  for (const t of opts.tls ?? []) await createTlsSecret(c, ns, t.secret, t.host);
  await api(c, "POST", `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`, echoIngress(ns, name, hosts, opts.tls));
  return await readyPods(c, "app=echo", replicas, { ns });
}
