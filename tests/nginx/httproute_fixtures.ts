/** Shared by the migration preview's tests: an ingress-nginx Ingress in a line, the plan of one, and readers of its routes. */
import type { HTTPRoute, HTTPRouteRule } from "../../lib/gateway/api.ts";
import { type IngressObject, planMigration } from "../../lib/nginx/to_httproute.ts";

export const N = "nginx.ingress.kubernetes.io/";
export const GW = { namespace: "infra", name: "edge" };

export function ing(
  name: string,
  annotations: Record<string, string>,
  opts: {
    ns?: string;
    host?: string;
    paths?: { path: string; pathType?: string; service?: string; port?: number | string }[];
    tls?: { hosts?: string[]; secretName?: string }[];
  } = {},
): IngressObject {
  const nginx = Object.fromEntries(Object.entries(annotations).map(([k, v]) => [k.includes("/") ? k : N + k, v]));
  return {
    metadata: { namespace: opts.ns ?? "app", name, annotations: nginx },
    spec: {
      ...(opts.tls ? { tls: opts.tls } : {}),
      rules: [{
        host: opts.host ?? "app.example.com",
        http: {
          paths: (opts.paths ?? [{ path: "/" }]).map((p) => ({
            path: p.path,
            pathType: p.pathType ?? "Prefix",
            backend: {
              service: {
                name: p.service ?? "web",
                port: typeof p.port === "string" ? { name: p.port } : { number: p.port ?? 80 },
              },
            },
          })),
        },
      }],
    },
  };
}

export function only(ingresses: IngressObject[], services = []) {
  const plan = planMigration(ingresses, GW, services);
  return { plan, m: plan.ingresses[0], routes: plan.ingresses[0].routes };
}

export const rulesOf = (r: HTTPRoute) => r.spec.rules ?? [];
export const filter = (rule: HTTPRouteRule, type: string) => rule.filters?.find((f) => f.type === type);
export const verdict = (lines: string[], key: string) => lines.find((l) => l.startsWith(N + key + ":"));
