/**
 * @module bench/convergence_bench
 * End-to-end figures of the controller with the real API server and a real haproxy (run in a
 * private network namespace, see lib/dev/localenv/netns.ts):
 * - convergence: time from creating an Ingress, changing an Ingress, or changing an EndpointSlice
 *   until a request through haproxy gets the new answer (p50, p99 over CHANGES changes each). A
 *   route change (a new path to an existing Service) is a map change applied through the Runtime
 *   API (`converge.route_change_ms_*`, `converge.reloads` counts the proxy's reloads meanwhile,
 *   goal 0); the same change made structural (a backend setting changes too) reloads, for
 *   comparison (`converge.route_change_with_reload_ms_*`);
 * - failed requests under steady load (4 clients) during CHANGES route changes + CHANGES
 *   endpoint changes (goal 0), and during RELOADS reloads (goal 0);
 * - watch restarts per hour on an idle resource: @kubernetes/client-node's Watch (cut after 30 s
 *   without data) against this project's informer, measured over WATCH_WINDOW_S and extrapolated;
 * - TCP/TLS connections opened for 50 API requests: the library's generated client against ours;
 * - controller RSS with INGRESSES ingresses (a separate process, validation off).
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { percentile } from "./figures.ts";
import { msUntil, probe, type ProbeAnswer } from "./http_probe.ts";
import { startControllerProcess } from "./memory/controller_client.ts";
import * as k8s from "@kubernetes/client-node";
import { runInPrivateNetwork } from "../lib/dev/localenv/netns.ts";
import { proxyName } from "../lib/controller/objects.ts";
import { Informer } from "../lib/cluster/informer.ts";
import { ClusterClient } from "../lib/cluster/client.ts";
import { collectionPath, objectPath, resources } from "../lib/cluster/resources.ts";
import { log } from "../lib/log/logger.ts";
import { type Forwarder, tcpToUnix, unixToTcp } from "../lib/dev/localenv/forward.ts";
import { backends, Cluster, controller, ingressObj, serviceObj, sliceObj } from "../lib/dev/localenv/harness.ts";
import { startProxy } from "../lib/dev/localenv/proxy_run.ts";
import { writeKubeConfig } from "../lib/dev/localenv/kubeconfig.ts";

/** The per-ingress measurements use an ingress's own proxy (lib/controller/groups.ts). */
const dedicated = { annotations: { "ingress-controller.io/proxy": "dedicated" } };

const CHANGES = Number(Deno.env.get("BENCH_CHANGES") ?? 100);
const RELOADS = Number(Deno.env.get("BENCH_RELOADS") ?? 100);
const INGRESSES = Number(Deno.env.get("BENCH_INGRESSES") ?? 10_000);
const WATCH_WINDOW_S = Number(Deno.env.get("BENCH_WATCH_WINDOW_S") ?? 65);

interface Figure {
  name: string;
  unit: string;
  value: number;
}

await runInPrivateNetwork(new URL(import.meta.url).pathname);

log.configure({ level: "warn" });
const started = performance.now();
const figures: Figure[] = [];
const fig = (name: string, unit: string, value: number) => {
  figures.push({ name, unit, value: Math.round(value * 1000) / 1000 });
  console.error(
    `bench: ${name} = ${value.toFixed(3)} ${unit} (at ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
};
const pct = percentile;

const get = (port: number, host: string, path: string) => probe(port, host, path);

/** Milliseconds from `t0` until `ok` holds for an answer (polled every 2 ms, at most 30 s). */
const until = (t0: number, port: number, host: string, path: string, ok: (a: ProbeAnswer) => boolean) =>
  msUntil(t0, () => probe(port, host, path), ok, `${host}${path}`);

// 10,000 proxy Services need cluster IPs and (LoadBalancer) node ports: widen both ranges.
const cluster = await Cluster.start([
  "--service-cluster-ip-range=10.0.0.0/16",
  "--service-node-port-range=20000-60000",
]);
try {
  // --- idle watches: @kubernetes/client-node's Watch aborts a stream after 30 s without data
  // (requestTimeoutMs); under Deno its done callback is then never called, so the stream is just
  // dead. Probe it: one namespace gets an object after 25 s of silence, another after 35 s. Our
  // informers watch the same namespaces; their restarts over WATCH_WINDOW_S are extrapolated.
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const libWatch = new k8s.Watch(kc);
  const oursClient = await ClusterClient.create({ kubeconfig: cluster.kubeconfig, qps: 0, burst: 1 });
  const probes = [25, 35];
  const libSeen = new Set<number>();
  const libDone: number[] = [];
  const libAborts: AbortController[] = [];
  const oursInformers: Informer[] = [];
  const watchStarted = performance.now();
  for (const gap of probes) {
    const ns = await cluster.namespace(`idle-${gap}`);
    libAborts.push(
      await libWatch.watch(
        `/api/v1/namespaces/${ns}/configmaps`,
        {},
        (type: string) => type === "ADDED" && libSeen.add(gap),
        () => libDone.push(gap),
      ),
    );
    oursInformers.push(new Informer(oursClient, resources.configMaps, { namespace: ns }).start());
  }
  const probing = Promise.all(probes.map(async (gap) => {
    await new Promise((r) => setTimeout(r, gap * 1000 - (performance.now() - watchStarted)));
    await cluster.client.request("POST", collectionPath(resources.configMaps, `idle-${gap}`), {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "probe" } },
    });
  }));

  // --- connections opened for 50 requests: library client vs ours, counted at a TCP forwarder.
  const dir = await Deno.makeTempDir({ prefix: "ic-bench-" });
  const apiPort = Number(new URL(cluster.cp.server).port);
  const inner = unixToTcp(`${dir}/api.sock`, "127.0.0.1", apiPort);
  const counted: Forwarder = tcpToUnix(`${dir}/api.sock`);
  const countingKubeconfig = await writeKubeConfig(`${dir}/kc.yaml`, {
    server: `https://127.0.0.1:${counted.port}`,
    caPem: cluster.cp.caPem,
    user: "admin",
    credentials: { certPem: cluster.cp.admin.certPem, keyPem: cluster.cp.admin.keyPem },
  });
  {
    const lkc = new k8s.KubeConfig();
    lkc.loadFromFile(countingKubeconfig);
    const api = lkc.makeApiClient(k8s.CoreV1Api);
    const before = counted.accepted;
    for (let i = 0; i < 50; i++) await api.readNamespace({ name: "default" });
    fig("api_connections_per_50_requests_client_node", "connections", counted.accepted - before);
    const mine = await ClusterClient.create({ kubeconfig: countingKubeconfig, qps: 0, burst: 1 });
    const before2 = counted.accepted;
    for (let i = 0; i < 50; i++) await mine.request("GET", objectPath(resources.namespaces, null, "default"));
    fig("api_connections_per_50_requests_ours", "connections", counted.accepted - before2);
    mine.close();
  }
  await counted.close();
  await inner.close();

  // --- convergence through haproxy.
  const ns = await cluster.namespace("bench");
  const [blue, green] = await backends(["blue", "green"], 2);
  await cluster.apply(resources.services, serviceObj(ns, "svc"));
  await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [blue]));
  const ctl = await controller(cluster, { validateProxyConfig: true, controllerId: "bench", coalesceMs: 0 });
  const host = "bench.example";
  const name = "web";
  await cluster.apply(resources.ingresses, ingressObj(ns, name, [{ host, path: "/v0", service: "svc" }], dedicated));
  while (!(await cluster.get(resources.configMaps, ns, proxyName(name)))) await new Promise((r) => setTimeout(r, 20));
  const proxy = await startProxy(cluster, ns, proxyName(name));
  /** Reloads of the proxy since its `from`-th apply. */
  const reloadsSince = (from: number) => proxy.applied.slice(from).filter((r) => r.kind === "reload").length;
  /** Steady load on host/path until stopped (4 clients, bounded by count and by the caller). */
  const steadyLoad = (path: string) => {
    const load = { sent: 0, failed: 0, running: true, done: Promise.resolve() };
    load.done = Promise.all(Array.from({ length: 4 }, async () => {
      while (load.running && load.sent < 1_000_000) {
        const a = await get(proxy.httpPort, host, path);
        load.sent++;
        if (a.status !== 200) load.failed++;
      }
    })).then(() => {});
    return load;
  };
  try {
    await until(performance.now(), proxy.httpPort, host, "/v0", (a) => a.status === 200);
    // haproxy serves before the proxy records its start: wait for that record before counting
    while (!proxy.applied.some((r) => r.kind === "start")) await new Promise((r) => setTimeout(r, 5));

    // Ingress change: a new path each time, to the same Service: a route-only change (maps, Runtime API).
    const change: number[] = [];
    const beforeRoutes = proxy.applied.length;
    for (let i = 1; i <= CHANGES; i++) {
      const t0 = performance.now();
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, name, [{ host, path: `/v${i}`, service: "svc" }], dedicated),
      );
      change.push(await until(t0, proxy.httpPort, host, `/v${i}`, (a) => a.status === 200));
    }
    fig("convergence_ingress_change_p50", "ms", pct(change, 50));
    fig("convergence_ingress_change_p99", "ms", pct(change, 99));
    fig("converge.route_change_ms_p50", "ms", pct(change, 50));
    fig("converge.route_change_ms_p99", "ms", pct(change, 99));
    fig("converge.reloads", "reloads", reloadsSince(beforeRoutes));
    const runtimeApplies = proxy.applied.slice(beforeRoutes).filter((r) => r.kind === "runtime").map((r) =>
      r.durationMs
    );
    fig("converge.proxy_runtime_apply_ms_p50", "ms", pct(runtimeApplies, 50));

    // EndpointSlice change: alternate the endpoint between blue and green.
    const eps: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const to = i % 2 === 1 ? green : blue;
      const t0 = performance.now();
      await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [to]));
      eps.push(await until(t0, proxy.httpPort, host, `/v${CHANGES}`, (a) => a.backend === to.name));
    }
    fig("convergence_endpointslice_change_p50", "ms", pct(eps, 50));
    fig("convergence_endpointslice_change_p99", "ms", pct(eps, 99));

    // Failed requests under steady load during CHANGES route changes + CHANGES endpoint changes.
    const served = { host, path: `/v${CHANGES}`, service: "svc" };
    const beforeMixed = proxy.applied.length;
    const mixed = steadyLoad(`/v${CHANGES}`);
    const underLoad: number[] = [];
    for (let i = 1; i <= CHANGES; i++) {
      const t0 = performance.now();
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, name, [served, { host: "other.example", path: `/m${i}`, service: "svc" }], dedicated),
      );
      underLoad.push(await until(t0, proxy.httpPort, "other.example", `/m${i}`, (a) => a.status === 200));
      const to = (CHANGES + i) % 2 === 1 ? green : blue; // continues the alternation of the loop above
      const t1 = performance.now();
      await cluster.apply(resources.endpointSlices, sliceObj(ns, "svc", [to]));
      await until(t1, proxy.httpPort, host, `/v${CHANGES}`, (a) => a.backend === to.name);
    }
    mixed.running = false;
    await mixed.done;
    fig("converge.requests_during_route_and_endpoint_changes", "requests", mixed.sent);
    fig("converge.failed_requests_during_route_and_endpoint_changes", "requests", mixed.failed);
    fig("converge.reloads_during_route_and_endpoint_changes", "reloads", reloadsSince(beforeMixed));
    fig("converge.route_change_under_load_ms_p50", "ms", pct(underLoad, 50));
    fig("converge.route_change_under_load_ms_p99", "ms", pct(underLoad, 99));

    // The old path, for comparison with the figures under load above: the same route change made
    // structural (the backend's timeout annotation changes too), so each one reloads; failed
    // requests under steady load meanwhile.
    const withReload: number[] = [];
    const beforeReloads = proxy.applied.length;
    const loaded = steadyLoad(`/v${CHANGES}`);
    for (let i = 1; i <= RELOADS; i++) {
      const t0 = performance.now();
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, name, [served, { host: "other.example", path: `/r${i}`, service: "svc" }], {
          annotations: { "ingress.kubernetes.io/timeout-server": `${10 + i}s` },
        }),
      );
      withReload.push(await until(t0, proxy.httpPort, "other.example", `/r${i}`, (a) => a.status === 200));
    }
    loaded.running = false;
    await loaded.done;
    fig("converge.route_change_with_reload_ms_p50", "ms", pct(withReload, 50));
    fig("converge.route_change_with_reload_ms_p99", "ms", pct(withReload, 99));
    fig("reloads_during_reload_changes", "reloads", reloadsSince(beforeReloads));
    fig("requests_during_reloads", "requests", loaded.sent);
    fig("failed_requests_during_reloads", "requests", loaded.failed);

    // Ingress creation: a fresh ingress whose proxy is already waiting for its ConfigMap.
    const created: number[] = [];
    const cname = "fresh";
    const cproxy = await startProxy(cluster, ns, proxyName(cname));
    try {
      for (let i = 1; i <= CHANGES; i++) {
        const t0 = performance.now();
        await cluster.apply(
          resources.ingresses,
          ingressObj(ns, cname, [{ host: "fresh.example", path: `/c${i}`, service: "svc" }], dedicated),
        );
        created.push(await until(t0, cproxy.httpPort, "fresh.example", `/c${i}`, (a) => a.status === 200));
        await cluster.remove(resources.ingresses, ns, cname);
        while (await cluster.get(resources.configMaps, ns, proxyName(cname))) {
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    } finally {
      await cproxy.stop();
    }
    fig("convergence_ingress_create_p50", "ms", pct(created, 50));
    fig("convergence_ingress_create_p99", "ms", pct(created, 99));
  } finally {
    await proxy.stop();
    await ctl.stop();
    await blue.close();
    await green.close();
  }

  // --- idle watches: let the window run out, then see which probes arrived.
  await probing;
  const left = Math.max(WATCH_WINDOW_S * 1000, (probes.at(-1)! + 5) * 1000) - (performance.now() - watchStarted);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  const windowS = (performance.now() - watchStarted) / 1000;
  for (const gap of probes) {
    fig(`client_node_watch_delivers_after_${gap}s_idle`, "bool", libSeen.has(gap) ? 1 : 0);
  }
  fig("client_node_watch_done_callbacks", "calls", libDone.length);
  for (const ac of libAborts) ac.abort();
  // The first probe gap whose event never arrived bounds the library's idle cut from above.
  const cut = probes.find((g) => !libSeen.has(g));
  if (cut !== undefined) fig("watch_restarts_per_hour_client_node_idle", "restarts/h", 3600 / cut);
  for (const [k, gap] of probes.entries()) {
    fig(`ours_watch_delivers_after_${gap}s_idle`, "bool", oursInformers[k].store.get(`idle-${gap}/probe`) ? 1 : 0);
  }
  const ourRestarts = oursInformers.reduce((n, i) => n + i.watchStarts - 1, 0) / oursInformers.length;
  for (const i of oursInformers) await i.stop();
  oursClient.close();
  fig("watch_window", "s", windowS);
  fig("watch_restarts_per_hour_ours", "restarts/h", (ourRestarts * 3600) / windowS);

  // --- after a non-410 error (403 here) the library's informer stops for good; ours recovers.
  {
    const ns = await cluster.namespace("forbidden");
    const limitedKc = await cluster.cp.kubeConfig("limited");
    const lkc = new k8s.KubeConfig();
    lkc.loadFromFile(limitedKc);
    const core = lkc.makeApiClient(k8s.CoreV1Api);
    const libInformer = k8s.makeInformer(
      lkc,
      `/api/v1/namespaces/${ns}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace: ns }),
    );
    let libErrors = 0;
    libInformer.on("error", () => libErrors++);
    await libInformer.start().catch(() => libErrors++);
    const limited = await ClusterClient.create({ kubeconfig: limitedKc, qps: 0, burst: 1 });
    const mine = new Informer(limited, resources.configMaps, { namespace: ns }).start();
    await new Promise((r) => setTimeout(r, 1000));
    for (
      const [r, body] of [
        [resources.roles, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "read", namespace: ns },
          rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"] }],
        }],
        [resources.roleBindings, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "read", namespace: ns },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "read" },
          subjects: [{ kind: "User", name: "limited", apiGroup: "rbac.authorization.k8s.io" }],
        }],
        [resources.configMaps, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after", namespace: ns } }],
      ] as const
    ) {
      await cluster.client.request("POST", collectionPath(r, ns), { body });
    }
    const deadline = performance.now() + 40_000;
    while (performance.now() < deadline && !mine.store.get(`${ns}/after`)) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 2000)); // the same chance for the library's informer
    fig("client_node_informer_errors_before_access", "errors", libErrors);
    fig("client_node_informer_recovers_after_403", "bool", libInformer.get("after", ns) ? 1 : 0);
    fig("ours_informer_recovers_after_403", "bool", mine.store.get(`${ns}/after`) ? 1 : 0);
    await libInformer.stop();
    await mine.stop();
    limited.close();
  }

  // --- RSS with INGRESSES ingresses.
  const big = await cluster.namespace("many");
  await cluster.apply(resources.services, serviceObj(big, "svc"));
  const t0 = performance.now();
  let next = 0;
  const path = collectionPath(resources.ingresses, big);
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < INGRESSES) {
      const i = next++;
      await cluster.client.request("POST", path, {
        body: ingressObj(big, `ing-${i}`, [{ host: `h${i}.example`, service: "svc" }]),
      });
    }
  }));
  fig("create_ingresses_seconds", "s", (performance.now() - t0) / 1000);
  const t1 = performance.now();
  // The id of the controller above (stopped): its proxies' objects are this one's to keep, not a conflict.
  const separate = startControllerProcess(cluster.kubeconfig, { controllerId: "bench" });
  const report = JSON.parse(await separate.request());
  fig("controller_initial_sync_and_publish_seconds", "s", (performance.now() - t1) / 1000);
  fig("controller_rss_with_ingresses", "MB", report.rssBytes / 1e6);
  fig("controller_heap_used_with_ingresses", "MB", report.heapUsed / 1e6);
  fig("controller_ingresses_in_rss_figure", "ingresses", INGRESSES);
  await separate.close();
  await Deno.remove(dir, { recursive: true });
} finally {
  await cluster.stop();
}
console.log(JSON.stringify(figures));
Deno.exit(0);
