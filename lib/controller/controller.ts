/**
 * @module controller/controller
 * The controller loop: informers for Ingress, IngressClass, Service, EndpointSlice, TLS Secret
 * and the objects it owns feed a keyed, coalescing work queue; each ingress key is reconciled
 * on its own (one bad ingress never blocks the others): class rule → model → render →
 * validate (`haproxy -c`) → publish the owned objects (server-side apply, only when their hash
 * changed) → `status.loadBalancer`. An ingress that is deleted or stops matching loses its
 * objects (deleted here: no garbage collector is assumed).
 */
import type { V1Ingress } from "@kubernetes/client-node";
import { log } from "../log/logger.ts";
import { ClusterClient, isStatus } from "../cluster/client.ts";
import { dropManagedFields, Informer, type InformerOptions } from "../cluster/informer.ts";
import { keyOf, type KubeObject, objectPath, resources, type ResourceType } from "../cluster/resources.ts";
import {
  buildModel,
  type ClusterLookup,
  configMapData,
  loadTemplates,
  render,
  type Rendered,
  type Templates,
  validateConfig,
} from "../render/mod.ts";
import { defaultIngressClass, handlesIngress } from "./class.ts";
import { EventRecorder } from "./events.ts";
import { reconciles, reconcileSeconds, renders, validationFailures, writes } from "./metrics.ts";
import {
  desiredObjects,
  fieldManager,
  hashAnnotation,
  ingressAnnotation,
  managedByLabel,
  managedByValue,
  ownedResources,
  ownedSelector,
  proxyName,
  shortHash,
} from "./objects.ts";
import { type Platform, preparePlatform } from "./platform.ts";
import { WorkQueue } from "./queue.ts";
import { refsOf, ReverseIndex, secretRef, serviceRef, sliceServiceRef } from "./refs.ts";
import { type ConfigLike, type ControllerSettings, defaultSettings, settingsFromConfig } from "./settings.ts";
import { loadBalancerOf, statusMatches } from "./status.ts";

/** Checks a rendered configuration; resolves with null when valid, else with the reason. */
export type Validator = (rendered: Rendered) => Promise<string | null>;

export interface ControllerDeps {
  client?: ClusterClient;
  templates?: Templates;
  validate?: Validator;
}

export interface ControllerHandle {
  readonly settings: ControllerSettings;
  readonly client: ClusterClient;
  readonly events: EventRecorder;
  /** Resolves when every informer has listed once. */
  readonly synced: Promise<void>;
  /** The informers that have not listed yet, with their last error (for the readiness check). */
  unsynced(): { readonly name: string; readonly lastError: unknown }[];
  /** Resolves when the queue is empty and no reconcile runs (after `synced`). */
  idle(): Promise<void>;
  /** Counters for tests and benchmarks. */
  stats(): ControllerStats;
  stop(): Promise<void>;
}

export interface ControllerStats {
  reconciles: number;
  renders: number;
  writes: number;
  validations: number;
  watchStarts: Record<string, number>;
  lists: Record<string, number>;
  connectionsOpened: number;
  requestsSent: number;
}

const byIngress = "ingress";

/** Starts the controller with the parsed command line or with plain settings. */
export async function startController(
  config: ConfigLike | Partial<ControllerSettings>,
  deps: ControllerDeps = {},
): Promise<ControllerHandle> {
  const settings: ControllerSettings = isConfig(config)
    ? settingsFromConfig(config)
    : { ...defaultSettings, ...config, controllerId: config.controllerId ?? config.ingressClass ?? "default" };
  const templates = deps.templates ?? await loadTemplates(settings.customTemplates);
  const validate = settings.validateProxyConfig ? deps.validate ?? defaultValidator(settings) : null;
  const client = deps.client ?? await ClusterClient.create({
    kubeconfig: settings.kubeconfig,
    qps: settings.qps,
    burst: settings.burst,
  });
  const ownsClient = !deps.client;
  let c: Controller;
  try {
    const platform = await preparePlatform(settings, client);
    c = new Controller(settings, client, templates, validate, platform);
    c.start();
  } catch (err) {
    if (ownsClient) client.close();
    throw err;
  }
  log.info("controller started", {
    ingressClass: settings.ingressClass ?? "(all)",
    namespace: settings.restrictToOperatorNamespace ? settings.operatorNamespace : "(all)",
    validate: !!validate,
    rbac: settings.rbac,
    server: client.server.origin,
  });
  return {
    settings,
    client,
    events: c.events,
    synced: c.synced,
    unsynced: () => c.unsynced(),
    idle: () => c.idle(),
    stats: () => c.stats(),
    stop: async () => {
      await c.stop();
      if (ownsClient) client.close();
      log.info("controller stopped");
    },
  };
}

function isConfig(c: unknown): c is ConfigLike {
  return typeof (c as ConfigLike).get === "function" && typeof (c as ConfigLike).has === "function";
}

/** `haproxy -c` in an isolated directory (lib/render/validate.ts). */
function defaultValidator(settings: ControllerSettings): Validator {
  return async (rendered) => {
    const r = await validateConfig(rendered, { haproxy: settings.haproxyBinary, timeoutMs: 10_000 });
    return r.ok ? null : r.errors.join("; ").slice(0, 800) || "haproxy -c failed";
  };
}

class Controller {
  readonly events: EventRecorder;
  readonly synced: Promise<void>;
  #queue: WorkQueue;
  #index = new ReverseIndex();
  #ingresses: Informer;
  #classes: Informer | null;
  #services: Informer;
  #slices: Informer;
  #secrets: Informer;
  #owned = new Map<ResourceType, Informer>();
  #informers: Informer[] = [];
  /** Hash last applied per owned object (`plural/ns/name`), to skip our own watch echoes. */
  #applied = new Map<string, string>();
  /** Owned object paths per ingress key, as applied (the caches may lag behind). */
  #publishedBy = new Map<string, Set<string>>();
  /** Hash of the configuration last validated per ingress key. */
  #validated = new Map<string, string>();
  #workers: Promise<void>[] = [];
  #stopped = false;
  #idleWaiters: (() => void)[] = [];
  #counts = { reconciles: 0, renders: 0, writes: 0, validations: 0 };
  /** The kinds of owned objects, in the order they are deleted. */
  #ownedKinds: ResourceType[];

  constructor(
    readonly settings: ControllerSettings,
    readonly client: ClusterClient,
    readonly templates: Templates,
    readonly validate: Validator | null,
    readonly platform: Platform,
  ) {
    this.#ownedKinds = ownedResources(settings.rbac, platform.serviceMonitor);
    this.events = new EventRecorder(client);
    this.#queue = new WorkQueue({ coalesceMs: settings.coalesceMs });
    const ns = settings.restrictToOperatorNamespace ? settings.operatorNamespace : null;
    const resyncMs = settings.resyncPeriodMs;
    const inf = (r: ResourceType, extra: Partial<InformerOptions> = {}) => {
      const i = new Informer(client, r, { namespace: ns, resyncMs, ...extra });
      this.#informers.push(i);
      return i;
    };
    this.#ingresses = inf(resources.ingresses);
    // IngressClass is cluster-scoped: with the namespace restriction nothing cluster-wide is listed.
    this.#classes = ns ? null : inf(resources.ingressClasses);
    this.#services = inf(resources.services);
    this.#slices = inf(resources.endpointSlices);
    this.#secrets = inf(resources.secrets, { fieldSelector: "type=kubernetes.io/tls" });
    for (const r of this.#ownedKinds) {
      if (r === resources.services) continue; // the Service informer above also sees owned Services
      // Only the metadata of owned objects is read (hash annotation, owner): keep nothing else.
      this.#owned.set(r, inf(r, { labelSelector: ownedSelector(settings), transform: metadataOnly }));
    }
    const ownerIndex = (o: KubeObject) =>
      o.metadata.labels?.[managedByLabel] === managedByValue && o.metadata.annotations?.[ingressAnnotation]
        ? [o.metadata.annotations[ingressAnnotation]]
        : [];
    for (const i of [this.#services, ...this.#owned.values()]) i.store.addIndexer(byIngress, ownerIndex);
    this.#slices.store.addIndexer("service", (o) => {
      const r = sliceServiceRef(o);
      return r ? [r] : [];
    });
    this.#wire();
    this.synced = Promise.all(this.#informers.map((i) => i.waitForSync())).then(() => {});
  }

  #wire(): void {
    const q = (key: string) => this.#queue.add(key);
    this.#ingresses.on({
      onAdd: (o) => q(keyOf(o)),
      onUpdate: (old, o) => {
        // Our own status writes change neither spec nor metadata: no work for them.
        const same = old.metadata.generation === o.metadata.generation &&
          JSON.stringify(old.metadata.annotations ?? {}) === JSON.stringify(o.metadata.annotations ?? {}) &&
          old.metadata.deletionTimestamp === o.metadata.deletionTimestamp &&
          old.metadata.uid === o.metadata.uid;
        if (!same || old.metadata.resourceVersion === o.metadata.resourceVersion) q(keyOf(o));
      },
      onDelete: (o) => q(keyOf(o)),
    });
    const all = () => this.#ingresses.store.keys().forEach(q);
    this.#classes?.on({ onAdd: all, onUpdate: all, onDelete: all });
    const users = (ref: string) => this.#index.users(ref).forEach(q);
    const onService = (o: KubeObject, old: KubeObject | null, deleted: boolean) => {
      const owner = this.#ownerKey(o);
      if (!owner) return users(serviceRef(o.metadata.namespace!, o.metadata.name));
      // An owned Service (public or stats): its owner needs work when it went away, drifted from
      // what we applied, or, for the public one, got another address (the ingress status follows it).
      const drifted = this.#applied.get(objKey(resources.services, o)) !== o.metadata.annotations?.[hashAnnotation];
      const isPublic = o.metadata.name === proxyName(owner.slice(owner.indexOf("/") + 1));
      const moved = isPublic && (!old || JSON.stringify(loadBalancerOf(old)) !== JSON.stringify(loadBalancerOf(o)));
      if (deleted || drifted || moved) q(owner);
    };
    this.#services.on({
      onAdd: (o) => onService(o, null, false),
      onUpdate: (old, o) => onService(o, old, false),
      onDelete: (o) => onService(o, null, true),
    });
    const onSlice = (o: KubeObject) => {
      const r = sliceServiceRef(o);
      if (r) users(r);
    };
    this.#slices.on({ onAdd: onSlice, onUpdate: (_, o) => onSlice(o), onDelete: onSlice });
    const onSecret = (o: KubeObject) => users(secretRef(o.metadata.namespace!, o.metadata.name));
    this.#secrets.on({ onAdd: onSecret, onUpdate: (_, o) => onSecret(o), onDelete: onSecret });
    for (const [r, i] of this.#owned) {
      const drift = (o: KubeObject, deleted: boolean) => {
        const owner = this.#ownerKey(o);
        if (!owner) return;
        const path = objKey(r, o);
        if (deleted || this.#applied.get(path) !== o.metadata.annotations?.[hashAnnotation]) q(owner);
      };
      i.on({ onAdd: (o) => drift(o, false), onUpdate: (_, o) => drift(o, false), onDelete: (o) => drift(o, true) });
    }
  }

  #ownerKey(o: KubeObject): string | null {
    if (o.metadata.labels?.[managedByLabel] !== managedByValue) return null;
    return o.metadata.annotations?.[ingressAnnotation] ?? null;
  }

  start(): void {
    for (const i of this.#informers) i.start();
    this.synced.then(() => {
      if (this.#stopped) return;
      log.info("controller caches synced", {
        ingresses: this.#ingresses.store.size,
        services: this.#services.store.size,
        endpointSlices: this.#slices.store.size,
        secrets: this.#secrets.store.size,
      });
      for (let n = 0; n < Math.max(1, this.settings.workers); n++) this.#workers.push(this.#work());
      this.#notifyIdle();
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#queue.shutdown();
    await Promise.all(this.#informers.map((i) => i.stop()));
    await Promise.all(this.#workers);
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  idle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#notifyIdle();
    });
  }

  #notifyIdle(): void {
    if (this.#workers.length === 0 || this.#queue.length > 0 || this.#queue.processing > 0) return;
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  unsynced(): { name: string; lastError: unknown }[] {
    return this.#informers.filter((i) => !i.hasSynced).map((i) => ({ name: i.name, lastError: i.lastError }));
  }

  stats(): ControllerStats {
    const per = (f: (i: Informer) => number) => Object.fromEntries(this.#informers.map((i) => [i.name, f(i)]));
    return {
      ...this.#counts,
      watchStarts: per((i) => i.watchStarts),
      lists: per((i) => i.lists),
      connectionsOpened: this.client.connectionsOpened,
      requestsSent: this.client.requestsSent,
    };
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.take();
      if (key === undefined) return;
      const started = performance.now();
      try {
        const result = await this.#reconcile(key);
        reconciles.inc({ result });
        this.#queue.forget(key);
      } catch (err) {
        reconciles.inc({ result: "failed" });
        if (!this.#stopped) {
          const delay = this.#queue.retry(key);
          log.error("reconcile failed; will retry", {
            ingress: key,
            error: err instanceof Error ? err.message : String(err),
            retryInMs: Math.round(delay),
          });
        }
      } finally {
        this.#counts.reconciles++;
        reconcileSeconds.observe((performance.now() - started) / 1000);
        this.#queue.done(key);
        this.#notifyIdle();
      }
    }
  }

  #lookup: ClusterLookup = {
    service: (ns, name) => this.#services.store.get(`${ns}/${name}`) as any,
    endpointSlices: (ns, svc) => this.#slices.store.byIndex("service", serviceRef(ns, svc)) as any,
    secret: (ns, name) => this.#secrets.store.get(`${ns}/${name}`) as any,
  };

  #defaultClass(): string | null {
    return this.#classes ? defaultIngressClass(this.#classes.store.list()) : null;
  }

  async #reconcile(key: string): Promise<string> {
    const ing = this.#ingresses.store.get(key);
    if (!ing || !handlesIngress(ing, this.settings.ingressClass, this.#defaultClass())) {
      this.#index.delete(key);
      this.#validated.delete(key);
      return await this.#remove(key) ? "removed" : "unchanged";
    }
    this.#index.set(key, refsOf(ing));
    const restrictTo = this.settings.restrictToOperatorNamespace ? this.settings.operatorNamespace : null;
    const built = buildModel({ ingresses: [ing as V1Ingress], lookup: this.#lookup, namespace: restrictTo });
    for (const p of built.problems) {
      this.events.record(
        ing,
        "Warning",
        p.reason,
        p.kind === "Ingress" ? p.message : `${p.kind} ${p.object}: ${p.message}`,
      );
    }
    if (!built.servable) {
      this.events.record(
        ing,
        "Warning",
        "NotServable",
        "nothing in this ingress can be routed; the last good configuration keeps serving",
      );
      return "invalid";
    }
    const rendered = render(built.model, this.templates);
    const data = configMapData(rendered);
    this.#counts.renders++;
    renders.inc();
    const cfgHash = shortHash(JSON.stringify(data), 32);
    if (this.validate && this.#validated.get(key) !== cfgHash) {
      this.#counts.validations++;
      const problem = await this.validate(rendered);
      if (problem !== null) {
        validationFailures.inc();
        this.events.record(
          ing,
          "Warning",
          "ValidationFailed",
          `haproxy -c refused the rendered configuration; the last good one keeps serving: ${problem}`,
        );
        return "invalid";
      }
      this.#validated.set(key, cfgHash);
    }
    const secretNames = built.model.tls.filter((t) => t.namespace === ing.metadata.namespace).map((t) => t.name);
    let changed = 0;
    let proxyService: KubeObject | undefined;
    for (const d of desiredObjects(ing, data, secretNames, this.settings, this.platform)) {
      const { object, wrote } = await this.#apply(key, d.resource, d.object, ing);
      if (wrote) changed++;
      // The status follows the public Service only, never the ClusterIP stats Service.
      if (d.resource === resources.services && d.object.metadata.name === proxyName(ing.metadata.name)) {
        proxyService = object;
      }
    }
    await this.#updateStatus(ing, proxyService);
    if (changed > 0) {
      log.info("published proxy configuration", {
        ingress: key,
        objectsWritten: changed,
        config: proxyName(ing.metadata.name),
      });
    }
    return changed > 0 ? "published" : "unchanged";
  }

  #cache(r: ResourceType): Informer {
    return r === resources.services ? this.#services : this.#owned.get(r)!;
  }

  async #apply(
    key: string,
    r: ResourceType,
    obj: KubeObject,
    ing: KubeObject,
  ): Promise<{ object: KubeObject; wrote: boolean }> {
    const path = objKey(r, obj);
    const current = this.#cache(r).store.get(keyOf(obj));
    const hash = obj.metadata.annotations![hashAnnotation];
    let published = this.#publishedBy.get(key);
    if (!published) this.#publishedBy.set(key, published = new Set());
    published.add(path);
    if (current?.metadata.annotations?.[hashAnnotation] === hash) {
      this.#applied.set(path, hash);
      return { object: current, wrote: false };
    }
    // Take over our own objects (force), but never silently a same-named object someone else manages.
    const ours = current?.metadata.labels?.[managedByLabel] === managedByValue;
    try {
      const result = await this.client.request(
        "PATCH",
        objectPath(r, obj.metadata.namespace, obj.metadata.name),
        {
          query: { fieldManager, force: ours ? "true" : "false" },
          body: obj,
          contentType: "application/apply-patch+yaml",
        },
      );
      this.#applied.set(path, hash);
      this.#counts.writes++;
      writes.inc({ kind: r.kind, op: "apply" });
      return { object: result, wrote: true };
    } catch (err) {
      if (isStatus(err, 409, 422)) {
        this.events.record(
          ing,
          "Warning",
          err.status === 409 ? "OwnedObjectConflict" : "OwnedObjectInvalid",
          `cannot apply ${r.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${err.message}`,
        );
      }
      throw err;
    }
  }

  async #updateStatus(ing: KubeObject, service: KubeObject | undefined): Promise<void> {
    const cached = this.#services.store.get(`${ing.metadata.namespace}/${proxyName(ing.metadata.name)}`);
    const want = loadBalancerOf(cached ?? service);
    if (want.length === 0 || statusMatches(ing, want)) return;
    try {
      await this.client.request(
        "PATCH",
        objectPath(resources.ingresses, ing.metadata.namespace, ing.metadata.name, "status"),
        {
          body: { status: { loadBalancer: { ingress: want } } },
          contentType: "application/merge-patch+json",
        },
      );
      this.#counts.writes++;
      writes.inc({ kind: "Ingress", op: "status" });
    } catch (err) {
      if (!isStatus(err, 404)) throw err; // gone meanwhile: its delete event follows
    }
  }

  /** Deletes every object owned by the ingress `key`. Returns whether anything was deleted. */
  async #remove(key: string): Promise<boolean> {
    const targets = new Map<string, { r: ResourceType; ns: string; name: string }>();
    for (const r of this.#ownedKinds) {
      for (const o of this.#cache(r).store.byIndex(byIngress, key)) {
        targets.set(objKey(r, o), { r, ns: o.metadata.namespace!, name: o.metadata.name });
      }
    }
    for (const path of this.#publishedBy.get(key) ?? []) {
      const [plural, ns, name] = path.split("/");
      const r = this.#ownedKinds.find((x) => x.plural === plural);
      if (r) targets.set(path, { r, ns, name });
    }
    this.#publishedBy.delete(key);
    let deleted = 0;
    for (const [path, t] of targets) {
      try {
        await this.client.request("DELETE", objectPath(t.r, t.ns, t.name), {
          body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background" },
        });
        deleted++;
        this.#counts.writes++;
        writes.inc({ kind: t.r.kind, op: "delete" });
      } catch (err) {
        if (!isStatus(err, 404)) throw err;
      }
      this.#applied.delete(path);
    }
    if (deleted > 0) log.info("removed proxy objects", { ingress: key, objects: deleted });
    return deleted > 0;
  }
}

/** An object reduced to what the controller reads of the objects it owns. */
function metadataOnly(o: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences } = dropManagedFields(o).metadata;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name, namespace, uid, resourceVersion, labels, annotations, ownerReferences },
  };
}

function objKey(r: ResourceType, o: KubeObject): string {
  return `${r.plural}/${o.metadata.namespace}/${o.metadata.name}`;
}
