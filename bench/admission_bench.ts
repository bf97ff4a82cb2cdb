/**
 * @module bench/admission_bench
 * The validating webhook under maximum-size reviews: `/healthz` latency and the latency of an
 * ordinary small AdmissionReview while 10 clients keep posting AdmissionReviews of ~3 MiB (an
 * UPDATE whose object and oldObject each hold ~1.45 MiB of rules: thousands of hosts, the most
 * expensive shape to parse, check, render and `haproxy -c`), beside the same figures on an idle
 * server. Also counts how the large reviews were answered (decided, 429 busy, 504 late).
 *
 * The secure port is the real one (node:http2 + TLS, authentication, authorization, the review
 * workers, the real haproxy for the xray); the token and access reviews are plain functions
 * (their cached path is serving_bench's subject). The load comes from a second Deno process (this
 * file with `--client`): reviews over HTTP/2 as kube-apiserver sends them (a 429 stream is
 * cancelled and sent again after its Retry-After), probes on a new HTTPS connection each, as the
 * kubelet does. Bounded: `ADMISSION_BENCH_SECONDS` (default 20)
 * of load, loopback only. Last stdout line: JSON array of {name, unit, value}.
 */
import http2 from "node:http2";
import https from "node:https";

/** One client process: the load (parallel large reviews) or one sequential probe. */
interface ClientJob {
  role: "load" | "healthz" | "small";
  port: number;
  token: string;
  /** Load: parallel clients. Probes: requests when idle (no `untilMs`). */
  n: number;
  /** Epoch ms to stop at; 0 for the idle probes. */
  untilMs: number;
}
interface Series {
  p50: number;
  p99: number;
  max: number;
  count: number;
  failed: number;
}
interface LoadResult {
  byStatus: Record<string, number>;
  bytes: number;
}

const PATH = "/apis/admission.ingress-controller.io/v1/ingressvalidators?timeout=10s";

/** An AdmissionReview; `hosts` rules in both object and oldObject (UPDATE) when above 0. */
function review(uid: string, hosts: number): string {
  const rule = (i: number) => ({
    host: `host-${i}.bench.example.com`,
    http: {
      paths: [{ path: `/p${i}`, pathType: "Prefix", backend: { service: { name: `svc-${i}`, port: { number: 80 } } } }],
    },
  });
  const object = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "bench", namespace: "default" },
    spec: { rules: Array.from({ length: Math.max(hosts, 1) }, (_, i) => rule(i)) },
  };
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "networking.k8s.io", version: "v1", kind: "Ingress" },
      resource: { group: "networking.k8s.io", version: "v1", resource: "ingresses" },
      operation: hosts > 0 ? "UPDATE" : "CREATE",
      namespace: "default",
      name: "bench",
      object,
      ...(hosts > 0 ? { oldObject: object } : {}),
    },
  });
}

/** The largest review under the 3 MiB body limit. */
function maxSizeReview(): string {
  let lo = 1, hi = 20_000;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (new TextEncoder().encode(review("x", mid)).length <= 3 * 1024 * 1024 - 4096) lo = mid;
    else hi = mid - 1;
  }
  return review(crypto.randomUUID(), lo);
}

function series(ms: number[], failed: number): Series {
  const s = [...ms].sort((a, b) => a - b);
  const pct = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
  return { p50: pct(50), p99: pct(99), max: s.at(-1) ?? 0, count: s.length, failed };
}

if (Deno.args[0] === "--client") {
  const job = JSON.parse(Deno.args[1]) as ClientJob;
  console.log(JSON.stringify(await client(job)));
  Deno.exit(0);
}

async function client(job: ClientJob): Promise<Series | LoadResult> {
  const auth = { authorization: `Bearer ${job.token}` };
  // As kube-apiserver: reviews over one HTTP/2 connection (Go's client negotiates h2).
  const session = job.role === "healthz"
    ? null
    : http2.connect(`https://127.0.0.1:${job.port}`, { rejectUnauthorized: false });
  const postReview = (body: string) =>
    new Promise<{ status: number; ms: number }>((resolve) => {
      const begin = performance.now();
      const bytes = new TextEncoder().encode(body);
      const req = session!.request({
        ":method": "POST",
        ":path": PATH,
        "content-type": "application/json",
        "content-length": String(bytes.length),
        ...auth,
      });
      let status = 0;
      const done = () => resolve({ status, ms: performance.now() - begin });
      req.on("response", (h) => {
        status = Number(h[":status"]);
        // Answered before the body was taken (429): stop sending it, as Go's client does.
        if (status === 429) req.close(http2.constants.NGHTTP2_CANCEL);
      });
      req.on("data", () => {});
      req.on("close", done);
      req.on("error", () => {});
      req.end(bytes);
    });
  // As the kubelet: each probe on a new connection.
  const probeHealthz = () =>
    new Promise<{ status: number; ms: number }>((resolve) => {
      const begin = performance.now();
      https.get(
        { host: "127.0.0.1", port: job.port, path: "/healthz", agent: false, rejectUnauthorized: false, headers: auth },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - begin }));
        },
      ).on("error", () => resolve({ status: 0, ms: performance.now() - begin }));
    });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const running = () => job.untilMs === 0 || Date.now() < job.untilMs;
  try {
    if (job.role === "load") {
      const big = maxSizeReview();
      const byStatus: Record<string, number> = {};
      await Promise.all(Array.from({ length: job.n }, async () => {
        while (running()) {
          const r = await postReview(big);
          byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
          // Retry-After: 1, as the API server's client honours it.
          if (r.status === 429) await sleep(1000);
        }
      }));
      return { byStatus, bytes: new TextEncoder().encode(big).length };
    }
    // Probes: one request at a time, with a pause between them.
    const one = job.role === "healthz" ? probeHealthz : () => postReview(review(crypto.randomUUID(), 0));
    const gap = job.role === "healthz" ? 20 : 100;
    const ms: number[] = [];
    let failed = 0;
    for (let i = 0; (job.untilMs === 0 ? i < job.n : running()); i++) {
      const r = await one();
      if (r.status === 200) ms.push(r.ms);
      else failed++;
      await sleep(gap);
    }
    return series(ms, failed);
  } finally {
    session?.close();
  }
}

function runClient(job: ClientJob): Promise<Series | LoadResult> {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--client", JSON.stringify(job)],
    stdout: "piped",
    stderr: "inherit",
  }).output().then((out) => {
    if (!out.success) throw new Error(`${job.role} client failed with exit code ${out.code}`);
    return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
  });
}

const { log } = await import("../lib/log/logger.ts");
const { startServing } = await import("../lib/serving/server.ts");
const { defaultSettings } = await import("../lib/serving/settings.ts");
const { admissionRoute } = await import("../lib/admission/handler.ts");
log.configure({ level: "error" });

const loadMs = Number(Deno.env.get("ADMISSION_BENCH_SECONDS") ?? 20) * 1000;
const token = crypto.randomUUID();
const caller = { name: "kube-apiserver-webhook-caller", groups: ["system:authenticated"], extra: {} };
const dir = await Deno.makeTempDir({ prefix: "admission-bench-" });
const route = await admissionRoute({
  review: {
    ingressClass: null,
    restrictToNamespace: null,
    xray: { customTemplates: null, haproxy: "haproxy", timeoutMs: Infinity },
  },
  timeoutSeconds: 10,
});
try {
  const secure = await startServing({
    ...defaultSettings,
    bindAddress: "127.0.0.1",
    certDir: `${dir}/certs`,
    authenticationSkipLookup: true,
  }, {
    ephemeralPorts: true,
    tokenReviewer: (t) =>
      Promise.resolve(t === token ? { authenticated: true, user: caller } : { authenticated: false }),
    accessReviewer: () => Promise.resolve({ allowed: true, reason: "bench" }),
    bodyRoutes: [route],
  });
  try {
    const base = { port: secure.secure!.port, token, untilMs: 0 };
    const idleHealthz = await runClient({ ...base, role: "healthz", n: 200 }) as Series;
    const idleSmall = await runClient({ ...base, role: "small", n: 30 }) as Series;
    const parallel = 10;
    const untilMs = Date.now() + loadMs;
    // The server's own view: how late a 10 ms timer runs on its event loop during the load
    // (hand-made: Deno's perf_hooks.monitorEventLoopDelay misses long blocks).
    const lateness: number[] = [];
    let lastTick = 0;
    const loading = runClient({ ...base, role: "load", n: parallel, untilMs }) as Promise<LoadResult>;
    await new Promise((r) => setTimeout(r, 1500)); // the load is under way
    lastTick = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      lateness.push(Math.max(0, now - lastTick - 10));
      lastTick = now;
    }, 10);
    const [loadHealthz, loadSmall] = await Promise.all([
      runClient({ ...base, role: "healthz", n: 0, untilMs: untilMs - 500 }) as Promise<Series>,
      runClient({ ...base, role: "small", n: 0, untilMs: untilMs - 500 }) as Promise<Series>,
    ]);
    clearInterval(ticker);
    const load = await loading;
    const loop = series(lateness, 0);
    const fmt = (s: Series) =>
      `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${
        s.max.toFixed(1)
      } ms (${s.count} ok, ${s.failed} not 200)`;
    console.error(`bench admission: idle /healthz ${fmt(idleHealthz)}; idle small review ${fmt(idleSmall)}`);
    console.error(
      `bench admission: ${parallel} parallel ${(load.bytes / 1048576).toFixed(2)} MiB reviews for ${loadMs / 1000} s`,
    );
    console.error(`bench admission: under load /healthz ${fmt(loadHealthz)}; small review ${fmt(loadSmall)}`);
    console.error(`bench admission: large reviews answered by status ${JSON.stringify(load.byStatus)}`);
    console.error(
      `bench admission: server event-loop delay under load p99 ${loop.p99.toFixed(1)} ms, max ${
        loop.max.toFixed(1)
      } ms`,
    );
    const r1 = (n: number) => Math.round(n * 10) / 10;
    const large = (status: number) => load.byStatus[status] ?? 0;
    console.log(JSON.stringify([
      { name: "admission_idle_healthz_p99", unit: "ms", value: r1(idleHealthz.p99) },
      { name: "admission_idle_small_review_p50", unit: "ms", value: r1(idleSmall.p50) },
      { name: "admission_idle_small_review_p99", unit: "ms", value: r1(idleSmall.p99) },
      { name: "admission_load10x3mib_healthz_p50", unit: "ms", value: r1(loadHealthz.p50) },
      { name: "admission_load10x3mib_healthz_p99", unit: "ms", value: r1(loadHealthz.p99) },
      { name: "admission_load10x3mib_healthz_max", unit: "ms", value: r1(loadHealthz.max) },
      { name: "admission_load10x3mib_event_loop_delay_p99", unit: "ms", value: r1(loop.p99) },
      { name: "admission_load10x3mib_event_loop_delay_max", unit: "ms", value: r1(loop.max) },
      { name: "admission_load10x3mib_small_review_p50", unit: "ms", value: r1(loadSmall.p50) },
      { name: "admission_load10x3mib_small_review_p99", unit: "ms", value: r1(loadSmall.p99) },
      { name: "admission_load10x3mib_small_review_not_200", unit: "count", value: loadSmall.failed },
      { name: "admission_load10x3mib_large_decided", unit: "count", value: large(200) },
      { name: "admission_load10x3mib_large_busy_429", unit: "count", value: large(429) },
      { name: "admission_load10x3mib_large_late_504", unit: "count", value: large(504) },
    ]));
  } finally {
    await secure.stop();
  }
} finally {
  route.close();
  await Deno.remove(dir, { recursive: true });
}
