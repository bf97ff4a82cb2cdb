/**
 * @module controller/caches
 * The watch caches every group's build and publish read, beside those of the route sources: the
 * controller's global ConfigMap (by name), Services, EndpointSlices (indexed by their Service), TLS
 * and Opaque Secrets (summaries only, never key material: lib/render/tls_secret.ts) and the objects
 * the controller owns (by its labels, in the shapes lib/controller/cached_shapes.ts keeps, indexed
 * by the group that made them). The model reads them through one ClusterLookup whose generation
 * counts their changes (kept fragments check what they read: lib/render/ingress_reading.ts).
 */
import { Informer, type InformerOptions } from "../cluster/informer.ts";
import type { ClusterClient } from "../cluster/client.ts";
import { type KubeObject, resources, type ResourceType } from "../cluster/resources.ts";
import { type ClusterLookup, summarizedSecret } from "../render/mod.ts";
import { cachedService, cachedSlice, ownedShape } from "./cached_shapes.ts";
import { GLOBAL_CONFIGMAP } from "./global_settings.ts";
import type { GroupKey } from "./groups.ts";
import { ownedResources, ownedSelector } from "./objects.ts";
import { ownerGroupOf } from "./ownership.ts";
import type { Platform } from "./platform.ts";
import { serviceRef, sliceServiceRef } from "./refs.ts";
import type { ControllerSettings } from "./settings.ts";

/** Index of owned objects by the group that made them. */
const byGroup = "group";

export class ClusterCaches {
  /** The controller's global ConfigMap (lib/controller/global_settings.ts), by name only. */
  readonly global: Informer;
  readonly services: Informer;
  readonly slices: Informer;
  readonly secrets: Informer;
  /** Opaque Secrets: CA bundles and htpasswd files of annotations (summaries too). */
  readonly opaqueSecrets: Informer;
  /** The kinds of owned objects, in the order they are deleted. */
  readonly ownedKinds: ResourceType[];
  /** The caches of owned kinds but Services (the Service cache also holds the owned Services). */
  readonly owned = new Map<ResourceType, Informer>();
  /** Counts the changes of the objects `lookup` hands out (ClusterLookup.generation). */
  #generation = 0;

  readonly lookup: ClusterLookup = {
    generation: () => this.#generation,
    service: (ns, name) => this.services.store.get(`${ns}/${name}`) as any,
    endpointSlices: (ns, svc) => this.slices.store.byIndex("service", serviceRef(ns, svc)) as any,
    secret: (ns, name) =>
      (this.secrets.store.get(`${ns}/${name}`) ?? this.opaqueSecrets.store.get(`${ns}/${name}`)) as any,
  };

  /** `register` adds each informer to the controller's (started, waited for and counted together). */
  constructor(
    client: ClusterClient,
    settings: ControllerSettings,
    platform: Platform,
    register: (informer: Informer) => Informer,
  ) {
    const namespace = settings.restrictToOperatorNamespace ? settings.operatorNamespace : null;
    const resyncMs = settings.resyncPeriodMs;
    const inf = (r: ResourceType, extra: Partial<InformerOptions> = {}) =>
      register(new Informer(client, r, { namespace, resyncMs, ...extra }));
    this.global = register(
      new Informer(client, resources.configMaps, {
        namespace: settings.operatorNamespace,
        fieldSelector: `metadata.name=${GLOBAL_CONFIGMAP}`,
        resyncMs,
      }),
    );
    this.services = inf(resources.services, { transform: cachedService });
    this.slices = inf(resources.endpointSlices, { transform: cachedSlice });
    // Verdict and content hash only: the proxies read their Secrets themselves.
    this.secrets = inf(resources.secrets, { fieldSelector: "type=kubernetes.io/tls", transform: summarizedSecret });
    // `ca.crt` and htpasswd Secrets of annotations (backend-ca-secret, client-cert-ca-secret,
    // auth-basic-secret) are Opaque as `kubectl create secret generic` makes them; other types
    // (service-account tokens, Helm releases) are never listed.
    this.opaqueSecrets = inf(resources.secrets, { fieldSelector: "type=Opaque", transform: summarizedSecret });
    this.ownedKinds = ownedResources(settings.rbac, platform.serviceMonitor);
    for (const r of this.ownedKinds) {
      if (r === resources.services) continue; // the Service informer above also sees owned Services
      // What the controller set (compared with what it should be) and owns, never a ConfigMap's data.
      this.owned.set(r, inf(r, { labelSelector: ownedSelector(settings), transform: ownedShape }));
    }
    const ownerIndex = (o: KubeObject) => {
      const g = ownerGroupOf(o);
      return g === null ? [] : [g];
    };
    for (const i of [this.services, ...this.owned.values()]) i.store.addIndexer(byGroup, ownerIndex);
    this.slices.store.addIndexer("service", (o) => {
      const r = sliceServiceRef(o);
      return r ? [r] : [];
    });
    // Whatever the model may read changed.
    const bump = () => void this.#generation++;
    for (const informer of [this.services, this.slices, this.secrets, this.opaqueSecrets]) {
      informer.on({ onAdd: bump, onUpdate: bump, onDelete: bump });
    }
  }

  /** The cache holding the owned objects of `r`. */
  ownedCache(r: ResourceType): Informer {
    return r === resources.services ? this.services : this.owned.get(r)!;
  }

  /** The cached objects of `r` that the group made (per their marks: lib/controller/ownership.ts). */
  madeBy(r: ResourceType, group: GroupKey): readonly KubeObject[] {
    return this.ownedCache(r).store.byIndex(byGroup, group);
  }

  /** The group of every cached owned object (once per object). */
  *ownerGroups(): Iterable<GroupKey> {
    for (const i of [this.services, ...this.owned.values()]) {
      for (const o of i.store.list()) {
        const owner = ownerGroupOf(o);
        if (owner) yield owner;
      }
    }
  }

  /** The proxy Deployment at `namespace/name`, as cached. */
  deployment(namespace: string, name: string): KubeObject | null {
    return this.owned.get(resources.deployments)?.store.get(`${namespace}/${name}`) ?? null;
  }
}
