/**
 * @module deploy/apply
 * Applies rendered manifests to an API server the way `kubectl apply --server-side` does: each
 * object's REST path comes from the server's discovery documents, and the object is sent as a
 * server-side apply patch (created when missing). With `dryRun` the server validates and admits
 * every object (defaulting, schema, RBAC escalation checks) and stores nothing.
 */
import { parseAllDocuments } from "yaml";

/** fetch() against the API server with the caller's credentials. */
export type ApiFetch = (path: string, init?: RequestInit) => Promise<Response>;

export interface ManifestObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [field: string]: unknown;
}

/** The objects of a multi-document YAML stream (empty documents skipped). */
export function parseManifests(yaml: string): ManifestObject[] {
  return parseAllDocuments(yaml).map((d) => {
    if (d.errors.length > 0) throw new Error(`manifest YAML: ${d.errors[0].message}`);
    return d.toJS() as ManifestObject | null;
  }).filter((o): o is ManifestObject => o !== null && typeof o === "object");
}

interface Discovered {
  plural: string;
  namespaced: boolean;
}

/** Resolves kinds to REST paths through discovery, one request per group/version. */
export class Discovery {
  #groups = new Map<string, Promise<Map<string, Discovered>>>();
  constructor(private readonly fetchApi: ApiFetch) {}

  async resource(apiVersion: string, kind: string): Promise<Discovered> {
    let group = this.#groups.get(apiVersion);
    if (!group) this.#groups.set(apiVersion, group = this.#load(apiVersion));
    const found = (await group).get(kind);
    if (!found) throw new Error(`the API server serves no kind ${kind} in ${apiVersion}`);
    return found;
  }

  async #load(apiVersion: string): Promise<Map<string, Discovered>> {
    const res = await this.fetchApi(apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
    const text = await res.text();
    if (!res.ok) throw new Error(`discovery of ${apiVersion}: ${res.status} ${text}`);
    const list = JSON.parse(text) as { resources: { name: string; kind: string; namespaced: boolean }[] };
    const out = new Map<string, Discovered>();
    for (const r of list.resources) {
      if (!r.name.includes("/")) out.set(r.kind, { plural: r.name, namespaced: r.namespaced });
    }
    return out;
  }
}

/** The REST path of `obj` (its namespace, else `defaultNamespace` for namespaced kinds). */
export async function pathOf(discovery: Discovery, obj: ManifestObject, defaultNamespace?: string): Promise<string> {
  const { plural, namespaced } = await discovery.resource(obj.apiVersion, obj.kind);
  const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = obj.metadata.namespace ?? defaultNamespace;
  if (namespaced && !ns) throw new Error(`${obj.kind} ${obj.metadata.name}: namespaced, but no namespace`);
  const nsPart = namespaced ? `/namespaces/${encodeURIComponent(ns!)}` : "";
  return `${base}${nsPart}/${plural}/${encodeURIComponent(obj.metadata.name)}`;
}

/**
 * Server-side applies each object in order; throws naming the first object the server refuses
 * (its status and message). Returns the objects as the server answered them.
 */
export async function applyManifests(
  fetchApi: ApiFetch,
  objects: readonly ManifestObject[],
  opts: { dryRun?: boolean; fieldManager?: string; defaultNamespace?: string } = {},
): Promise<ManifestObject[]> {
  const discovery = new Discovery(fetchApi);
  const out: ManifestObject[] = [];
  for (const obj of objects) {
    const path = await pathOf(discovery, obj, opts.defaultNamespace);
    const query = new URLSearchParams({
      fieldManager: opts.fieldManager ?? "ingress-controller-deploy",
      force: "true",
    });
    if (opts.dryRun) query.set("dryRun", "All");
    const res = await fetchApi(`${path}?${query}`, {
      method: "PATCH",
      headers: { "content-type": "application/apply-patch+yaml" },
      body: JSON.stringify(obj),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${obj.kind} ${obj.metadata.name}: refused by the API server: ${res.status} ${text}`);
    out.push(JSON.parse(text));
  }
  return out;
}
