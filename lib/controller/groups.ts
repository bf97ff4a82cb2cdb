/**
 * @module controller/groups
 * Which proxy serves an ingress (docs/proxy-groups.md). A proxy group is the unit the controller
 * reconciles and publishes: `class:<name>`, the shared proxy of an IngressClass in the
 * controller's namespace, or `<namespace>/<name>`, the dedicated proxy an Ingress asks for with
 * `ingress-controller.io/proxy: dedicated` (its own objects in its namespace, as before shared
 * proxies existed: the group key is the ingress key). With `--ingress-class` unset only this
 * controller's IngressClasses get a shared group; a class-less ingress, or one naming any other
 * class, joins the default IngressClass's group when that is ours, else the group `class:` (proxy
 * `haproxy-shared`) (lib/controller/class.ts). A Gateway (Gateway API) is a group of its own,
 * `gateway:<namespace>/<name>` (lib/controller/gateway_source.ts). The index keeps both directions
 * so an event touches only its groups.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { isDedicated as asksDedicated } from "../annotations/resolve.ts";
import type { Risk } from "../annotations/table.ts";
import { shortHash } from "./short_hash.ts";
import { endsLikeDerived } from "./proxy_names.ts";

export const proxyModeAnnotation = "ingress-controller.io/proxy";
export const dedicatedValue = "dedicated";
const classPrefix = "class:";
const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** `class:<name>` or an ingress key `<namespace>/<name>` (dedicated). */
export type GroupKey = string;

const gatewayPrefix = "gateway:";

/** The group of a Gateway (Gateway API): `gateway:<namespace>/<name>`, which is also its member key. */
export function gatewayGroup(namespace: string, name: string): GroupKey {
  return `${gatewayPrefix}${namespace}/${name}`;
}

/** The Gateway (`namespace/name`) of a Gateway's group, or null for an Ingress group. */
export function gatewayOf(group: GroupKey): string | null {
  return group.startsWith(gatewayPrefix) ? group.slice(gatewayPrefix.length) : null;
}

export function classGroup(className: string): GroupKey {
  return `${classPrefix}${className}`;
}

/** The class of a shared group (`""`: class-less ingresses without a default class), or null for a dedicated one. */
export function sharedClassOf(group: GroupKey): string | null {
  return group.startsWith(classPrefix) ? group.slice(classPrefix.length) : null;
}

/**
 * Whether `ingress` gets its own proxy: it asks for one, and `proxy` is not turned off by the
 * global `annotation-risk-limit` (then it joins its class's proxy; the model reports the key).
 */
export function isDedicated(ingress: KubeObject, riskLimit: Risk | null = null): boolean {
  return asksDedicated(ingress.metadata.annotations ?? {}, riskLimit);
}

/**
 * The group of a handled ingress: its own when dedicated, else the shared group of `sharedClass`,
 * the class whose proxy serves it (`servingClass` in lib/controller/class.ts).
 */
export function groupOf(ingress: KubeObject, sharedClass: string, riskLimit: Risk | null = null): GroupKey {
  if (isDedicated(ingress, riskLimit)) return `${ingress.metadata.namespace}/${ingress.metadata.name}`;
  return classGroup(sharedClass);
}

/**
 * Whether the controller's `dedicated-proxies` setting refuses the proxy of its own `ingress` asks
 * for. Turned off (the Helm chart's default, whose RBAC allows no writes in tenant namespaces),
 * such an ingress is filed as if it had not asked ({@link withoutDedicated}: its shared group), and
 * the caller reports it with a Warning Event.
 */
export function dedicatedRefused(
  ingress: KubeObject,
  dedicatedProxies: boolean,
  riskLimit: Risk | null = null,
): boolean {
  return !dedicatedProxies && isDedicated(ingress, riskLimit);
}

/** `ingress` without its request for a proxy of its own, for {@link groupOf}. */
export function withoutDedicated(ingress: KubeObject): KubeObject {
  const { [proxyModeAnnotation]: _, ...annotations } = ingress.metadata.annotations ?? {};
  return { ...ingress, metadata: { ...ingress.metadata, annotations } };
}

/**
 * Name of a shared proxy's objects: `haproxy-class-<class>` while that is a DNS-1035 label of at
 * most 55 characters (room for `-stats`) and the class name does not end like a derived object or
 * look like a hash (lib/controller/proxy_names.ts), else `haproxy-class-<hash>`; `haproxy-shared`
 * for class-less ingresses without a default class. Dedicated proxies are `<ingress>-haproxy` or
 * `haproxy-<hash>` (lib/controller/objects.ts), so the two never share a name.
 */
export function sharedProxyName(className: string): string {
  if (className === "") return "haproxy-shared";
  const name = `haproxy-class-${className}`;
  // A class named like a derived object (`web-part-0`) or like a hash would meet another class's objects.
  const plain = dns1035.test(name) && name.length <= 55 && !endsLikeDerived(className) &&
    !/^[0-9a-f]{10}$/.test(className);
  return plain ? name : `haproxy-class-${shortHash(className)}`;
}

/** Ingress key ↔ group, kept in step with the Ingress informer. */
export class GroupIndex {
  #groupOf = new Map<string, GroupKey>();
  #members = new Map<GroupKey, Set<string>>();
  /** Counts the membership changes of each group (never reset: a group that comes back goes on counting). */
  #versions = new Map<GroupKey, number>();

  /** Sets the group of `ingressKey` (null: not handled); returns its previous group. */
  set(ingressKey: string, group: GroupKey | null): GroupKey | null {
    const old = this.#groupOf.get(ingressKey) ?? null;
    if (old === group) return old;
    for (const g of [old, group]) if (g !== null) this.#versions.set(g, this.version(g) + 1);
    if (old !== null) {
      const s = this.#members.get(old)!;
      s.delete(ingressKey);
      if (s.size === 0) this.#members.delete(old);
    }
    if (group === null) {
      this.#groupOf.delete(ingressKey);
    } else {
      this.#groupOf.set(ingressKey, group);
      let s = this.#members.get(group);
      if (!s) this.#members.set(group, s = new Set());
      s.add(ingressKey);
    }
    return old;
  }

  /** A number that changes whenever a member joins or leaves `group`. */
  version(group: GroupKey): number {
    return this.#versions.get(group) ?? 0;
  }

  groupOf(ingressKey: string): GroupKey | null {
    return this.#groupOf.get(ingressKey) ?? null;
  }

  members(group: GroupKey): ReadonlySet<string> {
    return this.#members.get(group) ?? new Set();
  }

  groups(): GroupKey[] {
    return [...this.#members.keys()];
  }
}
