/**
 * @module proxy/health_endpoint
 * The proxy pod's probe endpoint: plain HTTP on `--bind-address`:`--health-port` answering only
 * `/readyz`, `/healthz` and `/livez` (Kubernetes' format, lib/parts/health.ts), so a
 * readinessProbe `httpGet: {path: /readyz, port: 56791}` can use it. It carries no data and
 * accepts no input beyond the probe path and its `?verbose` / `?exclude=` query.
 */
import { SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import type { HealthChecks } from "../parts/health.ts";

export interface HealthEndpoint {
  /** The port it listens on (the given one, or the one chosen for port 0 in tests). */
  readonly port: number;
  close(): Promise<void>;
}

/** Listens at once; a port that cannot be bound is a SetupError naming `--health-port`. */
export function startHealthEndpoint(health: HealthChecks, hostname: string, port: number): HealthEndpoint {
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname, port, onListen: () => {} }, async (req) => {
      if (req.method !== "GET" && req.method !== "HEAD") {
        return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
      }
      const url = new URL(req.url);
      const reply = await health.answer(url.pathname, url.searchParams);
      if (!reply) return new Response("not found\n", { status: 404 });
      return new Response(req.method === "HEAD" ? null : reply.body, {
        status: reply.status,
        headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" },
      });
    });
  } catch (err) {
    const msg = (err as Error).message.replace(/\s+/g, " ");
    throw new SetupError(`--health-port: cannot listen on ${hostname}:${port}: ${msg}; give a free port or 0`);
  }
  log.info("serving the proxy's probes", {
    address: `${hostname}:${server.addr.port}`,
    paths: "/readyz,/healthz,/livez",
  });
  return { port: server.addr.port, close: () => server.shutdown() };
}
