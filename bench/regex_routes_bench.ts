/**
 * @module bench/regex_routes_bench
 * The cost of regex paths (`path-regex`, routes-regex.map, docs/routing-maps.md) with a real
 * HAProxy 2.6: the time `Applier.apply` takes for a one-regex change (routes-regex.map is always
 * replaced as a new version, so this grows with the map), and requests/s through the routing for a
 * Prefix route that misses every regex (the worst case: it walks the whole `map_reg` list) and for
 * a regex route, with 0 and BENCH_REGEX_ROUTES (default 1,000) host-less regex routes.
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { figureList, percentile } from "./figures.ts";
import { benchProxy, desiredOf, statusOf, webLookup } from "./route_harness.ts";
import http from "node:http";
import { buildModel, loadTemplates, render } from "../lib/render/mod.ts";
import type { DesiredState } from "../lib/proxy/apply.ts";
import { startBackend } from "../lib/dev/localenv/backend.ts";
import { log } from "../lib/log/logger.ts";

const ROUTES = Number(Deno.env.get("BENCH_REGEX_ROUTES") ?? 1000);
const CHANGES = 20;
log.configure({ level: "warn" });

const { figures, fig } = figureList();
const pct = percentile;

const templates = await loadTemplates(null);
const web = await startBackend({ name: "web", host: "127.0.0.1" });
const lookup = webLookup(web.port);
const backend = { service: { name: "web", port: { number: 80 } } };
/** `regexes` host-less regex routes plus one that changes with `change`, and a Prefix route on a.example. */
const desired = (change: number, regexes: number): DesiredState => {
  const paths = [{ path: `/changing${change}/(.*)`, pathType: "ImplementationSpecific", backend }];
  for (let i = 0; i < regexes; i++) {
    paths.push({ path: `/r${i}/v[0-9]+/(.*)`, pathType: "ImplementationSpecific", backend });
  }
  const { model, problems } = buildModel({
    ingresses: [
      {
        metadata: { namespace: "default", name: "regex", annotations: { "ingress-controller.io/path-regex": "true" } },
        spec: { rules: [{ http: { paths } }] },
      },
      {
        metadata: { namespace: "default", name: "prefix" },
        spec: { rules: [{ host: "a.example", http: { paths: [{ path: "/p", pathType: "Prefix", backend }] } }] },
      },
    ],
    lookup,
    allowLoopbackEndpoints: true,
  });
  if (problems.length > 0) throw new Error(JSON.stringify(problems[0]));
  return desiredOf(render(model, templates));
};

/** Requests/s for `path` on `host`, 4 keep-alive clients for 2 s (each request a distinct path: no LRU cache hit). */
async function rate(port: number, host: string, path: (i: number) => string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let done = 0;
  const until = performance.now() + 2000;
  await Promise.all(Array.from({ length: 4 }, async (_, c) => {
    for (let i = c; performance.now() < until; i += 4) {
      const status = await statusOf(port, host, path(i), agent);
      if (status !== 200) throw new Error(`${host}${path(i)}: ${status}`);
      done++;
    }
  }));
  agent.destroy();
  return done / 2;
}

const { haproxy, applier, httpPort, workDir } = await benchProxy("ic-bench-regex-");
try {
  for (const regexes of [0, ROUTES]) {
    const label = `${regexes + 1}_regex_routes`;
    const first = await applier.apply(desired(0, regexes));
    if (!first.ok) throw new Error(`first apply: ${first.error}`);
    const runtime: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const r = await applier.apply(desired(i, regexes));
      if (r.kind !== "runtime" || !r.ok) throw new Error(`expected a runtime change, got ${r.kind} ${r.error ?? ""}`);
      runtime.push(r.durationMs);
    }
    fig(`regex_routes.runtime_apply_ms_p50.${label}`, "ms", pct(runtime, 50));
    fig(`regex_routes.prefix_requests_per_s.${label}`, "req/s", await rate(httpPort, "a.example", (i) => `/p/${i}`));
    fig(
      `regex_routes.regex_requests_per_s.${label}`,
      "req/s",
      await rate(httpPort, "b.example", (i) => `/changing${CHANGES}/${i}`),
    );
  }
} finally {
  await haproxy.stop();
  await web.close();
  await Deno.remove(workDir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(figures));
