/**
 * @module audit/metrics
 * Audit metrics on the process registry: events written per backend, events dropped per backend and
 * reason, batch sizes, webhook errors and retries. Registered once per process, shared by all auditors.
 */
import { prom, registry } from "../metrics/registry.ts";

/** Why an event was not delivered. */
export type DropReason = "buffer_full" | "too_large" | "write_error" | "webhook_error" | "shutdown";

export const eventsWritten = new prom.Counter({
  name: "ingress_controller_audit_events_written_total",
  help: "Audit events written to (log) or accepted by (webhook) a backend.",
  labelNames: ["backend"],
  registers: [registry],
});

export const eventsDropped = new prom.Counter({
  name: "ingress_controller_audit_events_dropped_total",
  help:
    "Audit events not delivered, by backend and reason (buffer_full, too_large, write_error, webhook_error, shutdown).",
  labelNames: ["backend", "reason"],
  registers: [registry],
});

export const eventsTruncated = new prom.Counter({
  name: "ingress_controller_audit_events_truncated_total",
  help: "Audit events that lost their request and response objects for being over the maximum event size.",
  labelNames: ["backend"],
  registers: [registry],
});

export const batchSize = new prom.Histogram({
  name: "ingress_controller_audit_batch_size",
  help: "Number of audit events in each batch handed to a backend.",
  labelNames: ["backend"],
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 400, 1000, 5000],
  registers: [registry],
});

export const webhookErrors = new prom.Counter({
  name: "ingress_controller_audit_webhook_errors_total",
  help: "Failed audit webhook requests (each attempt).",
  registers: [registry],
});

export const webhookRetries = new prom.Counter({
  name: "ingress_controller_audit_webhook_retries_total",
  help: "Audit webhook requests retried after a failure.",
  registers: [registry],
});
