/**
 * @module analytics/facts
 * Reads what the analytics events report from the cluster, through lib/cluster's client: the
 * installation id (from the `kube-system` Namespace UID), the server's gitVersion (`GET /version`)
 * and counts of the handled ingresses (one paged list of Ingresses, filtered by the controller's
 * own class rule and namespace restriction). Each fact that cannot be read is null; names never
 * leave this module, only numbers and the hash.
 */
import { defaultIngressClass, handlesIngress } from "../controller/class.ts";
import { collectionPath, type KubeObject, objectPath, resources } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { type ClusterFacts, type Counts, installationId, sanitizeGitVersion } from "./event.ts";

/** The part of lib/cluster/client.ts `ClusterClient` used here. */
export interface ApiReader {
  // deno-lint-ignore no-explicit-any
  request<T = any>(
    method: string,
    path: string,
    opts?: { query?: Record<string, string | number>; signal?: AbortSignal },
  ): Promise<T>;
}

/** Which ingresses count: the controller's `--ingress-class` and `--restrict-to-operator-namespace`. */
export interface Scope {
  ingressClass: string | null;
  restrictToOperatorNamespace: boolean;
  operatorNamespace: string;
}

const pageSize = 500;
const maxPages = 200;

/** Reads every fact; a failing read leaves its field null and is logged at -v=2. */
export async function readClusterFacts(client: ApiReader, scope: Scope, signal?: AbortSignal): Promise<ClusterFacts> {
  const [id, version, counts] = await Promise.all([
    attempt("installation id", async () => {
      const path = objectPath(resources.namespaces, null, "kube-system");
      const ns = await client.request<KubeObject>("GET", path, { signal });
      return ns.metadata?.uid ? installationId(ns.metadata.uid) : null;
    }),
    attempt("server version", async () => {
      const info = await client.request<{ gitVersion?: unknown }>("GET", "/version", { signal });
      return sanitizeGitVersion(info?.gitVersion);
    }),
    attempt("ingress counts", () => countIngresses(client, scope, signal)),
  ]);
  return { installationId: id, kubernetesVersion: version, counts };
}

/** Counts the handled ingresses, their proxies and distinct TLS hosts. */
export async function countIngresses(client: ApiReader, scope: Scope, signal?: AbortSignal): Promise<Counts> {
  const ns = scope.restrictToOperatorNamespace ? scope.operatorNamespace : null;
  const ingresses = await listAll(client, collectionPath(resources.ingresses, ns), signal);
  // The cluster's default IngressClass only matters when a class is asked for (lib/controller/class.ts).
  const defaultClass = scope.ingressClass
    ? defaultIngressClass(await listAll(client, collectionPath(resources.ingressClasses), signal))
    : null;
  const handled = ingresses.filter((i) => handlesIngress(i, scope.ingressClass, defaultClass));
  const tlsHosts = new Set<string>();
  for (const ingress of handled) {
    for (const tls of ingress.spec?.tls ?? []) {
      for (const host of tls?.hosts ?? []) if (typeof host === "string" && host !== "") tlsHosts.add(host);
    }
  }
  // One proxy per handled ingress: that is how the controller publishes (lib/controller/objects.ts).
  return { ingresses: handled.length, proxies: handled.length, tlsHosts: tlsHosts.size };
}

async function listAll(client: ApiReader, path: string, signal?: AbortSignal): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let cont: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const query: Record<string, string | number> = { limit: pageSize };
    if (cont) query.continue = cont;
    const list = await client.request<{ items?: KubeObject[]; metadata?: { continue?: string } }>("GET", path, {
      query,
      signal,
    });
    items.push(...(list.items ?? []));
    cont = list.metadata?.continue;
    if (!cont) return items;
  }
  throw new Error(`more than ${maxPages * pageSize} objects at ${path}`);
}

async function attempt<T>(what: string, read: () => Promise<T | null>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    log.v(2)?.info("analytics: could not read from the cluster; the field is sent as null", {
      what,
      error: err instanceof Error ? err.message : String(err),
    });
    return null;
  }
}
