/**
 * @module controller/controller
 * The controller loop: informers for Ingress, IngressClass, Service, EndpointSlice, TLS Secret
 * and the objects it owns feed a keyed, coalescing work queue; each ingress key is reconciled
 * on its own (one bad ingress never blocks the others): class rule → model → render →
 * validate (`haproxy -c`) → publish the owned objects (only when their hash changed) →
 * `status.loadBalancer`. An ingress that is deleted or stops matching loses its objects (deleted
 * here: no garbage collector is assumed). Only objects the controller created are ever written,
 * deleted or read for the status (lib/controller/ownership.ts, lib/controller/publish.ts); a
 * same-named foreign object blocks the ingress with an Event until it is gone. The Secret cache
 * holds summaries, never key material (lib/render/tls_secret.ts). Only the leader writes
 * (lib/controller/leader.ts): every write goes through a gated writer, and the queue is paused
 * while another replica leads (the caches stay warm); a new term starts with a full resync.
 */
import type { V1Ingress } from "@kubernetes/client-node";
import { log } from "../log/logger.ts";
import { Backoff } from "../cluster/backoff.ts";
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
  summarizedSecret,
  type Templates,
  validateConfig,
} from "../render/mod.ts";
import { defaultIngressClass, handlesIngress } from "./class.ts";
import { EventRecorder } from "./events.ts";
import { gatedWriter, holderIdentity, LeaderElector, type Leadership, leaseName, type Writer } from "./leader.ts";
import { ownershipConflicts, reconciles, reconcileSeconds, renders, validationFailures, writes } from "./metrics.ts";
import {
  desiredObjects,
  hashAnnotation,
  ingressAnnotation,
  managedByLabel,
  managedByValue,
  ownedResources,
  ownedSelector,
  proxyName,
  shortHash,
} from "./objects.ts";
import { conflictMessage, ownedBy } from "./ownership.ts";
import { type Platform, preparePlatform } from "./platform.ts";
import { applyOwned, createOwned, deleteOwned } from "./publish.ts";
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
  /** Who may write; default: an election on the Lease of the controller id (lib/controller/leader.ts). */
  leadership?: Leadership;
}

export interface ControllerHandle {
  readonly settings: ControllerSettings;
  readonly client: ClusterClient;
  readonly events: EventRecorder;
  /** Whether this replica leads (only the leader writes). */
  readonly leadership: Leadership;
  /** Resolves when every informer has listed once. */
  readonly synced: Promise<void>;
  /** The informers that have not listed yet, with their last error (for the readiness check). */
  unsynced(): { readonly name: string; readonly lastError: unknown }[];
  /** Resolves when the queue is empty and no reconcile runs (after `synced`; a standby holds its queue). */
  idle(): Promise<void>;
  /** Counters for tests and benchmarks. */
  stats(): ControllerStats;
  /** What the informer of `resource` holds (diagnostics and tests: e.g. Secrets carry no key material). */
  cached(resource: ResourceType): KubeObject[];
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
  let electionClient: ClusterClient | null = null;
  let elector: LeaderElector | null = null;
  try {
    if (!deps.leadership) {
      // A client of its own, outside the --qps bucket: a renew never waits behind a burst of
      // writes (its own rate is bounded: at most a read and a write per retry period).
      electionClient = await ClusterClient.create({ kubeConfig: client.kubeConfig, qps: 0, burst: 1 });
      elector = new LeaderElector(electionClient, {
        namespace: settings.operatorNamespace,
        name: leaseName(settings.controllerId),
        identity: holderIdentity(),
        leaseDurationMs: settings.leaseDurationMs,
        renewDeadlineMs: settings.renewDeadlineMs,
        retryPeriodMs: settings.retryPeriodMs,
      });
    }
    const platform = await preparePlatform(settings, client);
    c = new Controller(settings, client, templates, validate, platform, deps.leadership ?? elector!);
    c.start();
    elector?.start();
  } catch (err) {
    electionClient?.close();
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
    leadership: c.leadership,
    synced: c.synced,
    unsynced: () => c.unsynced(),
    idle: () => c.idle(),
    stats: () => c.stats(),
    cached: (r) => c.cached(r),
    stop: async () => {
      await c.stop();
      // After the last write: hand the Lease to a standby at once.
      await elector?.stop();
      electionClient?.close();
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
  /** Per ingress key, the owned objects written or found ours (path → uid); the caches may lag behind. */
  #publishedBy = new Map<string, Map<string, string>>();
  /** Hash of the configuration last validated per ingress key. */
  #validated = new Map<string, string>();
  /**
   * Ingresses blocked by a foreign object, looked at again after a backoff: foreign objects are
   * not watched (the caches hold ours only). Kept out of the queue so `idle()` still means "no
   * work until something changes".
   */
  #rechecks = new Map<string, { backoff: Backoff; timer?: ReturnType<typeof setTimeout> }>();
  #workers: Promise<void>[] = [];
  #stopped = false;
  #idleWaiters: (() => void)[] = [];
  #counts = { reconciles: 0, renders: 0, writes: 0, validations: 0 };
  /** The kinds of owned objects, in the order they are deleted. */
  #ownedKinds: ResourceType[];
  /** The client for every write: refuses and aborts writes outside a leadership term. */
  #writer: Writer;

  constructor(
    readonly settings: ControllerSettings,
    readonly client: ClusterClient,
    readonly templates: Templates,
    readonly validate: Validator | null,
    readonly platform: Platform,
    readonly leadership: Leadership,
  ) {
    this.#ownedKinds = ownedResources(settings.rbac, platform.serviceMonitor);
    this.#writer = gatedWriter(client, leadership);
    this.events = new EventRecorder(this.#writer);
    this.#queue = new WorkQueue({ coalesceMs: settings.coalesceMs });
    if (!leadership.leading) this.#queue.pause();
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
    // Verdict and content hash only: the proxies read their Secrets themselves.
    this.#secrets = inf(resources.secrets, { fieldSelector: "type=kubernetes.io/tls", transform: summarizedSecret });
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
    this.#secrets.on({
      onAdd: onSecret,
      // Nothing to render when neither content nor verdict changed (metadata updates, relists).
      onUpdate: (old, o) => old.tlsSummary?.sha256 !== o.tlsSummary?.sha256 && onSecret(o),
      onDelete: onSecret,
    });
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

  /** A new term: look at everything again (another leader wrote meanwhile); a lost one: stand by. */
  #leadershipChanged = (leading: boolean): void => {
    if (this.#stopped) return;
    if (!leading) {
      this.#queue.pause();
      // What this replica wrote or found may have changed under another leader.
      this.#applied.clear();
      this.#publishedBy.clear();
      return;
    }
    for (const key of this.#ingresses.store.keys()) this.#queue.add(key);
    for (const i of [this.#services, ...this.#owned.values()]) {
      for (const o of i.store.list()) {
        const owner = this.#ownerKey(o);
        if (owner) this.#queue.add(owner);
      }
    }
    this.#queue.resume();
  };
  #unsubscribe = (): void => {};

  start(): void {
    this.#unsubscribe = this.leadership.onChange(this.#leadershipChanged);
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
    this.#unsubscribe();
    for (const r of this.#rechecks.values()) clearTimeout(r.timer);
    this.#rechecks.clear();
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

  cached(r: ResourceType): KubeObject[] {
    return this.#informers.find((i) => i.resource === r)?.store.list() ?? [];
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.take();
      if (key === undefined) return;
      const started = performance.now();
      try {
        const result = await this.#reconcile(key);
        reconciles.inc({ result });
        this.#recheck(key, result === "conflict");
        this.#queue.forget(key);
      } catch (err) {
        // Writes aborted at the end of a term: the key waits in the paused queue.
        const abandoned = !this.leadership.leading;
        reconciles.inc({ result: abandoned ? "abandoned" : "failed" });
        if (abandoned && !this.#stopped) this.#queue.retry(key);
        else if (!this.#stopped) {
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

  /** Schedules (`blocked`) or cancels the next look at an ingress blocked by a foreign object. */
  #recheck(key: string, blocked: boolean): void {
    let r = this.#rechecks.get(key);
    clearTimeout(r?.timer);
    if (!blocked || this.#stopped) {
      this.#rechecks.delete(key);
      return;
    }
    if (!r) this.#rechecks.set(key, r = { backoff: new Backoff(1_000, 5 * 60_000) });
    r.timer = setTimeout(() => this.#queue.add(key), r.backoff.next());
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
    const desired = desiredObjects(ing, data, secretNames, this.settings, this.platform);
    // Whose is each object? While one of them is someone else's, nothing is written.
    const found: (KubeObject | null)[] = [];
    for (const d of desired) found.push(await this.#current(d.resource, d.object));
    let conflicts = 0;
    for (const [i, current] of found.entries()) {
      if (!current || ownedBy(current, key, this.settings.controllerId)) continue;
      conflicts++;
      ownershipConflicts.inc({ kind: desired[i].resource.kind });
      this.events.record(ing, "Warning", "OwnershipConflict", conflictMessage(desired[i].resource.kind, current));
    }
    if (conflicts > 0) return "conflict";
    let changed = 0;
    let proxyService: KubeObject | undefined;
    for (const [i, d] of desired.entries()) {
      const { object, wrote } = await this.#write(key, d.resource, d.object, found[i], ing);
      if (wrote) changed++;
      // The status follows the public Service only, never the ClusterIP stats Service.
      if (d.resource === resources.services && d.object.metadata.name === proxyName(ing.metadata.name)) {
        proxyService = object;
      }
    }
    await this.#updateStatus(key, ing, proxyService);
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

  /** The object of that name: from the cache, else from the API server (null: none). */
  async #current(r: ResourceType, obj: KubeObject): Promise<KubeObject | null> {
    const cached = this.#cache(r).store.get(keyOf(obj));
    if (cached) return cached;
    // The caches of owned kinds hold only labelled objects: a miss is an absent or a foreign object.
    try {
      return await this.client.request("GET", objectPath(r, obj.metadata.namespace, obj.metadata.name));
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  #published(key: string, path: string, uid: string): void {
    let published = this.#publishedBy.get(key);
    if (!published) this.#publishedBy.set(key, published = new Map());
    published.set(path, uid);
  }

  /** Creates `obj`, or updates `current` (ours) when its hash differs. */
  async #write(
    key: string,
    r: ResourceType,
    obj: KubeObject,
    current: KubeObject | null,
    ing: KubeObject,
  ): Promise<{ object: KubeObject; wrote: boolean }> {
    const path = objKey(r, obj);
    const hash = obj.metadata.annotations![hashAnnotation];
    if (current?.metadata.annotations?.[hashAnnotation] === hash) {
      this.#published(key, path, current.metadata.uid!);
      this.#applied.set(path, hash);
      return { object: current, wrote: false };
    }
    let result: KubeObject;
    try {
      result = current
        ? await applyOwned(this.#writer, r, obj, current.metadata.uid!)
        : await createOwned(this.#writer, r, obj);
    } catch (err) {
      // A 409, or a 422 on metadata.uid: the object appeared, vanished or was replaced since it
      // was looked at; the retry looks again. Any other 422 is a refused object: report it.
      if (isStatus(err, 422) && !/metadata\.uid/.test(err.message)) {
        this.events.record(
          ing,
          "Warning",
          "OwnedObjectInvalid",
          `cannot apply ${r.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${err.message}`,
        );
      }
      throw err;
    }
    this.#published(key, path, result.metadata.uid!);
    this.#applied.set(path, hash);
    this.#counts.writes++;
    writes.inc({ kind: r.kind, op: current ? "apply" : "create" });
    return { object: result, wrote: true };
  }

  async #updateStatus(key: string, ing: KubeObject, service: KubeObject | undefined): Promise<void> {
    const cached = this.#services.store.get(`${ing.metadata.namespace}/${proxyName(ing.metadata.name)}`);
    // Only a Service of ours gives the ingress its address (the cache may show a foreign one by now).
    const own = cached ? (ownedBy(cached, key, this.settings.controllerId) ? cached : undefined) : service;
    const want = loadBalancerOf(own);
    if (want.length === 0 || statusMatches(ing, want)) return;
    try {
      await this.#writer.request(
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

  /**
   * Deletes every object the controller made for the ingress `key`, each by its uid (a
   * same-named object made since is left alone). Returns whether anything was deleted.
   */
  async #remove(key: string): Promise<boolean> {
    const targets = new Map<string, { r: ResourceType; ns: string; name: string; uid: string }>();
    for (const r of this.#ownedKinds) {
      for (const o of this.#cache(r).store.byIndex(byIngress, key)) {
        if (!ownedBy(o, key, this.settings.controllerId)) continue; // e.g. another controller's
        targets.set(objKey(r, o), { r, ns: o.metadata.namespace!, name: o.metadata.name, uid: o.metadata.uid! });
      }
    }
    for (const [path, uid] of this.#publishedBy.get(key) ?? []) {
      const [plural, ns, name] = path.split("/");
      const r = this.#ownedKinds.find((x) => x.plural === plural);
      if (r) targets.set(path, { r, ns, name, uid });
    }
    let deleted = 0;
    for (const [path, t] of targets) {
      const outcome = await deleteOwned(this.#writer, t.r, t.ns, t.name, t.uid);
      if (outcome === "deleted") {
        deleted++;
        this.#counts.writes++;
        writes.inc({ kind: t.r.kind, op: "delete" });
      } else if (outcome === "replaced") {
        ownershipConflicts.inc({ kind: t.r.kind });
        log.warn("not deleting a proxy object: another object has its name by now", { ingress: key, object: path });
      }
      this.#applied.delete(path);
    }
    this.#publishedBy.delete(key);
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
