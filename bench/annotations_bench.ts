/**
 * @module bench/annotations_bench
 * The cost of annotations on requests: requests/s through a real HAProxy 2.6 to the same test
 * backend for a host whose Ingress sets 20 annotations (HSTS, header edits, CORS, allow/deny lists,
 * rate limits, body limit, timeouts, load balancing, sticky cookie: its backend variant holds ~30
 * rules) against a host whose Ingress sets none, in the same run, alternating rounds; and a host
 * with external authentication (`auth-url`: one auth request per request, through our Lua action
 * and HAProxy's httpclient, to an auth service on a private address that answers 200; loopback
 * addresses are refused as auth targets, so the bench runs in a private network namespace,
 * lib/dev/localenv/netns.ts). 4 keep-alive clients,
 * BENCH_SECONDS (default 2) per round, 3 rounds each. Prints a JSON array of {name, unit, value} as
 * its last stdout line.
 */
import http from "node:http";
import { join } from "node:path";
import { buildModel, loadTemplates, lookupFromLists, render } from "../lib/render/mod.ts";
import { startHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../lib/dev/localenv/ports.ts";
import { startBackend } from "../lib/dev/localenv/backend.ts";
import { luaDirOf, writeLuaFiles } from "../lib/render/lua.ts";
import { privateAddress, runInPrivateNetwork } from "../lib/dev/localenv/netns.ts";

await runInPrivateNetwork(new URL(import.meta.url).pathname);

const SECONDS = Math.min(Number(Deno.env.get("BENCH_SECONDS") ?? 2), 30);
const ROUNDS = 3;
const A = "ingress-controller.io/";

/** 20 annotations that all render into the backend and let every request of the bench through. */
const TWENTY: Record<string, string> = {
  [`${A}hsts`]: "true",
  [`${A}hsts-max-age`]: "31536000",
  [`${A}hsts-include-subdomains`]: "true",
  [`${A}hsts-preload`]: "true",
  [`${A}request-headers-set`]: "X-Env: prod\nX-Team: blue",
  [`${A}request-headers-add`]: "X-Extra: 1",
  [`${A}request-headers-delete`]: "X-Drop",
  [`${A}response-headers-set`]: "X-Frame-Options: DENY",
  [`${A}response-headers-add`]: "X-Served-By: ingress",
  [`${A}response-headers-delete`]: "X-Powered-By",
  [`${A}cors-enable`]: "true",
  [`${A}cors-allow-origin`]: "https://app.example.com, https://*.example.org",
  [`${A}allow-list`]: "127.0.0.0/8, ::1, 10.0.0.0/8",
  [`${A}deny-list`]: "192.0.2.0/24",
  [`${A}rate-limit-rps`]: "1000000",
  [`${A}rate-limit-connections`]: "1000",
  [`${A}max-body-size`]: "8m",
  [`${A}timeout-connect`]: "2s",
  [`${A}load-balance`]: "leastconn",
  [`${A}sticky-cookie`]: "true",
};
if (Object.keys(TWENTY).length !== 20) throw new Error("bug: the bench must set 20 annotations");

const figures: { name: string; unit: string; value: number }[] = [];
const fig = (name: string, unit: string, value: number) => {
  figures.push({ name, unit, value: Math.round(value * 1000) / 1000 });
  console.error(`bench: ${name} = ${value.toFixed(3)} ${unit}`);
};

const web = await startBackend({ name: "web" });
let authRequests = 0;
const authAddress = privateAddress(2);
const auth = Deno.serve({ hostname: authAddress, port: 0, onListen: () => {} }, () => {
  authRequests++;
  return new Response(null, { status: 200, headers: { "X-Auth-Request-User": "bench" } });
});
const ingress = (name: string, host: string, annotations: Record<string, string>) => ({
  metadata: { namespace: "default", name, annotations },
  spec: {
    rules: [{
      host,
      http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] },
    }],
  },
});
const { model, problems } = buildModel({
  ingresses: [
    ingress("plain", "plain.example", {}),
    ingress("tuned", "tuned.example", TWENTY),
    ingress("authed", "authed.example", {
      [`${A}auth-url`]: `http://${authAddress}:${auth.addr.port}/auth`,
      [`${A}auth-response-headers`]: "X-Auth-Request-User",
    }),
  ],
  lookup: lookupFromLists({
    services: [{ metadata: { namespace: "default", name: "web" }, spec: { ports: [{ port: 80 }] } }],
    endpointSlices: [{
      metadata: { namespace: "default", name: "web-a", labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      ports: [{ name: "", port: web.port }],
      endpoints: [{ addresses: ["127.0.0.1"] }],
    }],
  }),
  allowLoopbackEndpoints: true,
});
if (problems.length > 0) throw new Error(`bench objects have problems: ${JSON.stringify(problems)}`);
const rendered = render(model, await loadTemplates(null));
const dir = await Deno.makeTempDir({ prefix: "ic-bench-annotations-" });
const certDir = join(dir, "certs");
await Deno.mkdir(certDir);
await Deno.writeTextFile(join(dir, "haproxy.cfg"), rendered.config);
await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
for (const [file, text] of Object.entries(rendered.maps)) await Deno.writeTextFile(join(certDir, file), text);
await writeLuaFiles(luaDirOf(dir));
const [httpPort, httpsPort, statsPort] = freePorts(3);
const proxy = await startHaproxy(join(dir, "haproxy.cfg"), {
  env: {
    IC_BIND_ADDR: "127.0.0.1",
    IC_HTTP_PORT: String(httpPort),
    IC_HTTPS_PORT: String(httpsPort),
    IC_STATS_PORT: String(statsPort),
    IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
    IC_CERT_DIR: certDir,
    IC_LUA_DIR: luaDirOf(dir),
  },
});

function get(host: string, agent: http.Agent): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: httpPort, path: "/x", headers: { host, origin: "https://app.example.com" }, agent },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Requests/s for `host` over one round; every answer must be the backend's 200. */
async function round(host: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (performance.now() < until) {
      const res = await get(host, agent);
      if (res.statusCode !== 200) throw new Error(`${host}: ${res.statusCode}`);
      done++;
    }
  }));
  agent.destroy();
  return done / SECONDS;
}

try {
  // the annotations really apply on the tuned host (and not on the plain one)
  const probe = await get("tuned.example", new http.Agent());
  if (probe.headers["x-frame-options"] !== "DENY" || !probe.headers["set-cookie"]) {
    throw new Error("the tuned host's annotations are not in effect");
  }
  if ((await get("plain.example", new http.Agent())).headers["x-frame-options"] !== undefined) {
    throw new Error("the plain host got the tuned host's settings");
  }
  // every request of the auth host is authenticated first
  const authProbe = await get("authed.example", new http.Agent());
  if (authProbe.statusCode !== 200 || authRequests !== 1) {
    throw new Error(`the auth host answered ${authProbe.statusCode} after ${authRequests} auth requests`);
  }
  const plain: number[] = [], tuned: number[] = [], authed: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    plain.push(await round("plain.example"));
    tuned.push(await round("tuned.example"));
    authed.push(await round("authed.example"));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  fig("annotations.requests_per_s.none", "req/s", median(plain));
  fig("annotations.requests_per_s.twenty", "req/s", median(tuned));
  fig("annotations.throughput_ratio.twenty_vs_none", "ratio", median(tuned) / median(plain));
  fig("annotations.requests_per_s.ext_auth", "req/s", median(authed));
  fig("annotations.throughput_ratio.ext_auth_vs_none", "ratio", median(authed) / median(plain));
} finally {
  await proxy.stop();
  await web.close();
  await auth.shutdown();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(figures));
