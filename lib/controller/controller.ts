/**
 * @module controller/controller
 * The controller loop and the reconcile of one proxy group (docs/controller-structure.md). The
 * route sources (lib/controller/route_source.ts; Ingresses: lib/controller/ingress_source.ts) and
 * the shared caches (lib/controller/caches.ts, lib/controller/event_routing.ts) turn changes into
 * the keys of proxy groups (a class's shared proxy, or an ingress's dedicated one:
 * docs/proxy-groups.md) on a keyed, coalescing work queue. Workers reconcile one group at a time
 * each, so one bad group never blocks the others, along the data path: the members it serves
 * (lib/controller/handover.ts) → its settings (lib/controller/group_settings.ts) → model → render
 * (lib/controller/group_build.ts) → validate (lib/controller/group_validation.ts) → publish
 * (lib/controller/publish.ts) → the status of its members (lib/controller/status_pass.ts). A group
 * left without members loses its objects (deleted here: no garbage collector is assumed). Only the
 * leader writes (lib/controller/leader.ts): every write goes through a gated writer, and the queue
 * is paused while another replica leads (the caches stay warm); a new term starts with a full resync.
 */
import { ClusterClient } from "../cluster/client.ts";
import { Backoff } from "../cluster/backoff.ts";
import type { Informer } from "../cluster/informer.ts";
import { type KubeObject, resources, type ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { IdleTrimmer } from "../runtime/malloc_trim.ts";
import { loadTemplates, type Templates } from "../render/mod.ts";
import { PhaseTimer } from "../runtime/timers.ts";
import { ClusterCaches } from "./caches.ts";
import { EventRouter } from "./event_routing.ts";
import { EventRecorder } from "./events.ts";
import type { GroupBuild, GroupConfig } from "./group_build.ts";
import { GroupBuilder } from "./group_build.ts";
import { GroupSettingsReader } from "./group_settings.ts";
import { defaultValidator, GroupValidator, type Validator } from "./group_validation.ts";
import type { GroupKey } from "./groups.ts";
import { Handovers } from "./handover.ts";
import { IngressSource } from "./ingress_source.ts";
import { gatedWriter, holderIdentity, LeaderElector, type Leadership, leaseName, type Writer } from "./leader.ts";
import { reconciles, reconcileSeconds, type WorkCounts } from "./metrics.ts";
import { type Platform, preparePlatform } from "./platform.ts";
import { Publisher } from "./publish.ts";
import { WorkQueue } from "./queue.ts";
import { type RouteSource, RouteSources, type SourceContext } from "./route_source.ts";
import { GatewaySource } from "./gateway_source.ts";
import type { ClassParams } from "./class_params.ts";
import type { ProxyOptions } from "../render/proxy_options.ts";
import { type ConfigLike, type ControllerSettings, defaultSettings, settingsFromConfig } from "./settings.ts";
import { StatusPass } from "./status_pass.ts";
import { FirstServiceHold } from "./first_service_hold.ts";

/** A phase of a reconcile that took this long lets the event loop turn before the next (leader renewals, watch events). */
const LONG_PHASE_MS = 200;
const nextTurn = () => new Promise((r) => setTimeout(r, 0));

export { NGINX_CONTROLLER } from "./class.ts";
export { defaultValidator, type ValidationProblem, type Validator } from "./group_validation.ts";

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

export interface ControllerStats extends WorkCounts {
  /** Times the C heap was trimmed after work (lib/runtime/malloc_trim.ts). */
  mallocTrims: number;
  /** Builds queued once idle because status writes had come back since the group's last build. */
  catchUps: number;
  watchStarts: Record<string, number>;
  lists: Record<string, number>;
  requestsSent: number;
}

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

class Controller {
  readonly events: EventRecorder;
  readonly synced: Promise<void>;
  readonly #queue: WorkQueue;
  readonly #informers: Informer[] = [];
  readonly #counts: WorkCounts = { reconciles: 0, renders: 0, writes: 0, validations: 0 };
  /** The client for every write: refuses and aborts writes outside a leadership term. */
  readonly #writer: Writer;
  readonly #sources: RouteSources;
  readonly #caches: ClusterCaches;
  readonly #groupSettings: GroupSettingsReader;
  readonly #builder: GroupBuilder;
  readonly #validator: GroupValidator | null;
  readonly #publisher: Publisher;
  readonly #handovers: Handovers;
  readonly #status: StatusPass;
  /** The status writes wait while the proxies of the first publishes start (lib/controller/first_service_hold.ts). */
  readonly #firstService: FirstServiceHold;
  /** Groups that left some namespace's members out for a foreign object: looked at again later. */
  readonly #partial = new Set<GroupKey>();
  /**
   * Groups blocked by a foreign object, looked at again after a backoff: foreign objects are
   * not watched (the caches hold ours only). Kept out of the queue so `idle()` still means "no
   * work until something changes".
   */
  readonly #rechecks = new Map<string, { backoff: Backoff; timer?: ReturnType<typeof setTimeout> }>();
  /**
   * Per group, the status writes of its members that came back since its last build. A model delta
   * finds its changes by comparing the member objects with those of the last build
   * (lib/render/model_delta.ts), so a build right after 10,000 status writes walks 10,000 replaced
   * objects: a group with at least `catchUpMinimum` of them is built once more when the controller
   * is idle, and the next real change starts from the cache.
   */
  readonly #adopted = new Map<GroupKey, number>();
  #catchUps = 0;
  /** Groups to look at again at a set time (a handover's grace period ends, a paced restore is due). */
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  readonly #workers: Promise<void>[] = [];
  #stopped = false;
  readonly #idleWaiters: (() => void)[] = [];
  /** Hands the C heap's free pages back once a burst of work is over (lib/runtime/malloc_trim.ts). */
  readonly #trimmer = new IdleTrimmer();
  #unsubscribe = (): void => {};

  constructor(
    readonly settings: ControllerSettings,
    readonly client: ClusterClient,
    templates: Templates,
    validate: Validator | null,
    platform: Platform,
    readonly leadership: Leadership,
  ) {
    this.#writer = gatedWriter(client, leadership);
    this.events = new EventRecorder(this.#writer);
    this.#queue = new WorkQueue({ coalesceMs: settings.coalesceMs });
    if (!leadership.leading) this.#queue.pause();
    const register = (i: Informer) => (this.#informers.push(i), i);
    const queue = (group: GroupKey) => this.#queue.add(group);
    const later = (group: GroupKey, ms: number) => this.#later(group, ms);
    const stopped = () => this.#stopped;
    const sourceContext: SourceContext = {
      client,
      settings,
      events: this.events,
      leadership,
      writer: this.#writer,
      counts: this.#counts,
      register,
      globalSettings: () => this.#groupSettings.globalSettings(),
      queue,
      filed: (key, before, group) => this.#filed(key, before, group),
      statusChanged: (source, member) => {
        const group = source.buildOwn ? null : source.groupOf(source.keyOf(member));
        if (group !== null && this.#builder.adopt(group, member)) {
          const n = (this.#adopted.get(group) ?? 0) + 1;
          this.#adopted.set(group, n);
          if (n === settings.catchUpMinimum) this.#notifyIdle(); // writes may come back after the work ended
        }
        this.#status.changedByOthers(source, member);
      },
      stopped,
    };
    const ingresses = new IngressSource(sourceContext);
    const caches = this.#caches = new ClusterCaches(client, settings, platform, register);
    // Cluster-scoped GatewayClasses cannot be read by a controller restricted to its namespace.
    const gateways = settings.restrictToOperatorNamespace ? [] : [
      new GatewaySource(sourceContext, {
        lookup: caches.lookup,
        templates,
        deployment: (namespace, name) => caches.deployment(namespace, name),
        later,
      }),
    ];
    this.#sources = new RouteSources([ingresses, ...gateways]);
    this.#groupSettings = new GroupSettingsReader(caches.global, settings, this.events, caches.lookup);
    this.#builder = new GroupBuilder({
      templates,
      lookup: caches.lookup,
      namespace: settings.restrictToOperatorNamespace ? settings.operatorNamespace : null,
      events: this.events,
      counts: this.#counts,
    });
    this.#validator = validate && new GroupValidator(validate, this.events, this.#counts);
    this.#publisher = new Publisher({
      client,
      writer: this.#writer,
      settings,
      platform,
      caches,
      events: this.events,
      counts: this.#counts,
      later,
    });
    this.#handovers = new Handovers({
      settings,
      deployment: (namespace, name) => caches.deployment(namespace, name),
      queue,
      later,
      lost: (source, key) => this.#status.clear(source, key),
    });
    this.#status = new StatusPass({
      settings,
      caches,
      sources: this.#sources,
      handovers: this.#handovers,
      leadership,
      queue,
      retry: (group) => this.#queue.retry(group),
      onIdle: () => this.#notifyIdle(),
      stopped,
    });
    this.#firstService = new FirstServiceHold({
      lane: this.#status.lane,
      deployment: (namespace, name) => caches.deployment(namespace, name),
    });
    new EventRouter({
      settings,
      caches,
      sources: this.#sources,
      queue,
      requeueAll: () => this.#requeueAll(),
      globalSettings: () => this.#groupSettings.globalSettings(),
      namedBySettings: (namespace, name) => this.#groupSettings.namesSecret(namespace, name),
      changedByOthers: (r, old, o) => this.#publisher.changedByOthers(r, old, o),
    });
    this.synced = Promise.all(this.#informers.map((i) => i.waitForSync())).then(() => {});
  }

  /**
   * One group along the data path: the members it serves → its settings → model → render →
   * validate → publish → their status. Returns the result counted in `reconciles_total`.
   */
  async #reconcile(group: GroupKey): Promise<string> {
    this.#adopted.delete(group); // whatever this finds, it is the group's next look (see #adopted)
    // Watch: the members the group serves (those moving away included) as its source files them.
    const source = this.#sources.of(group);
    const { members, leaving } = this.#handovers.serving(group, source);
    if (members.length === 0 && leaving.length === 0) return await this.#retire(group, source);
    // Config: the global settings under the source's layer.
    const settings = this.#groupSettings.of(group, source);
    if (settings === null) return "waiting";
    if (source.buildOwn) return await this.#reconcileOwn(group, source, settings.proxy, settings.params);
    // From here on, the members that change are noted for the status pass.
    this.#status.begin(group);
    const phases = new PhaseTimer();
    // Model → render.
    const build = this.#builder.start(group, source, settings);
    // The member objects as the source keeps them (not copied: 100,000 of them at every change).
    const serving = leaving.length === 0 ? members : [...members, ...leaving];
    await build.readAhead(serving);
    phases.lap("readAheadMs");
    const built = build.model(serving);
    phases.lap("modelMs");
    if (!build.servable(built, serving)) return "invalid";
    // A long phase (a first build of a large group) lets timers and watch events run before the next one.
    if (phases.laps.modelMs >= LONG_PHASE_MS) await nextTurn();
    let config: GroupConfig = { members: serving, built, rendered: build.renderKept(built.model) };
    phases.lap("renderMs");
    if (phases.laps.renderMs >= LONG_PHASE_MS) await nextTurn();
    const objectsOf = (c: GroupConfig) =>
      this.#publisher.plan(group, source.target(group, c.members[0]), c.rendered, settings.params);
    let plan = objectsOf(config);
    phases.lap("objectsMs");
    // Validate: members refused alone are left out.
    let narrowed = false;
    const validator = this.#validator;
    if (validator) {
      // Whose is each object? Looked up (and new parts created) while haproxy -c runs.
      const checked = await this.#publisher.whileChecking(
        group,
        plan,
        config.members,
        () => validator.check(build, config),
      );
      if (!checked) return "invalid";
      if (checked.members !== config.members) {
        narrowed = true;
        config = checked;
        plan = objectsOf(config);
      }
      phases.lap("validateMs");
    }
    // Publish. First, objects of the proxy that are someone else's: one in the proxy's own namespace
    // blocks the group; one in a namespace whose Secrets the proxy reads (a shared proxy's Role and
    // RoleBinding there) leaves that namespace's members out instead: one namespace never blocks the others.
    let current = await this.#publisher.current(plan);
    let conflict = this.#publisher.conflicts(group, plan, current, config.members);
    while (conflict !== null) {
      if (conflict.blocked || conflict.kept.length === 0) return "conflict";
      this.#partial.add(group);
      narrowed = true;
      const again = await this.#configure(build, conflict.kept);
      if (again === null) return "invalid";
      config = again;
      plan = objectsOf(config);
      current = await this.#publisher.current(plan);
      conflict = this.#publisher.conflicts(group, plan, current, config.members);
    }
    const { written, proxyService } = await this.#publisher.publish(group, plan, current, config.members);
    phases.lap("writeMs");
    this.#handovers.published(group, source, config.members, narrowed || leaving.length > 0);
    // Status: written off this reconcile, a few at a time, so a class of thousands of members gets
    // its addresses in seconds and the next change is not queued behind them.
    const unserved = config.built.model.unserved ?? [];
    if (written > 0) {
      const { namespace, name } = plan.target;
      this.#firstService.published(namespace, name, config.members.length, config.rendered.config.length);
    }
    this.#status.pass(group, source, plan.target, proxyService, config.members, unserved, narrowed);
    phases.lap("statusMs");
    if (written > 0) {
      log.info("published proxy configuration", {
        group,
        ingresses: config.members.length,
        objectsWritten: written,
        config: `${plan.target.namespace}/${plan.target.name}`,
        model: build.modelKind,
        ...phases.laps,
      });
    } else {
      log.v(2)?.info("proxy configuration unchanged", { group, model: build.modelKind, ...phases.laps });
    }
    return written > 0 ? "published" : "unchanged";
  }

  /**
   * A group its source builds itself (the Gateway API): build → validate → publish → the source
   * writes its members' status. A configuration haproxy -c refuses, or objects that are someone
   * else's, leave the last good configuration serving; the source says why in the status.
   */
  async #reconcileOwn(
    group: GroupKey,
    source: RouteSource,
    proxy: ProxyOptions,
    params: ClassParams,
  ): Promise<string> {
    const phases = new PhaseTimer();
    const own = source.buildOwn!(group, proxy);
    if (own === null) return "waiting";
    this.#counts.renders++;
    phases.lap("buildMs");
    const plan = this.#publisher.plan(group, own.target, own.rendered, params);
    const validate = this.#validator?.validate;
    let refused: string | null = null;
    if (validate) {
      const problem = await this.#publisher.whileChecking(group, plan, own.members, () => validate(own.rendered));
      this.#counts.validations++;
      if (problem) refused = `the generated configuration was refused by haproxy -c: ${problem.message}`;
      phases.lap("validateMs");
    }
    let written = 0;
    let proxyService: KubeObject | undefined;
    if (refused === null) {
      const current = await this.#publisher.current(plan);
      const conflict = this.#publisher.conflicts(group, plan, current, own.members);
      if (conflict !== null) {
        refused = `an object of this proxy in ${own.target.namespace} is not this controller's (see the ` +
          `OwnershipConflict Event)`;
      } else {
        ({ written, proxyService } = await this.#publisher.publish(group, plan, current, own.members));
        phases.lap("writeMs");
      }
    }
    this.#handovers.published(group, source, own.members, false);
    proxyService ??= this.#caches.ownedCache(resources.services).store.get(
      `${own.target.namespace}/${own.target.name}`,
    );
    await source.publishedOwn?.(group, own, proxyService, refused);
    phases.lap("statusMs");
    if (written > 0) {
      log.info("published proxy configuration", {
        group,
        config: `${plan.target.namespace}/${plan.target.name}`,
        objectsWritten: written,
        ...phases.laps,
      });
    }
    if (refused !== null) return "invalid";
    return written > 0 ? "published" : "unchanged";
  }

  /** The configuration of some of the group's members (a group narrowed by a conflict); null: nothing valid. */
  async #configure(build: GroupBuild, members: KubeObject[]): Promise<GroupConfig | null> {
    const built = build.model(members);
    if (!built.servable) return null;
    const config = { members, built, rendered: build.render(built.model) };
    return this.#validator ? await this.#validator.check(build, config) : config;
  }

  /** A group without members: its objects are removed and nothing is kept for it. */
  async #retire(group: GroupKey, source: RouteSource): Promise<string> {
    this.#validator?.forgetGroup(group);
    this.#builder.forget(group);
    this.#groupSettings.forget(group);
    this.#status.forget(group);
    this.#handovers.forget(group);
    let removed = false;
    try {
      removed = await this.#publisher.remove(group, new Set());
    } catch (err) {
      if (!source.removalRefused(group, err)) throw err;
    }
    this.#handovers.release(group, source, new Set());
    await source.retiredOwn?.(group);
    return removed ? "removed" : "unchanged";
  }

  /** A member was filed again (lib/controller/route_source.ts): its groups are looked at. */
  #filed(key: string, before: GroupKey | null, group: GroupKey | null): void {
    if (group === null) this.#validator?.forgetMember(key);
    for (const g of this.#handovers.filed(key, before, group)) {
      this.#status.changed(g, key);
      this.#queue.add(g);
    }
  }

  /** Queues every group that has members or still serves some. */
  #requeueAll(): void {
    for (const g of new Set([...this.#sources.groups(), ...this.#handovers.servedGroups()])) this.#queue.add(g);
  }

  /** A new term: look at everything again (another leader wrote meanwhile); a lost one: stand by. */
  #leadershipChanged = (leading: boolean): void => {
    if (this.#stopped) return;
    if (!leading) {
      this.#queue.pause();
      // What this replica wrote or found may have changed under another leader.
      this.#publisher.forgetTerm();
      this.#status.forgetTerm();
      this.#handovers.forgetTerm();
      return;
    }
    // Every member's group (the queue holds groups), and every group that owns objects.
    this.#sources.refileAll(false);
    for (const group of this.#caches.ownerGroups()) this.#queue.add(group);
    this.#queue.resume();
  };

  start(): void {
    this.#unsubscribe = this.leadership.onChange(this.#leadershipChanged);
    for (const i of this.#informers) i.start();
    this.synced.then(() => {
      if (this.#stopped) return;
      // Filed while the classes may not have been listed: again, now that they are (no API call).
      this.#sources.refileAll(true);
      const caches = this.#caches;
      log.info("controller caches synced", {
        ...this.#sources.sizes(),
        services: caches.services.store.size,
        endpointSlices: caches.slices.store.size,
        secrets: caches.secrets.store.size + caches.opaqueSecrets.store.size,
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
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#queue.shutdown();
    this.#trimmer.stop();
    this.#firstService.stop();
    this.#status.lane.clear();
    await Promise.all(this.#sources.all.map((s) => s.stop?.()));
    await Promise.all(this.#informers.map((i) => i.stop()));
    await Promise.all(this.#workers);
    await this.#status.lane.drained();
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
    this.#firstService.close(); // the first publishes are done
    if (!this.#status.lane.idle) return;
    const due = [...this.#adopted].filter(([, n]) => n >= this.settings.catchUpMinimum);
    if (due.length > 0 && !this.#stopped) {
      for (const [group] of due) this.#queue.add(group); // each build takes its group out of #adopted
      this.#catchUps += due.length;
      return;
    }
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
      catchUps: this.#catchUps,
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
        // A group that left some members out for a foreign object is looked at again too.
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

  /** Looks at `group` again in `ms` (once: a look already set stands). */
  #later(group: GroupKey, ms: number): void {
    if (this.#stopped || this.#timers.has(group)) return;
    this.#timers.set(
      group,
      setTimeout(() => {
        this.#timers.delete(group);
        this.#queue.add(group);
      }, Math.max(0, ms)),
    );
  }
}
