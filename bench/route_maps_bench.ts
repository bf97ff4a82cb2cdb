/**
 * @module bench/route_maps_bench
 * The proxy side of a route change with a real HAProxy 2.6: the time `Applier.apply` takes for a
 * one-path change (the maps, through the Runtime API) against the same change made structural (a
 * reload), with 1 and with BENCH_ROUTES hosts routed (default 10,000), and the lookup cost seen
 * by requests: requests/s through the map routing with that many routes. Rendering is not timed.
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { figureList, percentile } from "./figures.ts";
import { benchProxy, desiredOf, statusOf, webLookup } from "./route_harness.ts";
import http from "node:http";
import { buildModel, loadTemplates, render } from "../lib/render/mod.ts";
import type { DesiredState } from "../lib/proxy/apply.ts";
import { startBackend } from "../lib/dev/localenv/backend.ts";
import { log } from "../lib/log/logger.ts";

const ROUTES = Number(Deno.env.get("BENCH_ROUTES") ?? 10_000);
const CHANGES = 30;
log.configure({ level: "warn" });

const { figures, fig } = figureList();
const pct = percentile;

const templates = await loadTemplates(null);
const web = await startBackend({ name: "web", host: "127.0.0.1" });
const lookup = webLookup(web.port);
const desired = (change: number, hosts: number, timeout?: string): DesiredState => {
  const route = (host: string, path: string) => ({
    host,
    http: { paths: [{ path, pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] },
  });
  const rules = [route("a.example", `/v${change}`)];
  for (let i = 0; i < hosts; i++) rules.push(route(`h${i}.example`, "/"));
  const { model } = buildModel({
    ingresses: [{
      metadata: {
        namespace: "default",
        name: "bench",
        annotations: timeout ? { "ingress.kubernetes.io/timeout-server": timeout } : {},
      },
      spec: { rules },
    }],
    lookup,
    allowLoopbackEndpoints: true,
  });
  return desiredOf(render(model, templates));
};

const { haproxy, applier, httpPort, workDir } = await benchProxy("ic-bench-maps-");
try {
  for (const hosts of [0, ROUTES]) {
    const label = `${hosts + 1}_routes`;
    const states = Array.from({ length: CHANGES + 1 }, (_, i) => desired(i, hosts));
    const first = await applier.apply(states[0]);
    if (!first.ok) throw new Error(`first apply: ${first.error}`);
    const runtime: number[] = [];
    for (const next of states.slice(1)) {
      const r = await applier.apply(next);
      if (r.kind !== "runtime" || !r.ok) throw new Error(`expected a runtime change, got ${r.kind} ${r.error ?? ""}`);
      runtime.push(r.durationMs);
    }
    fig(`route_maps.runtime_apply_ms_p50.${label}`, "ms", pct(runtime, 50));
    fig(`route_maps.runtime_apply_ms_p99.${label}`, "ms", pct(runtime, 99));
    const reload: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const r = await applier.apply(desired(CHANGES + i, hosts, `${10 + i}s`));
      if (r.kind !== "reload" || !r.ok) throw new Error(`expected a reload, got ${r.kind} ${r.error ?? ""}`);
      reload.push(r.durationMs);
    }
    fig(`route_maps.reload_apply_ms_p50.${label}`, "ms", pct(reload, 50));
    // requests/s through the routing, 4 keep-alive clients for 2 s, hosts spread over the table
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    let done = 0;
    const until = performance.now() + 2000;
    await Promise.all(Array.from({ length: 4 }, async (_, c) => {
      for (let i = c; performance.now() < until; i += 4) {
        const host = hosts > 0 ? `h${(i * 7919) % hosts}.example` : "a.example";
        const status = await statusOf(httpPort, host, hosts > 0 ? "/x" : `/v${CHANGES + 5}`, agent);
        if (status !== 200) throw new Error(`${host}: ${status}`);
        done++;
      }
    }));
    agent.destroy();
    fig(`route_maps.requests_per_s.${label}`, "req/s", done / 2);
  }
} finally {
  await haproxy.stop();
  await web.close();
  await Deno.remove(workDir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(figures));
