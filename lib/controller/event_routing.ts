/**
 * @module controller/event_routing
 * Which groups a change in the shared caches (lib/controller/caches.ts) concerns; the route
 * sources route the events of their own objects (lib/controller/route_source.ts).
 * - A Service, EndpointSlice or Secret: the groups whose members use it (a change re-renders only
 *   those). A Secret also counts for the members using a Service whose annotations name it, and
 *   for every group when some group's settings name it (lib/controller/group_settings.ts).
 * - The global ConfigMap: every group renders it; the sources file their objects again when it
 *   moves them (the risk limit and `dedicated-proxies` decide who gets a proxy of its own).
 * - An owned object: its group, when it went away, someone else changed it
 *   (lib/controller/publish.ts), the public Service got another address (the members' status
 *   follows it), or the proxy Deployment became available or not (a handover waits for it:
 *   lib/controller/handover.ts).
 */
import type { KubeObject, ResourceType } from "../cluster/resources.ts";
import { resources } from "../cluster/resources.ts";
import type { ClusterCaches } from "./caches.ts";
import type { GlobalSettings } from "./global_settings.ts";
import type { GroupKey } from "./groups.ts";
import { proxyOf } from "./objects.ts";
import { ownerGroupOf } from "./ownership.ts";
import { deploymentAvailable } from "./proxy_pod.ts";
import { annotatedSecretRefs, ReverseIndex, secretRef, serviceRef, sliceServiceRef } from "./refs.ts";
import type { RouteSources } from "./route_source.ts";
import type { ControllerSettings } from "./settings.ts";
import { loadBalancerOf } from "./status.ts";

interface RoutingDeps {
  settings: ControllerSettings;
  caches: ClusterCaches;
  sources: RouteSources;
  queue(group: GroupKey): void;
  /** Queues every group that has members or still serves some. */
  requeueAll(): void;
  globalSettings(): GlobalSettings;
  /** Whether the settings of some group name the Secret `namespace/name`. */
  namedBySettings(namespace: string, name: string): boolean;
  /** Whether an owned object's event may be someone else's change (not one of the controller's writes). */
  changedByOthers(r: ResourceType, old: KubeObject | null, o: KubeObject): boolean;
}

export class EventRouter {
  /** Service ref → the Secrets its annotations name (only Services that name any). */
  readonly #serviceSecrets = new ReverseIndex();

  constructor(readonly deps: RoutingDeps) {
    const { caches } = deps;
    caches.services.on({
      onAdd: (o) => this.#service(o, null, false),
      onUpdate: (old, o) => this.#service(o, old, false),
      onDelete: (o) => this.#service(o, null, true),
    });
    const onSlice = (o: KubeObject) => {
      const r = sliceServiceRef(o);
      if (r) this.#users(r);
    };
    caches.slices.on({ onAdd: onSlice, onUpdate: (_, o) => onSlice(o), onDelete: onSlice });
    const onGlobal = () => {
      deps.sources.globalChanged(deps.globalSettings());
      deps.requeueAll();
    };
    caches.global.on({
      onAdd: onGlobal,
      onUpdate: (old, o) => JSON.stringify(old.data ?? {}) !== JSON.stringify(o.data ?? {}) && onGlobal(),
      onDelete: onGlobal,
    });
    for (const informer of [caches.secrets, caches.opaqueSecrets]) {
      informer.on({
        onAdd: (o) => this.#secret(o),
        // Nothing to render when neither content nor verdict changed (metadata updates, relists).
        onUpdate: (old, o) => old.tlsSummary?.sha256 !== o.tlsSummary?.sha256 && this.#secret(o),
        onDelete: (o) => this.#secret(o),
      });
    }
    for (const [r, i] of caches.owned) {
      i.on({
        onAdd: (o) => this.#owned(r, o, null, false),
        onUpdate: (old, o) => this.#owned(r, o, old, false),
        onDelete: (o) => this.#owned(r, o, null, true),
      });
    }
  }

  /** Queues the groups of the members that use `ref`. */
  #users(ref: string): void {
    for (const g of this.deps.sources.groupsUsing(ref)) if (g !== null) this.deps.queue(g);
  }

  #service(o: KubeObject, old: KubeObject | null, deleted: boolean): void {
    const owner = ownerGroupOf(o);
    if (!owner) {
      const ref = serviceRef(o.metadata.namespace!, o.metadata.name);
      const secrets = deleted ? [] : annotatedSecretRefs(o);
      if (secrets.length > 0) this.#serviceSecrets.set(ref, secrets);
      else this.#serviceSecrets.delete(ref);
      return this.#users(ref);
    }
    // An owned Service (public or stats): its group needs work when it went away, someone else
    // changed it, or, for the public one, it got another address (the members' status follows it).
    const drifted = this.deps.changedByOthers(resources.services, old, o);
    const isPublic = o.metadata.name === proxyOf(owner, this.deps.settings).name;
    const moved = isPublic && (!old || JSON.stringify(loadBalancerOf(old)) !== JSON.stringify(loadBalancerOf(o)));
    if (deleted || drifted || moved) this.deps.queue(owner);
  }

  #secret(o: KubeObject): void {
    const ref = secretRef(o.metadata.namespace!, o.metadata.name);
    if (this.deps.namedBySettings(o.metadata.namespace!, o.metadata.name)) this.deps.requeueAll();
    this.#users(ref);
    // Named by a Service's annotations (its settings layer): the members using that Service.
    for (const service of this.#serviceSecrets.users(ref)) this.#users(service);
  }

  #owned(r: ResourceType, o: KubeObject, old: KubeObject | null, deleted: boolean): void {
    const owner = ownerGroupOf(o);
    if (!owner) return;
    // A Deployment becoming available (or not) completes the handovers to its group.
    const availability = r === resources.deployments && deploymentAvailable(old) !== deploymentAvailable(o);
    if (deleted || availability || this.deps.changedByOthers(r, old, o)) this.deps.queue(owner);
  }
}
