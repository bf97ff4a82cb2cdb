/**
 * @module audit/settings
 * Plain settings of the auditor (what tests and `createAuditor` use), their effective defaults per
 * release, and the checks that reject nonsensical values at start-up.
 */
import { UsageError } from "../errors.ts";
import type { AuditVersion } from "./serialize.ts";
import { auditVersions } from "./serialize.ts";

export type Mode = "blocking" | "batch";

export interface BatchSettings {
  readonly bufferSize: number;
  readonly maxBatchSize: number;
  /** Milliseconds a partial batch waits for more events; 0 = send what is queued as soon as the backend is free. */
  readonly maxBatchWaitMs: number;
  readonly throttleEnable: boolean;
  /** Batches per second. */
  readonly throttleQPS: number;
  readonly throttleBurst: number;
}

export interface TruncateSettings {
  readonly enabled: boolean;
  readonly maxEventSize: number;
  readonly maxBatchSize: number;
}

interface BackendSettings {
  readonly mode: Mode;
  readonly version: AuditVersion;
  readonly batch: BatchSettings;
  readonly truncate: TruncateSettings;
}

export interface LogSettings extends BackendSettings {
  /** A file path, or `-` for standard output. */
  readonly path: string;
  readonly format: "json" | "legacy";
  /** 0 means lumberjack's default of 100 MB, as kube-apiserver had. */
  readonly maxSizeMB: number;
  readonly maxBackups: number;
  readonly maxAgeDays: number;
}

export interface WebhookSettings extends BackendSettings {
  /** Kubeconfig-format file naming the server, its CA and the client credentials. */
  readonly configFile: string;
  readonly initialBackoffMs: number;
  /** Attempts per batch before it is dropped (kube-apiserver: 5). */
  readonly maxAttempts?: number;
  /** Per-request timeout (kube-apiserver: 30s). */
  readonly requestTimeoutMs?: number;
}

export interface AuditSettings {
  readonly policyFile: string | null;
  readonly log: LogSettings | null;
  readonly webhook: WebhookSettings | null;
  /** How long shutdown() may spend flushing before it drops what is left (default 15s). */
  readonly shutdownTimeoutMs?: number;
}

/** kube-apiserver's webhook batching defaults (also B's log batching defaults). */
export const defaultBatch: BatchSettings = Object.freeze({
  bufferSize: 10000,
  maxBatchSize: 400,
  maxBatchWaitMs: 30_000,
  throttleEnable: true,
  throttleQPS: 10,
  throttleBurst: 15,
});

export const noTruncate: TruncateSettings = Object.freeze({
  enabled: false,
  maxEventSize: 102400,
  maxBatchSize: 10 * 1024 * 1024,
});

export const defaultInitialBackoffMs = 10_000;

/** Throws a UsageError naming the option when a setting cannot work. */
export function checkSettings(s: AuditSettings): void {
  for (const [prefix, b] of [["audit-log", s.log], ["audit-webhook", s.webhook]] as const) {
    if (!b) continue;
    const bad = (opt: string, what: string) =>
      new UsageError(`--${prefix}-${opt}: ${what}; fix the option and restart`);
    if (b.mode !== "blocking" && b.mode !== "batch") throw bad("mode", `"${b.mode}" is not one of batch, blocking`);
    if (!auditVersions.includes(b.version)) {
      throw bad("version", `"${b.version}" is not one of ${auditVersions.join(", ")}`);
    }
    if (b.mode === "batch") {
      if (!(b.batch.bufferSize > 0)) throw bad("batch-buffer-size", `must be positive, got ${b.batch.bufferSize}`);
      if (!(b.batch.maxBatchSize > 0)) throw bad("batch-max-size", `must be positive, got ${b.batch.maxBatchSize}`);
      if (!(b.batch.maxBatchWaitMs >= 0)) throw bad("batch-max-wait", "must not be negative");
      if (b.batch.throttleEnable && !(b.batch.throttleQPS > 0)) {
        throw bad("batch-throttle-qps", `must be positive when throttling is enabled, got ${b.batch.throttleQPS}`);
      }
    }
    if (b.truncate.enabled) {
      if (!(b.truncate.maxEventSize > 0)) throw bad("truncate-max-event-size", "must be positive");
      if (!(b.truncate.maxBatchSize > 0)) throw bad("truncate-max-batch-size", "must be positive");
      if (b.truncate.maxEventSize > b.truncate.maxBatchSize) {
        throw bad("truncate-max-event-size", "must not exceed --" + prefix + "-truncate-max-batch-size");
      }
    }
  }
  if (s.log) {
    if (s.log.path === "") throw new UsageError("--audit-log-path: empty path; give a file or -");
    if (s.log.format !== "json" && s.log.format !== "legacy") {
      throw new UsageError(`--audit-log-format: "${s.log.format}" is not one of json, legacy; fix the option`);
    }
    for (
      const [opt, v] of [["maxsize", s.log.maxSizeMB], ["maxbackup", s.log.maxBackups], ["maxage", s.log.maxAgeDays]]
    ) {
      if (!(Number(v) >= 0)) throw new UsageError(`--audit-log-${opt}: must not be negative, got ${v}`);
    }
  }
  if (s.webhook && !(s.webhook.initialBackoffMs > 0)) {
    throw new UsageError("--audit-webhook-initial-backoff: must be positive; fix the option and restart");
  }
}
