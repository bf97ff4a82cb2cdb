/**
 * @module secure_port
 * The contract between the secure port (lib/serving) and the parts that mount a POST endpoint on
 * it (lib/admission's webhook). Both sides import this module and neither imports the other: the
 * run wiring (lib/app/run.ts) hands the mounts to the serving part.
 */
import type { RunContext } from "./run_part.ts";

/** One HTTP answer. */
export interface Reply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Record<string, string>;
}

/** A Kubernetes `Status` reply (what the API server answers for errors). */
export function statusReply(code: number, reason: string, message: string): Reply {
  const body = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  return { status: code, contentType: "application/json", body: JSON.stringify(body) + "\n" };
}

/** What a body route learns about its request besides the body. */
export interface BodyRequest {
  readonly contentType: string | undefined;
  /** The query string (e.g. the API server's `?timeout=10s` on webhook calls). */
  readonly query: URLSearchParams;
}

/**
 * A POST endpoint on the secure port. It runs after authentication, authorization (always a
 * SubjectAccessReview: `--authorization-always-allow-paths` does not apply to it) and audit;
 * anonymous requests get 401 before the body is read.
 */
export interface BodyRoute {
  readonly path: string;
  /** Larger request bodies get 413 without being read whole (Content-Length is checked first). */
  readonly maxBodyBytes: number;
  /**
   * Optional: an answer given at once, before the body is read (e.g. 429 while the route's queue
   * is full); null to go on. Asked only when the request announces its length (within the limit).
   */
  refuseEarly?(contentLength: number): Reply | null;
  handle(body: Uint8Array<ArrayBuffer>, request: BodyRequest): Promise<Reply>;
}

/** A part's endpoints on the secure port, with what it does once the port serves. */
export interface SecurePortMount {
  readonly routes: readonly BodyRoute[];
  /** Called once the port serves, with its certificate chain (PEM, leaf first); resolves when done. */
  serving(certificateChain: string, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** Prepares a mount before the secure port starts; null when the part is off. */
export type SecurePortMountFactory = (ctx: RunContext) => Promise<SecurePortMount | null>;
