/**
 * GRPCRoutes through the real haproxy: GRPCRoute objects → buildGateway → renderGateway → `haproxy
 * -c` → haproxy serving calls made as gRPC clients make them (HTTP/2 without TLS with prior
 * knowledge, POST `/<service>/<method>`, `content-type: application/grpc`, metadata as headers) to
 * small backends on addresses of a private network namespace, spoken to in h2c. Checks method and
 * header matching, the gRPC precedence, the 404 an unmatched call gets (a gRPC client reads it as
 * UNIMPLEMENTED), the 503 with `grpc-status: 14` (UNAVAILABLE) of a rule without a usable backend,
 * and that an HTTP/1.1 client on the same port is still served. Outside a private network
 * namespace, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { type Backend as TestBackend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { GRPCRouteRule } from "../../lib/gateway/api.ts";
import { build, gateway, grpcRoute, http, NS, route } from "./fixtures.ts";
import { checkRendered, proxyEnv, writeRendered } from "./render_fixtures.ts";

interface Answer {
  /** "2" for HTTP/2, "1.1" for HTTP/1.1. */
  version: string;
  status: number;
  grpcStatus: string | null;
  /** The test backend's name, or null when haproxy answered itself. */
  backend: string | null;
}

/**
 * One call as a gRPC client makes it (`http1`: a plain HTTP/1.1 GET instead). `empty`: the call
 * ends with its headers, without a message: for the calls haproxy answers by itself (404, 503), it
 * answers on the headers and resets the stream, and curl, still sending the message, may then
 * report the reset without the answer it had (a gRPC client reads the answer: the suite's
 * UNIMPLEMENTED cases).
 */
async function call(
  port: number,
  path: string,
  opts: { host?: string; metadata?: Record<string, string>; http1?: boolean; empty?: boolean } = {},
): Promise<Answer> {
  const args = ["-sS", "-D", "-", "-H", `Host: ${opts.host ?? "rpc.example"}`];
  if (!opts.http1) {
    args.push("--http2-prior-knowledge", "-X", "POST", "-H", "content-type: application/grpc", "-H", "te: trailers");
    if (!opts.empty) args.push("--data-binary", "@-");
  }
  for (const [k, v] of Object.entries(opts.metadata ?? {})) args.push("-H", `${k}: ${v}`);
  args.push("-w", "\n%{http_version}", `http://127.0.0.1:${port}${path}`);
  const child = new Deno.Command("curl", { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  // a gRPC message frame: not compressed, length 0 (an empty request message)
  if (!opts.http1 && !opts.empty) await w.write(new Uint8Array([0, 0, 0, 0, 0]));
  await w.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  const status = Number(/^HTTP\/[0-9.]+ (\d{3})/m.exec(text)?.[1]);
  // haproxy's own answers (404, 503) come before it read the call's message; it then resets the
  // stream, as RFC 9113 §8.1 lets a server that answered in full (curl exits 92 on the reset, a gRPC
  // client has its status from the answer's END_STREAM headers already)
  const reset = out.code === 92 && status >= 400;
  assert.ok(out.code === 0 || reset, new TextDecoder().decode(out.stderr));
  const grpcStatus = /^grpc-status: *(\S+)/mi.exec(text)?.[1] ?? null;
  const backend = /"name":"([a-z]+)"/.exec(text)?.[1] ?? null;
  return { version: text.trimEnd().split("\n").at(-1)!, status, grpcStatus, backend };
}

/** A Service `name` (port 8080, no appProtocol) whose one endpoint is the test backend `b`. */
function serviceOf(name: string, b: TestBackend): { service: V1Service; slice: V1EndpointSlice } {
  return {
    service: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: NS },
      spec: { ports: [{ name: "grpc", port: 8080, targetPort: b.port }] },
    } as V1Service,
    slice: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: `${name}-x`, namespace: NS, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "grpc", port: b.port }],
      endpoints: [{ addresses: [b.address], conditions: { ready: true } }],
    },
  };
}

const SVC = "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho";
const to = (svc: string, more: Partial<GRPCRouteRule> = {}): GRPCRouteRule => ({
  backendRefs: [{ name: svc, port: 8080 }],
  ...more,
});

if (!inPrivateNetwork()) {
  Deno.test("GRPCRoute traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("GRPCRoutes rendered for the real haproxy serve gRPC calls (h2c in and out)", async (t) => {
    const servers: TestBackend[] = [];
    for (const [i, name] of ["alpha", "beta", "gamma"].entries()) {
      servers.push(await startBackend({ name, host: privateAddress(30 + i) }));
    }
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-grpc-" });
    try {
      const made = servers.map((s) => serviceOf(s.name, s));
      const b = build(gateway([http("http")]), {
        grpcRoutes: [
          grpcRoute("rpc", [
            to("alpha", { matches: [{ method: { service: SVC, method: "Echo" } }] }),
            to("beta", { matches: [{ method: { service: SVC, method: "EchoTwo" } }] }),
            to("gamma", { matches: [{ headers: [{ name: "version", value: "two" }] }] }),
            to("alpha", { matches: [{ method: { service: "pkg.Service" } }] }),
            to("missing", { matches: [{ method: { service: "pkg.Broken" } }] }),
          ], { hostnames: ["rpc.example"] }),
        ],
        routes: [route("web", [{ backendRefs: [{ name: "beta", port: 8080 }] }], { hostnames: ["web.example"] })],
        services: made.map((m) => m.service),
        endpointSlices: made.map((m) => m.slice),
      });
      const rendered = renderGateway(b.proxy, await loadTemplates(null));
      await t.step("haproxy -c accepts the configuration; GRPCRoute backends are spoken to in h2c", async () => {
        const check = await checkRendered(rendered);
        assert.equal(check.ok, true, check.output);
        assert.match(rendered.config, /server .* proto h2/);
      });
      await writeRendered(dir, rendered, {});
      const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56788) });
      const p80 = containerPort(80);
      try {
        await t.step("service and method: each call to its backend, over HTTP/2 without TLS", async () => {
          assert.deepEqual(await call(p80, `/${SVC}/Echo`), {
            version: "2",
            status: 200,
            grpcStatus: null,
            backend: "alpha",
          });
          assert.equal((await call(p80, `/${SVC}/EchoTwo`)).backend, "beta");
          assert.equal((await call(p80, "/pkg.Service/Anything")).backend, "alpha");
        });
        await t.step("metadata: a header match takes the calls no method match of more characters takes", async () => {
          assert.equal((await call(p80, "/other.Svc/M", { metadata: { Version: "two" } })).backend, "gamma");
          // a method match has precedence over header matches
          assert.equal((await call(p80, `/${SVC}/Echo`, { metadata: { version: "two" } })).backend, "alpha");
        });
        await t.step("no match: 404, which a gRPC client reads as UNIMPLEMENTED", async () => {
          const a = await call(p80, `/${SVC}/EchoThree`, { empty: true });
          assert.deepEqual([a.status, a.backend], [404, null]);
          assert.equal((await call(p80, `/${SVC}/Echo`, { host: "other.example", empty: true })).status, 404);
        });
        await t.step("no usable backend: 503 with grpc-status 14 (UNAVAILABLE)", async () => {
          const a = await call(p80, "/pkg.Broken/M", { empty: true });
          assert.deepEqual([a.status, a.grpcStatus, a.backend], [503, "14", null]);
        });
        await t.step("an HTTP/1.1 client on the same port is served by its HTTPRoute", async () => {
          assert.deepEqual(await call(p80, "/", { host: "web.example", http1: true }), {
            version: "1.1",
            status: 200,
            grpcStatus: null,
            backend: "beta",
          });
        });
      } finally {
        await proxy.stop();
      }
    } finally {
      for (const s of servers) await s.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
