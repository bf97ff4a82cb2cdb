/**
 * @module audit/backend
 * What every audit backend (log file, webhook) and the two delivery modes offer the auditor.
 */
import type { AuditEvent } from "./event.ts";

export interface Backend {
  /** "log" or "webhook": the metrics label and the option prefix in messages. */
  readonly name: "log" | "webhook";
  /** Whether events given in one order are delivered in that order even when processed concurrently. */
  readonly inOrder: boolean;
  /**
   * Delivers the events (blocking mode: awaited by the request; batch mode: by the batch worker).
   * Never rejects: failures are counted as dropped events and logged.
   */
  process(events: AuditEvent[]): Promise<void>;
  /** The shutdown deadline passed: give up waiting (retries) so what is left fails fast. */
  abort(): void;
  /** Releases files and connections; called once nothing is in flight. */
  close(): Promise<void>;
}

/** A delivery mode around a backend. */
export interface Sink {
  readonly name: "log" | "webhook";
  /** Whether offered events are delivered in the order offered. */
  readonly inOrder: boolean;
  /** Resolves once the event is delivered (blocking) or returns at once after queueing or dropping it (batch). */
  offer(event: AuditEvent): Promise<void> | void;
  /** Delivers what is queued (giving up at the deadline), then closes the backend. */
  shutdown(deadline: AbortSignal): Promise<void>;
}
