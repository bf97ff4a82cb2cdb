/**
 * @module controller/events
 * Records core/v1 Events on ingresses (invalid values, conflicts, validation failures,
 * refused backends). The same event for the same object is sent once per `dedupMs`, so a
 * failing ingress retried with backoff does not flood the API server. Failures to record are
 * logged, never thrown: an Event is a report, not part of the work.
 *
 * Events go out `SENDING` at a time, as client-go's recorder sends them one by one: a burst (one
 * Event per Ingress of a class whose proxy conflicts) would otherwise take every turn of the
 * client's calls (lib/cluster/client.ts) ahead of the writes that serve traffic. Past
 * `MAX_WAITING` waiting Events, new ones are dropped and counted, as client-go drops them past 1,000.
 */
import { LRUCache } from "lru-cache";
import pLimit from "p-limit";
import { log } from "../log/logger.ts";
import type { Writer } from "./leader.ts";
import { collectionPath, type KubeObject, resources } from "../cluster/resources.ts";

export type EventType = "Normal" | "Warning";

export interface RecordedEvent {
  object: string;
  type: EventType;
  reason: string;
  message: string;
}

/** Events sent at once. */
const SENDING = 2;
/** Events waiting to be sent, at most. */
const MAX_WAITING = 1000;

export class EventRecorder {
  #seen: LRUCache<string, true>;
  #sending = pLimit(SENDING);
  /** Events dropped because `MAX_WAITING` were already waiting. */
  dropped = 0;
  /** The last events recorded (newest last), for logs and tests. */
  readonly recent: RecordedEvent[] = [];

  constructor(readonly client: Writer, readonly component = "ingress-controller", dedupMs = 10 * 60_000) {
    this.#seen = new LRUCache({ max: 10_000, ttl: dedupMs });
  }

  /** Sends the event in the background (the promise is returned for tests). */
  record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const ns = obj.metadata.namespace ?? "default";
    const id = `${obj.metadata.uid}|${type}|${reason}|${message}`;
    const who = `${obj.kind ?? "Object"} ${ns}/${obj.metadata.name}`;
    if (this.#seen.has(id)) return Promise.resolve();
    (type === "Warning" ? log.warn : log.info).call(log, `event ${reason}`, { object: who, message });
    if (this.#sending.pendingCount >= MAX_WAITING) {
      // Logged above; not remembered as sent, so the next occurrence may still be recorded.
      if (this.dropped++ % MAX_WAITING === 0) {
        log.warn("events dropped: too many waiting to be sent", { waiting: MAX_WAITING, dropped: this.dropped });
      }
      return Promise.resolve();
    }
    this.#seen.set(id, true);
    this.recent.push({ object: `${ns}/${obj.metadata.name}`, type, reason, message });
    if (this.recent.length > 200) this.recent.shift();
    const now = new Date().toISOString();
    const event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${obj.metadata.name}.`, namespace: ns },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name,
        namespace: ns,
        uid: obj.metadata.uid,
        resourceVersion: obj.metadata.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: Deno.hostname(),
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    return this.#sending(() => this.client.request("POST", collectionPath(resources.events, ns), { body: event })).then(
      () => {},
      (err) => {
        this.#seen.delete(id);
        log.warn("cannot record event", { object: who, reason, error: err instanceof Error ? err.message : err });
      },
    );
  }
}
