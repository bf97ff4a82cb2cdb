/**
 * @module bench/proxy_change_bench
 * The proxy's share of a route change and of its first start with BENCH_ROUTES ingresses (default
 * 10,000; each one host, one path, its own Service and backend with 4 server slots): the real
 * kube-apiserver, the configuration written as the controller writes it (part ConfigMaps, then the
 * head: lib/controller/transport.ts), the real `proxy` command and haproxy on loopback.
 * - `proxy.first_start_ms`: head written → HAProxy started with it (the Applier's `start`), and its
 *   shares: `_applier_ms` (files written, HAProxy started) and `_input_ms` (watch event → parts read);
 *   `proxy.first_served_ms`: head written → a route answered through HAProxy;
 * - `proxy.change_applied_ms` (p50, p99): one host added (one map line) written → applied (the map changed in
 *   HAProxy, then its file written);
 * - `proxy.change_event_ms` (p50, p99): the proxy's own part of it, from the head's watch event;
 * - `proxy.change_served_ms` (p50): → the new host answered.
 * With `BENCH_TLS=<n>`, the first n Ingresses each have a TLS Secret of their own, created in the API
 * server: the proxy lists and watches each by name before its first start (`proxy.first_start_ms`).
 * Prints a JSON array of {name, unit, value} as its last stdout line.
 */
import { figureList, percentile } from "./figures.ts";
import { statusOf, webLookup } from "./route_harness.ts";
import http from "node:http";
import { buildModel, configMapData, loadTemplates, render } from "../lib/render/mod.ts";
import { configObjects, type TransportObject } from "../lib/controller/transport.ts";
import { PART_SHA_ANNOTATION } from "../lib/transport/parts.ts";
import type { ApplyResult } from "../lib/proxy/apply.ts";
import { runProxy } from "../lib/proxy/command.ts";
import { startBackend } from "../lib/dev/localenv/backend.ts";
import { startControlPlane } from "../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../lib/dev/localenv/ports.ts";
import { log } from "../lib/log/logger.ts";
import type { V1Secret } from "@kubernetes/client-node";
import { createCA, issueCertificate } from "../lib/pki/certs.ts";
import { summarizedSecret } from "../lib/render/tls_secret.ts";
import { ClusterClient } from "../lib/cluster/client.ts";

const ROUTES = Number(Deno.env.get("BENCH_ROUTES") ?? 10_000);
const CHANGES = Number(Deno.env.get("BENCH_CHANGES") ?? 30);
const TLS = Math.min(Number(Deno.env.get("BENCH_TLS") ?? 0), ROUTES);
const NS = "bench";
const CM = "shared-proxy";
log.configure({ level: (Deno.env.get("BENCH_LOG") ?? "warn") as "warn" });

const { figures, fig } = figureList();
const pct = percentile;

const web = await startBackend({ name: "web", host: "127.0.0.1" });
const base = webLookup(web.port);
const ingresses = Array.from({ length: ROUTES }, (_, i) => ({
  metadata: {
    namespace: "default",
    name: `ing${i}`,
    creationTimestamp: new Date(i * 1000),
    // served over plain HTTP too, where the bench asks
    ...(i < TLS ? { annotations: { "ingress-controller.io/ssl-redirect": "false" } } : {}),
  },
  spec: {
    ...(i < TLS ? { tls: [{ hosts: [`h${i}.example`], secretName: `tls${i}` }] } : {}),
    rules: [{
      host: `h${i}.example`,
      http: {
        paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: `s${i}`, port: { number: 80 } } } }],
      },
    }],
  },
}));
// every Service s<i> is the one backend `web`, with its own HAProxy backend
const lookup: typeof base = {
  ...base,
  service: (ns) => base.service(ns, "web"),
  endpointSlices: (ns, service) =>
    base.endpointSlices(ns, "web").map((s) => ({
      ...s,
      metadata: { ...s.metadata, labels: { ...s.metadata?.labels, "kubernetes.io/service-name": service } },
    })),
};
/** The TLS Secrets (one certificate for all: the proxy reads each by name all the same). */
const leaf = TLS > 0
  ? await issueCertificate(await createCA({ commonName: "bench CA" }), {
    commonName: "*.example",
    dnsNames: ["*.example"],
    usages: ["serverAuth"],
  })
  : null;
const tlsSecrets = Array.from({ length: TLS }, (_, i) => ({
  apiVersion: "v1",
  kind: "Secret",
  type: "kubernetes.io/tls",
  metadata: { namespace: "default", name: `tls${i}` },
  data: { "tls.crt": btoa(leaf!.certPem), "tls.key": btoa(leaf!.keyPem) },
}));
const secretsByName = new Map(tlsSecrets.map((s) => [s.metadata.name, summarizedSecret(s) as V1Secret]));
lookup.secret = (ns, name) => ns === "default" ? secretsByName.get(name) : undefined;
const { model } = buildModel({ ingresses, lookup, allowLoopbackEndpoints: true });
const data: Record<string, string> = configMapData(render(model, await loadTemplates(null)));
const firstBackend = /^h0\.example\/ (\S+)$/m.exec(data["routes-prefix.map"])?.[1];
if (!firstBackend) throw new Error("no route of h0.example in routes-prefix.map");

await using cp = await startControlPlane();
// the controller's writes go through the project's keep-alive client, as here
const writer = await ClusterClient.create({ kubeconfig: cp.adminKubeConfigPath, qps: 0, burst: 0 });
const api = (method: string, path: string, body?: unknown) => writer.request(method, path, { body });
await api("POST", "/api/v1/namespaces", { metadata: { name: NS } });
{
  const t = performance.now();
  for (let i = 0; i < tlsSecrets.length; i += 32) {
    await Promise.all(tlsSecrets.slice(i, i + 32).map((s) => api("POST", "/api/v1/namespaces/default/secrets", s)));
  }
  if (TLS > 0) console.error(`bench: ${TLS} TLS Secrets created in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
const existing = new Map<string, string>();
/**
 * Writes the parts that changed and the head does not carry; the function it resolves with writes
 * the head and resolves with the write of the parts it carries (which follows, as the controller does it).
 */
const publish = async (files: Record<string, string>): Promise<() => Promise<{ carried: Promise<void> }>> => {
  const objects = configObjects(CM, files, existing);
  const write = (o: TransportObject) => {
    const body = { metadata: { name: o.name, namespace: NS, annotations: o.annotations, labels: o.labels }, ...o.body };
    const known = o.name === CM ? existing.has(CM) : existing.has(o.name);
    return known
      ? api("PUT", `/api/v1/namespaces/${NS}/configmaps/${o.name}`, body)
      : api("POST", `/api/v1/namespaces/${NS}/configmaps`, body);
  };
  // In write order: the parts the head does not carry, the head, then those it carries (as the controller writes them).
  const at = objects.findIndex((o) => o.name === CM);
  const changed = (o: TransportObject) => existing.get(o.name) !== o.annotations?.[PART_SHA_ANNOTATION];
  const writeParts = async (parts: TransportObject[]) => {
    await Promise.all(parts.map(write));
    for (const o of parts) existing.set(o.name, o.annotations![PART_SHA_ANNOTATION]);
  };
  await writeParts(objects.slice(0, at).filter(changed));
  return async () => {
    await write(objects[at]);
    existing.set(CM, "");
    return { carried: writeParts(objects.slice(at + 1).filter(changed)) };
  };
};

const applied: { result: ApplyResult; at: number; eventAt?: number }[] = [];
let wake = () => {};
const nextApply = async (count: number) => {
  while (applied.length < count) await new Promise<void>((r) => wake = r);
  return applied[count - 1];
};
const [httpPort, httpsPort, statsPort] = freePorts(3);
const workDir = await Deno.makeTempDir({ prefix: "ic-bench-proxy-" });
const stop = new AbortController();
let ready = () => {};
const started = new Promise<void>((r) => ready = r);
const running = runProxy(
  {
    kubeconfig: cp.adminKubeConfigPath,
    namespace: NS,
    configmap: CM,
    haproxy: await ensureHaproxy(),
    workDir,
    bindAddress: "127.0.0.1",
    httpPort,
    httpsPort,
    statsPort,
  },
  stop.signal,
  {
    onReady: () => ready(),
    onApply: (result, timing) => {
      applied.push({ result, at: performance.now(), eventAt: timing?.eventAt });
      wake();
    },
    accessLog: "null",
  },
);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const servedBy = async (host: string) => {
  for (let i = 0; i < 10_000; i++) {
    if (await statusOf(httpPort, host, "/", agent).catch(() => 0) === 200) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`${host} was never served`);
};
try {
  await started;
  const writeHead = await publish(data);
  const t0 = performance.now();
  const { carried } = await writeHead();
  const first = await nextApply(1);
  if (!first.result.ok || first.result.kind !== "start") {
    throw new Error(`first apply: ${JSON.stringify(first.result)}`);
  }
  fig("proxy.first_start_ms", "ms", first.at - t0);
  // of which: HAProxy's start with the files written (the Applier), and the watch event → parts read → desired state
  fig("proxy.first_start_applier_ms", "ms", first.result.durationMs);
  fig("proxy.first_start_input_ms", "ms", first.at - (first.eventAt ?? t0) - first.result.durationMs);
  await servedBy(`h${ROUTES - 1}.example`);
  fig("proxy.first_served_ms", "ms", performance.now() - t0);
  await carried;

  const lines = data["routes-prefix.map"].split("\n").filter((l) => l !== "");
  const appliedMs: number[] = [];
  const eventMs: number[] = [];
  const servedMs: number[] = [];
  const putMs: number[] = [];
  for (let i = 1; i <= CHANGES; i++) {
    lines.push(`new${i}.example/ ${firstBackend}`);
    lines.sort();
    const writeHead = await publish({ ...data, "routes-prefix.map": lines.map((l) => `${l}\n`).join("") });
    const t = performance.now();
    const { carried } = await writeHead();
    putMs.push(performance.now() - t);
    const done = await nextApply(1 + i);
    if (!done.result.ok || done.result.kind !== "runtime") {
      throw new Error(`change ${i}: expected a runtime change, got ${JSON.stringify(done.result)}`);
    }
    appliedMs.push(done.at - t);
    if (done.eventAt !== undefined) eventMs.push(done.at - done.eventAt);
    await servedBy(`new${i}.example`);
    servedMs.push(performance.now() - t);
    await carried;
  }
  fig("proxy.change_applied_ms", "ms", pct(appliedMs, 50));
  fig("proxy.change_applied_ms_p99", "ms", pct(appliedMs, 99));
  fig("proxy.change_event_ms", "ms", pct(eventMs, 50));
  fig("proxy.change_event_ms_p99", "ms", pct(eventMs, 99));
  fig("proxy.change_served_ms", "ms", pct(servedMs, 50));
  fig("proxy.head_write_ms", "ms", pct(putMs, 50));
} finally {
  agent.destroy();
  stop.abort();
  await running;
  await web.close();
  writer.close();
  await Deno.remove(workDir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(figures));
