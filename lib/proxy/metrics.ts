/**
 * @module proxy/metrics
 * Prometheus metrics of the proxy command: configuration applies by kind (none, runtime,
 * reload, start: the reload count), failures by stage, apply duration, the servers, map
 * files and certificates changed through the Runtime API, and the Secrets left out.
 */
import { prom, registry } from "../metrics/registry.ts";

export const applies = new prom.Counter({
  name: "ingress_controller_proxy_applies_total",
  help:
    "Configuration applies, by kind: none (unchanged), runtime (endpoints, routes, certificates via the Runtime API), reload, start.",
  labelNames: ["kind"] as const,
  registers: [registry],
});

export const applyFailures = new prom.Counter({
  name: "ingress_controller_proxy_apply_failures_total",
  help:
    "Failed configuration applies, by stage (digest: a ConfigMap the controller did not write, input, check, write, runtime, reload, start); the last good config keeps serving.",
  labelNames: ["stage"] as const,
  registers: [registry],
});

export const applyDuration = new prom.Histogram({
  name: "ingress_controller_proxy_apply_duration_seconds",
  help: "Time to apply a configuration change, by kind.",
  labelNames: ["kind"] as const,
  buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const serversChanged = new prom.Counter({
  name: "ingress_controller_proxy_runtime_servers_changed_total",
  help: "Server slots changed through the Runtime API without a reload.",
  registers: [registry],
});

export const mapsChanged = new prom.Counter({
  name: "ingress_controller_proxy_runtime_maps_changed_total",
  help: "Routing map files replaced through the Runtime API without a reload (route-only changes).",
  registers: [registry],
});

export const certsChanged = new prom.Counter({
  name: "ingress_controller_proxy_runtime_certs_changed_total",
  help: "Certificates replaced through the Runtime API without a reload.",
  registers: [registry],
});

export const lastApplySuccess = new prom.Gauge({
  name: "ingress_controller_proxy_last_apply_success",
  help: "1 when the last configuration apply succeeded, 0 when it failed (the last good config is serving).",
  registers: [registry],
});

export const secretsLeftOut = new prom.Gauge({
  name: "ingress_controller_proxy_secret_left_out",
  help:
    "1 for each TLS or CA Secret whose file the proxy leaves out (missing, unusable, or refused by HAProxy); everything else is applied.",
  labelNames: ["namespace", "name", "kind"] as const,
  registers: [registry],
});
