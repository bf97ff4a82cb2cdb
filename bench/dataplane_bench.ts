/**
 * @module bench/dataplane_bench
 * The data plane against HAProxy itself: requests/s and latency through our rendered configuration
 * (a shared proxy serving 1, 1,000 and 10,000 Ingresses, `BENCH_INGRESSES`, each with its own host,
 * Service, EndpointSlice and the same TLS Secret) and through HAProxy 2.6 with a hand-written minimal
 * configuration for the same backends (one frontend, plain and TLS, choosing one backend per host by a
 * map of the Host header, each backend one server, no log), driven by the same load generator (Debian's
 * `wrk`: one thread, 32 keep-alive connections, `BENCH_SECONDS` per run, default 8, the Host rotating over
 * the Ingresses) in alternating runs (`BENCH_ROUNDS`, default 2), in a private network namespace. The
 * backends are an HAProxy that answers 200 at once (`http-request return`), so the figures are the
 * proxy's. Variants: ours with the default JSON access log, ours with `access-log: off`, the minimal
 * configuration, the minimal one with our JSON access log (what HAProxy's own logging costs), and
 * `minimal_one_backend`: every host to one backend, whose server connections every request reuses
 * (what a thousand backends cost HAProxy by themselves). Each proxy runs in a process of its own through
 * lib/proxy/haproxy.ts (bench/dataplane_proxy.ts) whose stdout, where HAProxy writes the access log, is a
 * pipe read by `wc -l`, as a container runtime reads a container's.
 * wrk sends no SNI for an address, so ours serves the Ingresses' certificate as the default one too.
 * Figures: `dataplane.ratio_rps.<variant>.<N>.<http|tls>` (requests/s over the minimal configuration's),
 * `dataplane.ratio_p99.…` (p99 latency over the minimal's: above 1 is slower), `dataplane.ratio_cpu.…`
 * (the proxy's CPU time per request, HAProxy's and the process running it, over the minimal's: what the
 * machine's load moves least), the absolute figures of each variant, and access lines written per
 * request. `BENCH_CALLGRIND=1` adds the instructions HAProxy runs per request of each variant, counted by
 * valgrind (bench/dataplane_instructions.ts: what the machine's load does not move at all), and their
 * ratio to the minimal configuration's. Last stdout line: JSON array of {name, unit, value}.
 */
import { join } from "node:path";
import type { V1Secret } from "@kubernetes/client-node";
import { figureList } from "./figures.ts";
import { createCA, issueCertificate } from "../lib/pki/certs.ts";
import { buildModel, lookupFromLists } from "../lib/render/model.ts";
import { loadTemplates, render } from "../lib/render/render.ts";
import { DEFAULT_PROXY_OPTIONS, JSON_LOG_FORMAT, type ProxyOptions } from "../lib/render/proxy_options.ts";
import { ensureTools } from "../lib/dev/localenv/debian.ts";
import { ensureHaproxy, startHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { haproxyEnv } from "../lib/proxy/haproxy.ts";
import { instructionsPerRequest } from "./dataplane_instructions.ts";
import { privateAddress, runInPrivateNetwork } from "../lib/dev/localenv/netns.ts";
import { freePorts } from "../lib/dev/localenv/ports.ts";
import { log } from "../lib/log/logger.ts";

const SIZES = (Deno.env.get("BENCH_INGRESSES") ?? "1,1000,10000").split(",").map(Number);
const SECONDS = Math.min(Number(Deno.env.get("BENCH_SECONDS") ?? 8), 60);
const ROUNDS = Math.min(Number(Deno.env.get("BENCH_ROUNDS") ?? 2), 10);
const CONNECTIONS = 32;
for (const n of SIZES) if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`BENCH_INGRESSES: ${n}`);

const [wrk] = await ensureTools([{ command: "wrk", package: "wrk" }], "the data-plane bench");
const valgrind = Deno.env.get("BENCH_CALLGRIND") === "1"
  ? (await ensureTools([{ command: "valgrind", package: "valgrind" }], "the data-plane bench's instruction counts"))[0]
  : null;
await runInPrivateNetwork(new URL(import.meta.url).pathname);
log.configure({ level: "warn" });

const { figures, fig } = figureList();
const proxyAddress = privateAddress(2);
const backendAddress = privateAddress(3);
const BACKEND_PORT = 8080;
const templates = await loadTemplates(null);
const ca = await createCA({ commonName: "dataplane-bench-ca" });
const leaf = await issueCertificate(ca, {
  commonName: "*.bench.example",
  dnsNames: ["*.bench.example"],
  usages: ["serverAuth"],
});
const pem = `${leaf.certPem.trimEnd()}\n${leaf.keyPem.trimEnd()}\n`;
const secret: V1Secret = {
  apiVersion: "v1",
  kind: "Secret",
  type: "kubernetes.io/tls",
  metadata: { namespace: "default", name: "bench-tls" },
  data: { "tls.crt": btoa(leaf.certPem), "tls.key": btoa(leaf.keyPem) },
};
const host = (i: number) => `h${i}.bench.example`;

/** The backend of every route: an HAProxy answering 200 at once. */
const backendDir = await Deno.makeTempDir({ prefix: "ic-dataplane-backend-" });
await Deno.writeTextFile(
  join(backendDir, "haproxy.cfg"),
  [
    "defaults",
    "    mode http",
    "    timeout connect 5s",
    "    timeout client 60s",
    "    timeout server 60s",
    "frontend answer",
    `    bind ${backendAddress}:${BACKEND_PORT}`,
    "    http-request return status 200 content-type text/plain string ok",
    "",
  ].join("\n"),
);
const backend = await startHaproxy(join(backendDir, "haproxy.cfg"));

/** A proxy's files: haproxy.cfg, and the crt-list, map and PEM files of certs/. */
interface Layout {
  config: string;
  crtList: string;
  maps: Record<string, string>;
  pems: Record<string, string>;
}

/** Our rendered configuration of `n` Ingresses, one host, Service and EndpointSlice each. */
function ours(n: number, accessLog: ProxyOptions["accessLog"]): Layout {
  const ingresses = Array.from({ length: n }, (_, i) => ({
    metadata: {
      namespace: "default",
      name: `ing${i}`,
      annotations: { "ingress-controller.io/ssl-redirect": "false" },
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)) as unknown as Date,
    },
    spec: {
      tls: [{ hosts: [host(i)], secretName: "bench-tls" }],
      rules: [{
        host: host(i),
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: `svc${i}`, port: { number: 80 } } } }],
        },
      }],
    },
  }));
  const lookup = lookupFromLists({
    services: ingresses.map((_, i) => ({
      metadata: { namespace: "default", name: `svc${i}` },
      spec: { ports: [{ port: 80 }] },
    })),
    endpointSlices: ingresses.map((_, i) => ({
      addressType: "IPv4",
      metadata: { namespace: "default", name: `svc${i}`, labels: { "kubernetes.io/service-name": `svc${i}` } },
      ports: [{ name: "", port: BACKEND_PORT }],
      endpoints: [{ addresses: [backendAddress] }],
    })),
    secrets: [secret],
  });
  const { model } = buildModel({ ingresses, lookup });
  const file = render(model, templates).secrets[0].file!;
  const options: ProxyOptions = {
    ...DEFAULT_PROXY_OPTIONS,
    accessLog,
    defaultCertificate: { file, namespace: "default", name: "bench-tls" },
  };
  const r = render(model, templates, options);
  return { config: r.config, crtList: r.crtList, maps: r.maps as Record<string, string>, pems: { [file]: pem } };
}

/**
 * The hand-written minimal configuration for the same backends as ours: one frontend (plain and TLS) choosing
 * one backend per host by a map of the Host header, each backend one server; optionally our JSON log. With
 * `oneBackend`, every host goes to one backend instead.
 */
function minimal(n: number, withLog: boolean, oneBackend = false): Layout {
  const backends = oneBackend ? 1 : n;
  const lines = [
    "global",
    '    stats socket "${IC_RUNTIME_SOCKET}" mode 600 level admin',
    "defaults",
    "    mode http",
    "    timeout connect 5s",
    "    timeout client 60s",
    "    timeout server 60s",
    "frontend fe",
    '    bind "${IC_BIND_ADDR}:${IC_HTTP_PORT}"',
    '    bind "${IC_BIND_ADDR}:${IC_HTTPS_PORT}" ssl crt "${IC_CERT_DIR}/minimal.pem"',
    ...(withLog
      ? [
        "    log stdout format raw local0 info",
        `    log-format "${JSON_LOG_FORMAT.replace(/["\\]/g, (c) => `\\${c}`)}"`,
        "    http-request set-var(txn.host) req.hdr(host),field(1,:),lower",
        "    http-request set-var(txn.path) path",
      ]
      : []),
    ...(oneBackend
      ? ["    default_backend b0"]
      : ['    use_backend %[req.hdr(host),field(1,:),lower,map_str("${IC_CERT_DIR}/hosts.map")]']),
    ...Array.from({ length: backends }, (_, i) => [`backend b${i}`, `    server s1 ${backendAddress}:${BACKEND_PORT}`])
      .flat(),
    "",
  ];
  const hosts = Array.from({ length: n }, (_, i) => `${host(i)} b${oneBackend ? 0 : i}\n`).join("");
  return {
    config: lines.join("\n"),
    crtList: "",
    maps: oneBackend ? {} : { "hosts.map": hosts },
    pems: { "minimal.pem": pem },
  };
}

interface Proxy {
  name: string;
  http: number;
  https: number;
  /** CPU time (user + system) of its processes so far, ms. */
  cpuMs(): number;
  /** Stops the proxy; resolves with the lines its stdout held. */
  stop(): Promise<number>;
}

/** Writes a configuration's files into a new directory: haproxy.cfg and certs/. */
async function layOut(name: string, files: Layout): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: `ic-dataplane-${name}-` });
  const certDir = join(dir, "certs");
  await Deno.mkdir(certDir);
  await Deno.writeTextFile(join(dir, "haproxy.cfg"), files.config);
  await Deno.writeTextFile(join(certDir, "crt-list"), files.crtList);
  for (const [file, text] of Object.entries({ ...files.maps, ...files.pems })) {
    await Deno.writeTextFile(join(certDir, file), text);
  }
  return dir;
}

/** Lays a configuration out and runs it through bench/dataplane_proxy.ts, stdout to `wc -l`. */
async function startProxy(name: string, files: Layout): Promise<Proxy> {
  const dir = await layOut(name, files);
  const [http, https, stats] = freePorts(3, proxyAddress);
  const count = join(dir, "lines");
  const script = new URL("./dataplane_proxy.ts", import.meta.url).pathname;
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      '"$0" run -A "$1" "$2" "$3" "$4" "$5" "$6" | wc -l > "$7"',
      Deno.execPath(),
      script,
      dir,
      proxyAddress,
      String(http),
      String(https),
      String(stats),
      count,
    ],
    stdin: "piped",
    stderr: "piped",
    stdout: "null",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${name} did not start: ${said}`);
    said += value;
  }
  const drained = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      Deno.stderr.writeSync(new TextEncoder().encode(value));
    }
  })();
  return {
    name,
    http,
    https,
    cpuMs: () => proxyCpuMs(dir),
    stop: async () => {
      await child.stdin.close();
      const status = await child.status;
      await drained;
      if (!status.success) throw new Error(`${name} exited with ${status.code}`);
      const lines = Number((await Deno.readTextFile(count)).trim());
      await Deno.remove(dir, { recursive: true });
      return lines;
    },
  };
}

/**
 * CPU time (user + system, ms) of a proxy's processes: the haproxy processes running `<dir>/haproxy.cfg`
 * (master and workers) and the process running them (bench/dataplane_proxy.ts, whose arguments name `dir`).
 */
function proxyCpuMs(dir: string): number {
  let ms = 0;
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0");
      const haproxy = argv.includes(join(dir, "haproxy.cfg"));
      const runner = argv.includes(dir) && argv.some((a) => a.endsWith("dataplane_proxy.ts")) &&
        argv[0] !== "/usr/bin/sh";
      if (!haproxy && !runner) continue;
      const fields = Deno.readTextFileSync(`/proc/${e.name}/stat`).split(") ")[1].split(" ");
      ms += (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (100/s)
    } catch {
      // gone meanwhile
    }
  }
  return ms;
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** The proxy's CPU time per request (HAProxy and the process running it), µs. */
  cpuUs: number;
  /** Connections the backend accepted per request (1: none kept alive; near 0: reused). */
  backendConns: number;
}

/** Connections the backend HAProxy has accepted so far (`show info` of its worker). */
async function backendConnections(): Promise<number> {
  const info = await backend.masterCommand("@1 show info");
  const m = /^CumConns: (\d+)$/m.exec(info);
  if (!m) throw new Error(`no CumConns in the backend's show info: ${info.slice(0, 200)}`);
  return Number(m[1]);
}

const ROTATE = join(backendDir, "rotate.lua");

/** One wrk run; every answer must be a 200 (else the configuration did not route). */
async function load(p: Proxy, url: string, hosts: number, seconds: number): Promise<Run> {
  const cpuBefore = p.cpuMs();
  const connsBefore = await backendConnections();
  const out = await new Deno.Command(wrk, {
    args: ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", ROTATE, url],
    env: { BENCH_HOSTS: String(hosts) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success || /Non-2xx|Socket errors/.test(text)) throw new Error(`wrk ${url}: ${text}`);
  const ms = (re: RegExp) => {
    const m = re.exec(text);
    if (!m) throw new Error(`wrk output without ${re}: ${text}`);
    return Number(m[1]) * ({ us: 0.001, ms: 1, s: 1000 }[m[2]] ?? NaN);
  };
  const requests = Number(/(\d+) requests in/.exec(text)?.[1]);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1]),
    p50: ms(/^\s+50%\s+([\d.]+)(us|ms|s)\s*$/m),
    p99: ms(/^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m),
    requests,
    cpuUs: (p.cpuMs() - cpuBefore) * 1000 / requests,
    backendConns: (await backendConnections() - connsBefore) / requests,
  };
}

await Deno.writeTextFile(
  ROTATE,
  [
    'local n = tonumber(os.getenv("BENCH_HOSTS"))',
    "local i = 0",
    "request = function()",
    "  i = i + 1",
    '  return wrk.format("GET", "/", { ["Host"] = "h" .. (i % n) .. ".bench.example" })',
    "end",
    "",
  ].join("\n"),
);

/**
 * With `BENCH_ATTRIBUTION=1`, where our rules' cost goes: ours with `access-log: off` less one group of lines
 * (a measurement only: the configuration without them would not do what the README says).
 */
const ATTRIBUTION: [string, RegExp][] = Deno.env.get("BENCH_ATTRIBUTION") === "1"
  ? [
    // templates/request_path.eta: the path normalized and the encoded-slash and dot-segment checks
    ["off_less_normalize", /^ {4}http-request (normalize-uri |deny deny_status 400 if |set-var\(txn\.ic_norm\))/],
    // X-Forwarded-For and X-Forwarded-Proto
    ["off_less_forwarded", /^ {4}(option forwardfor|http-request set-header X-Forwarded-Proto)/],
  ]
  : [];

/** `config` without the lines `drop` matches; throws when it matches none. */
function without(config: string, drop: RegExp): string {
  const lines = config.split("\n");
  const kept = lines.filter((l) => !drop.test(l));
  if (kept.length === lines.length) throw new Error(`no line matches ${drop}`);
  return kept.join("\n");
}

/**
 * With `BENCH_CALLGRIND=1`: the instructions HAProxy runs per request of each variant, plain and TLS
 * (bench/dataplane_instructions.ts), and their ratio to the minimal configuration's.
 */
async function countInstructions(valgrind: string, n: number, layouts: [string, Layout][]): Promise<void> {
  const haproxy = await ensureHaproxy();
  for (const scheme of ["http", "tls"] as const) {
    const counts = new Map<string, number>();
    for (const [name, layout] of layouts) {
      const dir = await layOut(name, layout);
      try {
        const [httpPort, httpsPort, statsPort] = freePorts(3, proxyAddress);
        const env = haproxyEnv({
          bindAddress: proxyAddress,
          httpPort,
          httpsPort,
          statsPort,
          runtimeSocket: join(dir, "runtime.sock"),
          certDir: join(dir, "certs"),
        });
        const origin = scheme === "http"
          ? `http://${proxyAddress}:${httpPort}`
          : `https://${proxyAddress}:${httpsPort}`;
        const count = await instructionsPerRequest({ valgrind, haproxy, dir, env, origin, hosts: n, host });
        counts.set(name, count);
        console.error(`bench: ${n} ${scheme} ${name}: ${Math.round(count)} instructions/request (callgrind)`);
        fig(`dataplane.instructions_per_request.${name}.${n}.${scheme}`, "instructions", Math.round(count));
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
    for (const [name, count] of counts) {
      if (name === "minimal") continue;
      fig(`dataplane.ratio_instructions.${name}.${n}.${scheme}`, "ratio", count / counts.get("minimal")!);
    }
  }
}

/** Proxies without an access log that wrote to stdout all the same. */
const stray: string[] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  for (const n of SIZES) {
    const started = performance.now();
    const off = ours(n, "off");
    const layouts: [string, Layout][] = [
      ["json", ours(n, "json")],
      ["off", off],
      ["minimal", minimal(n, false)],
      ["minimal_json", minimal(n, true)],
      ["minimal_one_backend", minimal(n, false, true)],
      ...ATTRIBUTION.map(([name, drop]): [string, Layout] => [name, { ...off, config: without(off.config, drop) }]),
    ];
    const proxies: Proxy[] = [];
    for (const [name, layout] of layouts) proxies.push(await startProxy(name, layout));
    console.error(
      `bench: ${n} Ingresses rendered and started in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const requests = new Map(proxies.map((p) => [p.name, 0]));
    try {
      for (const scheme of ["http", "tls"] as const) {
        const url = (p: Proxy) =>
          scheme === "http" ? `http://${proxyAddress}:${p.http}/` : `https://${proxyAddress}:${p.https}/`;
        for (const p of proxies) requests.set(p.name, requests.get(p.name)! + (await load(p, url(p), n, 1)).requests);
        const runs = new Map<string, Run[]>(proxies.map((p) => [p.name, []]));
        for (let round = 0; round < ROUNDS; round++) {
          // alternate the order so that load from elsewhere falls on each alike
          const order = round % 2 === 0 ? proxies : [...proxies].reverse();
          for (const p of order) {
            const r = await load(p, url(p), n, SECONDS);
            runs.get(p.name)!.push(r);
            requests.set(p.name, requests.get(p.name)! + r.requests);
            console.error(
              `bench: ${n} ${scheme} ${p.name}: ${r.rps.toFixed(0)} requests/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
                `proxy CPU ${r.cpuUs.toFixed(1)} µs/request, ${r.backendConns.toFixed(3)} backend connections/request`,
            );
          }
        }
        const of = (name: string, k: keyof Run) => median(runs.get(name)!.map((r) => r[k]));
        for (const p of proxies) {
          fig(`dataplane.rps.${p.name}.${n}.${scheme}`, "requests/s", of(p.name, "rps"));
          fig(`dataplane.p50_ms.${p.name}.${n}.${scheme}`, "ms", of(p.name, "p50"));
          fig(`dataplane.p99_ms.${p.name}.${n}.${scheme}`, "ms", of(p.name, "p99"));
          fig(`dataplane.cpu_us_per_request.${p.name}.${n}.${scheme}`, "µs", of(p.name, "cpuUs"));
          fig(
            `dataplane.backend_connections_per_request.${p.name}.${n}.${scheme}`,
            "ratio",
            of(p.name, "backendConns"),
          );
        }
        for (const { name } of proxies.filter((p) => p.name !== "minimal")) {
          fig(`dataplane.ratio_rps.${name}.${n}.${scheme}`, "ratio", of(name, "rps") / of("minimal", "rps"));
          fig(`dataplane.ratio_p99.${name}.${n}.${scheme}`, "ratio", of(name, "p99") / of("minimal", "p99"));
          fig(`dataplane.ratio_cpu.${name}.${n}.${scheme}`, "ratio", of(name, "cpuUs") / of("minimal", "cpuUs"));
        }
      }
    } finally {
      for (const p of proxies) {
        const lines = await p.stop();
        if (p.name === "json" || p.name === "minimal_json") {
          fig(`dataplane.log_lines_per_request.${p.name}.${n}`, "ratio", lines / requests.get(p.name)!);
        } else if (lines !== 0) stray.push(`${p.name} at ${n}: ${lines} lines`);
      }
    }
    if (stray.length > 0) throw new Error(`stdout without an access log is not empty: ${stray.join(", ")}`);
    if (valgrind) await countInstructions(valgrind, n, layouts);
  }
} finally {
  await backend.stop();
  await Deno.remove(backendDir, { recursive: true });
}
console.log(JSON.stringify(figures));
