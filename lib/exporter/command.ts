/**
 * @module exporter/command
 * The hidden `exporter` command (the proxy pod's metrics sidecar): serves HAProxy's statistics in
 * the Prometheus text format at `--telemetry-path` on `--listen-address`, reading them afresh on
 * every scrape (lib/exporter/collect.ts).
 */

import client from "prom-client";
import { SetupError } from "../common/errors.ts";
import { collectProcessMetrics } from "../metrics/process.ts";
import { log } from "../log/logger.ts";
import { HaproxyCollector } from "./collect.ts";
import { parseServerMetricFields } from "./fields.ts";
import { parseListenAddress } from "./listen_address.ts";
import type { ExporterSettings } from "./settings.ts";
import { parseScrapeUri } from "./stats_source.ts";

export interface ExporterHandle extends AsyncDisposable {
  /** The address actually listened on (port resolved when 0 was asked for). */
  readonly hostname: string;
  readonly port: number;
  /** `http://host:port<telemetry path>`, with a loopback host when listening on all interfaces. */
  readonly url: string;
  /** Stops listening, waits for running scrapes, releases the HTTP connections to HAProxy. */
  close(): Promise<void>;
}

const landingPage = (path: string) =>
  `<html><head><title>HAProxy exporter</title></head><body><h1>HAProxy exporter</h1>` +
  `<p><a href="${path.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}">Metrics</a></p></body></html>\n`;

/** The exporter process's own CPU, memory and runtime metrics (process_*, nodejs_*), as the original's. */
let processRegistry: client.Registry | null = null;
function ownProcessMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    collectProcessMetrics(processRegistry);
  }
  return processRegistry;
}

/** Starts serving; validates the settings again (they may come from a test rather than the flags). */
export function startExporter(settings: ExporterSettings): ExporterHandle {
  const uri = parseScrapeUri(settings.scrapeUri);
  const serverMetricFields = parseServerMetricFields(settings.serverMetricFields.join(","));
  const address = parseListenAddress(settings.listenAddress);
  const path = settings.telemetryPath;
  const collector = new HaproxyCollector({ uri, serverMetricFields, timeoutMs: settings.timeoutMs });
  const own = ownProcessMetrics();

  const handler = async (req: Request): Promise<Response> => {
    const { pathname } = new URL(req.url);
    if (req.method !== "GET" && req.method !== "HEAD") {
      return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
    }
    if (pathname === path) {
      const { registry } = await collector.scrape();
      const all = client.Registry.merge([registry, own]);
      return new Response(await all.metrics(), { headers: { "content-type": all.contentType } });
    }
    if (pathname === "/") return new Response(landingPage(path), { headers: { "content-type": "text/html" } });
    return new Response("not found\n", { status: 404 });
  };

  const hosts = address.host === "" || address.host === "0.0.0.0" || address.host === "::"
    ? ["::", "0.0.0.0"] // dual-stack first, as Go's ":port"
    : [address.host];
  let server: Deno.HttpServer<Deno.NetAddr> | null = null;
  let lastError: unknown;
  for (const hostname of hosts) {
    try {
      server = Deno.serve({ hostname, port: address.port, onListen: () => {} }, handler);
      break;
    } catch (err) {
      lastError = err;
      if (!(err instanceof Deno.errors.AddrNotAvailable) && !(err instanceof TypeError)) break;
    }
  }
  if (!server) {
    collector.close();
    throw new SetupError(
      `--listen-address ${settings.listenAddress}: cannot listen (${(lastError as Error).message}); ` +
        `give a free host:port`,
    );
  }
  const s = server;
  const bound = s.addr;
  const urlHost = address.host === "" || address.host === "0.0.0.0"
    ? "127.0.0.1"
    : address.host === "::"
    ? "[::1]"
    : bound.hostname.includes(":")
    ? `[${bound.hostname}]`
    : bound.hostname;
  log.info("exporter listening", {
    address: `${bound.hostname.includes(":") ? `[${bound.hostname}]` : bound.hostname}:${bound.port}`,
    path,
    scrapeUri: settings.scrapeUri,
  });
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      try {
        await s.shutdown();
      } finally {
        collector.close();
      }
    })();
  return {
    hostname: bound.hostname,
    port: bound.port,
    url: `http://${urlHost}:${bound.port}${path}`,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** `ingress-controller exporter`: serves until the signal aborts. */
export async function runExporter(settings: ExporterSettings, signal?: AbortSignal): Promise<void> {
  const handle = startExporter(settings);
  try {
    await new Promise<void>((resolve) => {
      // Without a signal it serves until the process ends.
      if (signal?.aborted) return resolve();
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    log.info("exporter stopping", { reason: String(signal?.reason ?? "done") });
  } finally {
    await handle.close();
  }
}
