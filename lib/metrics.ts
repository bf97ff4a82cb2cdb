/**
 * @module metrics
 * The controller's own Prometheus registry. Modules register their metrics here; the secure
 * port (A) or the ops listener (B, C) serves it at `/metrics`.
 */
import client from "prom-client";

export const registry = new client.Registry();
registry.setDefaultLabels({});
client.collectDefaultMetrics({ register: registry });

export { client as prom };
