/**
 * @module admission/metrics
 * Prometheus metrics of the validating webhook.
 */
import { prom, registry } from "../metrics/registry.ts";

export const admissionReviews = new prom.Histogram({
  name: "ingress_controller_admission_review_seconds",
  help:
    "Time to decide one Ingress AdmissionReview (static checks, and the haproxy -c xray unless bypassed), by outcome.",
  labelNames: ["outcome"] as const,
  buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

export const registrations = new prom.Counter({
  name: "ingress_controller_admission_registrations_total",
  help: "Attempts to apply the ValidatingWebhookConfiguration, by result (ok, failed).",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const queueRefusals = new prom.Counter({
  name: "ingress_controller_admission_refused_total",
  help:
    "AdmissionReviews answered without a decision, by reason (busy: the review queue was full, 429; late: not decided before the deadline, 504).",
  labelNames: ["reason"] as const,
  registers: [registry],
});
