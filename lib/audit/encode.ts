/**
 * @module audit/encode
 * Turns events into what a backend sends: JSON items in the backend's API version, with truncation
 * (A) applied: an event over the maximum size loses its request and response objects and is marked
 * `audit.k8s.io/truncated: "true"`, and is dropped if still too large; batches over the maximum batch
 * size are split.
 */
import type { AuditEvent } from "./event.ts";
import { eventsDropped, eventsTruncated } from "./metrics.ts";
import { type AuditVersion, eventJSON } from "./serialize.ts";
import type { TruncateSettings } from "./settings.ts";
import { log } from "../log/logger.ts";
import { everyFewSeconds } from "./throttled_log.ts";

export const truncatedAnnotation = "audit.k8s.io/truncated";

export interface Encoded {
  /** The event as sent (after truncation). */
  readonly event: AuditEvent;
  /** Its JSON in the backend's version. */
  readonly json: string;
}

const encoder = new TextEncoder();
const warnTooLarge = everyFewSeconds();

/** JSON-encodes events, truncating or dropping the ones over the size limit when truncation is on. */
export function encodeEvents(
  events: readonly AuditEvent[],
  version: AuditVersion,
  truncate: TruncateSettings,
  backend: string,
): Encoded[] {
  const out: Encoded[] = [];
  for (const event of events) {
    let json = eventJSON(event, version);
    if (!truncate.enabled || byteLength(json) <= truncate.maxEventSize) {
      out.push({ event, json });
      continue;
    }
    const cut: AuditEvent = {
      ...event,
      requestObject: undefined,
      responseObject: undefined,
      annotations: { ...event.annotations, [truncatedAnnotation]: "true" },
    };
    json = eventJSON(cut, version);
    if (byteLength(json) <= truncate.maxEventSize) {
      eventsTruncated.inc({ backend });
      out.push({ event: cut, json });
      continue;
    }
    eventsDropped.inc({ backend, reason: "too_large" });
    warnTooLarge((suppressed) =>
      log.warn("audit event dropped: over --audit-" + backend + "-truncate-max-event-size even without its objects", {
        auditID: event.auditID,
        bytes: byteLength(json),
        limit: truncate.maxEventSize,
        suppressed,
      })
    );
  }
  return out;
}

/** Splits encoded events into batches whose summed JSON size stays within the maximum batch size. */
export function splitBatches(items: Encoded[], truncate: TruncateSettings): Encoded[][] {
  if (!truncate.enabled) return items.length > 0 ? [items] : [];
  const batches: Encoded[][] = [];
  let current: Encoded[] = [];
  let size = 0;
  for (const item of items) {
    const n = byteLength(item.json);
    if (current.length > 0 && size + n > truncate.maxBatchSize) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += n;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

function byteLength(s: string): number {
  // Fast path: pure ASCII strings have one byte per code unit.
  // deno-lint-ignore no-control-regex
  return /^[\x00-\x7f]*$/.test(s) ? s.length : encoder.encode(s).length;
}
