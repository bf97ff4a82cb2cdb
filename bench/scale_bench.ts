/**
 * @module bench/scale_bench
 * `deno task bench scale`: one shared proxy for BENCH_INGRESSES (default 10,000) ingresses, each
 * with one host, one path and its own Service and EndpointSlice, all created before the
 * controller starts. The real kube-apiserver, the controller in a process of its own (validation
 * with `haproxy -c` on, as in production), the real `proxy` command and haproxy, real backends;
 * inside a private network namespace (lib/dev/localenv/netns.ts).
 * - `scale.first_served_s`: controller start → the last-created ingress answered through the proxy;
 * - `scale.controller_rss_mb`: the controller's RSS once idle, after a GC, its C-heap trim and V8's
 *   memory reducer (as a controller left alone shows it; `_after_work_mb`: before the reducer);
 * - `scale.settled_s`: controller start → idle (every ingress's status written);
 * - `scale.one_change_served_ms` (p50, and `_p99`), once settled: a host added to one ingress → served;
 * - `scale.backend_change_served_ms` (p50 of 5): an ingress moved to another Service that has a backend
 *   already (its old backend goes: a map change) → served; `scale.new_backend_served_ms` (p50 of 5): an
 *   ingress moved to a Service that has no backend yet (a backend added: a reload) → served; with the
 *   proxy's reloads during each.
 * - `scale.endpoints_grow_served_ms` (p50 of 5): a Service's endpoints go from 1 to 3 → its third
 *   endpoint answers; with the proxy's reloads while they grow and shrink back to 1;
 * - `scale.haproxy_rss_mb`, `scale.haproxy_cpu_s`: HAProxy's processes (master and workers) once
 *   settled: their RSS, and the CPU they used so far (most of it parsing the configuration).
 * BENCH_PROFILE=1 prints the controller's functions with the most self time during the route changes
 * (BENCH_PROFILE_FILE=<file> also writes that CPU profile, which Chrome's DevTools read);
 * BENCH_HEAP_SNAPSHOT=<file> writes the controller's heap at the end (bench/memory/heap_summary.ts reads it).
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { startControllerProcess } from "./memory/controller_client.ts";
import http from "node:http";
import { runInPrivateNetwork } from "../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../lib/controller/groups.ts";
import { collectionPath, resources } from "../lib/cluster/resources.ts";
import { log } from "../lib/log/logger.ts";
import { backends, Cluster, ingressObj, serviceObj, sliceObj } from "../lib/dev/localenv/harness.ts";
import { writeStoredObjects } from "../lib/dev/localenv/etcd_objects.ts";
import type { KubeObject } from "../lib/cluster/resources.ts";
import { startProxy } from "../lib/dev/localenv/proxy_run.ts";
import { figureList, percentile } from "./figures.ts";

const INGRESSES = Number(Deno.env.get("BENCH_INGRESSES") ?? 10_000);
const CHANGES = Number(Deno.env.get("BENCH_CHANGES") ?? 40);

await runInPrivateNetwork(new URL(import.meta.url).pathname);

log.configure({ level: (Deno.env.get("BENCH_LOG") ?? "warn") as "warn" });
const { figures, fig } = figureList();
const pct = percentile;

/**
 * One kept-alive connection for the polls: a new connection every 2 ms (HAProxy's accept, the
 * bench's own connection setup) took CPU from the change being measured on two cores. A route
 * change is a map change in the running HAProxy, seen by the next request on any connection; after
 * a reload the old worker answers one more request with "Connection: close", then the next poll connects anew.
 */
const pollAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function backendOf(port: number, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path: "/", headers: { host }, agent: pollAgent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => {
        try {
          resolve(res.statusCode === 200 ? JSON.parse(body).name ?? null : null);
        } catch {
          resolve(null);
        }
      });
      res.on("error", () => resolve(null));
    });
    req.setTimeout(5000, () => req.destroy());
    req.on("error", () => resolve(null));
    req.end();
  });
}

/** Milliseconds from `t0` until `host` is answered by `backend` (polled every 2 ms, at most `limitMs`). */
async function servedBy(t0: number, port: number, host: string, backend: string, limitMs: number): Promise<number> {
  for (;;) {
    if ((await backendOf(port, host)) === backend) return performance.now() - t0;
    if (performance.now() - t0 > limitMs) throw new Error(`${host} not served by ${backend} within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** HAProxy's processes started for `workDir`: RSS (MB) and CPU used (s), summed, from /proc. */
async function haproxyUsage(workDir: string): Promise<{ rssMb: number; cpuS: number }> {
  let [rssMb, cpuS] = [0, 0];
  const tick = 100; // USER_HZ on Linux
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      if (!cmd.includes("haproxy") || !cmd.includes(workDir)) continue;
      const status = await Deno.readTextFile(`/proc/${e.name}/status`);
      rssMb += Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) / 1000;
      const stat = (await Deno.readTextFile(`/proc/${e.name}/stat`)).split(") ")[1].split(" ");
      cpuS += (Number(stat[11]) + Number(stat[12])) / tick; // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  return { rssMb, cpuS };
}

/** `make(i)` for i < n, one at a time (100,000 objects are not held at once). */
function* objects(n: number, make: (i: number) => KubeObject): Generator<KubeObject> {
  for (let i = 0; i < n; i++) yield make(i);
}

/** A Service without a cluster IP: the allocator has nothing to track for objects written into etcd. */
function headlessServiceObj(ns: string, name: string): KubeObject {
  const s = serviceObj(ns, name);
  return { ...s, spec: { ...s.spec, clusterIP: "None" } };
}

// Stored as JSON so that the objects can be written straight into etcd (lib/dev/localenv/etcd_objects.ts).
const cluster = await Cluster.start(["--storage-media-type=application/json"]);
const servers = await backends(["b0", "b1", "b2", "b3"], 50);
const dir = await Deno.makeTempDir({ prefix: "ic-scale-bench-" });
try {
  const ns = await cluster.namespace("apps");
  const ops = await cluster.namespace("ops");
  const server = (i: number) => servers[i % servers.length];
  let t = performance.now();
  // Each kind's first object is POSTed, the rest written into etcd in the form the API server
  // stored for it; the controller and the proxy read them all through the API server.
  const target = { etcdUrl: cluster.cp.etcdUrl, client: cluster.client };
  await writeStoredObjects(target, resources.services, objects(INGRESSES, (i) => headlessServiceObj(ns, `s${i}`)));
  await writeStoredObjects(
    target,
    resources.endpointSlices,
    objects(INGRESSES, (i) => sliceObj(ns, `s${i}`, [server(i)])),
  );
  await writeStoredObjects(
    target,
    resources.ingresses,
    objects(INGRESSES, (i) => ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i}` }])),
  );
  // Until the API server's watch cache holds them all (what the controller's first list reads).
  const rv = (await cluster.client.request("GET", collectionPath(resources.ingresses, ns), { query: { limit: "1" } }))
    .metadata.resourceVersion;
  await cluster.client.request("GET", collectionPath(resources.ingresses, ns), {
    query: { limit: "1", resourceVersion: rv, resourceVersionMatch: "NotOlderThan" },
  });
  fig("scale.create_objects_s", "s", (performance.now() - t) / 1000);
  fig("scale.ingresses", "ingresses", INGRESSES);

  const name = sharedProxyName("");
  const proxy = await startProxy(cluster, ops, name);
  t = performance.now();
  const controller = startControllerProcess(cluster.kubeconfig, {
    operatorNamespace: ops,
    validateProxyConfig: true,
    workers: 4,
    coalesceMs: 10,
    // BENCH_RENEW_DEADLINE_MS: a longer leader term, to profile a first sync that blocks longer than 10 s.
    ...(Deno.env.get("BENCH_RENEW_DEADLINE_MS")
      ? {
        renewDeadlineMs: Number(Deno.env.get("BENCH_RENEW_DEADLINE_MS")),
        leaseDurationMs: Number(Deno.env.get("BENCH_RENEW_DEADLINE_MS")) * 1.5,
      }
      : {}),
  });
  try {
    const last = INGRESSES - 1;
    // 600 s, and more for more than 60,000 Ingresses (10 ms each).
    await servedBy(t, proxy.httpPort, `h${last}.example`, server(last).name, Math.max(600_000, INGRESSES * 10));
    fig("scale.first_served_s", "s", (performance.now() - t) / 1000);
    for (const i of [0, Math.floor(INGRESSES / 2), last]) {
      const got = await backendOf(proxy.httpPort, `h${i}.example`);
      if (got !== server(i).name) throw new Error(`h${i}.example answered by ${got}, not ${server(i).name}`);
    }

    // One change at a time. A route change (a host added to an ingress, to its own Service: the
    // backends stay, so it goes through the Runtime API), then a backend change (an ingress moved
    // to another Service that has a backend: its old backend goes away, nothing else names it), then
    // an ingress moved to a Service without a backend yet (a backend added: HAProxy reads it on a reload).
    // Settled: every status written and nothing queued (the changes below are measured from there).
    await controller.request("idle");
    fig("scale.settled_s", "s", (performance.now() - t) / 1000);
    const usage = await haproxyUsage(proxy.workDir);
    fig("scale.haproxy_rss_mb", "MB", usage.rssMb);
    fig("scale.haproxy_cpu_s", "s", usage.cpuS);
    const profiling = Deno.env.get("BENCH_PROFILE") === "1";
    if (profiling) await controller.request("profile-start");
    const reloadsBefore = proxy.applied.filter((a) => a.kind === "reload").length;
    const routeTimes: number[] = [];
    for (let c = 0; c < CHANGES; c++) {
      const i = (c * 7919) % (INGRESSES - 1);
      const t0 = performance.now();
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i}` }, {
          host: `n${c}.example`,
          service: `s${i}`,
        }]),
      );
      routeTimes.push(await servedBy(t0, proxy.httpPort, `n${c}.example`, server(i).name, 60_000));
    }
    if (profiling) await controller.request("profile-stop"); // the top functions go to stderr
    // With BENCH_LOG, each change's time in order (the slow ones are what the p99 shows).
    if (Deno.env.get("BENCH_LOG")) {
      console.error(`route changes served (ms): ${routeTimes.map((t) => t.toFixed(1)).join(" ")}`);
    }
    fig("scale.one_change_served_ms", "ms", pct(routeTimes, 50));
    fig("scale.one_change_served_ms_p99", "ms", pct(routeTimes, 99));
    fig(
      "scale.reloads_during_route_changes",
      "reloads",
      proxy.applied.filter((a) => a.kind === "reload").length - reloadsBefore,
    );
    const reloadsBeforeBackends = proxy.applied.filter((a) => a.kind === "reload").length;
    const backendTimes: number[] = [];
    for (let c = 0; c < Math.min(CHANGES, 5); c++) {
      const i = (c * 104729 + 13) % (INGRESSES - 1);
      const t0 = performance.now();
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `s${i + 1}` }]),
      );
      backendTimes.push(await servedBy(t0, proxy.httpPort, `h${i}.example`, server(i + 1).name, 120_000));
    }
    fig("scale.backend_change_served_ms", "ms", pct(backendTimes, 50));
    const reloadsAfterBackends = proxy.applied.filter((a) => a.kind === "reload").length;
    fig("scale.reloads_during_backend_changes", "reloads", reloadsAfterBackends - reloadsBeforeBackends);

    // A Service's endpoints grow from 1 to 3 (served once the third answers), then shrink back.
    const reloadsBeforeGrowth = proxy.applied.filter((a) => a.kind === "reload").length;
    const growTimes: number[] = [];
    for (let c = 0; c < Math.min(CHANGES, 5); c++) {
      const i = (c * 7307 + 101) % (INGRESSES - 1);
      const t0 = performance.now();
      await cluster.apply(resources.endpointSlices, sliceObj(ns, `s${i}`, [server(i), server(i + 1), server(i + 2)]));
      growTimes.push(await servedBy(t0, proxy.httpPort, `h${i}.example`, server(i + 2).name, 120_000));
      await cluster.apply(resources.endpointSlices, sliceObj(ns, `s${i}`, [server(i)]));
      await controller.request("idle");
    }
    fig("scale.endpoints_grow_served_ms", "ms", pct(growTimes, 50));
    fig(
      "scale.reloads_during_endpoint_growth",
      "reloads",
      proxy.applied.filter((a) => a.kind === "reload").length - reloadsBeforeGrowth,
    );

    // Services no ingress uses yet (no backend), created before the clock starts.
    const NEW_BACKENDS = Math.min(CHANGES, 5);
    const moves = Array.from({ length: NEW_BACKENDS }, (_, c) => (c * 15485863 + 29) % (INGRESSES - 1));
    for (let c = 0; c < NEW_BACKENDS; c++) {
      await cluster.client.request("POST", collectionPath(resources.services, ns), { body: serviceObj(ns, `x${c}`) });
      await cluster.client.request("POST", collectionPath(resources.endpointSlices, ns), {
        body: sliceObj(ns, `x${c}`, [server(moves[c] + 2)]),
      });
    }
    await controller.request("idle");
    const newBackendTimes: number[] = [];
    for (let c = 0; c < NEW_BACKENDS; c++) {
      const i = moves[c];
      const t0 = performance.now();
      await cluster.apply(resources.ingresses, ingressObj(ns, `i${i}`, [{ host: `h${i}.example`, service: `x${c}` }]));
      newBackendTimes.push(await servedBy(t0, proxy.httpPort, `h${i}.example`, server(i + 2).name, 120_000));
    }
    fig("scale.new_backend_served_ms", "ms", pct(newBackendTimes, 50));
    fig(
      "scale.reloads_during_new_backends",
      "reloads",
      proxy.applied.filter((a) => a.kind === "reload").length - reloadsAfterBackends,
    );

    const report = JSON.parse(await controller.request());
    // After the figures: taking a snapshot grows the RSS.
    const snapshot = Deno.env.get("BENCH_HEAP_SNAPSHOT");
    if (snapshot) await controller.request(`heap-snapshot ${snapshot}`);
    fig("scale.controller_rss_mb", "MB", report.rssBytes / 1e6);
    fig("scale.controller_heap_used_mb", "MB", report.heapUsed / 1e6);
    fig("scale.controller_heap_total_mb", "MB", report.heapTotal / 1e6);
    fig("scale.controller_external_mb", "MB", report.external / 1e6);
    if (report.rssAnonBytes !== undefined) {
      fig("scale.controller_rss_anon_mb", "MB", report.rssAnonBytes / 1e6);
      fig("scale.controller_rss_file_mb", "MB", report.rssFileBytes / 1e6);
    }
    fig("scale.controller_rss_after_work_mb", "MB", report.afterWork.rssBytes / 1e6);
    fig("scale.controller_heap_total_after_work_mb", "MB", report.afterWork.heapTotal / 1e6);
  } finally {
    pollAgent.destroy();
    await controller.close();
    await proxy.stop();
  }
} finally {
  for (const s of servers) await s.close();
  await cluster.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(figures));
