/**
 * @module bench/serving_bench
 * Requests per second and p50/p99 latency of the secure port on an authenticated (bearer token
 * via TokenReview), authorized (SubjectAccessReview) and therefore cached path (`/version`), at
 * concurrency 64 over HTTP/1.1 keep-alive, beside a plain HTTPS endpoint of the same runtime
 * (node:http2 with allowHTTP1, the same certificate and the same body, no authentication) in
 * the same run. The reviews go to a real kube-apiserver (lib/localenv); after the warm-up every
 * request is answered from the caches, which the bench checks (exactly one review of each kind).
 *
 * The load comes from a second Deno process (this file with `--client`) so that the client does
 * not share the server's event loop. Bounded: at most `SERVING_BENCH_REQUESTS` (default 20000)
 * requests or 15 s per target and round, three rounds interleaved, best round counts; loopback only.
 * Last stdout line: JSON array of {name, unit, value}.
 */
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo } from "node:net";

interface ClientJob {
  port: number;
  path: string;
  token: string | null;
  requests: number;
  concurrency: number;
  maxMs: number;
}
interface ClientResult {
  done: number;
  failed: number;
  seconds: number;
  p50ms: number;
  p99ms: number;
}

if (Deno.args[0] === "--client") {
  const job = JSON.parse(Deno.args[1]) as ClientJob;
  console.log(JSON.stringify(await load(job)));
  Deno.exit(0);
}

/** Runs `concurrency` request loops over keep-alive connections until the count or time is used up. */
async function load(job: ClientJob): Promise<ClientResult> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: job.concurrency, rejectUnauthorized: false });
  const headers: Record<string, string> = job.token ? { Authorization: `Bearer ${job.token}` } : {};
  const latencies: number[] = [];
  let started = 0;
  let failed = 0;
  const t0 = performance.now();
  const deadline = t0 + job.maxMs;
  const one = () =>
    new Promise<void>((resolve) => {
      const begin = performance.now();
      const req = https.request({ host: "127.0.0.1", port: job.port, path: job.path, agent, headers }, (res) => {
        res.on("data", () => {});
        res.on("end", () => {
          if (res.statusCode === 200) latencies.push(performance.now() - begin);
          else failed++;
          resolve();
        });
      });
      req.on("error", () => {
        failed++;
        resolve();
      });
      req.end();
    });
  const loop = async () => {
    while (started < job.requests && performance.now() < deadline) {
      started++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, loop));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { done: latencies.length, failed, seconds, p50ms: pct(50), p99ms: pct(99) };
}

async function runClient(job: ClientJob): Promise<ClientResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--client", JSON.stringify(job)],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`load client failed with exit code ${out.code}`);
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}

const { log } = await import("../lib/log/logger.ts");
const { startServing } = await import("../lib/serving/server.ts");
const { defaultSettings } = await import("../lib/serving/settings.ts");
const { startControlPlane } = await import("../lib/dev/localenv/mod.ts");
log.configure({ level: "warn" });

const requests = Number(Deno.env.get("SERVING_BENCH_REQUESTS") ?? 20_000);
const concurrency = 64;
const maxMs = 15_000;
const rounds = 3;

const cp = await startControlPlane();
const dir = await Deno.makeTempDir({ prefix: "serving-bench-" });
try {
  const post = async (path: string, body: unknown) => {
    const r = await cp.adminFetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    await r.body?.cancel();
    if (r.status !== 201 && r.status !== 409) throw new Error(`POST ${path}: ${r.status}`);
  };
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  await post(`${rbac}/clusterroles`, {
    metadata: { name: "serving-bench-version" },
    rules: [{ nonResourceURLs: ["/version"], verbs: ["get"] }],
  });
  await post(`${rbac}/clusterrolebindings`, {
    metadata: { name: "serving-bench-version" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "serving-bench-version" },
    subjects: [{ kind: "ServiceAccount", name: "bench", namespace: "default" }],
  });
  const token = await cp.mintToken({ serviceAccount: "bench", namespace: "default" });

  const secure = await startServing({
    ...defaultSettings,
    bindAddress: "127.0.0.1",
    certDir: `${dir}/certs`,
    authenticationKubeconfig: cp.adminKubeConfigPath,
    authorizationKubeconfig: cp.adminKubeConfigPath,
    authenticationSkipLookup: true,
    // The figure is the cached path: the caches must outlive the run (the 10 s defaults would expire mid-run).
    authenticationTokenWebhookCacheTtl: 600_000,
    authorizationWebhookCacheAuthorizedTtl: 600_000,
  }, { ephemeralPorts: true });

  // The plain endpoint: same runtime, same server stack and certificate, same body.
  const { Routes } = await import("../lib/serving/routes.ts");
  const routes = new Routes({
    release: "A",
    version: "9.0.0",
    health: secure.health,
    profiler: null,
    swaggerUi: false,
    landingPage: false,
  });
  const version = await routes.answer("GET", new URL("https://localhost/version"));
  const certPem = await Deno.readTextFile(`${dir}/certs/apiserver.crt`);
  const keyPem = await Deno.readTextFile(`${dir}/certs/apiserver.key`);
  const plain = http2.createSecureServer({ cert: certPem, key: keyPem, allowHTTP1: true }, (_req, res) => {
    res.writeHead(200, { "Content-Type": version.contentType, "Content-Length": String(version.body.length) });
    res.end(version.body);
  });
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", r));
  const plainPort = (plain.address() as AddressInfo).port;

  try {
    const targets = [
      { name: "secure", port: secure.secure!.port, token },
      { name: "plain", port: plainPort, token: null },
    ];
    // Warm-up: fills the token and authorization caches and the JIT.
    for (const t of targets) {
      await runClient({ port: t.port, path: "/version", token: t.token, requests: 2000, concurrency, maxMs });
    }
    const best = new Map<string, ClientResult>();
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) {
        const r = await runClient({ port: t.port, path: "/version", token: t.token, requests, concurrency, maxMs });
        console.error(
          `bench serving: round ${round + 1} ${t.name}: ${r.done} ok, ${r.failed} failed in ${
            r.seconds.toFixed(2)
          } s, ` +
            `${(r.done / r.seconds).toFixed(0)} req/s, p50 ${r.p50ms.toFixed(2)} ms, p99 ${r.p99ms.toFixed(2)} ms`,
        );
        if (r.failed > 0) throw new Error(`${t.name}: ${r.failed} requests failed`);
        const prev = best.get(t.name);
        if (!prev || r.done / r.seconds > prev.done / prev.seconds) best.set(t.name, r);
      }
    }
    const tokens = secure.delegation!.authentication.tokens!.reviewsSent;
    const sars = secure.delegation!.authorizer.reviewsSent;
    if (tokens !== 1 || sars !== 1) throw new Error(`expected 1 TokenReview and 1 SAR, saw ${tokens} and ${sars}`);
    console.error(`bench serving: ${tokens} TokenReview and ${sars} SubjectAccessReview for the whole run (cached)`);
    const s = best.get("secure")!;
    const p = best.get("plain")!;
    const rate = (r: ClientResult) => Math.round(r.done / r.seconds);
    const round2 = (n: number) => Math.round(n * 100) / 100;
    console.log(JSON.stringify([
      { name: "serving_secure_cached_rps_c64", unit: "req/s", value: rate(s) },
      { name: "serving_secure_cached_p50_c64", unit: "ms", value: round2(s.p50ms) },
      { name: "serving_secure_cached_p99_c64", unit: "ms", value: round2(s.p99ms) },
      { name: "serving_plain_https_rps_c64", unit: "req/s", value: rate(p) },
      { name: "serving_plain_https_p50_c64", unit: "ms", value: round2(p.p50ms) },
      { name: "serving_plain_https_p99_c64", unit: "ms", value: round2(p.p99ms) },
      { name: "serving_secure_to_plain_rps_ratio", unit: "ratio", value: round2(rate(s) / rate(p)) },
    ]));
  } finally {
    await new Promise<void>((r) => plain.close(() => r()));
    await secure.stop();
  }
} finally {
  await cp.stop();
  await Deno.remove(dir, { recursive: true });
}
