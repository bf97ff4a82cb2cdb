/**
 * @module bench/route_harness
 * What the route benches (route_maps_bench.ts, regex_routes_bench.ts) share: one Service `web` whose
 * only endpoint is a loopback backend, the proxy's desired state of a rendered configuration, a real
 * HAProxy with the proxy's Applier, and a keep-alive GET that returns the status.
 */
import http from "node:http";
import { lookupFromLists, type Rendered } from "../lib/render/mod.ts";
import type { MapFile } from "../lib/render/maps.ts";
import { Applier, type DesiredState } from "../lib/proxy/apply.ts";
import { HAProxy } from "../lib/proxy/haproxy.ts";
import { ensureHaproxy } from "../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../lib/dev/localenv/ports.ts";
import { join } from "node:path";

/** A lookup with the Service `default/web` (port 80) and one endpoint, 127.0.0.1:`port`. */
export function webLookup(port: number): ReturnType<typeof lookupFromLists> {
  return lookupFromLists({
    services: [{ metadata: { namespace: "default", name: "web" }, spec: { ports: [{ port: 80 }] } }],
    endpointSlices: [{
      metadata: { namespace: "default", name: "web-a", labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      ports: [{ name: "", port }],
      endpoints: [{ addresses: ["127.0.0.1"] }],
    }],
  });
}

/** The proxy's desired state for a rendered configuration (no certificates). */
export function desiredOf(r: Rendered): DesiredState {
  return {
    config: r.config,
    crtList: r.crtList,
    pems: new Map(),
    maps: new Map(Object.entries(r.maps)) as Map<MapFile, string>,
  };
}

/** GET `path` on 127.0.0.1:`port` with `host`; resolves with the status. */
export function statusOf(port: number, host: string, path: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, headers: { host }, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A real HAProxy and the proxy's Applier on 127.0.0.1, in a fresh work dir named after `prefix`. */
export async function benchProxy(prefix: string): Promise<{
  haproxy: HAProxy;
  applier: Applier;
  httpPort: number;
  workDir: string;
}> {
  const workDir = await Deno.makeTempDir({ prefix });
  const [httpPort, httpsPort, statsPort] = freePorts(3);
  const certDir = join(workDir, "certs");
  const haproxy = new HAProxy({
    binary: await ensureHaproxy(),
    workDir,
    bindAddress: "127.0.0.1",
    httpPort,
    httpsPort,
    statsPort,
    runtimeSocket: join(workDir, "runtime.sock"),
    certDir,
    accessLog: "null",
  });
  return { haproxy, applier: new Applier({ haproxy, workDir, certDir }), httpPort, workDir };
}
