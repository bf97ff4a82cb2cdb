/**
 * @module controller/status
 * `status.loadBalancer` of an ingress follows its public proxy Service (never the ClusterIP stats
 * Service): the Service's own load-balancer ingress points when it has any, else its cluster IP(s).
 */
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

/** Whether the ingress already shows `want`. */
export function statusMatches(ingress: KubeObject, want: LoadBalancerIngress[]): boolean {
  const have: any[] = ingress.status?.loadBalancer?.ingress ?? [];
  const norm = (l: any[]) => JSON.stringify(l.map((p) => ({ ip: p.ip ?? "", hostname: p.hostname ?? "" })));
  return norm(have) === norm(want);
}
