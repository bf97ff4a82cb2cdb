/**
 * @module exporter/stats_source
 * Reads HAProxy's CSV statistics within a time limit: from the stats page over HTTP(S)
 * (`http://127.0.0.1:56789/;csv`) or with `show stat` on a Runtime API socket
 * (`unix:/path/to/stats.sock`). Connecting, sending and reading all count against the limit.
 */

import { UsageError } from "../common/errors.ts";
import { cliCommand } from "../haproxy/cli_socket.ts";

export type StatsUri =
  | { readonly kind: "http"; readonly url: string }
  | { readonly kind: "unix"; readonly path: string };

/** Parses `--proxy.scrape-uri`: an http(s) URL or `unix:` with an absolute socket path. */
export function parseScrapeUri(text: string, option = "--proxy.scrape-uri"): StatsUri {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (url && (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "") {
    return { kind: "http", url: url.href };
  }
  if (url && url.protocol === "unix:" && url.pathname.startsWith("/") && url.search === "" && url.hash === "") {
    return { kind: "unix", path: decodeURIComponent(url.pathname) };
  }
  throw new UsageError(
    `invalid value ${JSON.stringify(text)} for ${option}: give an http(s) URL of the stats page ` +
      `(e.g. http://127.0.0.1:56789/;csv) or unix:/path/to/stats.sock`,
  );
}

/** Reads the stats through an HTTP client the caller owns (so pooled connections are closed with it). */
export interface StatsFetchOptions {
  /** Time limit in milliseconds; 0 means none. */
  readonly timeoutMs: number;
  readonly client?: Deno.HttpClient;
}

/** Fetches the CSV text; throws with one line saying what failed. */
export async function fetchStats(uri: StatsUri, opts: StatsFetchOptions): Promise<string> {
  const stop = new AbortController();
  const timer = opts.timeoutMs > 0
    ? setTimeout(() => stop.abort(new Error(`no complete answer within ${opts.timeoutMs}ms`)), opts.timeoutMs)
    : undefined;
  try {
    return uri.kind === "http"
      ? await fetchHttp(uri.url, stop.signal, opts.client)
      : await cliCommand(uri.path, "show stat", { signal: stop.signal, timeoutMs: 0 });
  } catch (err) {
    // An abort rejects with the reason given above; say where we were reading from.
    const reason = (stop.signal.aborted ? stop.signal.reason : err) as Error;
    const where = uri.kind === "http" ? uri.url : `unix:${uri.path}`;
    // fetch() says only "fetch failed"; the cause names the network error.
    const cause = reason.cause instanceof Error ? ` (${reason.cause.message})` : "";
    throw new Error(`${where}: ${reason.message ?? String(reason)}${cause}`);
  } finally {
    clearTimeout(timer);
  }
}

async function fetchHttp(url: string, signal: AbortSignal, client?: Deno.HttpClient): Promise<string> {
  const res = await fetch(url, { signal, client, headers: { accept: "text/plain, text/csv, */*" } });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`HTTP status ${res.status}`);
  }
  // The signal also aborts reading the body.
  return await res.text();
}
