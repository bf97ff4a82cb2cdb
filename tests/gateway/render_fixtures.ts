/**
 * @module tests/gateway/render_fixtures
 * Gateway proxy models written by hand from the types (lib/gateway/model_types.ts) for the
 * renderer's tests: Service backends, rules, route entries and ports.
 */
import type {
  Backend,
  GatewayProxyModel,
  ProxyPort,
  RouteEntry,
  RuleBackend,
  TlsCert,
} from "../../lib/gateway/model_types.ts";

/** A Service backend `be_<ns>_<svc>_<port>` with its servers. */
export function service(ns: string, svc: string, servers: { address: string; port: number }[], port = 80): Backend {
  return {
    name: `be_${ns}_${svc}_${port}`,
    namespace: ns,
    service: svc,
    port,
    servers,
    slots: Math.max(4, servers.length),
    balance: "roundrobin",
    timeoutServer: null,
  };
}

/** A rule with no filters routing to `targets` (backend name → weight). */
export function rule(name: string, targets: [string, number][] = [], more: Partial<RuleBackend> = {}): RuleBackend {
  return {
    name,
    requestHeaders: null,
    responseHeaders: null,
    redirect: null,
    rewrite: null,
    targets: targets.map(([backend, weight]) => ({ backend, weight })),
    invalidWeight: 0,
    ...more,
  };
}

/** An entry: `path` is `=/x` (Exact), `~re` (RegularExpression) or a prefix. */
export function entry(hostname: string, path: string, ruleName: string, more: Partial<RouteEntry> = {}): RouteEntry {
  const p: RouteEntry["path"] = path.startsWith("=")
    ? { type: "Exact", value: path.slice(1) }
    : path.startsWith("~")
    ? { type: "RegularExpression", value: path.slice(1) }
    : { type: "PathPrefix", value: path };
  return { hostname, path: p, headers: [], queryParams: [], method: null, rule: ruleName, route: "ns/route", ...more };
}

export function httpPort(port: number, routes: RouteEntry[]): ProxyPort {
  return { port, protocol: "HTTP", routes, certs: [] };
}

export function httpsPort(port: number, routes: RouteEntry[], certs: TlsCert[]): ProxyPort {
  return { port, protocol: "HTTPS", routes, certs };
}

export function cert(ns: string, name: string, hosts: string[]): TlsCert {
  return { file: `${ns}_${name}.pem`, namespace: ns, name, hosts };
}

export function model(ports: ProxyPort[], rules: RuleBackend[], backends: Backend[]): GatewayProxyModel {
  return {
    ports,
    rules: [...rules].sort((a, b) => a.name < b.name ? -1 : 1),
    backends: [...backends].sort((a, b) => a.name < b.name ? -1 : 1),
  };
}
