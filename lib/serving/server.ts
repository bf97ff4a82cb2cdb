/**
 * @module serving/server
 * `startServing`: the HTTPS secure port (HTTP/2 and HTTP/1.1 on one listener through node:http2
 * with allowHTTP1, SNI, client certificates, the TLS policy) with authentication, authorization
 * and audit in front of the routes; and in B/C the plain-HTTP ops listener for the web interface
 * and telemetry. Both listeners bound their connections and requests (lib/serving/connection_guard.ts).
 * node:http2 rather than Deno.serve because Deno.serve can neither pick a certificate by SNI nor
 * ask for client certificates.
 */
import { X509Certificate } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import type tls from "node:tls";
import type { AuditHandle, Auditor } from "../audit/types.ts";
import { authenticate } from "../auth/authenticator.ts";
import { buildDelegation, type Delegation, type DelegationOverrides } from "../auth/delegation.ts";
import { identityHeaderMatcher, pairRawHeaders } from "../auth/request_header.ts";
import { requestAttributes } from "../auth/request_info.ts";
import type { RequestAttributes, UserInfo } from "../auth/types.ts";
import { SetupError, UsageError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import { loadServingCertificates, sniCallback } from "./certificates.ts";
import { ConnectionGuard, type RequestGuard } from "./connection_guard.ts";
import { HealthChecks } from "../parts/health.ts";
import { Profiler } from "./profiling.ts";
import { observeRequest, tlsRefused } from "./request_metrics.ts";
import { Routes } from "./routes.ts";
import { type BodyRoute, type Reply, statusReply } from "../parts/secure_port.ts";
import { answerBodyRoute } from "./body_route.ts";
import type { Config } from "../flags/config.ts";
import { type ServingSettings, settingsFromConfig } from "./settings.ts";
import { keyTypeMismatch, policyViolation, tlsPolicy } from "./tls_policy.ts";

export interface ServingDeps extends DelegationOverrides {
  readonly auditor?: Auditor;
  /** Shared readiness checks; a new set when absent. */
  readonly health?: HealthChecks;
  /** Tests: listen on ephemeral ports instead of the configured ones (0 still disables). */
  readonly ephemeralPorts?: boolean;
  /** POST endpoints of other parts mounted on the secure port (behind authn, authz and audit). */
  readonly bodyRoutes?: readonly BodyRoute[];
}

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

export interface ServingHandle {
  readonly secure: ListenAddress | null;
  readonly ops: ListenAddress | null;
  readonly health: HealthChecks;
  /** The delegated authentication/authorization (null when HTTPS is disabled). */
  readonly delegation: Delegation | null;
  /** PEM chain of the secure port's default certificate, leaf first (null when HTTPS is disabled). */
  readonly certificateChain: string | null;
  stop(): Promise<void>;
}

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

const failedAuthUser: UserInfo = Object.freeze({ name: "", groups: Object.freeze([]), extra: Object.freeze({}) });

/** Splits `host:port` (`:56790`, `127.0.0.1:0`, `[::1]:8080`). */
export function parseHostPort(value: string, option: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]]*)):(\d{1,5})$/.exec(value.trim());
  if (!m || Number(m[3]) > 65535) {
    throw new UsageError(`--${option}: "${value}" is not host:port (e.g. :56790 or 127.0.0.1:56790)`);
  }
  return { host: m[1] ?? m[2] ?? "", port: Number(m[3]) };
}

/** `host:port`, IPv6 hosts in brackets. */
export function formatAddress(a: ListenAddress): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

function isAllInterfaces(host: string): boolean {
  return host === "" || host === "0.0.0.0" || host === "::";
}

/** Listens on host:port; all-interfaces addresses try dual-stack `::` first, then 0.0.0.0. */
async function listen(server: net.Server, host: string, port: number, what: string): Promise<ListenAddress> {
  const attempt = (h: string) =>
    new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once("error", onError);
      server.listen({ host: h, port, ipv6Only: false }, () => {
        server.off("error", onError);
        resolve();
      });
    });
  const hosts = isAllInterfaces(host) ? ["::", "0.0.0.0"] : [host];
  let last: unknown;
  for (const h of hosts) {
    try {
      await attempt(h);
      const a = server.address() as net.AddressInfo;
      return { host: a.address, port: a.port };
    } catch (err) {
      last = err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EAFNOSUPPORT" && code !== "EADDRNOTAVAIL") break;
    }
  }
  throw new SetupError(`${what}: cannot listen on ${host || "*"}:${port} (${(last as Error).message})`);
}

/** Leaf-first chain the client presented, cached per connection. */
const chains = new WeakMap<object, readonly X509Certificate[]>();
function peerChain(socket: object): readonly X509Certificate[] {
  const cached = chains.get(socket);
  if (cached) return cached;
  const chain: X509Certificate[] = [];
  try {
    let c = (socket as tls.TLSSocket).getPeerCertificate?.(true) as tls.DetailedPeerCertificate | undefined;
    const seen = new Set<string>();
    while (c && c.raw && !seen.has(c.fingerprint256) && chain.length < 10) {
      seen.add(c.fingerprint256);
      chain.push(new X509Certificate(c.raw));
      c = c.issuerCertificate;
    }
  } catch (err) {
    log.debug("could not read the client certificate", { error: (err as Error).message });
  }
  chains.set(socket, chain);
  return chain;
}

/** Kubernetes' forbidden message. */
export function forbiddenMessage(attrs: RequestAttributes, reason: string): string {
  const who = `User "${attrs.user.name}"`;
  let msg: string;
  if (!attrs.resource) msg = `forbidden: ${who} cannot ${attrs.verb} path "${attrs.path}"`;
  else {
    const r = attrs.resource;
    const res = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
    const named = r.name ? ` "${r.name}"` : "";
    const scope = r.namespace ? ` in the namespace "${r.namespace}"` : " at the cluster scope";
    msg =
      `${res}${named} is forbidden: ${who} cannot ${attrs.verb} resource "${res}" in API group "${r.apiGroup}"${scope}`;
  }
  return reason ? `${msg}: ${reason}` : msg;
}

/** Writes `reply` unless an answer was already sent (e.g. the 504 of a request that timed out). */
function send(req: AnyRequest, res: AnyResponse, reply: Reply): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const headers: Record<string, string> = { "Content-Type": reply.contentType, ...(reply.headers ?? {}) };
  const body = typeof reply.body === "string" ? new TextEncoder().encode(reply.body) : reply.body;
  headers["Content-Length"] = String(body.length);
  headers["X-Content-Type-Options"] = "nosniff";
  (res as http.ServerResponse).writeHead(reply.status, headers);
  if (req.method === "HEAD") res.end();
  else (res as http.ServerResponse).end(body);
}

const json = statusReply;

const isHttp2 = (req: AnyRequest): req is http2.Http2ServerRequest => req.httpVersionMajor === 2;

/** The connection a request came on, as ConnectionGuard knows it: the HTTP/2 session or the socket. */
function connectionOf(req: AnyRequest): object {
  return isHttp2(req) ? req.stream.session ?? req.socket : req.socket;
}

/** A request ran out of time: 504 (as kube-apiserver answers) if nothing was sent yet, else cut it off. */
function timedOut(req: AnyRequest, res: AnyResponse): void {
  if (!res.headersSent) {
    const reply = json(504, "Timeout", "Timeout: request did not complete within the request timeout");
    // HTTP/1.1: the unread rest of the request makes the connection unusable.
    send(req, res, isHttp2(req) ? reply : { ...reply, headers: { Connection: "close" } });
  } else if (isHttp2(req)) {
    req.stream.close(http2.constants.NGHTTP2_CANCEL);
  } else {
    req.socket.destroy();
  }
}

/** Identity headers stripped when no request-header authentication is configured (the defaults). */
const defaultIdentityHeaders = {
  usernameHeaders: ["x-remote-user"],
  groupHeaders: ["x-remote-group"],
  extraHeaderPrefixes: ["x-remote-extra-"],
};

class SecureHandler {
  readonly #isIdentityHeader: (header: string) => boolean;

  constructor(
    private readonly delegation: Delegation,
    private readonly routes: Routes,
    private readonly auditor: Auditor | undefined,
    private readonly bodyRoutes: readonly BodyRoute[] = [],
  ) {
    this.#isIdentityHeader = identityHeaderMatcher(
      delegation.authentication.requestHeader?.names ?? defaultIdentityHeaders,
    );
  }

  /** Whether a request may take longer than the request timeout (profiles, watches). */
  isLongRunning(method: string, url: URL): boolean {
    return this.routes.isLongRunning(url.pathname) || requestAttributes(method, url, failedAuthUser).verb === "watch";
  }

  async handle(req: AnyRequest, res: AnyResponse, guard: RequestGuard, longRunning: boolean): Promise<void> {
    const started = performance.now();
    const method = (req.method ?? "GET").toUpperCase();
    let status = 500;
    const current: { audit: AuditHandle | null } = { audit: null };
    try {
      status = await this.#serve(req, res, method, guard, longRunning, (h) => (current.audit = h));
    } catch (err) {
      log.error("secure port: request failed", { path: req.url, error: (err as Error).message });
      await current.audit?.panic(err).catch(() => {});
      if (!res.headersSent) send(req, res, json(500, "InternalError", "Internal Server Error"));
      else res.end();
    } finally {
      if (guard.timedOut) status = 504;
      const seconds = (performance.now() - started) / 1000;
      observeRequest("secure", method, status, seconds);
      log.v(3)?.info("secure port request", { method, uri: req.url, status, ms: Math.round(seconds * 1e4) / 10 });
    }
  }

  async #serve(
    req: AnyRequest,
    res: AnyResponse,
    method: string,
    guard: RequestGuard,
    longRunning: boolean,
    setAudit: (h: AuditHandle | null) => void,
  ) {
    const url = new URL(req.url ?? "/", "https://localhost");
    const raw = pairRawHeaders(req.rawHeaders).filter(([k]) => !k.startsWith(":"));
    const socket = req.socket;
    const authn = await authenticate(this.delegation.authentication, { peerChain: peerChain(socket), headers: raw });

    // Identity headers and the bearer token never reach a handler or the audit log.
    const auditing = this.auditor?.enabled === true;
    const visible = new Headers();
    for (const [k, v] of raw) {
      const lk = k.toLowerCase();
      if (lk === "authorization" || this.#isIdentityHeader(lk)) {
        delete (req.headers as Record<string, unknown>)[lk];
        continue;
      }
      if (!auditing) continue;
      try {
        visible.append(k, v);
      } catch {
        // a header name or value Headers rejects is left out of the audit copy only
      }
    }

    const user = authn.ok ? authn.user : failedAuthUser;
    const attrs = requestAttributes(method, url, user);
    const audit = auditing
      ? this.auditor!.begin({
        ...(req.headers["audit-id"] ? { auditID: String(req.headers["audit-id"]) } : {}),
        method,
        requestURI: req.url ?? "/",
        verb: attrs.verb,
        headers: visible,
        remoteAddress: socket.remoteAddress ?? "",
        user,
        ...(attrs.resource ? { objectRef: attrs.resource } : {}),
        longRunning,
      }) ?? null
      : null;
    setAudit(audit);
    if (audit) res.setHeader("Audit-ID", audit.auditID);

    const finish = async (reply: Reply): Promise<number> => {
      guard.replyReady();
      if (audit) await audit.complete(reply.status);
      send(req, res, reply);
      return reply.status;
    };

    if (!authn.ok) {
      log.v(2)?.info("secure port: authentication failed", { path: url.pathname, reasons: authn.reasons.join("; ") });
      return await finish(json(401, "Unauthorized", "Unauthorized"));
    }
    // A mounted POST endpoint (the admission webhook) is never served to anonymous callers and
    // never skips the SubjectAccessReview, whatever --authorization-always-allow-paths says.
    const bodyRoute = this.bodyRoutes.find((r) => r.path === url.pathname);
    if (bodyRoute && user.groups.includes("system:unauthenticated")) {
      return await finish(json(401, "Unauthorized", `Unauthorized: ${bodyRoute.path} needs an authenticated caller`));
    }

    let allowed: boolean;
    let reason: string;
    if (!bodyRoute && this.delegation.alwaysAllow(url.pathname)) {
      allowed = true;
      reason = "always-allowed path";
    } else {
      try {
        ({ allowed, reason } = await this.delegation.authorizer.authorize(attrs));
      } catch (err) {
        log.error("secure port: SubjectAccessReview failed", { path: url.pathname, error: (err as Error).message });
        audit?.annotate("authorization.k8s.io/decision", "forbid");
        audit?.annotate("authorization.k8s.io/reason", "review failed");
        return await finish(
          json(500, "InternalError", `Internal Server Error: "${url.pathname}": authorization review failed`),
        );
      }
    }
    audit?.annotate("authorization.k8s.io/decision", allowed ? "allow" : "forbid");
    audit?.annotate("authorization.k8s.io/reason", reason);
    if (!allowed) return await finish(json(403, "Forbidden", forbiddenMessage(attrs, reason)));

    if (longRunning) audit?.responseStarted();
    if (bodyRoute) return await finish(await answerBodyRoute(bodyRoute, req, method, url, audit));
    return await finish(await this.routes.answer(method, url, guard.signal));
  }
}

/** Starts the secure port and (B, C) the ops listener, from the parsed Config or plain settings. */
export async function startServing(config: Config | ServingSettings, deps: ServingDeps = {}): Promise<ServingHandle> {
  const s = "get" in config && typeof config.get === "function"
    ? settingsFromConfig(config as Config)
    : config as ServingSettings;
  const health = deps.health ?? new HealthChecks();
  const profiler = s.profiling ? new Profiler(s.contentionProfiling) : null;
  const cleanups: (() => Promise<void> | void)[] = [() => profiler?.close()];
  const stopAll = async () => {
    for (const c of cleanups.reverse()) await c();
  };
  try {
    let secure: ListenAddress | null = null;
    let delegation: Delegation | null = null;
    let certificateChain: string | null = null;
    if (s.securePort !== 0) {
      const policy = tlsPolicy(s.release, s.release === "C" ? null : s.tlsMinVersion, s.tlsCipherSuites);
      const certs = await loadServingCertificates(s);
      certificateChain = certs.cert;
      const mismatch = keyTypeMismatch(policy, new X509Certificate(certs.cert).publicKey.asymmetricKeyType);
      if (mismatch) log.warn(mismatch);
      delegation = await buildDelegation(s, deps);
      const d = delegation;
      cleanups.push(() => d.close());
      const routes = new Routes({
        release: s.release,
        version: s.version,
        health,
        profiler,
        swaggerUi: s.enableSwaggerUi,
        landingPage: false,
      });
      for (const r of deps.bodyRoutes ?? []) {
        if (delegation.alwaysAllow(r.path)) {
          log.warn("--authorization-always-allow-paths matches a POST endpoint; ignored for it", { path: r.path });
        }
      }
      const handler = new SecureHandler(delegation, routes, deps.auditor, deps.bodyRoutes);
      const guard = new ConnectionGuard("secure", s.connections);
      const caPem = delegation.clientCAs.map((c) => c.toString());
      const server = http2.createSecureServer({
        cert: certs.cert,
        key: certs.key,
        allowHTTP1: true,
        SNICallback: sniCallback(certs),
        // Go bounds the TLS handshake by ReadHeaderTimeout too.
        handshakeTimeout: s.connections.headerTimeoutMs,
        ...(caPem.length > 0 ? { requestCert: true, rejectUnauthorized: false, ca: caPem } : {}),
        ...policy.nodeOptions,
        ...(s.http2MaxStreamsPerConnection > 0
          ? { settings: { maxConcurrentStreams: s.http2MaxStreamsPerConnection } }
          : {}),
      }, (req, res) => {
        const method = (req.method ?? "GET").toUpperCase();
        const longRunning = handler.isLongRunning(method, new URL(req.url ?? "/", "https://localhost"));
        const g = guard.request(connectionOf(req), res, longRunning, () => timedOut(req, res));
        void handler.handle(req, res, g, longRunning);
      });
      guard.attach(server, false);
      const sessions = new Set<http2.ServerHttp2Session>();
      server.on("session", (sess: http2.ServerHttp2Session) => {
        sessions.add(sess);
        // GOAWAY, then the session ends (it has no stream in flight when the guard closes it).
        guard.opened(sess, () => sess.close());
        sess.once("close", () => {
          sessions.delete(sess);
          guard.closed(sess);
        });
      });
      server.prependListener("secureConnection", (sock: tls.TLSSocket) => {
        const violation = policyViolation(policy, sock.getProtocol(), sock.getCipher()?.name);
        if (violation) {
          tlsRefused.inc();
          log.v(2)?.info("secure port: TLS connection refused", { remote: sock.remoteAddress, violation });
          sock.destroy();
          return;
        }
        if (sock.alpnProtocol === "h2") return; // tracked as its session
        guard.opened(sock, () => sock.destroy());
        sock.once("close", () => guard.closed(sock));
      });
      server.on("tlsClientError", (err: Error & { code?: string }) => {
        // Deno's node:tls gives this error no code, only Node's message.
        if (err.code === "ERR_TLS_HANDSHAKE_TIMEOUT" || err.message === "TLS handshake timeout") {
          guard.handshakeTimedOut();
        }
        log.v(4)?.info("secure port: TLS handshake failed", { error: err.message });
      });
      const port = deps.ephemeralPorts ? 0 : s.securePort;
      secure = await listen(server, s.bindAddress, port, "--secure-port");
      cleanups.push(() =>
        new Promise<void>((resolve) => {
          for (const sess of sessions) sess.destroy();
          guard.closeAll();
          server.close(() => resolve());
        })
      );
      log.info("serving HTTPS", {
        address: formatAddress(secure),
        certificate: certs.source,
        sniCertificates: s.tlsSniCertKey.length,
      });
    } else {
      log.info("secure port disabled (--secure-port=0)");
    }

    let ops: ListenAddress | null = null;
    if (s.release !== "A" && s.opsAddress) {
      const option = s.release === "B" ? "ops-address" : "address";
      const addr = parseHostPort(s.opsAddress, option);
      if (addr.port !== 0 || deps.ephemeralPorts) {
        const routes = new Routes({
          release: s.release,
          version: s.version,
          health,
          profiler,
          swaggerUi: false,
          landingPage: true,
        });
        const guard = new ConnectionGuard("ops", s.connections);
        const server = http.createServer((req, res) => {
          const started = performance.now();
          const method = (req.method ?? "GET").toUpperCase();
          const url = new URL(req.url ?? "/", "http://localhost");
          const g = guard.request(req.socket, res, routes.isLongRunning(url.pathname), () => timedOut(req, res));
          const done = (reply: Reply) => {
            g.replyReady();
            send(req, res, reply);
            observeRequest("ops", method, g.timedOut ? 504 : reply.status, (performance.now() - started) / 1000);
          };
          routes.answer(method, url, g.signal).then(done, (err) => {
            log.error("ops listener: request failed", { path: req.url, error: (err as Error).message });
            done({ status: 500, contentType: "text/plain", body: "internal error\n" });
          });
        });
        guard.attach(server, true);
        ops = await listen(server, addr.host, deps.ephemeralPorts ? 0 : addr.port, `--${option}`);
        cleanups.push(() =>
          new Promise<void>((resolve) => {
            guard.closeAll();
            server.closeAllConnections();
            server.close(() => resolve());
          })
        );
        log.info("serving the web interface and telemetry", { address: formatAddress(ops) });
      }
    }

    let stopped: Promise<void> | null = null;
    return { secure, ops, health, delegation, certificateChain, stop: () => (stopped ??= stopAll()) };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
