/**
 * @module lib/dev/localenv/etcd_objects
 * Many objects at once for the benches: written straight into the test control plane's etcd in the
 * form the API server itself stores, then read by everyone else (the controller, the proxy) through
 * the API server's list and watch as usual. 100,000 Ingresses with their Services and EndpointSlices
 * took over an hour as POSTs on two cores; as etcd transactions they take well under a minute.
 *
 * The stored form is learnt, not guessed: the first object of each call is created with a real POST,
 * its stored JSON is read back from etcd (the API server must run with
 * `--storage-media-type=application/json`), and every further object is that stored object with the
 * caller's fields laid over it (`overlay`): the defaults the API server filled in (a Service's
 * `ipFamilies`, an Ingress's `generation`, ...) come from the real one; `managedFields` are left out
 * (which manager owns a field depends on each object's fields, and no reader here looks at them). Each object
 * gets its own `uid` and `creationTimestamp`; `resourceVersion` is etcd's revision, as for any object.
 * Objects must be of one shape per call (what the benches make): a field the API server would default
 * differently for one object than for the first is not handled. Every put is conditional on the key
 * being absent (as a create), so an existing object is never overwritten.
 *
 * ```ts
 * await writeStoredObjects({ etcdUrl: cp.etcdUrl, client }, resources.services, services);
 * ```
 */
import type { ClusterClient } from "../../cluster/client.ts";
import { collectionPath, type KubeObject, type ResourceType } from "../../cluster/resources.ts";

/**
 * The key of an object under the API server's etcd prefix (`--etcd-prefix`, default `/registry`):
 * the resource's storage path (most are the plural; a few keep older names), namespace, name.
 */
const storagePaths: Record<string, string> = {
  "/services": "services/specs",
  "networking.k8s.io/ingresses": "ingress",
};

export function storageKey(r: ResourceType, ns: string | undefined, name: string, prefix = "/registry"): string {
  const path = storagePaths[`${r.group}/${r.plural}`] ?? r.plural;
  return r.namespaced ? `${prefix}/${path}/${ns}/${name}` : `${prefix}/${path}/${name}`;
}

export interface StoredWriterTarget {
  /** http://127.0.0.1:<port> of the API server's etcd (ControlPlane.etcdUrl). */
  etcdUrl: string;
  /** An admin client of the API server (for the first object's POST). */
  client: ClusterClient;
  /** `--etcd-prefix` of the API server (default `/registry`). */
  prefix?: string;
}

export interface WriteOptions {
  /** Puts per etcd transaction (etcd's `--max-txn-ops` is 128 by default). */
  batch?: number;
  /** Transactions under way at once. */
  width?: number;
}

/**
 * Creates `objects` (all of resource `r`, one shape): the first through the API server, the rest
 * as its stored form with their own fields laid over. Returns how many were written.
 */
export async function writeStoredObjects(
  target: StoredWriterTarget,
  r: ResourceType,
  objects: Iterable<KubeObject>,
  opts: WriteOptions = {},
): Promise<number> {
  const prefix = target.prefix ?? "/registry";
  const batch = opts.batch ?? 128;
  const it = objects[Symbol.iterator]();
  const first = it.next();
  if (first.done) return 0;
  const created = await target.client.request("POST", collectionPath(r, first.value.metadata.namespace ?? null), {
    body: first.value,
  }) as KubeObject;
  const template = await readStored(
    target.etcdUrl,
    storageKey(r, created.metadata.namespace, created.metadata.name, prefix),
  );
  const ips = (template.spec as { clusterIPs?: string[] } | undefined)?.clusterIPs;
  if (r.kind === "Service" && ips?.some((ip) => ip !== "None")) {
    // Copying the first one's address would give every Service the same one behind the allocator's back.
    throw new Error("Services with a cluster IP are created through the API server only (its allocator owns them)");
  }
  let count = 1;
  let done = false;
  const nextBatch = (): [string, string][] | null => {
    if (done) return null;
    const puts: [string, string][] = [];
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z"); // the API server's second precision
    while (puts.length < batch) {
      const n = it.next();
      if (n.done) {
        done = true;
        break;
      }
      const stored = storedForm(template, n.value, crypto.randomUUID(), now);
      puts.push([storageKey(r, stored.metadata.namespace, stored.metadata.name, prefix), JSON.stringify(stored)]);
    }
    count += puts.length;
    return puts.length ? puts : null;
  };
  await Promise.all(Array.from({ length: opts.width ?? 4 }, async () => {
    for (let puts = nextBatch(); puts; puts = nextBatch()) await createAll(target.etcdUrl, puts);
  }));
  return count;
}

/**
 * What the API server would store for `obj` given `template`, the stored form of an object of the
 * same shape: the template with `obj`'s fields laid over, its own uid and creation time, no
 * resourceVersion (etcd's revision is the resourceVersion), no managedFields, and the template's
 * other metadata (generation).
 */
export function storedForm(template: KubeObject, obj: KubeObject, uid: string, creationTimestamp: string): KubeObject {
  const out = overlay(template, obj) as KubeObject;
  const meta = { ...out.metadata, uid, creationTimestamp };
  delete meta.resourceVersion;
  // Which manager owns which field depends on each object's fields: no owners rather than wrong ones.
  delete (meta as { managedFields?: unknown }).managedFields;
  // The API server omits empty maps (Go's omitempty); so do we.
  for (const k of ["labels", "annotations"] as const) if (meta[k] && !Object.keys(meta[k]).length) delete meta[k];
  if (!obj.metadata.labels) delete meta.labels;
  if (!obj.metadata.annotations) delete meta.annotations;
  out.metadata = meta;
  return out;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isMap = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `value` over `base`: maps merged key by key (keys only in `base` are kept: the defaults), arrays
 * element by element (an element past `base`'s last takes the last one's defaults), anything else `value`.
 */
export function overlay(base: unknown, value: unknown): Json {
  if (isMap(base) && isMap(value)) {
    const out: Record<string, Json> = { ...base };
    for (const [k, v] of Object.entries(value)) out[k] = k in base ? overlay(base[k], v) : v as Json;
    return out;
  }
  if (Array.isArray(base) && Array.isArray(value)) {
    return value.map((v, i) => base.length ? overlay(base[Math.min(i, base.length - 1)], v) : v as Json);
  }
  return value as Json;
}

const b64 = (s: string) => {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
};

async function etcdCall(etcdUrl: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${etcdUrl}${path}`, { method: "POST", body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The stored JSON of `key`, read from etcd (fails if absent or not JSON). */
export async function readStored(etcdUrl: string, key: string): Promise<KubeObject> {
  const got = await etcdCall(etcdUrl, "/v3/kv/range", { key: b64(key) }) as { kvs?: { value: string }[] };
  const value = got.kvs?.[0]?.value;
  if (!value) throw new Error(`etcd has no ${key}`);
  const text = new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
  if (!text.startsWith("{")) {
    throw new Error(`${key} is not stored as JSON: start the API server with --storage-media-type=application/json`);
  }
  return JSON.parse(text);
}

/** Puts every `[key, value]` in one transaction if none of the keys exists yet (else fails). */
async function createAll(etcdUrl: string, puts: [string, string][]): Promise<void> {
  const keys = puts.map(([k]) => b64(k));
  const got = await etcdCall(etcdUrl, "/v3/kv/txn", {
    compare: keys.map((key) => ({ key, target: "CREATE", result: "EQUAL", create_revision: "0" })),
    success: puts.map(([, v], i) => ({ request_put: { key: keys[i], value: b64(v) } })),
  });
  if (!got.succeeded) throw new Error(`etcd: one of ${puts[0][0]} … ${puts.at(-1)![0]} exists already`);
}
