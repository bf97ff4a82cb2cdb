/**
 * @module tests/proxy/fixtures
 * Hand-written configurations in the shape of contracts.md §4 (global with the runtime socket
 * and crt-base, frontends binding the `IC_*` variables, backends of server slots), a real
 * HAProxy in a temporary work dir, test certificates, and small HTTP helpers.
 */
import { Buffer } from "node:buffer";
import http from "node:http";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { Applier, type DesiredState } from "../../lib/proxy/apply.ts";
import { HAProxy } from "../../lib/proxy/haproxy.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import type { ControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import type { ProxySettings } from "../../lib/proxy/command.ts";
import { CONFIG_SHA_ANNOTATION, configDigest } from "../../lib/transport/parts.ts";

export interface Endpoint {
  address: string;
  port: number;
}

export interface BackendSpec {
  name: string;
  endpoints: Endpoint[];
  /** The `balance` line; default `roundrobin`. */
  balance?: string;
  /**
   * One slot per endpoint (at least 1), as the renderer writes a growable backend
   * (lib/render/slots.ts); default: a power of two (at least 4), as it writes any other.
   */
  grows?: boolean;
}

export interface ConfigSpec {
  /** Backends; a route per backend for host `<name>.test`. */
  backends: BackendSpec[];
  /** Extra lines for the http frontend (structural changes). */
  frontendExtra?: string[];
  /** TLS: crt-list and the https frontend. */
  tls?: boolean;
  /** Server params (same for every slot). */
  params?: string;
  /**
   * "acl" (default): a `use_backend <name> if <host>` line per backend; "maps": as the rendered
   * configuration, no backend named in the frontends, the host looked up in `routes-exact.map`
   * ({@link hostRoutes}) and `use_backend %[var(txn.route)]`.
   */
  routing?: "acl" | "maps";
}

/** A `routes-exact.map` for the "maps" routing of {@link buildConfig}: `<host> <backend>` lines. */
export function hostRoutes(routes: Readonly<Record<string, string>>): string {
  return Object.entries(routes).map(([host, backend]) => `${host} ${backend}\n`).join("");
}

/** Slot count of the contract: max(4, next power of two ≥ n); one per endpoint (at least 1) when `grows`. */
export function slotCount(n: number, grows = false): number {
  if (grows) return Math.max(1, n);
  let c = 4;
  while (c < n) c *= 2;
  return c;
}

/** A configuration in the contract's shape. */
export function buildConfig(spec: ConfigSpec): string {
  const params = spec.params ?? "";
  const tail = params ? ` ${params}` : "";
  const routes = spec.routing === "maps"
    ? [
      '    http-request set-var(txn.route) var(txn.host),map_str("${IC_CERT_DIR}/routes-exact.map")',
      "    use_backend %[var(txn.route)] if { var(txn.route) -m found }",
    ]
    : spec.backends.map((b) => `    use_backend ${b.name} if { var(txn.host) -m str ${b.name}.test }`);
  const out = [
    "# test configuration",
    "global",
    '    crt-base "${IC_CERT_DIR}"',
    '    stats socket "${IC_RUNTIME_SOCKET}" mode 600 level admin expose-fd listeners',
    "    stats timeout 30s",
    "    hard-stop-after 30s",
    "",
    "defaults",
    "    mode http",
    "    option redispatch",
    "    retries 3",
    "    timeout connect 5s",
    "    timeout client 30s",
    "    timeout server 30s",
    "    timeout http-keep-alive 10s",
    "",
    "frontend stats",
    '    bind "${IC_STATS_ADDR-127.0.0.1}:${IC_STATS_PORT}"',
    "    stats enable",
    "    stats uri /",
    "",
    "frontend http",
    '    bind "${IC_BIND_ADDR}:${IC_HTTP_PORT}"',
    "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower",
    ...(spec.frontendExtra ?? []),
    ...routes,
    "    default_backend default-backend",
    "",
  ];
  if (spec.tls) {
    out.push(
      "frontend https",
      '    bind "${IC_BIND_ADDR}:${IC_HTTPS_PORT}" ssl crt-list "${IC_CERT_DIR}/crt-list"',
      "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower",
      ...routes,
      "    default_backend default-backend",
      "",
    );
  }
  for (const b of spec.backends) {
    out.push(`backend ${b.name}`, `    balance ${b.balance ?? "roundrobin"}`);
    const eps = [...b.endpoints].sort((x, y) => x.address.localeCompare(y.address) || x.port - y.port);
    for (let i = 0; i < slotCount(eps.length, b.grows); i++) {
      const e = eps[i];
      out.push(
        e
          ? `    server s${i + 1} ${e.address.includes(":") ? `[${e.address}]` : e.address}:${e.port}${tail}`
          : `    server s${i + 1} 127.0.0.1:1 disabled${tail}`,
      );
    }
    out.push("");
  }
  out.push(
    "backend default-backend",
    '    http-request return status 404 content-type text/plain string "no route"',
    "",
  );
  return out.join("\n");
}

/**
 * A proxy ConfigMap body (for POST, PUT or a merge patch) as the controller writes it: `data` and
 * the digest of it the proxy checks (docs/config-transport.md).
 */
export function proxyConfigMap(
  data: Readonly<Record<string, string>>,
  meta: { name?: string; namespace?: string } = {},
): { metadata: Record<string, unknown>; data: Record<string, string> } {
  return { metadata: { ...meta, annotations: { [CONFIG_SHA_ANNOTATION]: configDigest(data) } }, data: { ...data } };
}

/** A desired state without TLS. */
export function plain(config: string): DesiredState {
  return { config, crtList: "", pems: new Map() };
}

/** A CA and a leaf certificate for `host`. */
export async function testCertificate(host: string): Promise<{ certPem: string; keyPem: string; caPem: string }> {
  const ca = await createCA({ commonName: `test CA for ${host}` });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  return { certPem: leaf.certPem, keyPem: leaf.keyPem, caPem: ca.certPem };
}

export interface ProxyUnderTest extends AsyncDisposable {
  haproxy: HAProxy;
  applier: Applier;
  workDir: string;
  certDir: string;
  bind: string;
  httpPort: number;
  httpsPort: number;
  statsPort: number;
  /** http://bind:httpPort */
  url: string;
  close(): Promise<void>;
}

/**
 * A distinct loopback address per call. `deno test --parallel` runs test files as workers of one
 * process (one `Deno.pid`, a module counter each), so the address is random: two files sharing one
 * could both bind a port that was free for each a moment apart (HAProxy binds with SO_REUSEPORT)
 * and answer each other's requests.
 */
export function loopbackAddress(): string {
  const [a, b, c] = crypto.getRandomValues(new Uint8Array(3));
  return `127.${100 + (a % 100)}.${b}.${10 + (c % 240)}`;
}

/** A HAProxy (not started) with an Applier, in a temporary work dir, on its own loopback address. */
export async function proxyUnderTest(): Promise<ProxyUnderTest> {
  const binary = await ensureHaproxy();
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-" });
  const certDir = join(workDir, "certs");
  const bind = loopbackAddress();
  const [httpPort, httpsPort, statsPort] = freePorts(3, bind);
  const haproxy = new HAProxy({
    binary,
    workDir,
    bindAddress: bind,
    httpPort,
    httpsPort,
    statsPort,
    runtimeSocket: join(workDir, "runtime.sock"),
    certDir,
    userlistsPath: join(workDir, "userlists.cfg"), // as lib/proxy/command.ts
    accessLog: "null",
  });
  const applier = new Applier({ haproxy, workDir, certDir });
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      await haproxy.stop();
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
    })();
  return {
    haproxy,
    applier,
    workDir,
    certDir,
    bind,
    httpPort,
    httpsPort,
    statsPort,
    url: `http://${bind}:${httpPort}`,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Answer of {@link get}: status and the name of the test backend that answered (null if none). */
export interface Answer {
  status: number;
  name: string | null;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * GET `url` with `host` as the Host header, through node:http (fetch does not let a caller set
 * Host). `agent`: a keep-alive agent to reuse connections; default a new connection.
 */
export function get(url: string, host: string, agent?: http.Agent): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: Number(u.port),
        path: u.pathname + u.search,
        headers: { host },
        agent: agent ?? false,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf-8");
          let name: string | null = null;
          try {
            name = JSON.parse(body).name ?? null;
          } catch {
            // not a test backend (e.g. the 404 of the default backend)
          }
          resolve({ status: res.statusCode ?? 0, name, body, headers: res.headers });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`GET ${url} (Host ${host}) timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** HTTPS GET with SNI `host` over a raw TLS connection that trusts only `caPem`; the raw response. */
export async function httpsGet(address: string, port: number, host: string, caPem: string): Promise<string> {
  const tcp = await Deno.connect({ hostname: address, port });
  const tls = await Deno.startTls(tcp, { hostname: host, caCerts: [caPem] });
  try {
    await tls.write(new TextEncoder().encode(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`));
    return await new Response(tls.readable).text();
  } finally {
    try {
      tls.close();
    } catch {
      // already closed with the readable
    }
  }
}

/** Pid of the current worker, from `show proc`. */
export async function workerPid(h: HAProxy): Promise<number> {
  const info = await h.showProc();
  if (info.workers.length !== 1) throw new Error(`expected one current worker, got ${JSON.stringify(info.workers)}`);
  return info.workers[0].pid;
}

/** Whether any haproxy process with this work dir in its command line is alive. */
export async function haproxyProcessesFor(workDir: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      if (cmd.includes("haproxy") && cmd.includes(workDir) && !/\) Z /.test(stat)) pids.push(Number(e.name));
    } catch {
      // gone
    }
  }
  return pids;
}

/**
 * A user who may read only the given ConfigMap and Secrets in `namespace` (what a proxy needs,
 * as the controller's `--rbac` Role grants it); returns the path of that user's kubeconfig.
 */
export function proxyReader(
  cp: ControlPlane,
  namespace: string,
  names: { configmap: string; secrets?: readonly string[]; configMaps?: readonly string[] },
  user = "proxy-user",
): Promise<string> {
  const cms = [names.configmap, ...names.configMaps ?? []];
  const rules = [{ apiGroups: [""], resources: ["configmaps"], resourceNames: cms, verbs: READ }];
  if (names.secrets?.length) {
    rules.push({ apiGroups: [""], resources: ["secrets"], resourceNames: [...names.secrets], verbs: READ });
  }
  return roleUser(cp, namespace, rules, user);
}

/** A user whose only permissions are `rules` in `namespace` (a Role and its binding); returns its kubeconfig's path. */
export async function roleUser(
  cp: ControlPlane,
  namespace: string,
  rules: readonly unknown[],
  user = "proxy-user",
): Promise<string> {
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
  await adminPost(cp, `${rbac}/roles`, { metadata: { name: "proxy", namespace }, rules });
  await adminPost(cp, `${rbac}/rolebindings`, {
    metadata: { name: "proxy", namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "proxy" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
  });
  return await cp.kubeConfig(user);
}

/** POSTs `body` to `path` as the admin; throws with the answer when it is not a success. */
export async function adminPost(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  const res = await cp.adminFetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text}`);
}

const READ = ["get", "list", "watch"];

/** `runProxy` settings for a proxy on a loopback address of its own with free ports, probes included. */
export function localProxySettings(
  o: { kubeconfig: string; namespace: string; configmap: string; haproxy: string; workDir: string },
): ProxySettings & { healthPort: number } {
  const bindAddress = loopbackAddress();
  const [httpPort, httpsPort, statsPort, healthPort] = freePorts(4, bindAddress);
  return { ...o, bindAddress, httpPort, httpsPort, statsPort, healthPort };
}

/** A request to the test API server as its admin; the parsed answer, or an Error naming the call. */
export async function api(
  cp: { adminFetch(path: string, init?: RequestInit): Promise<Response> },
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<any> {
  const res = await cp.adminFetch(path, {
    method,
    headers: { "content-type": contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Polls `check` until it returns a value (not undefined) or throws after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (last error: ${last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
