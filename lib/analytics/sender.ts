/**
 * @module analytics/sender
 * Delivers one analytics event: a POST of its JSON to the configured endpoint, bounded by a
 * timeout, never retried (the next heartbeat is the retry), never thrown to the caller. Failures
 * are counted and logged at most once per hour with the number suppressed since. Redirects are
 * refused so events only ever reach the host the operator configured; idle connections are not
 * kept between events (an hour apart).
 */
import { everyFewSeconds } from "../audit/throttled_log.ts";
import { log } from "../log/logger.ts";
import type { AnalyticsEvent } from "./event.ts";
import { eventsSent, sendFailures } from "./metrics.ts";

export class Sender {
  readonly endpoint: URL;
  #client: Deno.HttpClient;
  #userAgent: string;
  #warnGate: (emit: (suppressed: number) => void) => void;
  #closed = false;

  constructor(endpoint: URL, opts: { version: string; failureLogIntervalMs?: number }) {
    this.endpoint = endpoint;
    this.#client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
    this.#userAgent = `ingress-controller/${opts.version} analytics`;
    this.#warnGate = everyFewSeconds(opts.failureLogIntervalMs ?? 3_600_000);
  }

  /** Posts `event`; resolves true when the endpoint answered 2xx. Never rejects. */
  async send(event: AnalyticsEvent, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#closed) return false;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => abort.abort(signal?.reason ?? new Error("stopped"));
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await fetch(this.endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": this.#userAgent },
        body: JSON.stringify(event),
        redirect: "error",
        signal: abort.signal,
        client: this.#client,
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`answered ${res.status} ${res.statusText}`.trim());
      eventsSent.inc({ event: event.event });
      log.v(4)?.info("analytics event sent", { event: event.event, endpoint: this.endpoint.origin });
      return true;
    } catch (err) {
      sendFailures.inc();
      const reason = abort.signal.aborted ? abort.signal.reason : err;
      if (signal?.aborted) {
        // Abandoned because the part stops: not the endpoint's fault, no warning.
        log.v(2)?.info("analytics: event abandoned at stop", { event: event.event });
        return false;
      }
      this.#warnGate((suppressed) =>
        log.warn("analytics: event not delivered (not retried; the next heartbeat tries again)", {
          event: event.event,
          endpoint: this.endpoint.origin,
          error: this.#oneLine(reason),
          ...(suppressed > 0 && { failuresNotLogged: suppressed }),
        })
      );
      return false;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.close();
  }

  // The endpoint's path or query may carry a key: error texts show its origin only.
  #oneLine(err: unknown): string {
    const text = err instanceof Error ? err.message : String(err);
    return text.replaceAll(this.endpoint.href, this.endpoint.origin).split("\n")[0].slice(0, 300);
  }
}

/** The endpoint as a URL when it is an absolute http(s) URL, else the reason it is not usable. */
export function parseEndpoint(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `scheme ${url.protocol} is not http: or https:`;
  return url;
}
