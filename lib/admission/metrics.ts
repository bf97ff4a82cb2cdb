/**
 * @module admission/metrics
 * Prometheus metrics of the validating webhook.
 */
import { prom, registry } from "../metrics.ts";

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
