/**
 * @module analytics/analytics
 * The analytics part: when `--enable-analytics` / `--analytics` is on AND the operator set
 * INGRESS_CONTROLLER_ANALYTICS_URL, sends `controller_started`, a `heartbeat` every hour and a
 * best-effort `controller_stopped`. On without an endpoint: one info line, nothing sent, no timer.
 * Off: nothing at all. Delivery never blocks or fails the controller (lib/analytics/sender.ts).
 */
import type { ClusterAccess } from "../cluster/access.ts";
import { ClusterClient } from "../cluster/client.ts";
import { log } from "../log/logger.ts";
import { type AnalyticsEvent, buildEvent, type ClusterFacts, type EventName } from "./event.ts";
import { type ApiReader, readClusterFacts } from "./facts.ts";
import { parseEndpoint, Sender } from "./sender.ts";
import { type AnalyticsSettings, defaultAnalyticsSettings, endpointVariable } from "./settings.ts";

export interface AnalyticsDeps {
  /** Cluster client to read facts with (not closed by stop); else one is created from `kubeConfig`. */
  client?: ApiReader;
  kubeConfig?: ClusterAccess;
  /** Called with every event after it was attempted (tests). */
  onEvent?: (event: AnalyticsEvent, delivered: boolean) => void;
}

export interface AnalyticsHandle {
  /** Whether events are being sent (enabled and an endpoint is set). */
  readonly active: boolean;
  /** Resolves once `controller_started` was attempted (at once when inactive). */
  readonly started: Promise<void>;
  /** Sends `controller_stopped` (bounded by `stopTimeoutMs`) and releases the timer and connections. */
  stop(): Promise<void>;
}

const inactive: AnalyticsHandle = Object.freeze({
  active: false,
  started: Promise.resolve(),
  stop: () => Promise.resolve(),
});

const noFacts: ClusterFacts = { installationId: null, kubernetesVersion: null, counts: null };

export async function startAnalytics(
  partial: Partial<AnalyticsSettings>,
  deps: AnalyticsDeps = {},
): Promise<AnalyticsHandle> {
  const settings: AnalyticsSettings = { ...defaultAnalyticsSettings, ...partial };
  const optionName = settings.release === "C" ? "--analytics" : "--enable-analytics";
  if (!settings.enabled) {
    log.v(1)?.info(`analytics disabled (${optionName}=false): no events are sent`);
    return inactive;
  }
  if (!settings.endpoint) {
    log.info(
      `analytics is enabled but has no endpoint, so no events are sent: set ${endpointVariable} to the analytics ` +
        `service's http(s) URL to send them, or turn analytics off with ${optionName}=false`,
    );
    return inactive;
  }
  const endpoint = parseEndpoint(settings.endpoint);
  if (typeof endpoint === "string") {
    log.warn(`analytics: ${endpointVariable} is ${endpoint}, so no events are sent; set it to an http(s) URL`, {
      scheme: /^[a-z][a-z0-9+.-]*:/i.exec(settings.endpoint)?.[0] ?? "(none)",
    });
    return inactive;
  }
  const ownsClient = !deps.client;
  const client: ApiReader & { close?(): void } = deps.client ?? await ClusterClient.create({
    kubeConfig: deps.kubeConfig,
    qps: settings.qps,
    burst: settings.burst,
    userAgent: `ingress-controller/${settings.version} analytics`,
    requestTimeoutMs: settings.sendTimeoutMs,
  });
  const sender = new Sender(endpoint, { version: settings.version });
  const part = new AnalyticsPart(settings, client, sender, deps.onEvent);
  log.info("analytics enabled: anonymous events are sent (set by " + endpointVariable + ")", {
    endpoint: endpoint.origin,
    heartbeatSeconds: settings.heartbeatMs / 1000,
  });
  const started = part.start();
  return {
    active: true,
    started,
    stop: async () => {
      await part.stop();
      sender.close();
      if (ownsClient) client.close?.();
    },
  };
}

class AnalyticsPart {
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | null = null;
  #stopping = new AbortController();
  #lastFacts: ClusterFacts = noFacts;
  #stopped: Promise<void> | null = null;

  constructor(
    readonly settings: AnalyticsSettings,
    readonly client: ApiReader,
    readonly sender: Sender,
    readonly onEvent?: (event: AnalyticsEvent, delivered: boolean) => void,
  ) {}

  start(): Promise<void> {
    const started = this.#tick("controller_started");
    const timer = setInterval(() => void this.#tick("heartbeat"), this.settings.heartbeatMs);
    // The heartbeat alone never keeps the process alive.
    Deno.unrefTimer(timer);
    this.#timer = timer;
    return started;
  }

  /** Reads fresh facts and sends; a tick still running when the next is due makes that one skip. */
  #tick(name: EventName): Promise<void> {
    if (this.#running || this.#stopping.signal.aborted) return this.#running ?? Promise.resolve();
    const run = (async () => {
      // Cluster reads are bounded like a POST; a stop cancels them at once.
      const reads = new AbortController();
      const timeout = setTimeout(() => reads.abort(new Error("cluster reads timed out")), this.settings.sendTimeoutMs);
      const onStop = () => reads.abort(this.#stopping.signal.reason);
      this.#stopping.signal.addEventListener("abort", onStop, { once: true });
      try {
        this.#lastFacts = await readClusterFacts(this.client, this.settings, reads.signal);
      } finally {
        clearTimeout(timeout);
        this.#stopping.signal.removeEventListener("abort", onStop);
      }
      if (this.#stopping.signal.aborted) return;
      await this.#send(name, this.settings.sendTimeoutMs, this.#stopping.signal);
    })().catch((err) => log.warn("analytics: event not built", { event: name, error: String(err) }))
      .finally(() => {
        this.#running = null;
      });
    this.#running = run;
    return run;
  }

  async #send(name: EventName, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const event = buildEvent(name, this.settings, this.#lastFacts);
    const delivered = await this.sender.send(event, timeoutMs, signal);
    this.onEvent?.(event, delivered);
  }

  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      clearInterval(this.#timer);
      this.#stopping.abort(new Error("analytics stopped"));
      await this.#running;
      // Best effort with the facts of the last heartbeat: no cluster reads while shutting down.
      await this.#send("controller_stopped", this.settings.stopTimeoutMs);
    })();
    return this.#stopped;
  }
}
