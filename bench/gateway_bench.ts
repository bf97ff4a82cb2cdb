/**
 * @module bench/gateway_bench
 * `deno task bench gateway`: how fast a change of an HTTPRoute is served, through the real API
 * server (with the Gateway API's CRDs), the controller and a real haproxy run by the proxy command
 * (in a private network namespace):
 * - `gateway.route_change_ms_p50` / `_p99`: an HTTPRoute's path changed (a new path to the same
 *   Service) until a request on the new path gets 200 through the Gateway's proxy, CHANGES times;
 *   `gateway.reloads`: the proxy's reloads meanwhile (goal 0: a path change is a map change);
 * - `gateway.endpoint_change_ms_p50` / `_p99`: the Service's endpoint swapped until the answer
 *   comes from the new one;
 * - `gateway.header_route_change_ms_p50` and `gateway.header_route_reloads`: the same path change
 *   on a rule that also matches a header (its lines are in haproxy.cfg: each change reloads), for
 *   comparison.
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { percentile } from "./figures.ts";
import { msUntil, probe } from "./http_probe.ts";
import { runInPrivateNetwork } from "../lib/dev/localenv/netns.ts";
import { gatewayProxyName } from "../lib/controller/objects.ts";
import { log } from "../lib/log/logger.ts";
import { backends, Cluster, controller, resources, serviceObj, sliceObj } from "../lib/dev/localenv/harness.ts";
import { installGatewayCrds } from "../lib/dev/localenv/gateway_crds.ts";
import { startProxy } from "../lib/dev/localenv/proxy_run.ts";
import { containerPort } from "../lib/gateway/ports.ts";
import { GATEWAY_CONTROLLER_NAME } from "../lib/gateway/model_types.ts";
import type { KubeObject } from "../lib/cluster/resources.ts";

const CHANGES = Number(Deno.env.get("BENCH_CHANGES") ?? 100);

await runInPrivateNetwork(new URL(import.meta.url).pathname);
log.configure({ level: "warn" });

const figures: { name: string; unit: string; value: number }[] = [];
const fig = (name: string, unit: string, value: number) => {
  figures.push({ name, unit, value: Math.round(value * 1000) / 1000 });
  console.error(`bench: ${name} = ${value.toFixed(3)} ${unit}`);
};

const get = probe;
const until = msUntil;

const gw = "gateway.networking.k8s.io/v1";
const route = (ns: string, path: string, headers: { name: string; value: string }[] = []): KubeObject => ({
  apiVersion: gw,
  kind: "HTTPRoute",
  metadata: { name: headers.length ? "by-header" : "web", namespace: ns },
  spec: {
    parentRefs: [{ name: "edge" }],
    hostnames: ["bench.example"],
    rules: [{
      matches: [{ path: { type: "PathPrefix", value: path }, headers }],
      backendRefs: [{ name: "svc", port: 80 }],
    }],
  },
});

const cluster = await Cluster.start();
try {
  await installGatewayCrds(cluster);
  const ops = await cluster.namespace("ops");
  const ns = await cluster.namespace("bench");
  const [blue, green] = await backends(["blue", "green"], 2);
  await cluster.apply(resources.services, serviceObj(ns, "svc"));
  await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [blue]));
  await cluster.apply(resources.gatewayClasses, {
    apiVersion: gw,
    kind: "GatewayClass",
    metadata: { name: "bench" },
    spec: { controllerName: GATEWAY_CONTROLLER_NAME },
  });
  await cluster.apply(resources.gateways, {
    apiVersion: gw,
    kind: "Gateway",
    metadata: { name: "edge", namespace: ns },
    spec: { gatewayClassName: "bench", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  });
  await cluster.apply(resources.httpRoutes, route(ns, "/v0"));
  const ctl = await controller(cluster, {
    validateProxyConfig: true,
    controllerId: "bench",
    coalesceMs: 0,
    operatorNamespace: ops,
  });
  const name = gatewayProxyName(`${ns}/edge`);
  while (!(await cluster.get(resources.configMaps, ops, name))) await new Promise((r) => setTimeout(r, 20));
  const proxy = await startProxy(cluster, ops, name);
  const port = containerPort(80);
  const reloadsSince = (from: number) => proxy.applied.slice(from).filter((r) => r.kind === "reload").length;
  try {
    await until(performance.now(), () => get(port, "bench.example", "/v0"), (a) => a.status === 200);
    while (!proxy.applied.some((r) => r.kind === "start")) await new Promise((r) => setTimeout(r, 5));

    const changes: number[] = [];
    const before = proxy.applied.length;
    for (let i = 1; i <= CHANGES; i++) {
      const t0 = performance.now();
      await cluster.apply(resources.httpRoutes, route(ns, `/v${i}`));
      changes.push(await until(t0, () => get(port, "bench.example", `/v${i}`), (a) => a.status === 200));
    }
    fig("gateway.route_change_ms_p50", "ms", percentile(changes, 50));
    fig("gateway.route_change_ms_p99", "ms", percentile(changes, 99));
    fig("gateway.reloads", "reloads", reloadsSince(before));

    const eps: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const to = i % 2 === 1 ? green : blue;
      const t0 = performance.now();
      await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [to]));
      eps.push(await until(t0, () => get(port, "bench.example", `/v${CHANGES}`), (a) => a.backend === to.name));
    }
    fig("gateway.endpoint_change_ms_p50", "ms", percentile(eps, 50));
    fig("gateway.endpoint_change_ms_p99", "ms", percentile(eps, 99));

    const headered: number[] = [];
    const beforeHeader = proxy.applied.length;
    const rounds = Math.min(CHANGES, 20);
    for (let i = 1; i <= rounds; i++) {
      const t0 = performance.now();
      await cluster.apply(resources.httpRoutes, route(ns, `/h${i}`, [{ name: "x-lane", value: "fast" }]));
      headered.push(
        await until(t0, () => get(port, "bench.example", `/h${i}`, { "x-lane": "fast" }), (a) => a.status === 200),
      );
    }
    fig("gateway.header_route_change_ms_p50", "ms", percentile(headered, 50));
    fig("gateway.header_route_reloads", "reloads", reloadsSince(beforeHeader));
  } finally {
    await proxy.stop();
    await ctl.stop();
    await blue.close();
    await green.close();
  }
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(figures));
