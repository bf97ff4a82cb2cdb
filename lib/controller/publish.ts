/**
 * @module controller/publish
 * Publishing a group's proxy: its objects (lib/controller/objects.ts; the configuration in a head
 * ConfigMap and, when large, part ConfigMaps: lib/controller/transport.ts) looked up, checked for
 * ownership, written when their hash changed, and the objects the group no longer needs removed.
 * - Only objects the controller made are written, deleted or read for the status
 *   (lib/controller/ownership.ts); each write is bound to the object's identity
 *   (lib/controller/owned_writes.ts). A same-named object of someone else blocks the group, or,
 *   in a namespace whose Secrets the proxy reads, leaves that namespace's members out; it is
 *   reported with an `OwnershipConflict` Warning Event.
 * - New part ConfigMaps are created while `haproxy -c` runs; the head, which names the parts, is
 *   written only once all of them are.
 * - An owned object someone else changed (lib/controller/drift.ts) or deleted is put back with an
 *   `OwnedObjectRestored` Warning Event on it, paced when it keeps being changed
 *   (lib/controller/restores.ts). The hashes of the controller's own writes
 *   (lib/controller/applied.ts) tell their watch events from changes by others.
 */
import type { ClusterClient } from "../cluster/client.ts";
import { isStatus } from "../cluster/client.ts";
import { keyOf, type KubeObject, objectPath, resources, type ResourceType } from "../cluster/resources.ts";
import { listMetadata } from "../cluster/metadata_list.ts";
import { forEachLimit } from "../runtime/concurrency.ts";
import { log } from "../log/logger.ts";
import { configMapData, type Rendered } from "../render/mod.ts";
import { AppliedHashes } from "./applied.ts";
import type { ClusterCaches } from "./caches.ts";
import type { ClassParams } from "./class_params.ts";
import { driftOf } from "./drift.ts";
import type { EventRecorder } from "./events.ts";
import type { GroupKey } from "./groups.ts";
import type { Writer } from "./leader.ts";
import { ownershipConflicts, restores, type WorkCounts, writes } from "./metrics.ts";
import { type Desired, hashAnnotation, proxyObjects, type ProxyTarget } from "./objects.ts";
import { applyOwned, createOwned, deleteOwned } from "./owned_writes.ts";
import { conflictMessage, ownedBy } from "./ownership.ts";
import type { Platform } from "./platform.ts";
import { RestorePacer } from "./restores.ts";
import type { ControllerSettings } from "./settings.ts";
import { existingParts, partOfLabel } from "./transport.ts";

/** Part ConfigMaps written (and objects looked up) at once (each up to 512 KiB: etcd, not the count, is the limit). */
const PART_WRITES_IN_FLIGHT = 4;

/** Objects of one kind in one namespace missing from the caches from which one list finds them all. */
const LIST_LOOKUP_MIN = 8;

/** The objects of a group's proxy for one configuration, and what is known of them. */
export interface Plan {
  target: ProxyTarget;
  /** In write order (lib/controller/transport.ts). */
  desired: Desired[];
  /** The current object of each of `desired` (null: absent), being looked up. */
  found: Promise<(KubeObject | null)[]>;
  /** Part ConfigMaps created while `haproxy -c` ran, by their index in `desired`. */
  early: Map<number, KubeObject>;
}

export interface PublishDeps {
  client: ClusterClient;
  /** Refuses and aborts writes outside a leadership term. */
  writer: Writer;
  settings: ControllerSettings;
  platform: Platform;
  caches: ClusterCaches;
  events: EventRecorder;
  counts: WorkCounts;
  /** Looks at `group` again in `ms` (a paced restore). */
  later(group: GroupKey, ms: number): void;
}

export class Publisher {
  /** Hash last applied per owned object (`plural/ns/name`), to skip our own watch echoes. */
  readonly #applied = new AppliedHashes();
  /** How soon an owned object someone keeps changing may be restored again. */
  readonly #pacer = new RestorePacer();
  /** `<kind> <field>` the API server does not keep as written (#learnUnkept). */
  readonly #unkept = new Set<string>();
  /** Cached owned objects last found as the controller made them, with the hash of what it wanted then (#driftOf). */
  readonly #clean = new WeakMap<KubeObject, string>();
  /** Per group, the owned objects written or found ours (path → uid); the caches may lag behind. */
  readonly #publishedBy = new Map<string, Map<string, string>>();

  constructor(readonly deps: PublishDeps) {}

  /** The objects `group`'s proxy needs for `rendered`, looked up from now on. */
  plan(group: GroupKey, target: ProxyTarget, rendered: Rendered, params: ClassParams): Plan {
    const { settings, platform, caches } = this.deps;
    const secrets = rendered.secrets.map((t) => ({
      namespace: t.namespace,
      name: t.name,
      ...(t.kind === "configmap-ca" ? { configMap: true } : {}),
    }));
    // The part ConfigMaps this proxy has now: unchanged content keeps its part (docs/config-transport.md).
    const parts = existingParts(target.name, caches.madeBy(resources.configMaps, group));
    const data = configMapData(rendered);
    const desired = proxyObjects(target, data, secrets, settings, platform, params, parts);
    return { target, desired, found: this.#lookUp(desired), early: new Map() };
  }

  /**
   * Runs `check` (haproxy -c) while the plan's new part ConfigMaps are created (only when no
   * object is someone else's): never left running behind a failed check, whose own failure is
   * thrown; a failed creation is thrown after a check that passed.
   */
  async whileChecking<T>(group: GroupKey, plan: Plan, members: readonly KubeObject[], check: () => Promise<T>) {
    // Settled into a value at once: a creation refused while the check still runs (the end of a
    // leader's term) is a rejection nobody would handle until then, which ends the process.
    const creating = this.#createNewParts(group, plan.desired, plan.found, members).then(
      (early) => ({ early }),
      (err: unknown) => ({ err }),
    );
    let checked: T;
    try {
      checked = await check();
    } finally {
      await creating;
    }
    const created = await creating;
    if ("err" in created) throw created.err;
    plan.early = created.early;
    return checked;
  }

  /** The current object of each of the plan's objects (null: absent). */
  async current(plan: Plan): Promise<(KubeObject | null)[]> {
    const current = await plan.found;
    for (const [i, object] of plan.early) current[i] = object;
    return current;
  }

  /**
   * The objects of the plan that are someone else's, reported (Events on the members concerned,
   * counted): null when there are none; else whether one is in the proxy's own namespace (the group
   * is blocked) and the members of the namespaces without any (the others are left out).
   */
  conflicts(
    group: GroupKey,
    plan: Plan,
    current: readonly (KubeObject | null)[],
    members: readonly KubeObject[],
  ): { blocked: boolean; kept: KubeObject[] } | null {
    const { desired, target } = plan;
    const foreign = [...current.keys()].filter((i) => current[i] && !this.#ours(group, desired[i], current[i]!));
    if (foreign.length === 0) return null;
    const elsewhere = new Set<string>();
    let blocked = false;
    for (const i of foreign) {
      const ns = desired[i].object.metadata.namespace!;
      const inside = ns === target.namespace;
      if (inside) blocked = true;
      else elsewhere.add(ns);
      ownershipConflicts.inc({ kind: desired[i].resource.kind });
      const message = conflictMessage(
        desired[i].resource.kind,
        current[i]!,
        group,
        this.deps.settings.controllerId,
        inside ? null : ns,
      );
      for (const m of members) {
        if (inside || m.metadata.namespace === ns) this.deps.events.record(m, "Warning", "OwnershipConflict", message);
      }
    }
    return { blocked, kept: members.filter((m) => !elsewhere.has(m.metadata.namespace!)) };
  }

  /**
   * Writes the plan's objects that changed (the parts a few at a time, then the rest in order: the
   * head names the parts, so it is written only once all of them are) and removes the objects the
   * group no longer needs (e.g. a Role for Secrets of a namespace it left). `written`: the objects
   * written, the parts created early included; `proxyService`: the public Service as written or found.
   */
  async publish(
    group: GroupKey,
    plan: Plan,
    current: readonly (KubeObject | null)[],
    members: readonly KubeObject[],
  ): Promise<{ written: number; proxyService: KubeObject | undefined }> {
    const { desired, early, target } = plan;
    let written = early.size;
    let proxyService: KubeObject | undefined;
    const write = async (i: number) => {
      if (early.has(i)) return;
      const d = desired[i];
      const { object, wrote } = await this.#write(group, d.resource, d.object, current[i], members);
      if (wrote) written++;
      // The status follows the public Service only, never the ClusterIP stats Service.
      if (d.resource === resources.services && d.object.metadata.name === target.name) proxyService = object;
    };
    // The part ConfigMaps come first and do not depend on each other: a few at a time (a first
    // publish of 10,000 ingresses writes about 130). Meanwhile, with --rbac, the proxy's read access
    // (ServiceAccount, Roles, RoleBindings, in order): the head may name part slots or Secrets that
    // only the new Roles grant.
    const partCount = partsBeforeHead(desired);
    const access = [...desired.keys()].filter((i) => i >= partCount && READ_ACCESS.has(desired[i].resource));
    await Promise.all([
      forEachLimit([...desired.keys()].slice(0, partCount), PART_WRITES_IN_FLIGHT, write),
      (async () => {
        for (const i of access) await write(i);
      })(),
    ]);
    // The head, then the parts it carries, which do not depend on each other either: written
    // together (one after the other, they held the next change's reconcile for two more writes).
    let next = partCount;
    if (next < desired.length) await write(next++);
    const carried: number[] = [];
    while (next < desired.length && isPart(desired[next])) carried.push(next++);
    await forEachLimit(carried, PART_WRITES_IN_FLIGHT, write);
    for (; next < desired.length; next++) if (!access.includes(next)) await write(next);
    await this.remove(group, new Set(desired.map((d) => objectKey(d.resource, d.object))));
    return { written, proxyService };
  }

  /**
   * Whether the event of an owned object (`old` → `o`) may be someone else's change: not the event
   * of one of the controller's own writes, and either another hash than the one it should carry
   * or another content with that hash (a field changed, the hash left as it was). Status and
   * version alone are no change.
   */
  changedByOthers(r: ResourceType, old: KubeObject | null, o: KubeObject): boolean {
    const seen = this.#applied.classify(objectKey(r, o), o.metadata.annotations?.[hashAnnotation]);
    if (seen === "echo") return false;
    return seen === "other" || old === null || ownedContent(old) !== ownedContent(o);
  }

  /** A lost leadership term: what this replica wrote or found may change under another leader. */
  forgetTerm(): void {
    this.#applied.clear();
    this.#publishedBy.clear();
  }

  /**
   * Whether `found`, at the name of one of `group`'s objects, is the controller's: it carries the
   * marks (lib/controller/ownership.ts), or it is the very object (uid) the controller wrote or
   * found its own in this term and someone removed marks from it (then they are put back).
   */
  #ours(group: GroupKey, d: Desired, found: KubeObject): boolean {
    return ownedBy(found, group, this.deps.settings.controllerId) ||
      (found.metadata.uid !== undefined &&
        this.#publishedBy.get(group)?.get(objectKey(d.resource, d.object)) === found.metadata.uid);
  }

  /**
   * The current object of each of `desired` (null: absent): from the caches, else from the API
   * server, a few GETs at a time, or one metadata list of a namespace's objects of a kind where
   * LIST_LOOKUP_MIN or more of them miss the cache (a first publish of 100,000 Ingresses has ~670
   * new part ConfigMaps: one request instead of 671). The caches of owned kinds hold only labelled
   * objects: a miss is an absent object or someone else's. Metadata is what the ownership check
   * reads; a write that needs more of an object (a drift check) fetches it.
   */
  async #lookUp(desired: readonly Desired[]): Promise<(KubeObject | null)[]> {
    const found: (KubeObject | null)[] = new Array(desired.length).fill(null);
    const missed = new Map<string, number[]>();
    desired.forEach((d, i) => {
      const cached = this.deps.caches.ownedCache(d.resource).store.get(keyOf(d.object));
      if (cached) found[i] = cached;
      else {
        const where = `${d.resource.plural} ${d.object.metadata.namespace ?? ""}`;
        missed.get(where)?.push(i) ?? missed.set(where, [i]);
      }
    });
    const one: number[] = [];
    const listed: number[][] = [];
    for (const is of missed.values()) {
      if (is.length >= LIST_LOOKUP_MIN && desired[is[0]].object.metadata.namespace) listed.push(is);
      else one.push(...is);
    }
    await Promise.all([
      forEachLimit(one, PART_WRITES_IN_FLIGHT, async (i) => {
        found[i] = await this.#fetch(desired[i].resource, desired[i].object);
      }),
      ...listed.map(async (is) => {
        const { resource, object } = desired[is[0]];
        const byName = await listMetadata(this.deps.client, resource, object.metadata.namespace!);
        for (const i of is) found[i] = byName.get(desired[i].object.metadata.name) ?? null;
      }),
    ]);
    return found;
  }

  /**
   * Creates the part ConfigMaps of `desired` that do not exist yet and come before the head (not
   * those it carries), while haproxy -c checks the configuration: no head names a part that does
   * not exist, so no proxy reads them before the head that names them is written after the check
   * (a first publish of 10,000 ingresses creates ~130, which takes as long as the check). If the
   * check refuses, they are unused and the next publish removes them. Nothing is created while
   * any object is someone else's.
   */
  async #createNewParts(
    group: GroupKey,
    desired: readonly Desired[],
    found: Promise<(KubeObject | null)[]>,
    members: readonly KubeObject[],
  ): Promise<Map<number, KubeObject>> {
    const current = await found;
    const created = new Map<number, KubeObject>();
    if (current.some((c) => c && !ownedBy(c, group, this.deps.settings.controllerId))) return created;
    // Only the parts before the head: those after it are carried by the head, whose write is the
    // one a change waits for; created before it, they would delay it.
    const head = partsBeforeHead(desired);
    const absent = [...desired.keys()].filter((i) => i < head && current[i] === null);
    await forEachLimit(absent, PART_WRITES_IN_FLIGHT, async (i) => {
      const { object } = await this.#write(group, desired[i].resource, desired[i].object, null, members);
      created.set(i, object);
    });
    return created;
  }

  #published(group: GroupKey, path: string, uid: string): void {
    let published = this.#publishedBy.get(group);
    if (!published) this.#publishedBy.set(group, published = new Map());
    published.set(path, uid);
  }

  /**
   * Creates `obj`, or updates `current` (ours) when its hash differs, or puts it back when someone
   * else changed what the controller set in it (lib/controller/drift.ts): with a Warning Event on
   * the object, counted, and paced when it keeps being changed (lib/controller/restores.ts).
   */
  async #write(
    group: GroupKey,
    r: ResourceType,
    obj: KubeObject,
    current: KubeObject | null,
    members: readonly KubeObject[],
  ): Promise<{ object: KubeObject; wrote: boolean }> {
    const path = objectKey(r, obj);
    const hash = obj.metadata.annotations![hashAnnotation];
    let drift: string | null = null;
    if (current) {
      drift = this.#driftOf(path, obj, current);
      if (drift !== null) {
        // The cache may not show the controller's own last write yet: only the object as it is now counts.
        const uid = current.metadata.uid;
        current = await this.#fetch(r, obj);
        if (current && current.metadata.uid !== uid) {
          // Replaced since its owner was checked: the retry checks the new one.
          throw new Error(`${r.kind} ${obj.metadata.namespace}/${obj.metadata.name} was replaced meanwhile`);
        }
        drift = current && this.#driftOf(path, obj, current);
      }
      // What the cache shows is the object as wanted, unless the controller wrote it otherwise since
      // (its watch event not in yet): a change and its quick revert would then never reach the API server.
      const written = this.#applied.get(path);
      if (
        current && drift === null && current.metadata.annotations?.[hashAnnotation] === hash &&
        (written === undefined || written === hash)
      ) {
        this.#published(group, path, current.metadata.uid!);
        this.#applied.found(path, hash);
        return { object: current, wrote: false };
      }
      const wait = drift === null ? 0 : this.#pacer.wait(path);
      if (current && wait > 0) {
        this.#published(group, path, current.metadata.uid!);
        this.deps.later(group, wait);
        return { object: current, wrote: false };
      }
    }
    // Gone although the controller wrote or found it just as it still wants it: someone else deleted it.
    const deleted = current === null && this.#applied.get(path) === hash;
    let result: KubeObject;
    const undo = this.#applied.writing(path, hash);
    try {
      result = current
        ? await applyOwned(this.deps.writer, r, obj, current.metadata.uid!)
        : await createOwned(this.deps.writer, r, obj);
    } catch (err) {
      undo();
      // A 409, or a 422 on metadata.uid: the object appeared, vanished or was replaced since it
      // was looked at; the retry looks again. Any other 422 is a refused object: report it.
      if (isStatus(err, 422) && !/metadata\.uid/.test(err.message)) {
        for (const m of members) {
          this.deps.events.record(
            m,
            "Warning",
            "OwnedObjectInvalid",
            `cannot apply ${r.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${err.message}`,
          );
        }
      }
      throw err;
    }
    this.#published(group, path, result.metadata.uid!);
    this.deps.counts.writes++;
    writes.inc({ kind: r.kind, op: current ? "apply" : "create" });
    if (r === resources.configMaps) result = await this.#dropForeignData(obj, result);
    else this.#learnUnkept(obj, result);
    if (drift !== null) this.#restored(path, result, `changed by someone other than the controller (${drift})`);
    else if (deleted) this.#restored(null, result, "deleted by someone other than the controller");
    return { object: result, wrote: true };
  }

  /**
   * What differs in `current` from `desired` that someone else changed (a path), or null: the
   * fields the controller sets (lib/controller/drift.ts), and the hash annotation when what the
   * controller wants of the object is what it last wrote or found there.
   */
  #driftOf(path: string, desired: KubeObject, current: KubeObject): string | null {
    const hash = desired.metadata.annotations![hashAnnotation];
    if (current.metadata.annotations?.[hashAnnotation] !== hash) {
      return this.#applied.get(path) === hash ? `metadata.annotations.${hashAnnotation}` : null;
    }
    // The same cached object found as the controller made it for the same desired object (the hash
    // covers all of it) is so still: the caches replace an object that changes. A publish of a
    // 100,000-Ingress class compares ~1,400 part ConfigMaps, and most are the same every time.
    if (this.#clean.get(current) === hash) return null;
    const drift = driftOf(desired, current, this.#unkept);
    if (drift === null) this.#clean.set(current, hash);
    return drift;
  }

  /** The object of `obj`'s name as the API server has it now (null: none). */
  async #fetch(r: ResourceType, obj: KubeObject): Promise<KubeObject | null> {
    try {
      return await this.deps.client.request("GET", objectPath(r, obj.metadata.namespace, obj.metadata.name));
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  /**
   * Reports an object put back as the controller made it (`how` it had been changed), on the
   * object itself; `path`: a restore that is paced (lib/controller/restores.ts). A re-created object
   * is not: it costs one write per deletion by someone else.
   */
  #restored(path: string | null, object: KubeObject, how: string): void {
    const count = path === null ? 1 : this.#pacer.restored(path);
    restores.inc({ kind: object.kind ?? "" });
    const what = `${object.kind} ${object.metadata.namespace}/${object.metadata.name}`;
    const again = count > 1
      ? `; restored ${count} times in a row: another writer keeps changing it, so restores now wait up to 5 minutes`
      : "";
    // On the object: it is where the change was made, and only who can see that namespace sees it.
    this.deps.events.record(
      object,
      "Warning",
      "OwnedObjectRestored",
      `${what} was ${how}; restored as the controller made it${again}`,
    );
  }

  /**
   * A server-side apply leaves the ConfigMap keys someone else added: they are removed, so the
   * data is exactly what the controller wrote (its digest, which the proxy checks, covers all of it).
   */
  async #dropForeignData(desired: KubeObject, result: KubeObject): Promise<KubeObject> {
    const foreign = (field: "data" | "binaryData") =>
      Object.keys(result[field] ?? {}).filter((k) => !(k in (desired[field] ?? {}))).map((k) => [field, k]);
    const extra = [...foreign("data"), ...foreign("binaryData")];
    if (extra.length === 0) return result;
    const pointer = ([field, k]: string[]) => `/${field}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    const patched: KubeObject = await this.deps.writer.request(
      "PATCH",
      objectPath(resources.configMaps, result.metadata.namespace, result.metadata.name),
      {
        body: [
          { op: "test", path: "/metadata/uid", value: result.metadata.uid },
          ...extra.map((k) => ({ op: "remove", path: pointer(k) })),
        ],
        contentType: "application/json-patch+json",
      },
    );
    this.deps.counts.writes++;
    writes.inc({ kind: "ConfigMap", op: "patch" });
    return patched;
  }

  /**
   * Fields the API server did not keep as they were written (a disabled feature's field, a value
   * it normalizes in a way drift.ts does not know, a mutating admission webhook): they are not
   * compared from then on, so they never start a write loop. Logged once each.
   */
  #learnUnkept(desired: KubeObject, result: KubeObject): void {
    for (let i = 0; i < 16; i++) {
      const path = driftOf(desired, result, this.#unkept);
      if (path === null) return;
      this.#unkept.add(`${desired.kind} ${path}`);
      log.warn("the API server does not keep a field as the controller writes it; it is not compared from now on", {
        kind: desired.kind,
        field: path,
      });
    }
  }

  /**
   * Deletes every object the controller made for `group` but those in `keep`, each by its uid (a
   * same-named object made since is left alone). Returns whether anything was deleted.
   */
  async remove(group: GroupKey, keep: ReadonlySet<string>): Promise<boolean> {
    const { caches, settings } = this.deps;
    const targets = new Map<string, { r: ResourceType; ns: string; name: string; uid: string }>();
    for (const r of caches.ownedKinds) {
      for (const o of caches.madeBy(r, group)) {
        if (!ownedBy(o, group, settings.controllerId)) continue; // e.g. another controller's
        const path = objectKey(r, o);
        if (!keep.has(path)) {
          targets.set(path, { r, ns: o.metadata.namespace!, name: o.metadata.name, uid: o.metadata.uid! });
        }
      }
    }
    const published = this.#publishedBy.get(group);
    for (const [path, uid] of published ?? []) {
      // Kept ones first: a class of 100,000 Ingresses keeps its ~1,400 parts at every change.
      if (keep.has(path)) continue;
      const [plural, ns, name] = path.split("/");
      const r = caches.ownedKinds.find((x) => x.plural === plural);
      if (r) targets.set(path, { r, ns, name, uid });
    }
    let deleted = 0;
    // A few at a time: the parts a change replaced are deleted after its head (each by its uid).
    await forEachLimit([...targets], PART_WRITES_IN_FLIGHT, async ([path, t]) => {
      const outcome = await deleteOwned(this.deps.writer, t.r, t.ns, t.name, t.uid);
      if (outcome === "deleted") {
        deleted++;
        this.deps.counts.writes++;
        writes.inc({ kind: t.r.kind, op: "delete" });
      } else if (outcome === "replaced") {
        ownershipConflicts.inc({ kind: t.r.kind });
        log.warn("not deleting a proxy object: another object has its name by now", { group, object: path });
      }
      this.#applied.delete(path);
      published?.delete(path);
    });
    if (keep.size === 0) this.#publishedBy.delete(group);
    if (deleted > 0) log.info("removed proxy objects", { group, objects: deleted });
    return deleted > 0;
  }
}

/** The kinds that give a proxy its read access (`--rbac`), written before the head that needs them. */
const READ_ACCESS: ReadonlySet<ResourceType> = new Set([
  resources.serviceAccounts,
  resources.roles,
  resources.roleBindings,
]);

/** How many of `desired` (in write order, lib/controller/transport.ts) are parts written before the head. */
function partsBeforeHead(desired: readonly Desired[]): number {
  return Math.max(0, desired.findIndex((d) => !isPart(d)));
}

/** A part ConfigMap (lib/controller/transport.ts labels them). */
function isPart(d: Desired): boolean {
  return d.object.metadata.labels?.[partOfLabel] !== undefined;
}

/** `plural/namespace/name`: an owned object's path as the controller keeps it. */
function objectKey(r: ResourceType, o: KubeObject): string {
  return `${r.plural}/${o.metadata.namespace}/${o.metadata.name}`;
}

/** A cached owned object without what changes by itself (its version and status). */
function ownedContent(o: KubeObject): string {
  const { status: _, metadata: { resourceVersion: _rv, ...metadata }, ...rest } = o;
  return JSON.stringify({ ...rest, metadata });
}
