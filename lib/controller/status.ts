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
 * What each Ingress object (and each wanted list) shows, computed once per object: the controller's
 * cache hands out one object until it changes, and a publish at 10,000 Ingresses compares all of them.
 */
const shown = new WeakMap<KubeObject | readonly LoadBalancerIngress[], string>();

/** Whether the ingress already shows `want`. */
export function statusMatches(ingress: KubeObject, want: readonly LoadBalancerIngress[]): boolean {
  let have = shown.get(ingress);
  if (have === undefined) shown.set(ingress, have = norm(ingress.status?.loadBalancer?.ingress ?? []));
  let wanted = shown.get(want);
  if (wanted === undefined) shown.set(want, wanted = norm(want));
  return have === wanted;
}
