/**
 * @module bench/ssl_passthrough_bench
 * The cost of the `ssl-passthrough` hop (docs/ssl-passthrough.md): with a passthrough host, the
 * HTTPS port is a `mode tcp` frontend that reads the ClientHello and relays every other TLS
 * connection to the HTTPS frontend over a local unix socket (PROXY v2). This measures an ordinary
 * TLS host's requests through a real haproxy without and with a passthrough host configured:
 * a new TLS connection per request (handshake included) and requests on one kept-alive
 * connection, in alternating rounds so that load from elsewhere hits both alike.
 * Bounded: `PASSTHROUGH_BENCH_ROUNDS` (default 4) rounds of 100 new connections and 1000
 * kept-alive requests per configuration, loopback only. Last stdout line: JSON array of
 * {name, unit, value}.
 */
import https from "node:https";
import { join } from "node:path";
import type { V1Secret } from "@kubernetes/client-node";
import { createCA, issueCertificate } from "../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../lib/render/model.ts";
import { loadTemplates, render } from "../lib/render/render.ts";
import { startHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../lib/dev/localenv/ports.ts";
import { startBackend } from "../lib/dev/localenv/backend.ts";

const ROUNDS = Math.min(Number(Deno.env.get("PASSTHROUGH_BENCH_ROUNDS") ?? 4), 20);
const NEW_CONNECTIONS = 100;
const KEPT_ALIVE = 1000;

const ca = await createCA({ commonName: "bench-ca" });
const leaf = await issueCertificate(ca, {
  commonName: "web.example.com",
  dnsNames: ["web.example.com"],
  usages: ["serverAuth"],
});
await using web = await startBackend({ name: "web" });
const templates = await loadTemplates(null);

function objects(passthrough: boolean) {
  const ingress = (name: string, host: string, annotations: Record<string, string>, tls: boolean) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { namespace: "default", name, annotations, creationTimestamp: "2026-01-01T00:00:00Z" as unknown as Date },
    spec: {
      tls: tls ? [{ hosts: [host], secretName: "tls" }] : undefined,
      rules: [{
        host,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
        },
      }],
    },
  });
  const secret: V1Secret = {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { namespace: "default", name: "tls" },
    data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
  };
  return {
    ingresses: [
      ingress("web", "web.example.com", {}, true),
      ...(passthrough
        ? [ingress("pass", "pass.example.com", { "ingress-controller.io/ssl-passthrough": "true" }, false)]
        : []),
    ],
    lookup: lookupFromLists({
      services: [{ metadata: { namespace: "default", name: "web" }, spec: { ports: [{ port: 80 }] } }],
      endpointSlices: [{
        addressType: "IPv4",
        metadata: { namespace: "default", name: "web", labels: { "kubernetes.io/service-name": "web" } },
        ports: [{ name: "", port: web.port }],
        endpoints: [{ addresses: ["127.0.0.1"] }],
      }],
      secrets: [secret],
    }),
    allowLoopbackEndpoints: true,
  };
}

async function serve(passthrough: boolean) {
  const { model } = buildModel(objects(passthrough));
  const rendered = render(model, templates);
  const dir = await Deno.makeTempDir({ prefix: "ic-passthrough-bench-" });
  const certDir = join(dir, "certs");
  await Deno.mkdir(certDir);
  await Deno.writeTextFile(join(dir, "haproxy.cfg"), rendered.config);
  await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
  for (const [file, text] of Object.entries(rendered.maps)) await Deno.writeTextFile(join(certDir, file), text);
  await Deno.writeTextFile(join(certDir, "default_tls.pem"), `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n`);
  const [http, port, stats] = freePorts(3);
  const proxy = await startHaproxy(join(dir, "haproxy.cfg"), {
    env: {
      IC_BIND_ADDR: "127.0.0.1",
      IC_HTTP_PORT: String(http),
      IC_HTTPS_PORT: String(port),
      IC_STATS_PORT: String(stats),
      IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
      IC_CERT_DIR: certDir,
    },
  });
  const [worker] = await proxy.workerPids();
  return {
    port,
    /** CPU time (user + system) of the haproxy worker so far, ms. */
    cpuMs: () => {
      const fields = Deno.readTextFileSync(`/proc/${worker}/stat`).split(") ")[1].split(" ");
      return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (100/s)
    },
    async [Symbol.asyncDispose]() {
      await proxy.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function get(port: number, agent: https.Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port,
        servername: "web.example.com",
        ca: ca.certPem,
        agent,
        path: "/",
        headers: { host: "web.example.com" },
      },
      (res) => {
        res.resume();
        res.on(
          "end",
          () =>
            res.statusCode === 200
              ? resolve(performance.now() - started)
              : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function series(port: number, n: number, keepAlive: boolean): Promise<number[]> {
  const agent = new https.Agent({ keepAlive, maxSockets: 1 });
  const out: number[] = [];
  try {
    for (let i = 0; i < n; i++) out.push(await get(port, agent));
  } finally {
    agent.destroy();
  }
  return out;
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

await using direct = await serve(false);
await using hop = await serve(true);
const samples = {
  direct: { fresh: [] as number[], kept: [] as number[] },
  hop: { fresh: [] as number[], kept: [] as number[] },
};
type Name = "direct" | "hop";
const servers: Record<Name, { port: number; cpuMs: () => number }> = { direct, hop };
const cpu: Record<Name, { fresh: number; kept: number }> = {
  direct: { fresh: 0, kept: 0 },
  hop: { fresh: 0, kept: 0 },
};
for (let r = 0; r < ROUNDS; r++) {
  const order: Name[] = r % 2 === 0 ? ["direct", "hop"] : ["hop", "direct"];
  for (const name of order) {
    let before = servers[name].cpuMs();
    samples[name].fresh.push(...await series(servers[name].port, NEW_CONNECTIONS, false));
    cpu[name].fresh += servers[name].cpuMs() - before;
    before = servers[name].cpuMs();
    samples[name].kept.push(...await series(servers[name].port, KEPT_ALIVE, true));
    cpu[name].kept += servers[name].cpuMs() - before;
  }
}
const figures = [];
for (const name of ["direct", "hop"] as const) {
  for (const kind of ["fresh", "kept"] as const) {
    const label = kind === "fresh" ? "new TLS connection per request" : "kept-alive TLS connection";
    const where = name === "direct"
      ? "no passthrough host"
      : "with a passthrough host (tcp frontend + unix socket hop)";
    figures.push({
      name: `https GET, ${label}, ${where}: p50`,
      unit: "ms",
      value: Number(quantile(samples[name][kind], 0.5).toFixed(3)),
    });
    figures.push({
      name: `https GET, ${label}, ${where}: haproxy CPU per request`,
      unit: "ms",
      value: Number((cpu[name][kind] / samples[name][kind].length).toFixed(4)),
    });
    figures.push({
      name: `https GET, ${label}, ${where}: p99`,
      unit: "ms",
      value: Number(quantile(samples[name][kind], 0.99).toFixed(3)),
    });
  }
}
console.log(JSON.stringify(figures));
