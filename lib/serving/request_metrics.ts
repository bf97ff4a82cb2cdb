/**
 * @module serving/request_metrics
 * Request and connection metrics of the secure port and the ops listener in the controller's registry.
 */
import { prom, registry } from "../metrics/registry.ts";

export const requestsTotal = new prom.Counter({
  name: "serving_requests_total",
  help: "Requests answered, by listener (secure, ops), method and status code.",
  labelNames: ["listener", "method", "code"] as const,
  registers: [registry],
});

export const requestDuration = new prom.Histogram({
  name: "serving_request_duration_seconds",
  help: "Time from receiving a request to the end of its response, by listener and status code.",
  labelNames: ["listener", "code"] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const tlsRefused = new prom.Counter({
  name: "serving_tls_handshakes_refused_total",
  help: "TLS connections closed after the handshake because of --tls-min-version or --tls-cipher-suites.",
  registers: [registry],
});

export function observeRequest(listener: "secure" | "ops", method: string, code: number, seconds: number): void {
  const c = String(code);
  requestsTotal.inc({ listener, method, code: c });
  requestDuration.observe({ listener, code: c }, seconds);
}

export const connectionsOpen = new prom.Gauge({
  name: "serving_connections_open",
  help: "TCP connections currently open, by listener (secure, ops).",
  labelNames: ["listener"] as const,
  registers: [registry],
});

export const connectionsRefused = new prom.Counter({
  name: "serving_connections_refused_total",
  help: "Connections closed at once because the listener already had its maximum of open connections.",
  labelNames: ["listener"] as const,
  registers: [registry],
});

export const connectionsTimedOut = new prom.Counter({
  name: "serving_connections_timed_out_total",
  help: "Connections or requests ended by the server's header, idle or request timeout, by listener and reason.",
  labelNames: ["listener", "reason"] as const,
  registers: [registry],
});
