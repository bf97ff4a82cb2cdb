/**
 * @module controller/status
 * `status.loadBalancer` of an ingress follows its public proxy Service (never the ClusterIP stats
 * Service): the Service's own load-balancer ingress points when it has any, else its cluster IP(s).
 */
import { LRUCache } from "lru-cache";
import type { KubeObject } from "../cluster/resources.ts";

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
}

/** The load-balancer points an ingress should show for its proxy Service (none if unknown). */
export function loadBalancerOf(service: KubeObject | undefined): LoadBalancerIngress[] {
  if (!service) return [];
  const lb: any[] = service.status?.loadBalancer?.ingress ?? [];
  if (lb.length > 0) {
    return lb
      .map((p) => ({ ...(p.ip ? { ip: String(p.ip) } : {}), ...(p.hostname ? { hostname: String(p.hostname) } : {}) }))
      .filter((p) => p.ip || p.hostname);
  }
  const ips: string[] = service.spec?.clusterIPs ?? (service.spec?.clusterIP ? [service.spec.clusterIP] : []);
  return ips.filter((ip) => ip && ip !== "None").map((ip) => ({ ip }));
}

/** The load-balancer points as compared: order kept, absent fields as "". */
function norm(l: readonly any[]): string {
  const text = JSON.stringify(l.map((p) => ({ ip: p.ip ?? "", hostname: p.hostname ?? "" })));
  // The Ingresses of one proxy all show the same points: one string for all of them.
  const known = normalized.get(text);
  if (known !== undefined) return known;
  normalized.set(text, text);
  return text;
}
const normalized = new LRUCache<string, string>({ max: 1_024 });

/**
 * What each address list shows (an Ingress's, a wanted one), computed once per list: the controller's
 * cache hands out one status tree for every Ingress showing the same (lib/controller/cached_shapes.ts),
 * and a publish at 10,000 Ingresses compares all of them. Keyed by the list, not the Ingress: a
 * few entries, not one per Ingress object.
 */
const shown = new WeakMap<readonly LoadBalancerIngress[], string>();
const NO_ADDRESSES: readonly LoadBalancerIngress[] = Object.freeze([]);

/** Whether the ingress already shows `want`. */
export function statusMatches(ingress: KubeObject, want: readonly LoadBalancerIngress[]): boolean {
  const shows = ingress.status?.loadBalancer?.ingress ?? NO_ADDRESSES;
  let have = typeof shows === "object" ? shown.get(shows) : undefined;
  if (have === undefined) {
    have = norm(shows);
    if (typeof shows === "object") shown.set(shows, have);
  }
  let wanted = shown.get(want);
  if (wanted === undefined) shown.set(want, wanted = norm(want));
  return have === wanted;
}
