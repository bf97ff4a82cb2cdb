/**
 * @module controller/route_source
 * The seam between the kinds of objects that ask the proxies for routes and the rest of the
 * controller (docs/controller-structure.md). A route source watches its objects, files each in the
 * proxy group that serves it (lib/controller/groups.ts), tells which of them use a Service or a
 * Secret, and contributes the inputs of its groups' builds: what its class layers over the global
 * settings, its members as the model reads them, and where the group's proxy lives and who owns
 * it; it also writes the address its members show. The Ingress source
 * (lib/controller/ingress_source.ts) is the first; a Gateway API source (Gateways and HTTPRoutes)
 * goes beside it, with group keys and member keys of its own.
 *
 * The rest of the controller (event routing, settings, build, validation, publish, handovers,
 * status) knows only group keys, member keys and member objects, and asks the source that claims
 * a group for the rest.
 */
import type { ClusterClient } from "../cluster/client.ts";
import type { Informer } from "../cluster/informer.ts";
import type { KubeObject } from "../cluster/resources.ts";
import type { ModelInput, Rendered } from "../render/mod.ts";
import type { ProxyOptions } from "../render/proxy_options.ts";
import type { ClassParams } from "./class_params.ts";
import type { EventRecorder } from "./events.ts";
import type { GlobalSettings } from "./global_settings.ts";
import type { GroupKey } from "./groups.ts";
import type { Leadership, Writer } from "./leader.ts";
import type { WorkCounts } from "./metrics.ts";
import type { ProxyTarget } from "./objects.ts";
import type { RefKey } from "./refs.ts";
import type { ControllerSettings } from "./settings.ts";
import type { LoadBalancerIngress } from "./status.ts";

/** What a source layers over the global settings for one of its groups (lib/controller/group_settings.ts). */
export interface SettingsLayer {
  /** The proxy pod settings (lib/controller/class_params.ts). */
  params: ClassParams;
  /** The global settings with the layer's values over them. */
  settings: GlobalSettings;
  /** Our annotation keys the layer sets (the model's `class` layer). */
  classValues: Readonly<Record<string, string>>;
  /** The object whose values were layered (a class), where a problem of its default certificate is reported. */
  owner: KubeObject | null;
}

/**
 * A group a source builds itself (the Gateway API: its members are not Ingress-shaped): the
 * rendered configuration, where its proxy lives, its members, and what the source keeps of the
 * build for its status (`detail`).
 */
export interface OwnBuild<D = unknown> {
  rendered: Rendered;
  target: ProxyTarget;
  members: KubeObject[];
  detail: D;
}

/** What the controller gives a route source. */
export interface SourceContext {
  readonly client: ClusterClient;
  readonly settings: ControllerSettings;
  readonly events: EventRecorder;
  readonly leadership: Leadership;
  /** The client for every write: refuses writes outside a leadership term. */
  readonly writer: Writer;
  readonly counts: WorkCounts;
  /** Adds an informer to the controller's: started, waited for and counted with the others. */
  register(informer: Informer): Informer;
  /** The global settings as they are now (lib/controller/global_settings.ts). */
  globalSettings(): GlobalSettings;
  queue(group: GroupKey): void;
  /** The member `key` was filed again: in `before` until now, in `group` from now on (null: none). */
  filed(key: string, before: GroupKey | null, group: GroupKey | null): void;
  /** Someone changed only the status of `member`. */
  statusChanged(source: RouteSource, member: KubeObject): void;
  stopped(): boolean;
}

/**
 * A kind of object that asks the proxies for routes. Member keys are unique across sources (the
 * Ingress source's are `namespace/name`; another source's carry its kind), and so are group keys.
 */
export interface RouteSource {
  /** What its members are, for logs: "ingresses". */
  readonly name: string;
  /** Whether `group` is a key of this source's form. */
  claims(group: GroupKey): boolean;
  /** How many objects its cache holds. */
  size(): number;

  /** The key of a member object, made once per object. */
  keyOf(member: KubeObject): string;
  /** The member object of `key`, as cached. */
  get(key: string): KubeObject | undefined;
  groupOf(key: string): GroupKey | null;
  members(group: GroupKey): ReadonlySet<string>;
  /** The cached objects of `members(group)`, in that order, when the source keeps them between calls (frozen). */
  memberObjects?(group: GroupKey): readonly KubeObject[];
  /** A number that changes whenever a member joins or leaves `group`. */
  version(group: GroupKey): number;
  /** The groups that have members. */
  groups(): Iterable<GroupKey>;
  /** The member keys that use `ref`, a Service or a Secret (lib/controller/refs.ts). */
  users(ref: RefKey): readonly string[];
  /** Files every object again; `onlyIfMoved`: only a member whose group changed counts as changed. */
  refileAll(onlyIfMoved: boolean): void;
  /** The global settings changed: files its objects again when these settings decide their groups. */
  globalChanged(settings: GlobalSettings): void;

  /** Its layer over the global settings for `group`; null: not known yet (its sync queues the group again). */
  settingsLayer(group: GroupKey, global: GlobalSettings): SettingsLayer | null;
  /** `members` of `group` as the model reads them; `nginxCompat`: the group's compatibility setting. */
  modelInputs(group: GroupKey, members: readonly KubeObject[], nginxCompat: boolean): ModelInput["ingresses"];
  /** Where the objects of `group` live and who owns them. */
  target(group: GroupKey, anyMember: KubeObject): ProxyTarget;

  /** Whether `member` shows the address `want` (none: `[]`). */
  shows(member: KubeObject, want: readonly LoadBalancerIngress[]): boolean;
  /** Writes the address `member` shows (null: none); a member gone meanwhile is no error. */
  writeStatus(member: KubeObject, want: LoadBalancerIngress[] | null): Promise<void>;
  /** Whether a refused removal of `group`'s objects is expected: reported here, not retried. */
  removalRefused(group: GroupKey, err: unknown): boolean;

  /**
   * A source that builds its groups itself (instead of the Ingress model and renderer): the
   * group's build with the proxy's options; null: nothing to serve now.
   */
  buildOwn?(group: GroupKey, proxy: ProxyOptions): OwnBuild | null;
  /** After `buildOwn`'s configuration was published (`refused`: why it was not), the members' status. */
  publishedOwn?(
    group: GroupKey,
    own: OwnBuild,
    proxyService: KubeObject | undefined,
    refused: string | null,
  ): Promise<void>;
  /** A group of `buildOwn` lost its members and its objects are gone. */
  retiredOwn?(group: GroupKey): Promise<void>;
  /** The controller stops: work the source runs on its own ends. */
  stop?(): Promise<void>;
}

/** The route sources of one controller. */
export class RouteSources {
  constructor(readonly all: readonly RouteSource[]) {}

  /** The source that claims `group` (the first source takes a key no source claims). */
  of(group: GroupKey): RouteSource {
    return this.all.find((s) => s.claims(group)) ?? this.all[0];
  }

  /** The group of the member `key`, whichever source files it. */
  groupOf(key: string): GroupKey | null {
    for (const s of this.all) {
      const group = s.groupOf(key);
      if (group !== null) return group;
    }
    return null;
  }

  groups(): GroupKey[] {
    return this.all.flatMap((s) => [...s.groups()]);
  }

  /** The groups of the members that use `ref`. */
  groupsUsing(ref: RefKey): Set<GroupKey | null> {
    const out = new Set<GroupKey | null>();
    for (const s of this.all) for (const key of s.users(ref)) out.add(s.groupOf(key));
    return out;
  }

  refileAll(onlyIfMoved: boolean): void {
    for (const s of this.all) s.refileAll(onlyIfMoved);
  }

  globalChanged(settings: GlobalSettings): void {
    for (const s of this.all) s.globalChanged(settings);
  }

  /** How many objects each source holds, by its name (for the log). */
  sizes(): Record<string, number> {
    return Object.fromEntries(this.all.map((s) => [s.name, s.size()]));
  }
}
