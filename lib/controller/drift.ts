/**
 * @module controller/drift
 * Whether an object the controller owns is still as it made it: every field its desired object
 * sets (lib/controller/objects.ts) has the value it set there. Fields the controller does not set
 * (what the API server defaults, a cluster IP, node ports, a Deployment's revision annotation,
 * status) are not looked at, so defaulting never starts a write loop. The comparison follows what
 * the controller's forced server-side apply (lib/controller/owned_writes.ts) puts back, so that a
 * restore always ends the drift it found:
 * - a map: each key it sets is compared; keys someone else added are left (they survive an apply),
 *   except in the atomic maps (`selector`, `matchLabels`, `nodeSelector`), which an apply replaces
 *   whole and which are compared whole;
 * - a list of objects with a merge key (containers and volumes by name, ports by port and
 *   protocol, …): each item it sets is found by its key and compared; items added are left;
 * - any other list (Role rules, RoleBinding subjects, container args) is atomic: same length,
 *   each item compared in order;
 * - resource quantities by value (the API server stores `1.5` as `1500m`);
 * - a ConfigMap's data by digest, whole: it must be exactly what was written, no key more
 *   (lib/controller/transport.ts; the controller removes keys others added after its apply);
 * - a Deployment's replicas are not compared (LEFT_TO_OTHERS).
 */
import type { KubeObject } from "../cluster/resources.ts";
import { quantityValue } from "../cluster/quantity.ts";
import { CARRIED_FIELD } from "./cached_shapes.ts";
import { type CarriedDigests, carriedDigests, carriesDesired } from "./transport.ts";

/** `<kind> <path>` of fields the API server does not keep as written (see {@link driftOf}). */
export type Unkept = ReadonlySet<string>;

/** Lists whose items are merged by a key (their `x-kubernetes-list-map-keys`), by field name. */
const LIST_KEYS: Readonly<Record<string, (item: Record<string, unknown>) => string>> = {
  containers: (i) => String(i.name),
  initContainers: (i) => String(i.name),
  volumes: (i) => String(i.name),
  env: (i) => String(i.name),
  imagePullSecrets: (i) => String(i.name),
  volumeMounts: (i) => String(i.mountPath),
  ports: (i) => `${i.containerPort ?? i.port}/${i.protocol ?? "TCP"}`,
  topologySpreadConstraints: (i) => `${i.topologyKey}/${i.whenUnsatisfiable}`,
};

/** Maps of strings that a server-side apply replaces whole (`+mapType=atomic`, atomic label selectors). */
const ATOMIC_MAPS = new Set(["selector", "matchLabels", "nodeSelector"]);

/**
 * Fields the controller sets but leaves to others between its own changes: a proxy Deployment's
 * replicas belong to whoever scales it (`kubectl scale`, a HorizontalPodAutoscaler) until the
 * class's `replicas` parameter changes, which rewrites the Deployment.
 */
const LEFT_TO_OTHERS = new Set(["Deployment spec.replicas"]);

/** Top-level fields that are never the controller's to compare. */
const NOT_SET = new Set(["apiVersion", "kind", "metadata", "status"]);

/**
 * The first field of `live` that is not what `desired` sets, as a path
 * (`rules`, `spec.template.spec.containers[haproxy].args`, `metadata.labels.app.kubernetes.io/name`),
 * or null when `live` is as the controller made it. `live` may be a full object from the API
 * server or its cached shape (lib/controller/cached_shapes.ts). Fields in `unkept` are skipped.
 */
export function driftOf(desired: KubeObject, live: KubeObject, unkept: Unkept = new Set()): string | null {
  const kind = desired.kind ?? "";
  const compare = (d: unknown, l: unknown, path: string) => differs(d, l, path, kind, unkept);
  const m = desired.metadata;
  const lm = live.metadata ?? {};
  const meta = compare(m.labels ?? {}, lm.labels ?? {}, "metadata.labels") ??
    compare(m.annotations ?? {}, lm.annotations ?? {}, "metadata.annotations");
  if (meta !== null) return meta;
  for (const ref of m.ownerReferences ?? []) {
    const path = `metadata.ownerReferences[${ref.uid}]`;
    const found = (lm.ownerReferences ?? []).find((r) => r.uid === ref.uid);
    if (!found) return path;
    const d = compare(ref, found, path);
    if (d !== null) return d;
  }
  for (const [field, value] of Object.entries(desired)) {
    if (NOT_SET.has(field)) continue;
    // A ConfigMap's data and binaryData are compared by their digests, once.
    if (kind === "ConfigMap" && (field === "data" || field === "binaryData")) {
      if (field === "binaryData" && "data" in desired) continue;
      const digests: CarriedDigests = live[CARRIED_FIELD] ?? carriedDigests(live.data, live.binaryData);
      if (!carriesDesired(m.annotations, digests)) return field;
      continue;
    }
    const d = compare(value, live[field], field);
    if (d !== null) return d;
  }
  return null;
}

function differs(d: unknown, l: unknown, path: string, kind: string, unkept: Unkept): string | null {
  if (unkept.has(`${kind} ${path}`) || LEFT_TO_OTHERS.has(`${kind} ${path}`)) return null;
  if (d === undefined) return null;
  if (Array.isArray(d)) return listDiffers(d, l, path, kind, unkept);
  if (d !== null && typeof d === "object") {
    if (l === null || typeof l !== "object" || Array.isArray(l)) return path;
    const dm = d as Record<string, unknown>;
    const lm = l as Record<string, unknown>;
    const field = path.slice(path.lastIndexOf(".") + 1);
    if (ATOMIC_MAPS.has(field) && Object.values(dm).every((v) => typeof v === "string")) {
      if (Object.keys(lm).length !== Object.keys(dm).length) return path;
    }
    for (const [k, v] of Object.entries(dm)) {
      const sub = differs(v, lm[k], `${path}.${k}`, kind, unkept);
      if (sub !== null) return sub;
    }
    return null;
  }
  if (typeof d === "string" && typeof l === "string" && /\.resources\.(requests|limits)\.[^.]+$/.test(path)) {
    const [a, b] = [quantityValue(d), quantityValue(l)];
    if (a !== null && b !== null) return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a)) ? null : path;
  }
  return d === l ? null : path;
}

function listDiffers(d: unknown[], l: unknown, path: string, kind: string, unkept: Unkept): string | null {
  // An absent list is an empty one (`rules: []` may come back as null).
  const live = l === undefined || l === null ? [] : l;
  if (!Array.isArray(live)) return path;
  const field = path.slice(path.lastIndexOf(".") + 1).replace(/\[.*$/, "");
  const keyOf = LIST_KEYS[field];
  if (keyOf && d.every(isRecord)) {
    const byKey = new Map(live.filter(isRecord).map((i) => [keyOf(i), i]));
    for (const item of d as Record<string, unknown>[]) {
      const key = keyOf(item);
      const sub = `${path}[${key}]`;
      if (!byKey.has(key)) return unkept.has(`${kind} ${sub}`) ? null : sub;
      const inner = differs(item, byKey.get(key), sub, kind, unkept);
      if (inner !== null) return inner;
    }
    return null;
  }
  if (live.length !== d.length) return path;
  for (let i = 0; i < d.length; i++) {
    const inner = differs(d[i], live[i], `${path}[${i}]`, kind, unkept);
    if (inner !== null) return inner;
  }
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
