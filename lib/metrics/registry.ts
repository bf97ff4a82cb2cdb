/**
 * @module metrics
 * The controller's own Prometheus registry. Modules register their metrics here; the secure
 * port (A) or the ops listener (B, C) serves it at `/metrics`.
 */
import client from "prom-client";
import { collectProcessMetrics } from "./process.ts";

export const registry = new client.Registry();
registry.setDefaultLabels({});
collectProcessMetrics(registry);

export { client as prom };
