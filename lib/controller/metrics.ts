/**
 * @module controller/metrics
 * Prometheus metrics of the controller loop, and the counts its handle reports.
 */
import { prom, registry } from "../metrics/registry.ts";

/** The same work counted for tests and benchmarks (ControllerHandle.stats), shared by the controller's parts. */
export interface WorkCounts {
  reconciles: number;
  renders: number;
  writes: number;
  validations: number;
}

export const reconciles = new prom.Counter({
  name: "ingress_controller_reconciles_total",
  help:
    "Ingress reconciles, by result (published, unchanged, removed, invalid, conflict, failed, abandoned: leadership lost).",
  labelNames: ["result"] as const,
  registers: [registry],
});

export const renders = new prom.Counter({
  name: "ingress_controller_renders_total",
  help: "Proxy configurations rendered.",
  registers: [registry],
});

export const validationFailures = new prom.Counter({
  name: "ingress_controller_validation_failures_total",
  help: "Rendered configurations refused by `haproxy -c` (never published).",
  registers: [registry],
});

export const writes = new prom.Counter({
  name: "ingress_controller_object_writes_total",
  help: "Owned objects written (applied or deleted), by kind and operation.",
  labelNames: ["kind", "op"] as const,
  registers: [registry],
});

export const ownershipConflicts = new prom.Counter({
  name: "ingress_controller_ownership_conflicts_total",
  help: "Existing objects left untouched because the controller did not create them " +
    "(same name as a proxy object, or marked for another ingress), by kind; counted per reconcile.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

export const restores = new prom.Counter({
  name: "ingress_controller_owned_object_restores_total",
  help: "Owned objects put back as the controller made them after someone else changed a field it sets " +
    "(lib/controller/drift.ts), by kind; each also gets a Warning Event OwnedObjectRestored.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

export const reconcileSeconds = new prom.Histogram({
  name: "ingress_controller_reconcile_seconds",
  help: "Time to reconcile one ingress (render, validate, publish).",
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  registers: [registry],
});

export const leader = new prom.Gauge({
  name: "ingress_controller_leader",
  help: "1 while this replica holds the leader Lease and may write, else 0 (lib/controller/leader.ts).",
  registers: [registry],
});
