/**
 * @module controller/controller
 * The controller loop: informers for Ingress, IngressClass (and the ConfigMaps its parameters
 * name), Service, EndpointSlice, TLS Secret and the objects it owns feed a keyed, coalescing work
 * queue of proxy groups (lib/controller/groups.ts: a class's shared proxy, or an ingress's
 * dedicated one; docs/proxy-groups.md). Each group is reconciled on its own (one bad group never
 * blocks the others): its ingresses → model (merged, oldest wins conflicts) → render → validate
 * (`haproxy -c`; a merged configuration it refuses is retried without the ingresses that fail
 * alone) → publish the owned objects (only when their hash changed) → `status.loadBalancer` of
 * every ingress it serves. An ingress that moves to another group stays in its old group's
 * configuration until the new group's Deployment has an available replica and its status shows
 * the new address (plus a grace period), so traffic moves without a gap. A group left without
 * ingresses loses its objects (deleted here: no garbage collector is assumed). Only objects the
 * controller created are ever written, deleted or read for the status
 * (lib/controller/ownership.ts, lib/controller/publish.ts); a same-named foreign object blocks the
 * group with an Event until it is gone. The Secret cache holds summaries, never key material
 * (lib/render/tls_secret.ts). Only the leader writes
 * (lib/controller/leader.ts): every write goes through a gated writer, and the queue is paused
 * while another replica leads (the caches stay warm); a new term starts with a full resync.
 */
import type { V1Ingress } from "@kubernetes/client-node";
import { log } from "../log/logger.ts";
import { Backoff } from "../cluster/backoff.ts";
import { AppliedHashes } from "./applied.ts";
import { IdleTrimmer } from "../malloc_trim.ts";
import { ClusterClient, isStatus } from "../cluster/client.ts";
import { Informer, type InformerOptions } from "../cluster/informer.ts";
import { cachedIngress, cachedService, cachedSlice, ownedShape } from "./cached_shapes.ts";
import { keyOf, type KubeObject, objectPath, resources, type ResourceType } from "../cluster/resources.ts";
import {
  buildModel,
  type BuildResult,
  type ClusterLookup,
  configMapData,
  loadTemplates,
  ModelMemo,
  type Problem,
  render,
  type Rendered,
  RenderMemo,
  summarizedSecret,
  type Templates,
  tlsSummaryOf,
  validateConfig,
} from "../render/mod.ts";
import {
  type ClassChoice,
  defaultIngressClass,
  handlesIngress,
  ingressClassOf,
  NGINX_CONTROLLER,
  servingClass,
  unservedClassMessage,
} from "./class.ts";
import { driftOf } from "./drift.ts";
import { RestorePacer } from "./restores.ts";
import {
  dedicatedFrontendData,
  defaultGlobalSettings,
  GLOBAL_CONFIGMAP,
  type GlobalSettings,
  parseGlobalSettings,
  type SettingsProblem,
} from "./global_settings.ts";
import type { Risk } from "../annotations/table.ts";
import type { OwnershipPolicy } from "../render/host_ownership.ts";
import { translateIngress } from "../nginx/translate.ts";
import { PREFIX } from "../annotations/table.ts";
import { type ProxyOptions, threadsForCpuLimit } from "../render/proxy_options.ts";
import { type ClassParams, defaultClassParams, parametersRef, parseClassParams } from "./class_params.ts";
import { EventRecorder } from "./events.ts";
import {
  classGroup,
  dedicatedRefused,
  dedicatedValue,
  GroupIndex,
  type GroupKey,
  groupOf,
  proxyModeAnnotation,
  sharedClassOf,
  sharedProxyName,
  withoutDedicated,
} from "./groups.ts";
import { gatedWriter, holderIdentity, LeaderElector, type Leadership, leaseName, type Writer } from "./leader.ts";
import {
  ownershipConflicts,
  reconciles,
  reconcileSeconds,
  renders,
  restores,
  validationFailures,
  writes,
} from "./metrics.ts";
import {
  classOwnerAnnotation,
  dedicatedTarget,
  type Desired,
  hashAnnotation,
  ingressAnnotation,
  managedByLabel,
  managedByValue,
  ownedResources,
  ownedSelector,
  proxyName,
  proxyObjects,
  type ProxyTarget,
  sharedTarget,
} from "./objects.ts";
import { conflictMessage, ownedBy } from "./ownership.ts";
import { type Platform, preparePlatform } from "./platform.ts";
import { existingParts, partOfLabel } from "./transport.ts";
import { applyOwned, createOwned, deleteOwned } from "./publish.ts";
import { WorkQueue } from "./queue.ts";
import { StatusLane } from "./status_lane.ts";
import { forEachLimit } from "../concurrency.ts";
import { oneLine } from "../errors.ts";
import { PhaseTimer } from "../timers.ts";
import {
  annotatedSecretRefs,
  anySecretRef,
  layerSecretNames,
  refsOf,
  ReverseIndex,
  secretRef,
  serviceRef,
  sliceServiceRef,
} from "./refs.ts";
import { type ConfigLike, type ControllerSettings, defaultSettings, settingsFromConfig } from "./settings.ts";
import { type LoadBalancerIngress, loadBalancerOf, statusMatches } from "./status.ts";

/** Why a rendered configuration was refused; `timedOut`: the check did not finish within its limit. */
export interface ValidationProblem {
  readonly message: string;
  readonly timedOut: boolean;
}

/** Checks a rendered configuration; resolves with null when valid, else with the reason. */
export type Validator = (rendered: Rendered) => Promise<ValidationProblem | null>;

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
  /** Times the C heap was trimmed after work (lib/malloc_trim.ts). */
  mallocTrims: number;
  watchStarts: Record<string, number>;
  lists: Record<string, number>;
  requestsSent: number;
}

/** Index of owned objects by the group that made them. */
const byGroup = "group";
/**
 * Status writes in flight at once. Not more: after a first publish of 10,000 Ingresses their writes
 * compete for the API server's CPU with the proxies reading their configuration; with 16 in flight
 * the scale bench's first service took 14.6 s (10.9–14.1 s in earlier runs), with 4 12.2 s, with 2
 * 10.1–12.8 s (five runs, three of them ≤ 11.0 s), and the statuses were written about as soon.
 */
const STATUS_WRITES_IN_FLIGHT = 2;
/** Part ConfigMaps written at once (each up to 512 KiB: etcd, not the count, is the limit). */
const PART_WRITES_IN_FLIGHT = 4;

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
export function defaultValidator(settings: ControllerSettings): Validator {
  return async (rendered) => {
    const r = await validateConfig(rendered, {
      haproxy: settings.haproxyBinary,
      timeoutMs: settings.validateTimeoutMs,
      slots: settings.customTemplates ? "all" : "first",
    });
    // Once per new structure (a passed one is not checked again): custom templates' mistakes show here.
    if (r.warnings.length > 0) log.warn("haproxy -c warns about the generated configuration", { warnings: r.warnings });
    if (r.ok) return null;
    return { message: r.errors.join("; ").slice(0, 800) || "haproxy -c failed", timedOut: r.timedOut };
  };
}

/** A move of an ingress from the group `from` (still serving it) to the group `to`. */
interface Handover {
  from: GroupKey;
  to: GroupKey;
  /** When `to` first published a configuration serving the ingress; null: not yet. */
  includedAt: number | null;
  /** When the ingress's status was moved to `to`'s address; null: not yet. */
  movedAt: number | null;
}

/** What the status pass of a group saw last (Controller.#statusSeen). */
interface StatusSeen {
  wanted: string;
  want: LoadBalancerIngress[] | null;
  changed: Set<string>;
  /** Members that own none of the hosts they name (Model.unserved): their status lists no address. */
  unserved: ReadonlySet<string>;
}

class Controller {
  readonly events: EventRecorder;
  readonly synced: Promise<void>;
  #queue: WorkQueue;
  #index = new ReverseIndex();
  /** Service ref → the Secrets its annotations name (only Services that name any). */
  #serviceSecrets = new ReverseIndex();
  /** Ingress key → the group that should serve it. */
  #groups = new GroupIndex();
  /** Ingress key → the group whose published configuration serves it (last publish). */
  #served = new GroupIndex();
  /** Per group: the versions of both indexes after the last release of exactly its members. */
  #released = new Map<GroupKey, string>();
  #handovers = new Map<string, Handover>();
  /**
   * The status pass of a group looks at every member only when the wanted status changed (or in a
   * new term, or after a validation left ingresses out); otherwise at the ingresses that changed
   * or failed to get their status since, and those handed over: at 10,000 members, the whole pass
   * cost more than the change itself. `wanted`: the status (JSON) of the last whole pass.
   */
  #statusSeen = new Map<GroupKey, StatusSeen>();
  #ingresses: Informer;
  #classes: Informer | null;
  /**
   * ConfigMaps of the controller's namespace that are not ours (the classes' parameters); started
   * when the first IngressClass with `spec.parameters` is seen, so clusters without any pay nothing.
   */
  #params: Informer | null = null;
  /** The controller's global ConfigMap (lib/controller/global_settings.ts), by name only. */
  #global: Informer;
  #globalParsed: { cm: KubeObject | null; settings: GlobalSettings; problems: SettingsProblem[] } | null = null;
  /** The global settings that decide groups (risk limit, `dedicated-proxies`) the Ingresses were last filed with. */
  #groupedWith = "";
  /** Ingress key → the class it named that got no proxy of its own, as last reported (once each). */
  #classReported = new Map<string, string>();
  /** Ingress uid → the signature of the nginx annotations last reported, so each is reported once. */
  #nginxReported = new Map<string, string>();
  /** Each Ingress object as translated from its nginx annotations (computed once per object). */
  #translations = new WeakMap<KubeObject, KubeObject>();
  /**
   * The key of each cached Ingress object, made once: at 10,000 Ingresses a publish looks each one
   * up several times, and a key made anew must be hashed anew each time.
   */
  #keys = new WeakMap<KubeObject, string>();
  /** Per group: the Ingress fragments kept between models (lib/render/ingress_reading.ts). */
  #memos = new Map<GroupKey, ModelMemo>();
  /** Per group: what render keeps between renders (lib/render/render.ts). */
  #renderMemos = new Map<GroupKey, RenderMemo>();
  /**
   * Per group, the Secrets its settings name, as last computed (a change to one re-renders every
   * group): the default certificate (`namespace/name`), and the names the global or a class's
   * settings give Secret-valued annotations (e.g. a global `auth-basic-secret`), which name a Secret
   * in the namespace of each Ingress. Replaced at each computation, so a setting removed stops
   * counting.
   */
  #settingsSecrets = new ReverseIndex();
  #services: Informer;
  #slices: Informer;
  #secrets: Informer;
  /** Opaque Secrets: CA bundles and htpasswd files of annotations (summaries too). */
  #opaqueSecrets: Informer;
  #owned = new Map<ResourceType, Informer>();
  #informers: Informer[] = [];
  /** Hash last applied per owned object (`plural/ns/name`), to skip our own watch echoes. */
  #applied = new AppliedHashes();
  /** How soon an owned object someone keeps changing may be restored again. */
  #pacer = new RestorePacer();
  /** `<kind> <field>` the API server does not keep as written (#learnUnkept). */
  #unkept = new Set<string>();
  /** Groups that left some namespace's ingresses out for a foreign object: looked at again later. */
  #partial = new Set<GroupKey>();
  /** Per group, the owned objects written or found ours (path → uid); the caches may lag behind. */
  #publishedBy = new Map<string, Map<string, string>>();
  /** The configurations validated (per group, and per ingress alone when isolating a failure). */
  #validated = new Map<string, CheckedForm>();
  /**
   * Ingresses whose configuration alone `haproxy -c` refused (by key): left out again without a
   * check while that configuration stays the same, so a check that runs into its time limit costs
   * the other ingresses of the group that wait once, not at every change. A timed-out verdict is
   * believed for {@link TIMED_OUT_KEPT_MS} only (a busy node may have caused it).
   */
  #refusedAlone = new Map<string, CheckedForm & { problem: ValidationProblem; until: number }>();
  /**
   * Groups blocked by a foreign object, looked at again after a backoff: foreign objects are
   * not watched (the caches hold ours only). Kept out of the queue so `idle()` still means "no
   * work until something changes".
   */
  #rechecks = new Map<string, { backoff: Backoff; timer?: ReturnType<typeof setTimeout> }>();
  /** Groups to look at again when a handover's grace period ends. */
  #graceTimers = new Map<string, ReturnType<typeof setTimeout>>();
  #workers: Promise<void>[] = [];
  #stopped = false;
  #idleWaiters: (() => void)[] = [];
  /** Hands the C heap's free pages back once a burst of work is over (lib/malloc_trim.ts). */
  #trimmer = new IdleTrimmer();
  /** Status writes, a few at a time, outside the group's reconcile. */
  #statusLane = new StatusLane({
    limit: STATUS_WRITES_IN_FLIGHT,
    onIdle: () => this.#notifyIdle(),
    onFailure: (key, err) => {
      const group = this.#groups.groupOf(key);
      if (this.#stopped || !this.leadership.leading || group === null) return;
      this.#statusSeen.get(group)?.changed.add(key);
      // The group's next look writes it again (with its back-off).
      const retryInMs = Math.round(this.#queue.retry(group));
      log.warn("cannot write the status of an ingress; will retry", { ingress: key, error: oneLine(err), retryInMs });
    },
  });
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
    this.#ingresses = inf(resources.ingresses, { transform: cachedIngress });
    this.#global = new Informer(client, resources.configMaps, {
      namespace: settings.operatorNamespace,
      fieldSelector: `metadata.name=${GLOBAL_CONFIGMAP}`,
      resyncMs,
    });
    this.#informers.push(this.#global);
    // IngressClass is cluster-scoped: with the namespace restriction nothing cluster-wide is listed.
    this.#classes = ns ? null : inf(resources.ingressClasses);
    this.#services = inf(resources.services, { transform: cachedService });
    this.#slices = inf(resources.endpointSlices, { transform: cachedSlice });
    // Verdict and content hash only: the proxies read their Secrets themselves.
    this.#secrets = inf(resources.secrets, { fieldSelector: "type=kubernetes.io/tls", transform: summarizedSecret });
    // `ca.crt` and htpasswd Secrets of annotations (backend-ca-secret, client-cert-ca-secret,
    // auth-basic-secret) are Opaque as `kubectl create secret generic` makes them; other types
    // (service-account tokens, Helm releases) are never listed.
    this.#opaqueSecrets = inf(resources.secrets, { fieldSelector: "type=Opaque", transform: summarizedSecret });
    for (const r of this.#ownedKinds) {
      if (r === resources.services) continue; // the Service informer above also sees owned Services
      // What the controller set (compared with what it should be) and owns, never a ConfigMap's data.
      this.#owned.set(r, inf(r, { labelSelector: ownedSelector(settings), transform: ownedShape }));
    }
    const ownerIndex = (o: KubeObject) => {
      const g = this.#ownerKey(o);
      return g === null ? [] : [g];
    };
    for (const i of [this.#services, ...this.#owned.values()]) i.store.addIndexer(byGroup, ownerIndex);
    this.#slices.store.addIndexer("service", (o) => {
      const r = sliceServiceRef(o);
      return r ? [r] : [];
    });
    this.#wire();
    this.synced = Promise.all(this.#informers.map((i) => i.waitForSync())).then(() => {});
  }

  #wire(): void {
    const q = (group: GroupKey | null | undefined) => group != null && this.#queue.add(group);
    this.#ingresses.on({
      onAdd: (o) => this.#ingressChanged(keyOf(o)),
      onUpdate: (old, o) => {
        // Our own status writes change neither spec nor metadata: no work for them.
        const same = old.metadata.generation === o.metadata.generation &&
          JSON.stringify(old.metadata.annotations ?? {}) === JSON.stringify(o.metadata.annotations ?? {}) &&
          old.metadata.deletionTimestamp === o.metadata.deletionTimestamp &&
          old.metadata.uid === o.metadata.uid;
        if (!same || old.metadata.resourceVersion === o.metadata.resourceVersion) this.#ingressChanged(keyOf(o));
        else this.#statusChanged(o);
      },
      onDelete: (o) => this.#ingressChanged(keyOf(o)),
    });
    const onClass = (c: KubeObject) => {
      if (c.spec?.parameters) this.#watchParams();
      // The default class decides the group of class-less ingresses: look at every ingress again
      // (no API call; IngressClass changes are rare).
      for (const key of this.#ingresses.store.keys()) this.#ingressChanged(key, true);
      q(classGroup(c.metadata.name));
    };
    this.#classes?.on({ onAdd: onClass, onUpdate: (_, c) => onClass(c), onDelete: onClass });
    const users = (ref: string) => new Set(this.#index.users(ref).map((k) => this.#groups.groupOf(k))).forEach(q);
    const onService = (o: KubeObject, old: KubeObject | null, deleted: boolean) => {
      const owner = this.#ownerKey(o);
      if (!owner) {
        const ref = serviceRef(o.metadata.namespace!, o.metadata.name);
        const secrets = deleted ? [] : annotatedSecretRefs(o);
        if (secrets.length > 0) this.#serviceSecrets.set(ref, secrets);
        else this.#serviceSecrets.delete(ref);
        return users(ref);
      }
      // An owned Service (public or stats): its group needs work when it went away, someone else
      // changed it, or, for the public one, it got another address (the ingress status follows it).
      const drifted = this.#changedByOthers(resources.services, old, o);
      const isPublic = o.metadata.name === proxyOf(owner, this.settings).name;
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
    // Whatever the model may read changed: kept fragments check what they read (lib/render/ingress_reading.ts).
    const bump = () => void this.#lookupGeneration++;
    for (const informer of [this.#services, this.#slices, this.#secrets, this.#opaqueSecrets]) {
      informer.on({ onAdd: bump, onUpdate: bump, onDelete: bump });
    }
    const onSecret = (o: KubeObject) => {
      const ref = secretRef(o.metadata.namespace!, o.metadata.name);
      if (this.#settingsSecrets.used(ref) || this.#settingsSecrets.used(anySecretRef(o.metadata.name))) {
        this.#requeueAll();
      }
      users(ref);
      // Named by a Service's annotations (its settings layer): the ingresses using that Service.
      for (const service of this.#serviceSecrets.users(ref)) users(service);
    };
    // Global settings: every group renders them; the risk limit and `dedicated-proxies` also decide
    // who gets a proxy of its own, so they move ingresses between groups.
    const onGlobal = () => {
      const s = this.#parsedGlobal().settings;
      const grouping = `${s.annotationRiskLimit}|${s.dedicatedProxies}`;
      if (grouping !== this.#groupedWith) {
        this.#groupedWith = grouping;
        for (const key of this.#ingresses.store.keys()) this.#ingressChanged(key, true);
      }
      this.#requeueAll();
    };
    this.#global.on({
      onAdd: onGlobal,
      onUpdate: (old, o) => JSON.stringify(old.data ?? {}) !== JSON.stringify(o.data ?? {}) && onGlobal(),
      onDelete: onGlobal,
    });
    for (const informer of [this.#secrets, this.#opaqueSecrets]) {
      informer.on({
        onAdd: onSecret,
        // Nothing to render when neither content nor verdict changed (metadata updates, relists).
        onUpdate: (old, o) => old.tlsSummary?.sha256 !== o.tlsSummary?.sha256 && onSecret(o),
        onDelete: onSecret,
      });
    }
    for (const [r, i] of this.#owned) {
      const drift = (o: KubeObject, old: KubeObject | null, deleted: boolean) => {
        const owner = this.#ownerKey(o);
        if (!owner) return;
        // A Deployment becoming available (or not) completes the handovers to its group.
        const availability = r === resources.deployments && available(old) !== available(o);
        if (deleted || availability || this.#changedByOthers(r, old, o)) q(owner);
      };
      i.on({
        onAdd: (o) => drift(o, null, false),
        onUpdate: (old, o) => drift(o, old, false),
        onDelete: (o) => drift(o, null, true),
      });
    }
  }

  /** Queues every group that has ingresses or still serves some. */
  #requeueAll(): void {
    for (const g of new Set([...this.#groups.groups(), ...this.#served.groups()])) this.#queue.add(g);
  }

  /** Starts the informer of the classes' parameter ConfigMaps (once). */
  #watchParams(): void {
    if (this.#params || this.#stopped) return;
    const i = new Informer(this.client, resources.configMaps, {
      namespace: this.settings.operatorNamespace,
      labelSelector: `${managedByLabel}!=${managedByValue}`,
      resyncMs: this.settings.resyncPeriodMs,
    });
    const onParams = (cm: KubeObject) => {
      for (const c of this.#classes?.store.list() ?? []) {
        if (parametersRef(c, this.settings.operatorNamespace).ref === keyOf(cm)) {
          this.#queue.add(classGroup(c.metadata.name));
        }
      }
    };
    i.on({
      onAdd: onParams,
      onUpdate: (_, cm) => onParams(cm),
      onDelete: onParams,
      // The classes' groups waited for this first list (#classParams).
      onSync: () => {
        for (const c of this.#classes?.store.list() ?? []) {
          if (c.spec?.parameters) this.#queue.add(classGroup(c.metadata.name));
        }
      },
    });
    this.#params = i;
    this.#informers.push(i);
    i.start();
  }

  /** The group that made an owned object (its ingress or class annotation), or null. */
  #ownerKey(o: KubeObject): GroupKey | null {
    if (o.metadata.labels?.[managedByLabel] !== managedByValue) return null;
    const a = o.metadata.annotations ?? {};
    if (a[ingressAnnotation] !== undefined) return a[ingressAnnotation];
    if (a[classOwnerAnnotation] !== undefined) return classGroup(a[classOwnerAnnotation]);
    return null;
  }

  /**
   * Whether the event of an owned object (`old` → `o`) may be someone else's change: not the event
   * of one of the controller's own writes, and either another hash than the one it should carry
   * or another content with that hash (a field changed, the hash left as it was). Status and
   * version alone are no change.
   */
  #changedByOthers(r: ResourceType, old: KubeObject | null, o: KubeObject): boolean {
    const seen = this.#applied.classify(objKey(r, o), o.metadata.annotations?.[hashAnnotation]);
    if (seen === "echo") return false;
    return seen === "other" || old === null || ownedContent(old) !== ownedContent(o);
  }

  /**
   * Re-files an ingress after a change: its group now, the one before and the one serving it are
   * looked at (`onlyIfMoved`: only when its group changed, e.g. after an IngressClass event).
   */
  #ingressChanged(key: string, onlyIfMoved = false): void {
    const ing = this.#ingresses.store.get(key);
    const defaultClass = this.#defaultClass();
    const handled = !!ing && handlesIngress(ing, this.settings.ingressClass, defaultClass);
    const choice = handled
      ? servingClass(ing!, this.settings.ingressClass, defaultClass, this.#classes && this.#classLookup)
      : null;
    const risk = this.#riskLimit();
    const refused = handled && dedicatedRefused(ing!, this.#parsedGlobal().settings.dedicatedProxies, risk);
    const group = choice ? groupOf(refused ? withoutDedicated(ing!) : ing!, choice.shared, risk) : null;
    if (refused) this.#dedicatedRefused(ing!, group!);
    const before = this.#groups.set(key, group);
    this.#reportUnservedClass(key, group, choice);
    if (onlyIfMoved && before === group) return;
    if (handled) this.#index.set(key, refsOf(ing!));
    else {
      this.#index.delete(key);
      this.#validated.delete(`ingress:${key}`);
      this.#refusedAlone.delete(key);
      this.#nginxReported.delete(key);
    }
    const serving = this.#served.groupOf(key);
    const h = this.#handovers.get(key);
    if (group === null || group === serving) this.#handovers.delete(key);
    else if (serving !== null && h?.to !== group) {
      this.#handovers.set(key, { from: serving, to: group, includedAt: null, movedAt: null });
    }
    for (const g of new Set([before, group, serving, h?.from])) {
      if (g == null) continue;
      this.#statusSeen.get(g)?.changed.add(key);
      this.#queue.add(g);
    }
  }

  /**
   * `ing` asks for a proxy of its own while the settings turn them off: it is served by its shared
   * proxy, and told so. Only the leader writes Events; a new term looks at every ingress again.
   */
  #dedicatedRefused(ing: KubeObject, group: GroupKey): void {
    if (!this.leadership.leading) return;
    const proxy = proxyOf(group, this.settings);
    this.events.record(
      ing,
      "Warning",
      "DedicatedProxyDisabled",
      `${proxyModeAnnotation}: ${dedicatedValue} is ignored: dedicated proxies are turned off in the controller's ` +
        `settings (${GLOBAL_CONFIGMAP} ConfigMap, dedicated-proxies: "false"); this Ingress is served by the shared ` +
        `proxy ${proxy.namespace}/${proxy.name}, without frontend annotations of its own`,
    );
  }

  /**
   * Whether a refused delete (403) of a dedicated proxy's objects is expected: dedicated proxies
   * are turned off, and the RBAC that goes with it (the Helm chart's) allows no writes in the
   * Ingress's namespace. Its objects stay for the admin to delete; retrying cannot help.
   */
  #leftBehind(group: GroupKey, err: unknown): boolean {
    if (sharedClassOf(group) !== null || this.#parsedGlobal().settings.dedicatedProxies || !isStatus(err, 403)) {
      return false;
    }
    const proxy = proxyOf(group, this.settings);
    const message = `dedicated proxies are turned off and the controller may not delete the former dedicated proxy ` +
      `${proxy.namespace}/${proxy.name}: delete its objects (labelled ${managedByLabel}=${managedByValue}, ` +
      `app.kubernetes.io/instance=${proxy.name}) yourself`;
    log.warn(message, { group, error: oneLine(err) });
    const ing = this.#ingresses.store.get(group);
    if (ing) this.events.record(ing, "Warning", "DedicatedProxyLeftBehind", message);
    return true;
  }

  #classLookup = (name: string): KubeObject | undefined => this.#classes?.store.get(name);

  /**
   * A Warning on an ingress whose class gets no proxy of its own and that joined the class-less
   * group instead (lib/controller/class.ts): once per ingress, class and group, not on every
   * resync; a standby sends it when it becomes the leader (#leadershipChanged re-files every ingress).
   */
  #reportUnservedClass(key: string, group: GroupKey | null, choice: ClassChoice | null): void {
    const ing = this.#ingresses.store.get(key);
    if (!ing || !choice || choice.unserved === null || group === null || sharedClassOf(group) === null) {
      this.#classReported.delete(key);
      return;
    }
    const signature = `${ing.metadata.uid}|${choice.unserved}|${choice.shared}`;
    // Before the IngressClasses are listed every class looks missing: the sync files every ingress again.
    if (this.#classReported.get(key) === signature || !this.leadership.leading || !this.#classes?.hasSynced) return;
    this.#classReported.set(key, signature);
    const ic = this.#classes?.store.get(choice.unserved);
    const message = unservedClassMessage(choice.unserved, ic, choice.shared, sharedProxyName(choice.shared));
    this.events.record(ing, "Warning", "UnknownIngressClass", message);
  }

  /** Someone changed only the status of `ing`: when it is not what its group shows, the group writes it back. */
  #statusChanged(ing: KubeObject): void {
    const key = this.#key(ing);
    const group = this.#groups.groupOf(key);
    const seen = group === null ? undefined : this.#statusSeen.get(group);
    if (!seen?.want || statusMatches(ing, seen.unserved.has(key) ? [] : seen.want)) return;
    seen.changed.add(key);
    this.#queue.add(group!);
  }

  /** A new term: look at everything again (another leader wrote meanwhile); a lost one: stand by. */
  #leadershipChanged = (leading: boolean): void => {
    if (this.#stopped) return;
    if (!leading) {
      this.#queue.pause();
      // What this replica wrote or found may have changed under another leader.
      this.#applied.clear();
      this.#publishedBy.clear();
      this.#statusSeen.clear();
      this.#released.clear();
      return;
    }
    // Every ingress's group (the queue holds groups), and every group that owns objects.
    for (const key of this.#ingresses.store.keys()) this.#ingressChanged(key);
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
      // Filed while the IngressClasses may not have been listed: again, now that they are (no API call).
      for (const key of this.#ingresses.store.keys()) this.#ingressChanged(key, true);
      log.info("controller caches synced", {
        ingresses: this.#ingresses.store.size,
        services: this.#services.store.size,
        endpointSlices: this.#slices.store.size,
        secrets: this.#secrets.store.size + this.#opaqueSecrets.store.size,
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
    for (const t of this.#graceTimers.values()) clearTimeout(t);
    this.#graceTimers.clear();
    this.#queue.shutdown();
    this.#trimmer.stop();
    this.#statusLane.clear();
    await Promise.all(this.#informers.map((i) => i.stop()));
    await Promise.all(this.#workers);
    await this.#statusLane.drained();
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
    if (!this.#statusLane.idle) return;
    this.#trimmer.idle(); // nothing once stopped
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  unsynced(): { name: string; lastError: unknown }[] {
    return this.#informers.filter((i) => !i.hasSynced).map((i) => ({ name: i.name, lastError: i.lastError }));
  }

  stats(): ControllerStats {
    const per = (f: (i: Informer) => number) => Object.fromEntries(this.#informers.map((i) => [i.name, f(i)]));
    return {
      ...this.#counts,
      mallocTrims: this.#trimmer.trims,
      watchStarts: per((i) => i.watchStarts),
      lists: per((i) => i.lists),
      requestsSent: this.client.requestsSent,
    };
  }

  cached(r: ResourceType): KubeObject[] {
    // Every informer of that resource (ConfigMaps: the owned ones, the global settings, class parameters).
    return this.#informers.filter((i) => i.resource === r).flatMap((i) => i.store.list());
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.#queue.take();
      if (key === undefined) return;
      this.#trimmer.busy();
      const started = performance.now();
      try {
        const result = await this.#reconcile(key);
        reconciles.inc({ result });
        // A group that left some ingresses out for a foreign object is looked at again too.
        this.#recheck(key, this.#partial.delete(key) || result === "conflict");
        this.#queue.forget(key);
      } catch (err) {
        // Writes aborted at the end of a term: the key waits in the paused queue.
        const abandoned = !this.leadership.leading;
        reconciles.inc({ result: abandoned ? "abandoned" : "failed" });
        if (abandoned && !this.#stopped) this.#queue.retry(key);
        else if (!this.#stopped) {
          const delay = this.#queue.retry(key);
          log.error("reconcile failed; will retry", {
            group: key,
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

  /** Schedules (`blocked`) or cancels the next look at a group blocked by a foreign object. */
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

  /** Looks at `group` again in `ms` (a handover's grace period ends). */
  #later(group: GroupKey, ms: number): void {
    if (this.#stopped || this.#graceTimers.has(group)) return;
    this.#graceTimers.set(
      group,
      setTimeout(() => {
        this.#graceTimers.delete(group);
        this.#queue.add(group);
      }, Math.max(0, ms)),
    );
  }

  /** Counts the changes of the objects #lookup hands out (ClusterLookup.generation). */
  #lookupGeneration = 0;

  #lookup: ClusterLookup = {
    generation: () => this.#lookupGeneration,
    service: (ns, name) => this.#services.store.get(`${ns}/${name}`) as any,
    endpointSlices: (ns, svc) => this.#slices.store.byIndex("service", serviceRef(ns, svc)) as any,
    secret: (ns, name) =>
      (this.#secrets.store.get(`${ns}/${name}`) ?? this.#opaqueSecrets.store.get(`${ns}/${name}`)) as any,
  };

  #defaultClass(): string | null {
    return this.#classes ? defaultIngressClass(this.#classes.store.list()) : null;
  }

  /** Whether the proxy Deployment of `group` has an available replica (per the cache). */
  #ready(group: GroupKey): boolean {
    const p = proxyOf(group, this.settings);
    return available(this.#owned.get(resources.deployments)?.store.get(`${p.namespace}/${p.name}`) ?? null);
  }

  /**
   * The ingresses `group` serves now: its members, and those moving away whose new group is not
   * serving them yet (until the grace period after their status moved has passed).
   */
  #servedIngresses(group: GroupKey): { members: KubeObject[]; leaving: KubeObject[] } {
    const members: KubeObject[] = [];
    // forEach, not for-of: this runs once per change over up to 10,000 members, often before V8
    // optimizes it, and an unoptimized for-of allocates a result object per member.
    const store = this.#ingresses.store;
    this.#groups.members(group).forEach((k) => {
      const ing = store.get(k);
      if (ing) members.push(ing);
    });
    const leaving: KubeObject[] = [];
    // Without handovers, nobody is leaving (and 10,000 members need not be walked for it).
    for (const k of this.#handovers.size > 0 ? this.#served.members(group) : []) {
      const h = this.#handovers.get(k);
      const ing = this.#ingresses.store.get(k);
      if (!h || h.from !== group || !ing) continue;
      const left = h.movedAt === null ? null : performance.now() - h.movedAt;
      if (left !== null && left >= this.settings.handoverGraceMs) continue;
      if (left !== null) this.#later(group, this.settings.handoverGraceMs - left);
      leaving.push(ing);
    }
    return { members, leaving };
  }

  /**
   * The ingresses whose status the reconcile of `group` looks at: all of them, or (same wanted
   * status as the last whole pass) those changed since and those being handed over. (Leaving
   * ingresses belong to another group now: the pass skips them either way.)
   */
  #statusCandidates(
    group: GroupKey,
    want: LoadBalancerIngress[],
    ingresses: readonly KubeObject[],
    narrowed: boolean,
    unserved: readonly string[],
  ): Iterable<KubeObject> {
    const wanted = `${JSON.stringify(want)}\0${unserved.join(",")}`;
    const seen = this.#statusSeen.get(group);
    if (!seen || narrowed || seen.wanted !== wanted) {
      // A validation that left ingresses out makes the next pass whole again. The changes noted
      // stay noted: this pass looks at the objects as they were when the reconcile began.
      if (seen) {
        seen.wanted = narrowed ? "" : wanted;
        seen.want = want;
        seen.unserved = new Set(unserved);
      }
      return ingresses;
    }
    const keys = seen.changed;
    seen.changed = new Set();
    for (const [k, h] of this.#handovers) if (h.to === group || h.from === group) keys.add(k);
    const out: KubeObject[] = [];
    for (const k of keys) {
      const ing = this.#ingresses.store.get(k);
      if (ing && this.#groups.groupOf(k) === group) out.push(ing);
    }
    return out;
  }

  /** Records the model's problems as Events on the ingresses they concern. */
  #report(problems: readonly Problem[], ingresses: readonly KubeObject[]): void {
    if (problems.length === 0) return;
    const byKey = new Map(ingresses.map((i) => [keyOf(i), i]));
    for (const p of problems) {
      if (p.kind === "Ingress") {
        const ing = byKey.get(p.object);
        if (ing) this.events.record(ing, "Warning", p.reason, p.message);
        continue;
      }
      // A problem of a Service, EndpointSlice or Secret: on the ingresses of its namespace.
      const ns = p.object.slice(0, p.object.indexOf("/"));
      for (const ing of ingresses) {
        if (ing.metadata.namespace === ns) {
          this.events.record(ing, "Warning", p.reason, `${p.kind} ${p.object}: ${p.message}`);
        }
      }
    }
  }

  async #reconcile(group: GroupKey): Promise<string> {
    const { members, leaving } = this.#servedIngresses(group);
    if (members.length === 0 && leaving.length === 0) {
      this.#validated.delete(group);
      this.#memos.delete(group);
      this.#renderMemos.delete(group);
      this.#settingsSecrets.delete(group);
      this.#statusSeen.delete(group);
      this.#released.delete(group);
      let removed = false;
      try {
        removed = await this.#remove(group, new Set());
      } catch (err) {
        if (!this.#leftBehind(group, err)) throw err;
      }
      this.#release(group, new Set());
      return removed ? "removed" : "unchanged";
    }
    const gs = this.#groupSettings(group);
    if (gs === null) return "waiting";
    const restrictTo = this.settings.restrictToOperatorNamespace ? this.settings.operatorNamespace : null;
    let ingresses = [...members, ...leaving];
    let narrowed = false;
    // From here on, the ingresses that change are noted for the status pass.
    if (!this.#statusSeen.has(group)) {
      this.#statusSeen.set(group, { wanted: "", want: null, changed: new Set(), unserved: new Set() });
    }
    const build = (list: readonly KubeObject[]) => this.#build(group, list, gs, restrictTo);
    const phases = new PhaseTimer();
    let built = build(ingresses);
    phases.lap("modelMs");
    this.#report(built.problems, ingresses);
    if (!built.servable) {
      for (const ing of ingresses) {
        this.events.record(
          ing,
          "Warning",
          "NotServable",
          "nothing in this ingress can be routed; the last good configuration keeps serving",
        );
      }
      return "invalid";
    }
    let rendered = render(built.model, this.templates, gs.proxy, this.#renderMemo(group));
    this.#counts.renders++;
    renders.inc();
    phases.lap("renderMs");
    const objects = (members: readonly KubeObject[], r: Rendered) => {
      const target = this.#target(group, members[0]);
      const secrets = r.secrets.map((t) => ({ namespace: t.namespace, name: t.name }));
      // The part ConfigMaps this proxy has now: unchanged content keeps its part (docs/config-transport.md).
      const parts = existingParts(target.name, this.#cache(resources.configMaps).store.byIndex(byGroup, group));
      const data = configMapData(r);
      const desired = proxyObjects(target, data, secrets, this.settings, this.platform, gs.params, parts);
      return { target, desired };
    };
    let { target, desired } = objects(ingresses, rendered);
    phases.lap("objectsMs");
    // Whose is each object? Looked up while haproxy -c runs.
    let found = this.#lookUp(desired);
    /** Part ConfigMaps created while haproxy -c ran, by their index in `desired`. */
    let early = new Map<number, KubeObject>();
    if (this.validate) {
      const creating = this.#createNewParts(group, desired, found, ingresses);
      let checked: Validated | null;
      try {
        checked = await this.#validateGroup(group, ingresses, built, rendered, build, gs.proxy);
      } finally {
        // Never left running behind a failed check; its own failure is thrown below.
        await creating.catch(() => {});
      }
      early = await creating;
      if (!checked) return "invalid";
      if (checked.ingresses !== ingresses) {
        narrowed = true;
        ingresses = checked.ingresses;
        built = checked.built;
        rendered = checked.rendered;
        // What was created for the whole group is looked up again (updated, or removed as unused).
        ({ target, desired } = objects(ingresses, rendered));
        found = this.#lookUp(desired);
        early = new Map();
      }
      phases.lap("validateMs");
    }
    let current = await found;
    for (const [i, object] of early) current[i] = object;
    // Objects of the proxy that are someone else's. One in the proxy's own namespace blocks the
    // group. One in a namespace whose Secrets the proxy reads (a shared proxy's Role and RoleBinding
    // there) leaves that namespace's ingresses out instead: one namespace never blocks the others.
    for (;;) {
      const foreign = [...current.keys()].filter((i) => current[i] && !this.#ours(group, desired[i], current[i]!));
      if (foreign.length === 0) break;
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
          this.settings.controllerId,
          inside ? null : ns,
        );
        for (const ing of ingresses) {
          if (inside || ing.metadata.namespace === ns) this.events.record(ing, "Warning", "OwnershipConflict", message);
        }
      }
      const kept = ingresses.filter((ing) => !elsewhere.has(ing.metadata.namespace!));
      if (blocked || kept.length === 0) return "conflict";
      this.#partial.add(group);
      narrowed = true;
      ingresses = kept;
      built = build(kept);
      if (!built.servable) return "invalid";
      rendered = render(built.model, this.templates, gs.proxy);
      if (this.validate) {
        const checked = await this.#validateGroup(group, kept, built, rendered, build, gs.proxy);
        if (!checked) return "invalid";
        ({ ingresses, built, rendered } = checked);
      }
      ({ target, desired } = objects(ingresses, rendered));
      current = await this.#lookUp(desired);
      early = new Map();
    }
    let changed = early.size;
    let proxyService: KubeObject | undefined;
    const write = async (i: number) => {
      if (early.has(i)) return;
      const d = desired[i];
      const { object, wrote } = await this.#write(group, d.resource, d.object, current[i], ingresses);
      if (wrote) changed++;
      // The status follows the public Service only, never the ClusterIP stats Service.
      if (d.resource === resources.services && d.object.metadata.name === target.name) proxyService = object;
    };
    // The part ConfigMaps come first and do not depend on each other: a few at a time (a first
    // publish of 10,000 ingresses writes about 130). Then the rest in order: the head names the
    // parts, so it is written only once all of them are.
    const partCount = partsBeforeHead(desired);
    await forEachLimit([...desired.keys()].slice(0, partCount), PART_WRITES_IN_FLIGHT, write);
    for (let i = partCount; i < desired.length; i++) await write(i);
    // Objects this group no longer needs (e.g. a Role for Secrets of a namespace it left).
    await this.#remove(group, new Set(desired.map((d) => objKey(d.resource, d.object))));
    phases.lap("writeMs");
    // The served set is compared with the last one only when membership may have changed: while
    // the group serves exactly all its members, no handover runs and neither index moved, it is
    // the same set.
    const versions = () => `${this.#groups.version(group)}/${this.#served.version(group)}`;
    const whole = !narrowed && leaving.length === 0 && this.#handovers.size === 0;
    if (!whole || this.#released.get(group) !== versions()) {
      this.#release(group, new Set(ingresses.map((i) => this.#key(i))));
      if (whole && this.#served.members(group).size === ingresses.length) this.#released.set(group, versions());
      else this.#released.delete(group);
    }
    // Status writes are independent: a few at a time, so a class of thousands of ingresses
    // gets its addresses in seconds and the next change is not queued behind them.
    // Only ingresses whose status differs (or that are moving here) get a job: at 10,000 members,
    // queueing one per member on every change cost more than the change itself.
    const want = this.#wantedStatus(group, target, proxyService);
    const unserved = built.model.unserved ?? [];
    for (const ing of this.#statusCandidates(group, want, ingresses, narrowed, unserved)) {
      const key = this.#key(ing);
      if (this.#groups.groupOf(key) !== group) continue;
      if (unserved.length > 0 && unserved.includes(key)) {
        // Every host it names belongs to another namespace: it shows no address (an Event says why).
        if (!statusMatches(ing, [])) this.#statusLane.add(key, () => this.#clearOwnStatus(group, key));
        continue;
      }
      if (!this.#handovers.has(key) && (want.length === 0 || statusMatches(ing, want))) {
        this.#served.set(key, group);
        continue;
      }
      this.#statusLane.add(key, () => {
        // Written later: the ingress as it is then, if this group still serves it.
        const now = this.#ingresses.store.get(key);
        if (!now || this.#groups.groupOf(key) !== group) return Promise.resolve();
        return this.#settle(group, target, now, proxyService);
      });
    }
    phases.lap("statusMs");
    if (changed > 0) {
      log.info("published proxy configuration", {
        group,
        ingresses: ingresses.length,
        objectsWritten: changed,
        config: `${target.namespace}/${target.name}`,
        ...phases.laps,
      });
    }
    return changed > 0 ? "published" : "unchanged";
  }

  /**
   * After `group` published a configuration serving exactly `served`: the ingresses it served
   * before and no longer does are handed over (or, if no group handles them, lose their status).
   */
  #release(group: GroupKey, served: ReadonlySet<string>): void {
    for (const k of [...this.#served.members(group)]) {
      if (served.has(k)) continue;
      this.#served.set(k, null);
      const h = this.#handovers.get(k);
      if (h?.from === group) {
        this.#handovers.delete(k);
        this.#queue.add(h.to);
      }
      if (this.#groups.groupOf(k) === null) this.#clearStatus(k);
    }
    for (const k of served) if (this.#served.groupOf(k) === null) this.#served.set(k, group);
  }

  /**
   * The status of a member of `group`: its address once the group serves it alone. An ingress
   * moving here from another group keeps its old address until this group's Deployment has an
   * available replica and has had the grace period to load the configuration serving it; the
   * old group then keeps serving it for another grace period (clients may still use the old
   * address) before it drops it.
   */
  async #settle(group: GroupKey, target: ProxyTarget, ing: KubeObject, service: KubeObject | undefined) {
    const key = keyOf(ing);
    const h = this.#handovers.get(key);
    if (h && h.to === group) {
      const now = performance.now();
      h.includedAt ??= now;
      if (h.movedAt !== null) return;
      if (!this.#ready(group)) return; // the Deployment's availability change brings us back
      const wait = this.settings.handoverGraceMs - (now - h.includedAt);
      if (wait > 0) return this.#later(group, wait);
      await this.#updateStatus(group, target, ing, service);
      h.movedAt = performance.now();
      this.#queue.add(h.from); // it drops the ingress after the grace period
      return;
    }
    this.#served.set(key, group);
    await this.#updateStatus(group, target, ing, service);
  }

  /**
   * Validates a group's configuration; when `haproxy -c` refuses a merged configuration (or does
   * not finish within its limit), each ingress is validated alone and those refused alone are left
   * out (with an Event), so one ingress's bad or costly value never takes the others down. An
   * ingress refused alone before, with the same configuration alone, is left out before the
   * merged check. Null: nothing valid to publish.
   */
  async #validateGroup(
    group: GroupKey,
    ingresses: KubeObject[],
    built: BuildResult,
    rendered: Rendered,
    build: (list: readonly KubeObject[]) => BuildResult,
    proxy: ProxyOptions,
  ): Promise<Validated | null> {
    const check = async (id: string, form: CheckedForm, r: Rendered): Promise<ValidationProblem | null> => {
      // What `haproxy -c` can refuse: haproxy.cfg, the crt-list and the certificate files it names.
      // Map lines were checked when rendered, so a route-only change (same haproxy.cfg) skips the
      // check without hashing 2 MB of configuration (the texts are compared as they are).
      const seen = this.#validated.get(id);
      if (seen && sameForm(seen, form)) return null;
      this.#counts.validations++;
      const problem = await this.validate!(r);
      if (problem === null) this.#validated.set(id, form);
      else validationFailures.inc();
      return problem;
    };
    const refused = (ing: KubeObject, problem: ValidationProblem) =>
      this.events.record(
        ing,
        "Warning",
        "ValidationFailed",
        problem.timedOut
          ? `haproxy -c timed out on the rendered configuration and it is treated as refused; the last good one ` +
            `keeps serving: ${problem.message}`
          : `haproxy -c refused the rendered configuration; the last good one keeps serving: ${problem.message}`,
      );
    const alone = (ing: KubeObject): Rendered | null => {
      const model = build([ing]);
      return model.servable ? render(model.model, this.templates, proxy) : null;
    };
    const now = performance.now();
    const known: KubeObject[] = [];
    for (const ing of ingresses) {
      const before = this.#refusedAlone.get(keyOf(ing));
      if (!before) continue;
      const r = before.until > now ? alone(ing) : null;
      if (r !== null && sameForm(before, formOf(r))) {
        known.push(ing);
        refused(ing, before.problem);
      } else this.#refusedAlone.delete(keyOf(ing));
    }
    if (known.length > 0) {
      ingresses = ingresses.filter((ing) => !known.includes(ing));
      if (ingresses.length === 0) return null;
      built = build(ingresses);
      if (!built.servable) return null;
      rendered = render(built.model, this.templates, proxy);
    }
    const whole = await check(group, formOf(rendered), rendered);
    if (whole === null) return { ingresses, built, rendered };
    if (ingresses.length === 1) {
      this.#rememberRefused(ingresses[0], formOf(rendered), whole);
      refused(ingresses[0], whole);
      return null;
    }
    const kept: KubeObject[] = [];
    for (const ing of ingresses) {
      const r = alone(ing);
      const form = r && formOf(r);
      const problem = r ? await check(`ingress:${keyOf(ing)}`, form!, r) : null;
      if (problem === null) kept.push(ing);
      else {
        this.#rememberRefused(ing, form!, problem);
        refused(ing, problem);
      }
    }
    if (kept.length === 0 || kept.length === ingresses.length) {
      if (kept.length === ingresses.length) { for (const ing of ingresses) refused(ing, whole); }
      return null;
    }
    const keptModel = build(kept);
    if (!keptModel.servable) return null;
    const again = render(keptModel.model, this.templates, proxy);
    const problem = await check(group, formOf(again), again);
    if (problem !== null) {
      for (const ing of kept) refused(ing, problem);
      return null;
    }
    return { ingresses: kept, built: keptModel, rendered: again };
  }

  /** Notes that `ing`'s configuration alone (`form`) was refused (Controller.#refusedAlone). */
  #rememberRefused(ing: KubeObject, form: CheckedForm, problem: ValidationProblem): void {
    const until = problem.timedOut ? performance.now() + TIMED_OUT_KEPT_MS : Infinity;
    this.#refusedAlone.set(keyOf(ing), { ...form, problem, until });
  }

  /** Where the objects of `group` live and who owns them. */
  #target(group: GroupKey, anyMember: KubeObject): ProxyTarget {
    const cls = sharedClassOf(group);
    if (cls === null) return dedicatedTarget(this.#ingresses.store.get(group) ?? anyMember);
    return sharedTarget(cls, this.#classes?.store.get(cls), this.settings.operatorNamespace);
  }

  /** The global ConfigMap's settings, parsed once per object. */
  #parsedGlobal(): { cm: KubeObject | null; settings: GlobalSettings; problems: SettingsProblem[] } {
    const ns = this.settings.operatorNamespace;
    const cm = this.#global.store.get(`${ns}/${GLOBAL_CONFIGMAP}`) ?? null;
    if (this.#globalParsed?.cm !== cm) {
      this.#globalParsed = cm
        ? { cm, ...parseGlobalSettings(cm.data, defaultGlobalSettings, "global", ns) }
        : { cm, settings: defaultGlobalSettings, problems: [] };
    }
    return this.#globalParsed;
  }

  /** The global `annotation-risk-limit` (it also decides whether `proxy: dedicated` is heard). */
  #riskLimit(): Risk | null {
    return this.#parsedGlobal().settings.annotationRiskLimit;
  }

  /** The global ConfigMap's settings; its problems become Warning Events on it. */
  #globalSettings(): { settings: GlobalSettings; object: KubeObject | null } {
    const ns = this.settings.operatorNamespace;
    const { cm, settings, problems } = this.#parsedGlobal();
    if (!cm) return { settings: defaultGlobalSettings, object: null };
    for (const p of problems) {
      this.events.record(cm, "Warning", "InvalidSetting", `ConfigMap ${ns}/${GLOBAL_CONFIGMAP}: ${p.message}`);
    }
    return { settings, object: cm };
  }

  /**
   * The settings of a group: the per-class proxy pod settings (lib/controller/class_params.ts)
   * and the proxy settings, global overridden by the class's parameters
   * (lib/controller/global_settings.ts); problems become Events on the class or the global
   * ConfigMap. Null: the class's parameters are not listed yet.
   */
  #groupSettings(group: GroupKey): GroupSettings | null {
    const global = this.#globalSettings();
    const cls = sharedClassOf(group);
    const ic = cls ? this.#classes?.store.get(cls) : undefined;
    const done = (params: ClassParams, settings: GlobalSettings, classValues: Record<string, string> = {}) => {
      const proxy: ProxyOptions = {
        ...settings.proxy,
        threads: threadsForCpuLimit(params.resources.limits.cpu),
        defaultCertificate: this.#defaultCertificate(
          settings.defaultCertificateRef,
          proxyOf(group, this.settings).namespace,
          cls === null
            ? null
            : settings.defaultCertificateRef === global.settings.defaultCertificateRef
            ? global.object
            : ic ?? null,
        ),
      };
      const cert = settings.defaultCertificateRef?.split("/");
      this.#settingsSecrets.set(group, [
        ...(cert ? [secretRef(cert[0], cert[1])] : []),
        ...[global.settings.annotations, classValues].flatMap(layerSecretNames).map(anySecretRef),
      ]);
      return {
        params,
        proxy,
        nginxCompat: settings.nginxCompat,
        ownership: settings.ownership,
        global: global.settings,
        classValues,
      };
    };
    // The class of ingress-nginx's controller: its Ingresses are translated unless its parameters say otherwise.
    const base = ic?.spec?.controller === NGINX_CONTROLLER
      ? { ...global.settings, nginxCompat: true }
      : global.settings;
    if (cls === null) {
      // A dedicated proxy's listeners are its Ingress's alone: its frontend annotations apply (docs/ssl-passthrough.md).
      const ing = this.#ingresses.store.get(group);
      const own = dedicatedFrontendData(ing?.metadata?.annotations, base.annotationRiskLimit);
      const parsed = parseGlobalSettings(own.data, base, "class", this.settings.operatorNamespace);
      for (const p of [...own.problems, ...parsed.problems]) {
        if (ing) this.events.record(ing, "Warning", "InvalidAnnotation", `annotation ${PREFIX}${p.message}`);
      }
      return done(defaultClassParams, parsed.settings);
    }
    if (!ic) return done(defaultClassParams, base);
    const { ref, problem } = parametersRef(ic, this.settings.operatorNamespace);
    if (problem) this.events.record(ic, "Warning", "InvalidParameters", problem);
    if (!ref) return done(defaultClassParams, base);
    // Not listed yet: publishing the defaults now would roll the proxy out twice; its sync re-queues the group.
    if (!this.#params?.hasSynced) return null;
    const cm = this.#params.store.get(ref);
    if (!cm) {
      this.events.record(ic, "Warning", "ParametersNotFound", `ConfigMap ${ref} not found; the defaults apply`);
      return done(defaultClassParams, base);
    }
    const { params, problems } = parseClassParams(cm.data);
    const parsed = parseGlobalSettings(cm.data, base, "class", this.settings.operatorNamespace);
    for (const p of [...problems, ...parsed.problems]) {
      this.events.record(ic, "Warning", "InvalidParameters", `ConfigMap ${ref}: ${p.message}`);
    }
    return done(params, parsed.settings, parsed.settings.annotations as Record<string, string>);
  }

  /**
   * The default certificate's file entry, when its Secret is a valid TLS Secret in the proxy's
   * namespace (the platform's default key is never opened to a proxy in another namespace, e.g. a
   * tenant's dedicated one; Ingress TLS Secrets are read where they live); else an Event on `reportTo`
   * (null: a dedicated proxy in another namespace, which simply has no default certificate).
   */
  #defaultCertificate(
    ref: string | null,
    proxyNamespace: string,
    reportTo: KubeObject | null,
  ): ProxyOptions["defaultCertificate"] {
    if (ref === null) return null;
    const [ns, name] = ref.split("/");
    if (ns !== proxyNamespace) {
      if (reportTo) {
        this.events.record(
          reportTo,
          "Warning",
          "InvalidSetting",
          `default-certificate: Secret ${ref} is not in the proxy's namespace ${proxyNamespace}; a default ` +
            `certificate is read only from the proxy's own namespace, so none is served`,
        );
      }
      return null;
    }
    const secret = this.#lookup.secret(ns, name);
    if (secret && tlsSummaryOf(secret).valid) return { file: `${ns}_${name}.pem`, namespace: ns, name };
    const message = `default-certificate: Secret ${ref} ${
      secret ? `is unusable: ${tlsSummaryOf(secret).reason}` : "not found"
    }; no default certificate is served`;
    if (reportTo) this.events.record(reportTo, "Warning", "InvalidSetting", message);
    else log.warn("invalid setting", { message });
    return null;
  }

  /**
   * The model of `list`: in ingress-nginx compatibility mode, each Ingress's nginx annotations are
   * first written as ours (lib/nginx/convert.ts), and the ones not applied are reported once.
   */
  #build(group: GroupKey, list: readonly KubeObject[], gs: GroupSettings, restrictTo: string | null): BuildResult {
    const defaultClass = this.#defaultClass();
    // In a shared group only the group's setting decides (#nginxCompat): 10,000 look-ups spared.
    const translated = sharedClassOf(group) !== null && !gs.nginxCompat
      ? list
      : list.map((ing) => this.#nginxCompat(ing, gs, defaultClass) ? this.#translated(ing) : ing);
    let memo = this.#memos.get(group);
    if (!memo) this.#memos.set(group, memo = new ModelMemo());
    return buildModel({
      memo,
      ingresses: translated as V1Ingress[],
      lookup: this.#lookup,
      namespace: restrictTo,
      layers: { global: gs.global.annotations, class: gs.classValues },
      disableRiskAtOrAbove: gs.global.annotationRiskLimit,
      ownership: gs.ownership,
    });
  }

  #key(ing: KubeObject): string {
    let key = this.#keys.get(ing);
    if (key === undefined) this.#keys.set(ing, key = keyOf(ing));
    return key;
  }

  #renderMemo(group: GroupKey): RenderMemo {
    let memo = this.#renderMemos.get(group);
    if (!memo) this.#renderMemos.set(group, memo = new RenderMemo());
    return memo;
  }

  /** Compatibility mode for `ing`: its group's setting, or (dedicated proxies) its class's controller. */
  #nginxCompat(ing: KubeObject, gs: GroupSettings, defaultClass: string | null): boolean {
    if (gs.nginxCompat) return true;
    const cls = ingressClassOf(ing, defaultClass);
    return cls !== null && this.#classes?.store.get(cls)?.spec?.controller === NGINX_CONTROLLER &&
      !sharedClassOf(this.#groups.groupOf(this.#key(ing)) ?? "");
  }

  #translated(ing: KubeObject): KubeObject {
    const done = this.#translations.get(ing);
    if (done) return done;
    const { rows, annotations } = translateIngress(ing);
    const ignored = rows.filter((r) => r.verdict === "unsupported" || r.verdict === "refused");
    const signature = `${ing.metadata.uid}|${JSON.stringify(ignored)}`;
    if (this.#nginxReported.get(keyOf(ing)) !== signature) {
      this.#nginxReported.set(keyOf(ing), signature);
      for (const r of ignored) {
        this.events.record(
          ing,
          "Warning",
          r.verdict === "refused" ? "NginxAnnotationRefused" : "NginxAnnotationUnsupported",
          `${r.annotation} is ${r.verdict === "refused" ? "refused" : "not supported"}: ${r.note}`,
        );
      }
    }
    const translated = Object.keys(annotations).length === 0
      ? ing
      : { ...ing, metadata: { ...ing.metadata, annotations: { ...ing.metadata.annotations, ...annotations } } };
    this.#translations.set(ing, translated);
    return translated;
  }

  #cache(r: ResourceType): Informer {
    return r === resources.services ? this.#services : this.#owned.get(r)!;
  }

  /** The object of that name: from the cache, else from the API server (null: none). */
  async #current(r: ResourceType, obj: KubeObject): Promise<KubeObject | null> {
    const cached = this.#cache(r).store.get(keyOf(obj));
    // The caches of owned kinds hold only labelled objects: a miss is an absent or a foreign object.
    return cached ?? await this.#fetch(r, obj);
  }

  /**
   * Whether `found`, at the name of one of `group`'s objects, is the controller's: it carries the
   * marks (lib/controller/ownership.ts), or it is the very object (uid) the controller wrote or
   * found its own in this term and someone removed marks from it (then they are put back).
   */
  #ours(group: GroupKey, d: Desired, found: KubeObject): boolean {
    return ownedBy(found, group, this.settings.controllerId) ||
      (found.metadata.uid !== undefined &&
        this.#publishedBy.get(group)?.get(objKey(d.resource, d.object)) === found.metadata.uid);
  }

  /** The current object of each of `desired` (null: absent), a few lookups at a time. */
  async #lookUp(desired: readonly Desired[]): Promise<(KubeObject | null)[]> {
    const found: (KubeObject | null)[] = new Array(desired.length).fill(null);
    await forEachLimit([...desired.keys()], PART_WRITES_IN_FLIGHT, async (i) => {
      found[i] = await this.#current(desired[i].resource, desired[i].object);
    });
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
    ingresses: readonly KubeObject[],
  ): Promise<Map<number, KubeObject>> {
    const current = await found;
    const created = new Map<number, KubeObject>();
    if (current.some((c) => c && !ownedBy(c, group, this.settings.controllerId))) return created;
    // Only the parts before the head: those after it are carried by the head, whose write is the
    // one a change waits for; created before it, they would delay it.
    const head = partsBeforeHead(desired);
    const absent = [...desired.keys()].filter((i) => i < head && current[i] === null);
    await forEachLimit(absent, PART_WRITES_IN_FLIGHT, async (i) => {
      const { object } = await this.#write(group, desired[i].resource, desired[i].object, null, ingresses);
      created.set(i, object);
    });
    return created;
  }

  #published(key: string, path: string, uid: string): void {
    let published = this.#publishedBy.get(key);
    if (!published) this.#publishedBy.set(key, published = new Map());
    published.set(path, uid);
  }

  /**
   * Creates `obj`, or updates `current` (ours) when its hash differs, or puts it back when someone
   * else changed what the controller set in it (lib/controller/drift.ts): with a Warning Event on
   * the object, counted, and paced when it keeps being changed (lib/controller/restores.ts).
   */
  async #write(
    key: string,
    r: ResourceType,
    obj: KubeObject,
    current: KubeObject | null,
    ingresses: readonly KubeObject[],
  ): Promise<{ object: KubeObject; wrote: boolean }> {
    const path = objKey(r, obj);
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
      if (current && drift === null && current.metadata.annotations?.[hashAnnotation] === hash) {
        this.#published(key, path, current.metadata.uid!);
        this.#applied.found(path, hash);
        return { object: current, wrote: false };
      }
      const wait = drift === null ? 0 : this.#pacer.wait(path);
      if (current && wait > 0) {
        this.#published(key, path, current.metadata.uid!);
        this.#later(key, wait);
        return { object: current, wrote: false };
      }
    }
    // Gone although the controller wrote or found it just as it still wants it: someone else deleted it.
    const deleted = current === null && this.#applied.get(path) === hash;
    let result: KubeObject;
    const undo = this.#applied.writing(path, hash);
    try {
      result = current
        ? await applyOwned(this.#writer, r, obj, current.metadata.uid!)
        : await createOwned(this.#writer, r, obj);
    } catch (err) {
      undo();
      // A 409, or a 422 on metadata.uid: the object appeared, vanished or was replaced since it
      // was looked at; the retry looks again. Any other 422 is a refused object: report it.
      if (isStatus(err, 422) && !/metadata\.uid/.test(err.message)) {
        for (const ing of ingresses) {
          this.events.record(
            ing,
            "Warning",
            "OwnedObjectInvalid",
            `cannot apply ${r.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${err.message}`,
          );
        }
      }
      throw err;
    }
    this.#published(key, path, result.metadata.uid!);
    this.#counts.writes++;
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
    return driftOf(desired, current, this.#unkept);
  }

  /** The object of `obj`'s name as the API server has it now (null: none). */
  async #fetch(r: ResourceType, obj: KubeObject): Promise<KubeObject | null> {
    try {
      return await this.client.request("GET", objectPath(r, obj.metadata.namespace, obj.metadata.name));
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
    this.events.record(
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
    const extra = Object.keys(result.data ?? {}).filter((k) => !(k in (desired.data ?? {})));
    if (extra.length === 0) return result;
    const pointer = (k: string) => `/data/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    const patched: KubeObject = await this.#writer.request(
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
    this.#counts.writes++;
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

  async #updateStatus(
    group: GroupKey,
    target: ProxyTarget,
    ing: KubeObject,
    service: KubeObject | undefined,
  ): Promise<void> {
    const want = this.#wantedStatus(group, target, service);
    if (want.length === 0 || statusMatches(ing, want)) return;
    await this.#patchStatus(ing.metadata.namespace!, ing.metadata.name, want);
  }

  /** The address the members of `group` should show: its public Service's, once it is ours and has one. */
  #wantedStatus(group: GroupKey, target: ProxyTarget, service: KubeObject | undefined): LoadBalancerIngress[] {
    const cached = this.#services.store.get(`${target.namespace}/${target.name}`);
    // Only a Service of ours gives the ingress its address (the cache may show a foreign one by now).
    const own = cached ? (ownedBy(cached, group, this.settings.controllerId) ? cached : undefined) : service;
    return loadBalancerOf(own);
  }

  /** Clears the status of a member of `group` that owns none of its hosts (if it still is one). */
  async #clearOwnStatus(group: GroupKey, key: string): Promise<void> {
    const now = this.#ingresses.store.get(key);
    if (!now || this.#groups.groupOf(key) !== group || statusMatches(now, [])) return;
    await this.#patchStatus(now.metadata.namespace!, now.metadata.name, null);
  }

  /** Clears the status of an ingress no group of this controller serves any more (if it still exists). */
  #clearStatus(key: string): void {
    const ing = this.#ingresses.store.get(key);
    if (!ing || statusMatches(ing, [])) return;
    this.#patchStatus(ing.metadata.namespace!, ing.metadata.name, null).catch((err) =>
      log.warn("cannot clear the status of an ingress no longer served", {
        ingress: key,
        error: err instanceof Error ? err.message : String(err),
      })
    );
  }

  async #patchStatus(ns: string, name: string, want: LoadBalancerIngress[] | null): Promise<void> {
    try {
      await this.#writer.request("PATCH", objectPath(resources.ingresses, ns, name, "status"), {
        body: { status: { loadBalancer: { ingress: want } } },
        contentType: "application/merge-patch+json",
      });
      this.#counts.writes++;
      writes.inc({ kind: "Ingress", op: "status" });
    } catch (err) {
      if (!isStatus(err, 404)) throw err; // gone meanwhile: its delete event follows
    }
  }

  /**
   * Deletes every object the controller made for `group` but those in `keep`, each by its uid (a
   * same-named object made since is left alone). Returns whether anything was deleted.
   */
  async #remove(group: GroupKey, keep: ReadonlySet<string>): Promise<boolean> {
    const targets = new Map<string, { r: ResourceType; ns: string; name: string; uid: string }>();
    for (const r of this.#ownedKinds) {
      for (const o of this.#cache(r).store.byIndex(byGroup, group)) {
        if (!ownedBy(o, group, this.settings.controllerId)) continue; // e.g. another controller's
        const path = objKey(r, o);
        if (!keep.has(path)) {
          targets.set(path, { r, ns: o.metadata.namespace!, name: o.metadata.name, uid: o.metadata.uid! });
        }
      }
    }
    const published = this.#publishedBy.get(group);
    for (const [path, uid] of published ?? []) {
      const [plural, ns, name] = path.split("/");
      const r = this.#ownedKinds.find((x) => x.plural === plural);
      if (r && !keep.has(path)) targets.set(path, { r, ns, name, uid });
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
        log.warn("not deleting a proxy object: another object has its name by now", { group, object: path });
      }
      this.#applied.delete(path);
      published?.delete(path);
    }
    if (keep.size === 0) this.#publishedBy.delete(group);
    if (deleted > 0) log.info("removed proxy objects", { group, objects: deleted });
    return deleted > 0;
  }
}

export { NGINX_CONTROLLER } from "./class.ts";

/** How many of `desired` (in write order, lib/controller/transport.ts) are parts written before the head. */
function partsBeforeHead(desired: readonly Desired[]): number {
  return Math.max(0, desired.findIndex((d) => d.object.metadata.labels?.[partOfLabel] === undefined));
}

/** What `haproxy -c` reads of a rendered configuration: the same form gets the same verdict. */
interface CheckedForm {
  config: string;
  crtList: string;
  /** The certificate and CA file names, space-separated. */
  files: string;
}

function formOf(r: Rendered): CheckedForm {
  return { config: r.config, crtList: r.crtList, files: r.secrets.map((s) => s.file).join(" ") };
}

function sameForm(a: CheckedForm, b: CheckedForm): boolean {
  return a.config === b.config && a.crtList === b.crtList && a.files === b.files;
}

/** How long a check that ran into its time limit is believed (then the configuration is checked again). */
const TIMED_OUT_KEPT_MS = 10 * 60_000;

/** The ingresses of a group whose configuration passed `haproxy -c`, their model and rendering. */
interface Validated {
  ingresses: KubeObject[];
  built: BuildResult;
  rendered: Rendered;
}

/** What a group is rendered and published with (Controller.#groupSettings). */
interface GroupSettings {
  params: ClassParams;
  proxy: ProxyOptions;
  nginxCompat: boolean;
  /** Who may serve which host of the group's proxy (the class's, else the global setting). */
  ownership: OwnershipPolicy;
  global: GlobalSettings;
  /** Our annotation keys set in the class's parameters (the `class` layer). */
  classValues: Readonly<Record<string, string>>;
}

/** Where the proxy objects of a group live (without building them). */
function proxyOf(group: GroupKey, settings: ControllerSettings): { name: string; namespace: string } {
  const cls = sharedClassOf(group);
  if (cls !== null) return { name: sharedProxyName(cls), namespace: settings.operatorNamespace };
  const slash = group.indexOf("/");
  return { name: proxyName(group.slice(slash + 1)), namespace: group.slice(0, slash) };
}

/** Whether a (cached) proxy Deployment has an available replica. */
function available(d: KubeObject | null): boolean {
  return (d?.status?.availableReplicas ?? 0) >= 1;
}

function objKey(r: ResourceType, o: KubeObject): string {
  return `${r.plural}/${o.metadata.namespace}/${o.metadata.name}`;
}

/** A cached owned object without what changes by itself (its version and status). */
function ownedContent(o: KubeObject): string {
  const { status: _, metadata: { resourceVersion: _rv, ...metadata }, ...rest } = o;
  return JSON.stringify({ ...rest, metadata });
}
