/**
 * @module audit/settings
 * Plain settings of the auditor (what tests and `createAuditor` use), their effective defaults per
 * release. The option table (lib/flags/table.ts) is where their values are checked.
 */
import type { AuditVersion } from "./serialize.ts";

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
