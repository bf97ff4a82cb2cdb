/**
 * @module audit/types
 * The contract between the secure port (serving) and audit: serving begins an audit record per
 * authenticated request, annotates it with the authorization decision and completes it.
 */
import type { RequestAttributes, UserInfo } from "../auth/types.ts";

/** The audit levels a handle can have; `None` never produces a handle. */
export type AuditLevel = "Metadata" | "Request" | "RequestResponse";

/** What serving knows about a request when it begins its audit record. */
export interface AuditRequest {
  /** From the Audit-ID request header if present. */
  auditID?: string;
  method: string;
  requestURI: string;
  verb: string;
  /** Request headers (for X-Forwarded-For, X-Real-Ip, User-Agent). */
  headers: Headers;
  /** Peer IP. */
  remoteAddress: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  objectRef?: RequestAttributes["resource"];
  /** Watch / proxy / profile streams: gets a ResponseStarted stage. */
  longRunning: boolean;
}

export interface Auditor {
  /** False without a policy file. */
  readonly enabled: boolean;
  /** Null when the policy says level None. */
  begin(req: AuditRequest): AuditHandle | null;
  /** Flushes batches. */
  shutdown(): Promise<void>;
}

export interface AuditHandle {
  /** Serving echoes it in the Audit-ID response header. */
  readonly auditID: string;
  readonly level: AuditLevel;
  /** authorization.k8s.io/decision, authorization.k8s.io/reason, … */
  annotate(key: string, value: string): void;
  /** Request level and above. */
  requestBody(body: unknown): void;
  /** Long-running only. */
  responseStarted(): void;
  /** Resolves once written (blocking) or queued (batch). */
  complete(status: number, responseBody?: unknown): Promise<void>;
  panic(err: unknown): Promise<void>;
}
