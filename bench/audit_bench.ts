/**
 * @module bench/audit_bench
 * Audited requests per second through a real HTTPS server (node:https on 127.0.0.1) whose handler
 * calls the Auditor as the secure port does (begin after authentication, annotate with the
 * authorization decision, complete before ending the response), with audit off, the blocking log
 * backend and the batch log backend, in the same run. Each scenario runs a bounded number of
 * requests at a fixed concurrency, three times, interleaved; the best round counts. The figure is the
 * overhead ratio (audited rate / unaudited rate). Last stdout line: JSON array of {name, unit, value}.
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import { createAuditor } from "../lib/audit/auditor.ts";
import { type AuditSettings, defaultBatch, type LogSettings, noTruncate } from "../lib/audit/settings.ts";
import type { Auditor } from "../lib/audit/types.ts";
import { log } from "../lib/log/logger.ts";
import { createCA, issueCertificate } from "../lib/pki/certs.ts";

const requests = Number(Deno.env.get("AUDIT_BENCH_REQUESTS") ?? 10_000);
const concurrency = 32;
const rounds = 3;

log.configure({ level: "warn" });

const dir = await Deno.makeTempDir({ prefix: "audit-bench-" });
const policyFile = `${dir}/policy.yaml`;
await Deno.writeTextFile(
  policyFile,
  `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`,
);

function logSettings(name: string, over: Partial<LogSettings>): LogSettings {
  return {
    path: `${dir}/${name}.log`,
    format: "json",
    maxSizeMB: 100,
    maxBackups: 2,
    maxAgeDays: 0,
    mode: "blocking",
    version: "audit.k8s.io/v1",
    batch: { ...defaultBatch, throttleEnable: false, maxBatchWaitMs: 50 },
    truncate: noTruncate,
    ...over,
  };
}

const scenarios: { name: string; settings: AuditSettings }[] = [
  { name: "off", settings: { policyFile: null, log: null, webhook: null } },
  { name: "log_blocking", settings: { policyFile, log: logSettings("blocking", {}), webhook: null } },
  { name: "log_batch", settings: { policyFile, log: logSettings("batch", { mode: "batch" }), webhook: null } },
];

const ca = await createCA({ commonName: "audit-bench-ca" });
const leaf = await issueCertificate(ca, { commonName: "bench", usages: ["serverAuth"], ipAddresses: ["127.0.0.1"] });
const user = { name: "bench", groups: ["system:authenticated"], extra: {} };
const body = JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Success", code: 200 });

let auditor: Auditor;
const server = https.createServer({ key: leaf.keyPem, cert: leaf.certPem }, async (req, res) => {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
  const handle = auditor.begin({
    auditID: headers.get("audit-id") ?? undefined,
    method: req.method ?? "GET",
    requestURI: req.url ?? "/",
    verb: (req.method ?? "GET").toLowerCase(),
    headers,
    remoteAddress: req.socket.remoteAddress ?? "",
    user,
    longRunning: false,
  });
  handle?.annotate("authorization.k8s.io/decision", "allow");
  handle?.annotate("authorization.k8s.io/reason", "bench");
  await handle?.complete(200, body);
  const extra: Record<string, string> = handle ? { "audit-id": handle.auditID } : {};
  res.writeHead(200, { "content-type": "application/json", ...extra }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca: ca.certPem });

function get(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: "127.0.0.1", port, path, agent, method: "GET" }, (res) => {
      res.resume();
      res.on("end", () => res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)));
    });
    req.on("error", reject);
    req.end();
  });
}

async function run(n: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      next++;
      await get("/apis/networking.k8s.io/v1/ingresses?limit=1");
    }
  }));
  return n / ((performance.now() - start) / 1000);
}

const best = new Map<string, number>();
try {
  auditor = await createAuditor(scenarios[0].settings);
  await run(Math.min(2000, requests)); // warm-up: TLS sessions, JIT
  await auditor.shutdown();
  for (let round = 0; round < rounds; round++) {
    for (const s of scenarios) {
      auditor = await createAuditor(s.settings);
      const rps = await run(requests);
      await auditor.shutdown();
      best.set(s.name, Math.max(best.get(s.name) ?? 0, rps));
      console.error(`audit bench: round ${round + 1} ${s.name}: ${rps.toFixed(0)} requests/s`);
    }
  }
  // The logs must hold what was audited: rounds × requests events × 2 stages.
  for (const name of ["blocking", "batch"]) {
    const text = await Deno.readTextFile(`${dir}/${name}.log`);
    const lines = text.split("\n").filter(Boolean).length;
    if (lines !== rounds * requests * 2) {
      throw new Error(`${name}.log has ${lines} events, expected ${rounds * requests * 2}`);
    }
  }
} finally {
  agent.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await Deno.remove(dir, { recursive: true });
}

const off = best.get("off")!;
const figures = [
  { name: "audit_off_requests_per_second", unit: "requests/s", value: Math.round(off) },
  { name: "audit_log_blocking_requests_per_second", unit: "requests/s", value: Math.round(best.get("log_blocking")!) },
  { name: "audit_log_batch_requests_per_second", unit: "requests/s", value: Math.round(best.get("log_batch")!) },
  { name: "audit_log_blocking_overhead_ratio", unit: "ratio", value: +(best.get("log_blocking")! / off).toFixed(3) },
  { name: "audit_log_batch_overhead_ratio", unit: "ratio", value: +(best.get("log_batch")! / off).toFixed(3) },
];
console.log(JSON.stringify(figures));
