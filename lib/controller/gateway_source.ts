/**
 * @module controller/gateway_source
 * The Gateway API route source (lib/controller/route_source.ts): GatewayClasses whose
 * `controllerName` is ours (lib/gateway/model_types.ts GATEWAY_CONTROLLER_NAME), their Gateways,
 * the HTTPRoutes, GRPCRoutes and TLSRoutes (each when its v1 CRD is served) attached to them and the ReferenceGrants and Namespaces that decide what may
 * attach and be referred to. Each Gateway is a proxy group of its own (`gateway:<ns>/<name>`,
 * whose one member is the Gateway): its own proxy, so two Gateways on one port route apart.
 *
 * The Gateway API is optional in a cluster: until its CRDs are served, the source asks the API
 * server's discovery now and then, says so once in the log, and starts its informers when they
 * appear; the Ingress source never waits for it. A group's build is the Gateway's model
 * (lib/gateway/model.ts) rendered by lib/gateway/render.ts; after a publish the Gateway, its
 * routes and its class get their status (lib/controller/gateway_status.ts), the Gateway's
 * `Programmed` only once its proxy is ready (lib/controller/gateway_programmed.ts). GRPCRoutes and
 * TLSRoutes are watched when their CRD is served and this identity may list them (an older chart or
 * CRD bundle leaves them out, not the rest); so are BackendTLSPolicies, with the ConfigMaps that hold
 * their CAs (lib/controller/backend_tls_watch.ts: their verdicts reach the models, their status
 * names the Gateways whose routes reach their Services).
 */
import { isStatus } from "../cluster/client.ts";
import { Informer, type InformerOptions } from "../cluster/informer.ts";
import { keyOf, type KubeObject, resources, type ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { oneLine } from "../common/errors.ts";
import { pause } from "../runtime/timers.ts";
import type { ModelInput, Rendered, Templates } from "../render/mod.ts";
import type { ProxyOptions } from "../render/proxy_options.ts";
import type {
  Condition,
  Gateway,
  GatewayAddress,
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  TLSRoute,
} from "../gateway/api.ts";
import { buildGateway } from "../gateway/model.ts";
import type { CaConfigMapLookup } from "../gateway/backend_tls.ts";
import { infrastructureMetadata } from "../gateway/infrastructure.ts";
import { gatewayFeatures } from "../gateway/features.ts";
import { GATEWAY_CONTROLLER_NAME, type GatewayBuild } from "../gateway/model_types.ts";
import { renderGateway } from "../gateway/render.ts";
import { containerPort } from "../gateway/ports.ts";
import { defaultClassParams } from "./class_params.ts";
import { defaultGlobalSettings, type GlobalSettings } from "./global_settings.ts";
import {
  type GatewayParameters,
  gatewayParametersRef,
  gatewayParamsShape,
  parseGatewayParameters,
} from "./gateway_params.ts";
import { gatewayGroup, gatewayOf, GroupIndex, type GroupKey } from "./groups.ts";
import { parentGateways, ParentIndex } from "./gateway_parents.ts";
import { ProgrammedCheck, type ProgrammedDeps } from "./gateway_programmed.ts";
import { gatewayProxyPlace, gatewayTarget, managedByLabel, managedByValue, type ProxyTarget } from "./objects.ts";
import { ReverseIndex, secretRef, serviceRef } from "./refs.ts";
import type { OwnBuild, RouteSource, SettingsLayer, SourceContext } from "./route_source.ts";
import { GatewayStatusWriter } from "./gateway_status.ts";
import { BackendTlsWatch, caConfigMapShape } from "./backend_tls_watch.ts";
import { type LoadBalancerIngress, loadBalancerOf } from "./status.ts";

const GROUP_PATH = "/apis/gateway.networking.k8s.io";
/** How often discovery is asked again while the Gateway API's CRDs are not served. */
const CRD_POLL_MS = 10_000;

export interface GatewaySourceDeps extends ProgrammedDeps {
  templates: Templates;
}

interface Informers {
  classes: Informer;
  gateways: Informer;
  routes: Informer;
  grants: Informer;
  namespaces: Informer;
  /** Only when GRPCRoutes are served and may be listed. */
  grpcRoutes?: Informer;
  /** Only when the TLSRoute v1 CRD is served and this controller may list TLSRoutes. */
  tlsRoutes?: Informer;
  /** Only when BackendTLSPolicies (v1) are served and may be listed; with the ConfigMaps holding CAs. */
  backendTlsPolicies?: Informer;
  caConfigMaps?: Informer;
}

/** Whether only the status (or nothing) changed between two versions of an object. */
function statusOnly(old: KubeObject, o: KubeObject): boolean {
  return old.metadata.generation === o.metadata.generation &&
    old.metadata.uid === o.metadata.uid &&
    old.metadata.deletionTimestamp === o.metadata.deletionTimestamp &&
    JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(o.metadata.labels ?? {}) &&
    old.metadata.resourceVersion !== o.metadata.resourceVersion;
}

/** The reference key of a CA ConfigMap (`namespace/name`) a Gateway's build read. */
const caConfigMapRef = (key: string): string => `configmap:${key}`;

export class GatewaySource implements RouteSource {
  readonly name = "gateways";
  readonly #ctx: SourceContext;
  readonly #deps: GatewaySourceDeps;
  #informers: Informers | null = null;
  readonly #groups = new GroupIndex();
  /** Gateway member key → the Services and Secrets its last build read. */
  readonly #refs = new ReverseIndex();
  readonly #httpIndex = new ParentIndex();
  readonly #grpcIndex = new ParentIndex();
  readonly #tlsIndex = new ParentIndex();
  /** Per group: the routes whose status names its Gateway (written by this term's builds), per kind. */
  readonly #statusRoutes = new Map<GroupKey, Set<string>>();
  readonly #statusGrpcRoutes = new Map<GroupKey, Set<string>>();
  readonly #statusTlsRoutes = new Map<GroupKey, Set<string>>();
  /** Whether TLSRoutes (v1) are served and may be listed: checked with the rest of the Gateway API. */
  #tlsServed = false;
  /** Whether BackendTLSPolicies (v1) are served and may be listed. */
  #btlsServed = false;
  #backendTls: BackendTlsWatch | null = null;
  readonly #status: GatewayStatusWriter;
  readonly #stop = new AbortController();
  readonly #discovering: Promise<void>;
  #forbiddenSaid = false;
  /** The ConfigMaps Gateways' parametersRefs name (any namespace): started when a Gateway first names one. */
  #params: Informer | null = null;
  /** Whether GRPCRoutes are served and may be listed (known once #served said true). */
  #grpc = false;
  /** Whether each Gateway's proxy Service answers yet, keyed by group. */
  readonly #programmed: ProgrammedCheck;

  constructor(ctx: SourceContext, deps: GatewaySourceDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.#programmed = new ProgrammedCheck(deps);
    this.#status = new GatewayStatusWriter(
      ctx.client,
      ctx.writer,
      ctx.counts,
      gatewayFeatures(ctx.settings.gatewayProxiesInGatewayNamespace),
    );
    this.#discovering = this.#discover();
  }

  /** Asks discovery until the Gateway API is served, then starts the informers. */
  async #discover(): Promise<void> {
    let said = false;
    while (!this.#stop.signal.aborted && !this.#ctx.stopped()) {
      try {
        if (await this.#served()) {
          this.#start();
          log.info("Gateway API served: watching GatewayClasses, Gateways, HTTPRoutes and ReferenceGrants", {
            controllerName: GATEWAY_CONTROLLER_NAME,
            grpcRoutes: this.#grpc,
            tlsRoutes: this.#tlsServed,
            backendTlsPolicies: this.#btlsServed,
          });
          return;
        }
        if (!said) {
          log.info(
            "Gateway API CRDs (gateway.networking.k8s.io v1, ReferenceGrant v1beta1) are not installed: Gateways " +
              "are served once they are",
            { checkEveryMs: CRD_POLL_MS },
          );
          said = true;
        }
      } catch (err) {
        log.warn("cannot ask the API server whether the Gateway API is served", { error: oneLine(err) });
      }
      await pause(CRD_POLL_MS, this.#stop.signal);
    }
  }

  async #served(): Promise<boolean> {
    const names = async (version: string): Promise<Set<string>> => {
      try {
        const list = await this.#ctx.client.request("GET", `${GROUP_PATH}/${version}`);
        return new Set((list?.resources ?? []).map((r: { name: string }) => r.name));
      } catch (err) {
        if (isStatus(err, 404, 503)) return new Set();
        throw err;
      }
    };
    const v1 = await names("v1");
    if (!["gatewayclasses", "gateways", "httproutes"].every((n) => v1.has(n))) return false;
    if (!(await names("v1beta1")).has("referencegrants")) return false;
    // Served, but may this identity read them? (The chart grants it with gatewayAPI.enabled.)
    try {
      await this.#ctx.client.request("GET", `${GROUP_PATH}/v1/gatewayclasses`, { query: { limit: "1" } });
      this.#grpc = v1.has("grpcroutes") && await this.#mayList("grpcroutes");
      this.#tlsServed = v1.has("tlsroutes") && await this.#mayList("tlsroutes");
      this.#btlsServed = v1.has("backendtlspolicies") && await this.#mayList("backendtlspolicies");
    } catch (err) {
      if (!isStatus(err, 403)) throw err;
      if (!this.#forbiddenSaid) {
        log.info("the Gateway API is served but this controller may not list GatewayClasses: Gateways are not served", {
          error: oneLine(err),
        });
        this.#forbiddenSaid = true;
      }
      return false;
    }
    return true;
  }

  /** Whether this identity may list `resource` of the Gateway API (v1). */
  async #mayList(resource: string): Promise<boolean> {
    try {
      await this.#ctx.client.request("GET", `${GROUP_PATH}/v1/${resource}`, { query: { limit: "1" } });
      return true;
    } catch (err) {
      if (!isStatus(err, 403)) throw err;
      log.info(`this controller may not list ${resource}: they are not served`, { error: oneLine(err) });
      return false;
    }
  }

  #start(): void {
    const { settings } = this.#ctx;
    const inf = (r: ResourceType, extra: Partial<InformerOptions> = {}) => {
      const i = this.#ctx.register(new Informer(this.#ctx.client, r, { resyncMs: settings.resyncPeriodMs, ...extra }));
      return i;
    };
    const informers: Informers = {
      classes: inf(resources.gatewayClasses),
      gateways: inf(resources.gateways),
      routes: inf(resources.httpRoutes),
      grants: inf(resources.referenceGrants),
      namespaces: inf(resources.namespaces),
      ...(this.#grpc ? { grpcRoutes: inf(resources.grpcRoutes) } : {}),
      ...(this.#tlsServed ? { tlsRoutes: inf(resources.tlsRoutes) } : {}),
      ...(this.#btlsServed
        ? {
          backendTlsPolicies: inf(resources.backendTlsPolicies),
          // never the proxies' own ConfigMaps; of the others only `ca.crt` is kept
          caConfigMaps: inf(resources.configMaps, {
            labelSelector: `${managedByLabel}!=${managedByValue}`,
            transform: caConfigMapShape,
          }),
        }
        : {}),
    };
    this.#informers = informers;
    if (informers.backendTlsPolicies && informers.caConfigMaps) {
      this.#backendTls = new BackendTlsWatch(
        informers.backendTlsPolicies,
        informers.caConfigMaps,
        () => this.#queueAll(),
      );
    }
    informers.classes.on({
      onAdd: (c) => this.#classChanged(c),
      onUpdate: (old, c) => statusOnly(old, c) ? undefined : this.#classChanged(c),
      onDelete: (c) => this.#classChanged(c),
    });
    informers.gateways.on({
      onAdd: (g) => this.#file(keyOf(g)),
      onUpdate: (old, g) => statusOnly(old, g) ? undefined : this.#file(keyOf(g)),
      onDelete: (g) => this.#file(keyOf(g)),
    });
    const kinds = [
      [informers.routes, this.#httpIndex],
      [informers.grpcRoutes, this.#grpcIndex],
      [informers.tlsRoutes, this.#tlsIndex],
    ] as const;
    for (const [routes, index] of kinds) {
      routes?.on({
        onAdd: (r) => this.#routeChanged(routes, index, r),
        onUpdate: (old, r) => statusOnly(old, r) ? undefined : this.#routeChanged(routes, index, r),
        onDelete: (r) => this.#routeChanged(routes, index, r),
      });
    }
    informers.grants.on({
      onAdd: () => this.#queueAll(),
      onUpdate: () => this.#queueAll(),
      onDelete: () => this.#queueAll(),
    });
    informers.namespaces.on({
      onAdd: () => this.#queueAll(),
      onUpdate: (old, n) =>
        JSON.stringify(old.metadata.labels ?? {}) === JSON.stringify(n.metadata.labels ?? {})
          ? undefined
          : this.#queueAll(),
      onDelete: () => this.#queueAll(),
    });
    for (const i of Object.values(informers)) i.start();
    // Filed once every kind is listed: before, a Gateway's class or routes may look missing.
    Promise.all(Object.values(informers).map((i) => i.waitForSync())).then(() => {
      if (!this.#ctx.stopped()) this.refileAll(false);
    }, () => {});
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#discovering;
  }

  #synced(): boolean {
    const i = this.#informers;
    return !!i && Object.values(i).every((x) => x.hasSynced);
  }

  #ours(className: string | undefined): GatewayClass | undefined {
    const cls = className ? this.#informers?.classes.store.get(className) as GatewayClass | undefined : undefined;
    return cls?.spec?.controllerName === GATEWAY_CONTROLLER_NAME ? cls : undefined;
  }

  #classChanged(cls: KubeObject): void {
    if ((cls as GatewayClass).spec?.controllerName === GATEWAY_CONTROLLER_NAME) this.#writeClass(cls.metadata.name);
    this.refileAll(true);
  }

  /** Our class's status, by the leader. */
  #writeClass(name: string): void {
    const cls = this.#ours(name);
    if (!cls || !this.#ctx.leadership.leading) return;
    this.#status.writeClass(cls).catch((err) => {
      if (this.#ctx.stopped()) return;
      log.warn("cannot write the GatewayClass's status", { gatewayClass: name, error: oneLine(err) });
    });
  }

  #routeChanged(routes: Informer, index: ParentIndex, route: KubeObject): void {
    const key = keyOf(route);
    const now = routes.store.get(key) ? parentGateways(route) : [];
    for (const gw of index.update(key, now)) this.#queueGateway(gw);
  }

  #queueGateway(gatewayKey: string): void {
    const slash = gatewayKey.indexOf("/");
    const group = gatewayGroup(gatewayKey.slice(0, slash), gatewayKey.slice(slash + 1));
    if (
      this.#groups.groupOf(group) !== null || this.#statusRoutes.has(group) || this.#statusGrpcRoutes.has(group) ||
      this.#statusTlsRoutes.has(group)
    ) {
      this.#ctx.queue(group);
    }
  }

  #queueAll(): void {
    if (!this.#synced()) return;
    for (const g of this.#groups.groups()) this.#ctx.queue(g);
  }

  /** Files a Gateway (`namespace/name`) again: in its own group while its class is ours. */
  #file(key: string, onlyIfMoved = false): void {
    const slash = key.indexOf("/");
    const member = gatewayGroup(key.slice(0, slash), key.slice(slash + 1));
    const gw = this.#informers?.gateways.store.get(key) as Gateway | undefined;
    const group = gw && this.#synced() && this.#ours(gw.spec?.gatewayClassName) ? member : null;
    const before = this.#groups.set(member, group);
    if (onlyIfMoved && before === group) return;
    if (group === null) this.#refs.delete(member);
    this.#ctx.filed(member, before, group);
  }

  claims(group: GroupKey): boolean {
    return gatewayOf(group) !== null;
  }

  size(): number {
    return this.#informers?.gateways.store.size ?? 0;
  }

  keyOf(member: KubeObject): string {
    return gatewayGroup(member.metadata.namespace!, member.metadata.name);
  }

  get(key: string): KubeObject | undefined {
    const gw = gatewayOf(key);
    return gw === null ? undefined : this.#informers?.gateways.store.get(gw);
  }

  groupOf(key: string): GroupKey | null {
    return this.#groups.groupOf(key);
  }

  members(group: GroupKey): ReadonlySet<string> {
    return this.#groups.members(group);
  }

  version(group: GroupKey): number {
    return this.#groups.version(group);
  }

  groups(): GroupKey[] {
    return this.#groups.groups();
  }

  users(ref: string): readonly string[] {
    return this.#refs.users(ref);
  }

  refileAll(onlyIfMoved: boolean): void {
    const informers = this.#informers;
    if (!informers) return;
    if (!onlyIfMoved) { for (const c of informers.classes.store.list()) this.#writeClass(c.metadata.name); }
    const keys = new Set([...informers.gateways.store.keys(), ...[...this.#groups.groups()].map((g) => gatewayOf(g)!)]);
    for (const key of keys) this.#file(key, onlyIfMoved);
  }

  globalChanged(_settings: GlobalSettings): void {}

  settingsLayer(group: GroupKey, global: GlobalSettings): SettingsLayer | null {
    const gateway = this.get(group) as Gateway | undefined;
    const parameters = gateway ? this.#parameters(gateway, global) : undefined;
    if (parameters === null) return null; // their ConfigMaps are not listed yet: the sync queues the group
    // the same for the CA ConfigMaps of its client validation
    if (gateway?.spec?.tls?.frontend && !this.#watchParameters().hasSynced) return null;
    // Wrong parameters refuse the Gateway (buildOwn): its proxy keeps the defaults meanwhile.
    if (parameters === undefined || parameters.problem !== null) {
      return { params: defaultClassParams, settings: global, classValues: {}, owner: null };
    }
    return { params: parameters.params, settings: parameters.settings, classValues: {}, owner: null };
  }

  /**
   * The parameters `gateway`'s parametersRef names (lib/controller/gateway_params.ts) over
   * `global`: undefined when it names none, null while the ConfigMaps are not listed yet.
   */
  #parameters(gateway: Gateway, global: GlobalSettings): GatewayParameters | null | undefined {
    const { ref, problem } = gatewayParametersRef(gateway);
    if (problem !== null) return { params: defaultClassParams, settings: global, problem };
    if (ref === null) return undefined;
    const informer = this.#watchParameters();
    if (!informer.hasSynced) return null;
    const { settings } = this.#ctx;
    return parseGatewayParameters(
      ref,
      informer.store.get(ref),
      global,
      settings.gatewayProxiesInGatewayNamespace,
      settings.operatorNamespace,
    );
  }

  /** The informer of the Gateways' parameter ConfigMaps, started once; their changes queue the Gateways naming them. */
  #watchParameters(): Informer {
    if (this.#params) return this.#params;
    const { settings } = this.#ctx;
    const informer = new Informer(this.#ctx.client, resources.configMaps, {
      // never the proxies' own ConfigMaps (configurations of up to megabytes)
      labelSelector: `${managedByLabel}!=${managedByValue}`,
      resyncMs: settings.resyncPeriodMs,
      transform: gatewayParamsShape,
    });
    const naming = (ref: string | null) => {
      for (const group of this.#groups.groups()) {
        const gw = this.get(group) as Gateway | undefined;
        if (gw && (ref === null ? gatewayParametersRef(gw).ref !== null : gatewayParametersRef(gw).ref === ref)) {
          this.#ctx.queue(group);
        }
      }
    };
    informer.on({
      onAdd: (cm) => {
        naming(keyOf(cm));
        this.#caChanged(keyOf(cm));
      },
      onUpdate: (_, cm) => {
        naming(keyOf(cm));
        this.#caChanged(keyOf(cm));
      },
      onDelete: (cm) => {
        naming(keyOf(cm));
        this.#caChanged(keyOf(cm));
      },
      onSync: () => {
        naming(null);
        this.#caChanged(null);
      },
    });
    this.#params = informer;
    this.#ctx.register(informer);
    informer.start();
    return informer;
  }

  /**
   * The CA ConfigMaps `gateway`'s spec.tls.frontend may name (lib/gateway/client_validation.ts),
   * from the cluster-wide ConfigMap cache of the parameters (started on the first Gateway asking);
   * undefined when the Gateway asks no client validation.
   */
  #caConfigMaps(gateway: Gateway): CaConfigMapLookup | undefined {
    if (!gateway.spec?.tls?.frontend) return undefined;
    const store = this.#watchParameters().store;
    return (namespace, name) => store.get(`${namespace}/${name}`) as { data?: Record<string, unknown> } | undefined;
  }

  /** A ConfigMap changed (`key`), or the cache listed them all (null): the Gateways checking clients with it. */
  #caChanged(key: string | null): void {
    if (key !== null) {
      for (const group of this.#refs.users(caConfigMapRef(key))) this.#ctx.queue(group);
      return;
    }
    for (const group of this.#groups.groups()) {
      if ((this.get(group) as Gateway | undefined)?.spec?.tls?.frontend) this.#ctx.queue(group);
    }
  }

  modelInputs(): ModelInput["ingresses"] {
    return [];
  }

  target(group: GroupKey, anyMember: KubeObject): ProxyTarget {
    const { labels, annotations } = infrastructureMetadata(anyMember as Gateway);
    const key = gatewayOf(group)!;
    return gatewayTarget(key, gatewayProxyPlace(key, this.#ctx.settings), [], { labels, annotations });
  }

  /** A Gateway's status is written after its own build (publishedOwn), not by the address pass. */
  shows(_member: KubeObject, _want: readonly LoadBalancerIngress[]): boolean {
    return true;
  }

  async writeStatus(): Promise<void> {}

  removalRefused(): boolean {
    return false;
  }

  /** The Gateway's model, rendered, and where its proxy lives; null: the Gateway or its class is gone. */
  buildOwn(group: GroupKey, proxy: ProxyOptions): OwnBuild<GatewayBuild> | null {
    const informers = this.#informers;
    const key = gatewayOf(group);
    if (!informers || key === null) return null;
    const gateway = informers.gateways.store.get(key) as Gateway | undefined;
    const gatewayClass = gateway && this.#ours(gateway.spec?.gatewayClassName);
    if (!gateway || !gatewayClass) return null;
    const routes = [...this.#httpIndex.routesOf.get(key) ?? []]
      .map((k) => informers.routes.store.get(k) as HTTPRoute | undefined)
      .filter((r): r is HTTPRoute => r !== undefined);
    const grpcRoutes = [...this.#grpcIndex.routesOf.get(key) ?? []]
      .map((k) => informers.grpcRoutes?.store.get(k) as GRPCRoute | undefined)
      .filter((r): r is GRPCRoute => r !== undefined);
    const tlsRoutes = [...this.#tlsIndex.routesOf.get(key) ?? []]
      .map((k) => informers.tlsRoutes?.store.get(k) as TLSRoute | undefined)
      .filter((r): r is TLSRoute => r !== undefined);
    const namespaces = informers.namespaces.store;
    const parametersProblem = this.#parameters(gateway, defaultGlobalSettings)?.problem ?? null;
    const build = buildGateway({
      gateway,
      gatewayClass,
      routes,
      grpcRoutes,
      tlsRoutes,
      grants: informers.grants.store.list() as never,
      namespaceLabels: (ns) => {
        const n = namespaces.get(ns);
        return n ? n.metadata.labels ?? {} : undefined;
      },
      lookup: this.#deps.lookup,
      parametersProblem,
      caConfigMaps: this.#caConfigMaps(gateway),
      http2: proxy.http2,
      ...(this.#backendTls ? { backendTls: this.#backendTls.current() } : {}),
    });
    this.#backendTls?.warn(build.tlsPolicies ?? [], this.#ctx.events);
    if (parametersProblem !== null) this.#ctx.events.record(gateway, "Warning", "InvalidParameters", parametersProblem);
    this.#refs.set(group, [
      ...build.refs.services.map((s) => serviceRef(s.slice(0, s.indexOf("/")), s.slice(s.indexOf("/") + 1))),
      ...build.refs.secrets.map((s) => secretRef(s.slice(0, s.indexOf("/")), s.slice(s.indexOf("/") + 1))),
      ...(build.refs.configMaps ?? []).map(caConfigMapRef),
    ]);
    // A route's problem goes on the route (its author reads its Events), the rest on the Gateway.
    for (const p of build.problems) {
      const route = p.kind === "HTTPRoute"
        ? informers.routes.store.get(p.object)
        : p.kind === "GRPCRoute"
        ? informers.grpcRoutes?.store.get(p.object)
        : p.kind === "TLSRoute"
        ? informers.tlsRoutes?.store.get(p.object)
        : undefined;
      if (route) this.#ctx.events.record(route, "Warning", p.reason, p.message);
      else this.#ctx.events.record(gateway, "Warning", p.reason, `${p.kind} ${p.object}: ${p.message}`);
    }
    const rendered: Rendered = renderGateway(build.proxy, this.#deps.templates, proxy);
    const ports = build.proxy.ports.map((p) => ({ port: p.port, containerPort: containerPort(p.port) }));
    const infra = infrastructureMetadata(gateway);
    for (const problem of infra.problems) {
      this.#ctx.events.record(gateway, "Warning", "InvalidInfrastructure", problem);
    }
    const target = gatewayTarget(key, gatewayProxyPlace(key, this.#ctx.settings), ports.length > 0 ? ports : [], {
      labels: infra.labels,
      annotations: infra.annotations,
    });
    if (ports.length === 0) delete target.ports;
    return { rendered, target, members: [gateway], detail: build };
  }

  /**
   * After the Gateway's configuration was published (`refused`: haproxy -c refused it, or its
   * objects are someone else's; the last good configuration keeps serving): the Gateway's status
   * (Programmed once its proxy has an available pod: looked at again until then), its routes'
   * parent statuses, and the removal of this Gateway's entries from routes that left it.
   */
  async publishedOwn(
    group: GroupKey,
    own: OwnBuild<GatewayBuild>,
    proxyService: KubeObject | undefined,
    refused: string | null,
  ): Promise<void> {
    const key = gatewayOf(group)!;
    const gateway = own.members[0] as Gateway;
    const build = own.detail;
    const addresses: GatewayAddress[] = loadBalancerOf(proxyService).map((a) =>
      a.ip ? { type: "IPAddress", value: a.ip } : { type: "Hostname", value: a.hostname! }
    );
    const pending = this.#programmed.pending(
      group,
      own.target.namespace,
      own.target.name,
      proxyService,
      addresses.length,
    );
    const conditions = build.gateway.conditions.map((c): Condition => {
      if (c.type !== "Programmed" || c.status !== "True") return c;
      if (refused !== null) return { ...c, status: "False", reason: "Invalid", message: refused };
      if (pending !== null) return { ...c, status: "False", reason: "Pending", message: pending };
      return c;
    });
    const cached = this.#informers?.gateways.store.get(key) as Gateway | undefined;
    const tasks: Promise<void>[] = [
      this.#status.writeGateway(gateway.metadata.namespace!, gateway.metadata.name, cached, {
        ...build.gateway,
        conditions,
      }, addresses),
    ];
    const kinds = [
      [this.#informers!.routes, build.routes, this.#statusRoutes, resources.httpRoutes],
      [this.#informers!.grpcRoutes, build.grpcRoutes, this.#statusGrpcRoutes, resources.grpcRoutes],
      [this.#informers!.tlsRoutes, build.tlsRoutes, this.#statusTlsRoutes, resources.tlsRoutes],
    ] as const;
    for (const [informer, statuses, before, resource] of kinds) {
      if (!informer) continue;
      const written = new Set<string>();
      for (const [routeKey, parents] of statuses) {
        const route = informer.store.get(routeKey) as HTTPRoute | GRPCRoute | TLSRoute | undefined;
        if (!route) continue;
        written.add(routeKey);
        tasks.push(this.#status.writeRoute(route, key, parents, resource));
      }
      for (const routeKey of before.get(group) ?? []) {
        const route = informer.store.get(routeKey) as HTTPRoute | GRPCRoute | TLSRoute | undefined;
        if (route && !written.has(routeKey)) tasks.push(this.#status.writeRoute(route, key, [], resource));
      }
      before.set(group, written);
    }
    if (this.#backendTls) {
      tasks.push(...this.#backendTls.writeStatus(group, key, build.tlsPolicies ?? [], this.#status));
    }
    const results = await Promise.allSettled(tasks);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** A Gateway gone: its entries leave the routes that still name it. */
  async retiredOwn(group: GroupKey): Promise<void> {
    const key = gatewayOf(group)!;
    this.#programmed.forget(group);
    const kinds = [
      [this.#informers?.routes, this.#statusRoutes, resources.httpRoutes],
      [this.#informers?.grpcRoutes, this.#statusGrpcRoutes, resources.grpcRoutes],
      [this.#informers?.tlsRoutes, this.#statusTlsRoutes, resources.tlsRoutes],
    ] as const;
    const tasks = kinds.flatMap(([informer, before, resource]) =>
      [...before.get(group) ?? []].map((routeKey) => {
        const route = informer?.store.get(routeKey) as HTTPRoute | GRPCRoute | TLSRoute | undefined;
        return route ? this.#status.writeRoute(route, key, [], resource) : Promise.resolve();
      })
    );
    this.#statusRoutes.delete(group);
    this.#statusGrpcRoutes.delete(group);
    this.#statusTlsRoutes.delete(group);
    if (this.#backendTls) tasks.push(...this.#backendTls.retire(group, key, this.#status));
    this.#refs.delete(group);
    await Promise.all(tasks);
  }
}
