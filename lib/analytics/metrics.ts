/**
 * @module analytics/metrics
 * Analytics delivery metrics on the process registry (lib/metrics/registry.ts), served at `/metrics`.
 */
import { prom, registry } from "../metrics/registry.ts";

export const eventsSent = new prom.Counter({
  name: "ingress_controller_analytics_events_sent_total",
  help: "Analytics events the analytics endpoint accepted (2xx), by event name.",
  labelNames: ["event"],
  registers: [registry],
});

export const sendFailures = new prom.Counter({
  name: "ingress_controller_analytics_send_failures_total",
  help: "Analytics events not delivered (connection error, timeout, redirect or non-2xx answer); not retried.",
  registers: [registry],
});
