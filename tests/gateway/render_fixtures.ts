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
import { join } from "node:path";
import type { Rendered } from "../../lib/render/render.ts";
import { haproxyCheck, type HaproxyCheckResult } from "../../lib/dev/localenv/haproxy.ts";
import { type CertifiedKey, createCA, issueCertificate } from "../../lib/pki/certs.ts";

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
    cors: null,
    timeoutMs: null,
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

/** Writes a render's files as the proxy does: haproxy.cfg in `dir`, crt-list, maps and PEMs in `dir`/certs. */
export async function writeRendered(dir: string, r: Rendered, pems: Record<string, string>): Promise<string> {
  const certDir = join(dir, "certs");
  await Deno.mkdir(certDir, { recursive: true });
  await Deno.writeTextFile(join(dir, "haproxy.cfg"), r.config);
  await Deno.writeTextFile(join(certDir, "crt-list"), r.crtList);
  for (const [file, text] of Object.entries(r.maps)) await Deno.writeTextFile(join(certDir, file), text);
  for (const s of r.secrets) {
    if (!s.file || pems[s.file] === undefined) throw new Error(`no PEM for ${s.file}`);
    await Deno.writeTextFile(join(certDir, s.file), pems[s.file]);
  }
  return certDir;
}

/** The IC_* environment of the proxy command for a render written to `dir`. */
export function proxyEnv(dir: string, bind = "127.0.0.1", statsPort = 56789): Record<string, string> {
  return {
    IC_BIND_ADDR: bind,
    IC_STATS_PORT: String(statsPort),
    IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
    IC_CERT_DIR: join(dir, "certs"),
    IC_LUA_DIR: join(dir, "lua"),
  };
}

/** `haproxy -c` of a render, its files written to a temporary directory. */
export async function checkRendered(r: Rendered, pems: Record<string, string> = {}): Promise<HaproxyCheckResult> {
  const dir = await Deno.makeTempDir({ prefix: "ic-gateway-check-" });
  try {
    await writeRendered(dir, r, pems);
    return await haproxyCheck(join(dir, "haproxy.cfg"), { env: proxyEnv(dir) });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A self-signed-CA certificate for `names` as a PEM file (certificate and key). */
export async function pemFor(ca: CertifiedKey, names: string[]): Promise<string> {
  const c = await issueCertificate(ca, { commonName: names[0], dnsNames: names, usages: ["serverAuth"] });
  return `${c.certPem.trimEnd()}\n${c.keyPem.trimEnd()}\n`;
}

export { createCA };
