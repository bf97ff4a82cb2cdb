/**
 * @module audit/webhook_backend
 * The webhook backend: POSTs events as an `audit.k8s.io` EventList, retrying failed requests
 * (network errors, 429 and 5xx) with exponential backoff from `--audit-webhook-initial-backoff`
 * (factor 1.5, up to 20% jitter, 5 attempts, as kube-apiserver does). A batch that still fails is
 * dropped, counted and logged.
 */
import { log } from "../log/logger.ts";
import type { Backend } from "./backend.ts";
import { encodeEvents, splitBatches } from "./encode.ts";
import type { AuditEvent } from "./event.ts";
import { eventsDropped, eventsWritten, webhookErrors, webhookRetries } from "./metrics.ts";
import { eventListJSON } from "./serialize.ts";
import type { WebhookSettings } from "./settings.ts";
import { everyFewSeconds } from "./throttled_log.ts";
import { WebhookClient } from "./webhook_client.ts";
import { pause } from "../runtime/timers.ts";

const backoffFactor = 1.5;
const backoffJitter = 0.2;

export class WebhookBackend implements Backend {
  readonly name = "webhook";
  /** Concurrent requests may arrive in any order. */
  readonly inOrder = false;
  readonly #stop = new AbortController();
  readonly #warnFailed = everyFewSeconds();
  readonly #warnRetry = everyFewSeconds();

  private constructor(readonly settings: WebhookSettings, private readonly client: WebhookClient) {}

  static async open(settings: WebhookSettings): Promise<WebhookBackend> {
    return new WebhookBackend(settings, await WebhookClient.load(settings.configFile));
  }

  async process(events: AuditEvent[]): Promise<void> {
    const s = this.settings;
    const encoded = encodeEvents(events, s.version, s.truncate, this.name);
    for (const batch of splitBatches(encoded, s.truncate)) {
      const body = eventListJSON(batch.map((e) => e.json), s.version);
      const error = await this.#send(body);
      if (error === null) {
        eventsWritten.inc({ backend: this.name }, batch.length);
        continue;
      }
      const reason = this.#stop.signal.aborted ? "shutdown" : "webhook_error";
      eventsDropped.inc({ backend: this.name, reason }, batch.length);
      this.#warnFailed((suppressed) =>
        log.error("audit webhook failed; events dropped", {
          url: this.client.url.href,
          events: batch.length,
          error,
          suppressed,
        })
      );
    }
  }

  /** Sends with retries; returns null on success or the last error. */
  async #send(body: string): Promise<string | null> {
    const attempts = this.settings.maxAttempts ?? 5;
    const timeout = this.settings.requestTimeoutMs ?? 30_000;
    let wait = this.settings.initialBackoffMs;
    let lastError = "not sent";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (this.#stop.signal.aborted) return `${lastError} (shutdown deadline passed)`;
      let retryable = true;
      try {
        const res = await this.client.post(body, timeout, this.#stop.signal);
        if (res.status >= 200 && res.status < 300) return null;
        lastError = `HTTP ${res.status}: ${res.body.slice(0, 200)}`;
        retryable = res.status === 429 || res.status >= 500;
      } catch (err) {
        lastError = (err as Error).message;
      }
      webhookErrors.inc();
      if (!retryable || attempt === attempts) break;
      webhookRetries.inc();
      this.#warnRetry((suppressed) =>
        log.warn("audit webhook request failed; retrying", { error: lastError, attempt, waitMs: wait, suppressed })
      );
      await pause(wait * (1 + Math.random() * backoffJitter), this.#stop.signal);
      wait *= backoffFactor;
    }
    return lastError;
  }

  abort(): void {
    this.#stop.abort();
  }

  close(): Promise<void> {
    this.#stop.abort();
    this.client.close();
    return Promise.resolve();
  }
}
