/**
 * @module serving/connection_guard
 * Time and count limits of one listener's connections (the secure port or the ops listener), so
 * that slow or idle clients cannot hold connections forever. Kubernetes-like defaults: the request
 * headers within 32 s, a connection without a request in flight closed after 90 s, a non-long-running
 * request answered within 60 s (504 otherwise), at most 1000 open connections.
 *
 * Enforced here on the sockets and HTTP/2 sessions rather than left to the runtime: Deno 2.9.6's
 * node:http2 server ignores `keepAliveTimeout` for its HTTP/1.1 connections, has no idle timeout
 * for HTTP/2 sessions, and `maxConnections` refuses without telling anyone. The knobs the runtime
 * does honour (`headersTimeout` for each HTTP/1.1 request, `requestTimeout` for receiving a request,
 * the TLS `handshakeTimeout`) are set as well, from the same limits.
 */
import type net from "node:net";
import { connectionsOpen, connectionsRefused, connectionsTimedOut } from "./request_metrics.ts";

export interface ConnectionLimits {
  /** From a connection's start (TLS handshake, then again from its end) to the first request's complete headers. */
  readonly headerTimeoutMs: number;
  /** A request must be answered within this; long-running requests (profiles, watches) only while sending. */
  readonly requestTimeoutMs: number;
  /** A connection without a request in flight is closed after this. */
  readonly idleTimeoutMs: number;
  /** Connections beyond this many open ones on the listener are closed at once. */
  readonly maxConnections: number;
}

export const defaultConnectionLimits: ConnectionLimits = Object.freeze({
  headerTimeoutMs: 32_000, // Kubernetes' ReadHeaderTimeout
  requestTimeoutMs: 60_000, // kube-apiserver's --request-timeout
  idleTimeoutMs: 90_000, // Kubernetes' IdleTimeout (HTTP/1.1 and HTTP/2)
  maxConnections: 1000,
});

export type Listener = "secure" | "ops";
type Reason = "header_timeout" | "idle_timeout" | "request_timeout";

/** How often the runtime checks `headersTimeout`/`requestTimeout` of HTTP/1.1 requests. */
const runtimeCheckIntervalMs = 1000;

interface Conn {
  active: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  readonly close: () => void;
}

/** The part of a response (HTTP/1.1 or HTTP/2 compatibility API) the guard watches. */
interface Finishable {
  once(event: "finish" | "close", listener: () => void): unknown;
}

export interface RequestGuard {
  /** Aborts when the request ends, its client goes away or it times out. */
  readonly signal: AbortSignal;
  readonly timedOut: boolean;
  /** The answer is about to be sent: from now on a long-running request is bounded by the request timeout too. */
  replyReady(): void;
}

export class ConnectionGuard {
  readonly #listener: Listener;
  readonly #limits: ConnectionLimits;
  readonly #sockets = new Set<net.Socket>();
  readonly #conns = new Map<object, Conn>();

  constructor(listener: Listener, limits: ConnectionLimits) {
    this.#listener = listener;
    this.#limits = limits;
  }

  /**
   * Counts the server's TCP connections, closing those beyond the limit before anything is read
   * from them, and sets the runtime's own HTTP/1.1 timeouts. Call before `listen`. `plainHttp`:
   * every TCP connection is an HTTP connection (no TLS, so no HTTP/2 sessions to track apart).
   */
  attach(server: net.Server, plainHttp: boolean): void {
    const listener = this.#listener;
    server.prependListener("connection", (sock: net.Socket) => {
      if (this.#sockets.size >= this.#limits.maxConnections) {
        connectionsRefused.inc({ listener });
        sock.destroy();
        return;
      }
      this.#sockets.add(sock);
      connectionsOpen.inc({ listener });
      if (plainHttp) this.opened(sock, () => sock.destroy());
      sock.once("close", () => {
        this.#sockets.delete(sock);
        connectionsOpen.dec({ listener });
        if (plainHttp) this.closed(sock);
      });
    });
    const http1 = server as net.Server & {
      headersTimeout?: number;
      requestTimeout?: number;
      keepAliveTimeout?: number;
      connectionsCheckingInterval?: number;
    };
    http1.headersTimeout = this.#limits.headerTimeoutMs;
    http1.requestTimeout = Math.max(this.#limits.requestTimeoutMs, this.#limits.headerTimeoutMs);
    http1.connectionsCheckingInterval = runtimeCheckIntervalMs;
    // The idle timer below replaces the runtime's keep-alive timeout (ignored by node:http2's HTTP/1.1).
    http1.keepAliveTimeout = 0;
  }

  /** A TLS handshake ran out of time (node:tls `handshakeTimeout`, set to the header timeout). */
  handshakeTimedOut(): void {
    connectionsTimedOut.inc({ listener: this.#listener, reason: "header_timeout" });
  }

  /**
   * An HTTP connection begins (an HTTP/1.1 socket, or an HTTP/2 session): its first request must
   * arrive within the header timeout; `close` ends it.
   */
  opened(key: object, close: () => void): void {
    const conn: Conn = { active: 0, timer: undefined, close };
    this.#conns.set(key, conn);
    this.#arm(conn, this.#limits.headerTimeoutMs, "header_timeout");
  }

  closed(key: object): void {
    const conn = this.#conns.get(key);
    if (conn) clearTimeout(conn.timer);
    this.#conns.delete(key);
  }

  /**
   * A request on connection `key` (see `opened`) has arrived; `onTimeout` answers it (504) or
   * resets it when it runs out of time.
   */
  request(key: object, res: Finishable, longRunning: boolean, onTimeout: () => void): RequestGuard {
    const conn = this.#conns.get(key);
    if (conn) {
      conn.active++;
      clearTimeout(conn.timer);
    }
    const ended = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    let done = false;
    const arm = () => {
      if (done) return; // answered, or the client went away
      timer ??= setTimeout(() => {
        timedOut = true;
        connectionsTimedOut.inc({ listener: this.#listener, reason: "request_timeout" });
        ended.abort();
        onTimeout();
      }, this.#limits.requestTimeoutMs);
    };
    const end = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      ended.abort();
      if (conn && --conn.active === 0 && this.#conns.has(key)) {
        this.#arm(conn, this.#limits.idleTimeoutMs, "idle_timeout");
      }
    };
    res.once("finish", end);
    res.once("close", end);
    if (!longRunning) arm();
    return {
      signal: ended.signal,
      get timedOut() {
        return timedOut;
      },
      replyReady: arm,
    };
  }

  /** Stop: clears every timer and destroys every connection still open. */
  closeAll(): void {
    for (const conn of this.#conns.values()) clearTimeout(conn.timer);
    this.#conns.clear();
    for (const sock of this.#sockets) sock.destroy();
  }

  #arm(conn: Conn, ms: number, reason: Reason): void {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => {
      connectionsTimedOut.inc({ listener: this.#listener, reason });
      conn.close();
    }, ms);
  }
}
