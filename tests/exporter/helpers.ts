/**
 * @module tests/exporter/helpers
 * A real HAProxy with a stats page, a Runtime API socket and one backend of two servers, traffic
 * through it, a TCP server that never answers, and a reader of the Prometheus text format.
 */
import { join } from "node:path";
import {
  type Backend,
  freePorts,
  type Haproxy,
  requestWithHost,
  startBackend,
  startHaproxy,
} from "../../lib/dev/localenv/mod.ts";

export interface StatsProxy extends AsyncDisposable {
  readonly haproxy: Haproxy;
  readonly frontendPort: number;
  readonly statsUrl: string;
  readonly statsSocket: string;
  readonly backends: Backend[];
  close(): Promise<void>;
}

/** haproxy with frontend `web` → backend `app` (servers `a`, `b`, round robin) and a stats listener. */
export async function startStatsProxy(): Promise<StatsProxy> {
  const backends = [await startBackend({ name: "a" }), await startBackend({ name: "b" })];
  const dir = await Deno.makeTempDir({ prefix: "ic-exporter-test-" });
  let haproxy: Haproxy | null = null;
  const close = async () => {
    await haproxy?.stop();
    for (const b of backends) await b.close();
    await Deno.remove(dir, { recursive: true });
  };
  try {
    const [frontendPort, statsPort] = freePorts(2);
    const statsSocket = join(dir, "stats.sock");
    const config = [
      "global",
      `    stats socket "${statsSocket}" mode 600 level user`,
      "defaults",
      "    mode http",
      "    timeout connect 2s",
      "    timeout client 10s",
      "    timeout server 10s",
      "frontend web",
      `    bind 127.0.0.1:${frontendPort}`,
      "    default_backend app",
      "backend app",
      "    balance roundrobin",
      ...backends.map((b) => `    server ${b.name} 127.0.0.1:${b.port}`),
      "listen stats",
      `    bind 127.0.0.1:${statsPort}`,
      "    stats enable",
      "    stats uri /",
      "",
    ].join("\n");
    const path = join(dir, "haproxy.cfg");
    await Deno.writeTextFile(path, config);
    haproxy = await startHaproxy(path);
    return {
      haproxy,
      frontendPort,
      statsUrl: `http://127.0.0.1:${statsPort}/;csv`,
      statsSocket,
      backends,
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** `n` requests through the frontend, each on a fresh connection; returns the status codes. */
export async function sendTraffic(proxy: StatsProxy, n: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) {
    codes.push((await requestWithHost({ address: "127.0.0.1", port: proxy.frontendPort, path: `/r${i}` })).status);
  }
  return codes;
}

/** A TCP server on 127.0.0.1 that accepts connections and never answers. */
export function startSilentServer(): { port: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const c of listener) conns.push(c);
    } catch {
      // closed
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      listener.close();
      await accepting;
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed by the peer
        }
      }
    },
  };
}

/** A sample of the Prometheus text format: `name{labels}` → value. */
export function readExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    out.set(m[1] + (m[2] ?? ""), Number(m[3]));
  }
  return out;
}

/** The metric family names present in an exposition. */
export function familyNames(samples: Map<string, number>): Set<string> {
  return new Set([...samples.keys()].map((k) => k.replace(/\{.*$/, "")));
}

/** CSV rows of the statistics by `pxname/svname`. */
export function csvRows(csv: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of csv.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const cells = line.split(",");
    rows.set(`${cells[0]}/${cells[1]}`, cells);
  }
  return rows;
}

/**
 * Fails instead of hanging when `p` never settles (a timeout that is not applied would hang the
 * suite). A generous fail-safe, not a speed assertion.
 */
export async function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms}ms`)), ms);
  });
  try {
    return await Promise.race([p, watchdog]);
  } finally {
    clearTimeout(timer);
  }
}
