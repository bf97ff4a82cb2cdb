/**
 * @module cluster/metrics
 * Prometheus metrics of cluster access: API requests, rate-limiter wait,
 * watch (re)starts and relists per resource.
 */
import { prom, registry } from "../metrics/registry.ts";

export const apiRequests = new prom.Counter({
  name: "ingress_controller_cluster_api_requests_total",
  help: "Requests sent to the cluster API server, by verb and HTTP status code (0: no response).",
  labelNames: ["verb", "code"] as const,
  registers: [registry],
});

export const rateLimiterWait = new prom.Histogram({
  name: "ingress_controller_cluster_rate_limiter_wait_seconds",
  help: "Time API calls waited in the client-side token bucket (--qps/--burst).",
  buckets: [0, 0.001, 0.01, 0.1, 0.5, 1, 5, 30],
  registers: [registry],
});

export const watchStarts = new prom.Counter({
  name: "ingress_controller_cluster_watch_starts_total",
  help: "Watch requests started (first start and every restart), by resource.",
  labelNames: ["resource"] as const,
  registers: [registry],
});

export const relists = new prom.Counter({
  name: "ingress_controller_cluster_relists_total",
  help: "Full lists of a resource (initial, resync, 410 Gone, after errors), by resource and reason.",
  labelNames: ["resource", "reason"] as const,
  registers: [registry],
});

export const watchErrors = new prom.Counter({
  name: "ingress_controller_cluster_watch_errors_total",
  help: "Watches or lists that failed and were retried after a backoff, by resource.",
  labelNames: ["resource"] as const,
  registers: [registry],
});
