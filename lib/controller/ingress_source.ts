/**
 * @module controller/ingress_source
 * The Ingress route source (lib/controller/route_source.ts). It watches Ingresses and
 * IngressClasses (and, once a class names parameters, the ConfigMaps they name), files each handled
 * Ingress in its proxy group (a class's shared proxy or its own dedicated one:
 * lib/controller/groups.ts, lib/controller/class.ts) and keeps what each uses
 * (lib/controller/refs.ts). It reports what only it knows, once each: a class that gets no proxy
 * of its own (`UnknownIngressClass`), a dedicated proxy the settings turn off
 * (`DedicatedProxyDisabled`, `DedicatedProxyLeftBehind`). For a group's build it gives the class's
 * settings layer (lib/controller/class_layer.ts), the Ingresses as the model reads them (translated
 * from their nginx annotations in compatibility mode: lib/controller/nginx_translations.ts) and
 * the proxy's target; it writes `status.loadBalancer`.
 */
import type { ModelInput } from "../render/mod.ts";
import { isStatus } from "../cluster/client.ts";
import { Informer, type InformerOptions } from "../cluster/informer.ts";
import { keyOf, type KubeObject, objectPath, resources, type ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { oneLine } from "../common/errors.ts";
import { cachedIngress } from "./cached_shapes.ts";
import {
  type ClassChoice,
  defaultIngressClass,
  handlesIngress,
  ingressClassOf,
  NGINX_CONTROLLER,
  servingClass,
  unservedClassMessage,
} from "./class.ts";
import { classLayer } from "./class_layer.ts";
import { parametersRef } from "./class_params.ts";
import { GLOBAL_CONFIGMAP, type GlobalSettings } from "./global_settings.ts";
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
import { writes } from "./metrics.ts";
import { NginxTranslations } from "./nginx_translations.ts";
import { dedicatedTarget, managedByLabel, managedByValue, proxyOf, type ProxyTarget, sharedTarget } from "./objects.ts";
import { refsOf, ReverseIndex } from "./refs.ts";
import type { RouteSource, SettingsLayer, SourceContext } from "./route_source.ts";
import { type LoadBalancerIngress, statusMatches } from "./status.ts";
import { MemberObjects } from "./member_objects.ts";

export class IngressSource implements RouteSource {
  readonly name = "ingresses";
  readonly #ctx: SourceContext;
  readonly #ingresses: Informer;
  /** Null with `--restrict-to-operator-namespace`: IngressClass is cluster-scoped, nothing cluster-wide is listed. */
  readonly #classes: Informer | null;
  /**
   * ConfigMaps of the controller's namespace that are not ours (the classes' parameters); started
   * when the first IngressClass with `spec.parameters` is seen, so clusters without any pay nothing.
   */
  #params: Informer | null = null;
  /** Ingress key → the group that should serve it. */
  readonly #groups = new GroupIndex();
  readonly #memberObjects: MemberObjects;
  /** Ingress key → the Services and Secrets it uses. */
  readonly #refs = new ReverseIndex();
  /** Ingress key → the class it named that got no proxy of its own, as last reported (once each). */
  readonly #classReported = new Map<string, string>();
  /**
   * The key of each cached Ingress object, made once: at 10,000 Ingresses a publish looks each one
   * up several times, and a key made anew must be hashed anew each time.
   */
  readonly #keys = new WeakMap<KubeObject, string>();
  /** The global settings that decide groups (risk limit, `dedicated-proxies`) the Ingresses were last filed with. */
  #groupedWith = "";
  readonly #nginx: NginxTranslations;

  constructor(ctx: SourceContext) {
    this.#ctx = ctx;
    const { settings } = ctx;
    const namespace = settings.restrictToOperatorNamespace ? settings.operatorNamespace : null;
    const inf = (r: ResourceType, extra: Partial<InformerOptions> = {}) =>
      ctx.register(new Informer(ctx.client, r, { namespace, resyncMs: settings.resyncPeriodMs, ...extra }));
    this.#ingresses = inf(resources.ingresses, { transform: cachedIngress });
    this.#memberObjects = new MemberObjects(this.#ingresses.store, this.#groups);
    this.#classes = namespace ? null : inf(resources.ingressClasses);
    this.#nginx = new NginxTranslations(ctx.events);
    this.#watch();
  }

  #watch(): void {
    this.#ingresses.on({
      onAdd: (o) => this.#file(keyOf(o)),
      onUpdate: (old, o) => {
        // Our own status writes change neither spec nor metadata: no work for them.
        const same = old.metadata.generation === o.metadata.generation &&
          JSON.stringify(old.metadata.annotations ?? {}) === JSON.stringify(o.metadata.annotations ?? {}) &&
          old.metadata.deletionTimestamp === o.metadata.deletionTimestamp &&
          old.metadata.uid === o.metadata.uid;
        if (!same || old.metadata.resourceVersion === o.metadata.resourceVersion) this.#file(keyOf(o));
        else this.#ctx.statusChanged(this, o);
      },
      onDelete: (o) => this.#file(keyOf(o)),
    });
    const onClass = (c: KubeObject) => {
      if (c.spec?.parameters) this.#watchParams();
      // The default class decides the group of class-less ingresses: look at every ingress again
      // (no API call; IngressClass changes are rare).
      this.refileAll(true);
      this.#ctx.queue(classGroup(c.metadata.name));
    };
    this.#classes?.on({ onAdd: onClass, onUpdate: (_, c) => onClass(c), onDelete: onClass });
  }

  /** Starts the informer of the classes' parameter ConfigMaps (once). */
  #watchParams(): void {
    if (this.#params || this.#ctx.stopped()) return;
    const { settings } = this.#ctx;
    const i = new Informer(this.#ctx.client, resources.configMaps, {
      namespace: settings.operatorNamespace,
      labelSelector: `${managedByLabel}!=${managedByValue}`,
      resyncMs: settings.resyncPeriodMs,
    });
    const onParams = (cm: KubeObject) => {
      for (const c of this.#classes?.store.list() ?? []) {
        if (parametersRef(c, settings.operatorNamespace).ref === keyOf(cm)) {
          this.#ctx.queue(classGroup(c.metadata.name));
        }
      }
    };
    i.on({
      onAdd: onParams,
      onUpdate: (_, cm) => onParams(cm),
      onDelete: onParams,
      // The classes' groups waited for this first list (settingsLayer).
      onSync: () => {
        for (const c of this.#classes?.store.list() ?? []) {
          if (c.spec?.parameters) this.#ctx.queue(classGroup(c.metadata.name));
        }
      },
    });
    this.#params = i;
    this.#ctx.register(i);
    i.start();
  }

  claims(group: GroupKey): boolean {
    // `class:<name>` or an ingress key (namespaces and names hold no colon).
    return sharedClassOf(group) !== null || !group.includes(":");
  }

  size(): number {
    return this.#ingresses.store.size;
  }

  keyOf(ing: KubeObject): string {
    let key = this.#keys.get(ing);
    if (key === undefined) this.#keys.set(ing, key = keyOf(ing));
    return key;
  }

  get(key: string): KubeObject | undefined {
    return this.#ingresses.store.get(key);
  }

  groupOf(key: string): GroupKey | null {
    return this.#groups.groupOf(key);
  }

  members(group: GroupKey): ReadonlySet<string> {
    return this.#groups.members(group);
  }

  memberObjects(group: GroupKey): readonly KubeObject[] {
    return this.#memberObjects.of(group);
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
    for (const key of this.#ingresses.store.keys()) this.#file(key, onlyIfMoved);
  }

  globalChanged(settings: GlobalSettings): void {
    // The risk limit and `dedicated-proxies` decide who gets a proxy of its own.
    const grouping = `${settings.annotationRiskLimit}|${settings.dedicatedProxies}`;
    if (grouping === this.#groupedWith) return;
    this.#groupedWith = grouping;
    this.refileAll(true);
  }

  /**
   * Files an ingress again after a change: its group now, the one before and the one serving it
   * are looked at (`onlyIfMoved`: only when its group changed, e.g. after an IngressClass event).
   */
  #file(key: string, onlyIfMoved = false): void {
    const { settings } = this.#ctx;
    const ing = this.#ingresses.store.get(key);
    const defaultClass = this.#defaultClass();
    const handled = !!ing && handlesIngress(ing, settings.ingressClass, defaultClass);
    const choice = handled
      ? servingClass(ing!, settings.ingressClass, defaultClass, this.#classes && this.#classLookup)
      : null;
    const global = this.#ctx.globalSettings();
    const risk = global.annotationRiskLimit;
    const refused = handled && dedicatedRefused(ing!, global.dedicatedProxies, risk);
    const group = choice ? groupOf(refused ? withoutDedicated(ing!) : ing!, choice.shared, risk) : null;
    if (refused) this.#dedicatedRefused(ing!, group!);
    const before = this.#groups.set(key, group);
    this.#reportUnservedClass(key, group, choice);
    if (onlyIfMoved && before === group) return;
    if (handled) this.#refs.set(key, refsOf(ing!));
    else {
      this.#refs.delete(key);
      this.#nginx.forget(key);
    }
    this.#ctx.filed(key, before, group);
  }

  /**
   * `ing` asks for a proxy of its own while the settings turn them off: it is served by its shared
   * proxy, and told so. Only the leader writes Events; a new term looks at every ingress again.
   */
  #dedicatedRefused(ing: KubeObject, group: GroupKey): void {
    if (!this.#ctx.leadership.leading) return;
    const proxy = proxyOf(group, this.#ctx.settings);
    this.#ctx.events.record(
      ing,
      "Warning",
      "DedicatedProxyDisabled",
      `${proxyModeAnnotation}: ${dedicatedValue} is ignored: dedicated proxies are turned off in the controller's ` +
        `settings (${GLOBAL_CONFIGMAP} ConfigMap, dedicated-proxies: "false"); this Ingress is served by the shared ` +
        `proxy ${proxy.namespace}/${proxy.name}, without frontend annotations of its own`,
    );
  }

  /**
   * A Warning on an ingress whose class gets no proxy of its own and that joined the class-less
   * group instead (lib/controller/class.ts): once per ingress, class and group, not on every
   * resync; a standby sends it when it becomes the leader (a new term files every ingress again).
   */
  #reportUnservedClass(key: string, group: GroupKey | null, choice: ClassChoice | null): void {
    const ing = this.#ingresses.store.get(key);
    if (!ing || !choice || choice.unserved === null || group === null || sharedClassOf(group) === null) {
      this.#classReported.delete(key);
      return;
    }
    const signature = `${ing.metadata.uid}|${choice.unserved}|${choice.shared}`;
    // Before the IngressClasses are listed every class looks missing: the sync files every ingress again.
    if (
      this.#classReported.get(key) === signature || !this.#ctx.leadership.leading || !this.#classes?.hasSynced
    ) return;
    this.#classReported.set(key, signature);
    const ic = this.#classes?.store.get(choice.unserved);
    const message = unservedClassMessage(choice.unserved, ic, choice.shared, sharedProxyName(choice.shared));
    this.#ctx.events.record(ing, "Warning", "UnknownIngressClass", message);
  }

  #classLookup = (name: string): KubeObject | undefined => this.#classes?.store.get(name);

  #defaultClass(): string | null {
    return this.#classes ? defaultIngressClass(this.#classes.store.list()) : null;
  }

  settingsLayer(group: GroupKey, global: GlobalSettings): SettingsLayer | null {
    const params = this.#params;
    return classLayer(
      group,
      global,
      {
        ingressClass: this.#classLookup,
        ingress: (key) => this.#ingresses.store.get(key),
        parameters: () => params?.hasSynced ? params.store : null,
      },
      this.#ctx.settings.operatorNamespace,
      this.#ctx.events,
    );
  }

  /**
   * In ingress-nginx compatibility mode, each Ingress's nginx annotations are first written as ours
   * (lib/nginx/convert.ts), and the ones not applied are reported once.
   */
  modelInputs(group: GroupKey, members: readonly KubeObject[], nginxCompat: boolean): ModelInput["ingresses"] {
    const defaultClass = this.#defaultClass();
    // In a shared group only the group's setting decides (#nginxCompat): 10,000 look-ups spared.
    const translated = sharedClassOf(group) !== null && !nginxCompat
      ? members
      : members.map((ing) => this.#nginxCompat(ing, nginxCompat, defaultClass) ? this.#nginx.translated(ing) : ing);
    return translated as ModelInput["ingresses"];
  }

  /** Compatibility mode for `ing`: its group's setting, or (dedicated proxies) its class's controller. */
  #nginxCompat(ing: KubeObject, groupSetting: boolean, defaultClass: string | null): boolean {
    if (groupSetting) return true;
    const cls = ingressClassOf(ing, defaultClass);
    return cls !== null && this.#classes?.store.get(cls)?.spec?.controller === NGINX_CONTROLLER &&
      !sharedClassOf(this.#groups.groupOf(this.keyOf(ing)) ?? "");
  }

  target(group: GroupKey, anyMember: KubeObject): ProxyTarget {
    const cls = sharedClassOf(group);
    if (cls === null) return dedicatedTarget(this.#ingresses.store.get(group) ?? anyMember);
    return sharedTarget(cls, this.#classes?.store.get(cls), this.#ctx.settings.operatorNamespace);
  }

  shows(ing: KubeObject, want: readonly LoadBalancerIngress[]): boolean {
    return statusMatches(ing, want);
  }

  async writeStatus(ing: KubeObject, want: LoadBalancerIngress[] | null): Promise<void> {
    const path = objectPath(resources.ingresses, ing.metadata.namespace!, ing.metadata.name, "status");
    try {
      await this.#ctx.writer.request("PATCH", path, {
        body: { status: { loadBalancer: { ingress: want } } },
        contentType: "application/merge-patch+json",
      });
      this.#ctx.counts.writes++;
      writes.inc({ kind: "Ingress", op: "status" });
    } catch (err) {
      if (!isStatus(err, 404)) throw err; // gone meanwhile: its delete event follows
    }
  }

  /**
   * Whether a refused delete (403) of a dedicated proxy's objects is expected: dedicated proxies
   * are turned off, and the RBAC that goes with it (the Helm chart's) allows no writes in the
   * Ingress's namespace. Its objects stay for the admin to delete; retrying cannot help.
   */
  removalRefused(group: GroupKey, err: unknown): boolean {
    if (sharedClassOf(group) !== null || this.#ctx.globalSettings().dedicatedProxies || !isStatus(err, 403)) {
      return false;
    }
    const proxy = proxyOf(group, this.#ctx.settings);
    const message = `dedicated proxies are turned off and the controller may not delete the former dedicated proxy ` +
      `${proxy.namespace}/${proxy.name}: delete its objects (labelled ${managedByLabel}=${managedByValue}, ` +
      `app.kubernetes.io/instance=${proxy.name}) yourself`;
    log.warn(message, { group, error: oneLine(err) });
    const ing = this.#ingresses.store.get(group);
    if (ing) this.#ctx.events.record(ing, "Warning", "DedicatedProxyLeftBehind", message);
    return true;
  }
}
