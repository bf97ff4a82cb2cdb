/**
 * @module audit/settings_from_config
 * Maps the parsed command line of each release onto `AuditSettings`, choosing working values for
 * what a release leaves unset:
 * - C has no log mode (blocking) and no webhook batch options (kube-apiserver's: buffer 10000,
 *   batches of 400, 30s wait, 10 batches/s with burst 15) nor initial backoff (10s).
 * - A's log batching leaves max-wait, throttle qps and burst unset: an unset wait means a batch is
 *   whatever is queued when the writer is free (no waiting); throttling enabled without a rate uses
 *   10 batches/s, burst 15; a burst below 1 is 1.
 * - B and C have no version option: events are written as `audit.k8s.io/v1beta1`, A's default.
 */
import type { AuditVersion } from "./serialize.ts";
import {
  type AuditSettings,
  type BatchSettings,
  defaultBatch,
  defaultInitialBackoffMs,
  type LogSettings,
  type Mode,
  noTruncate,
  type TruncateSettings,
  type WebhookSettings,
} from "./settings.ts";

/** The part of lib/flags/config.ts `Config` this module reads. */
export interface ConfigLike {
  readonly release: "A" | "B" | "C";
  has(name: string): boolean;
  get(name: string): unknown;
}

const defaultVersion: AuditVersion = "audit.k8s.io/v1beta1";

export function settingsFromConfig(config: ConfigLike): AuditSettings {
  const opt = <T>(name: string, fallback: T): T => {
    if (!config.has(name)) return fallback;
    const v = config.get(name);
    return v === null || v === undefined ? fallback : v as T;
  };
  const text = (name: string): string | null => {
    const v = opt<string | null>(name, null);
    return v === null || v === "" ? null : v;
  };

  const batch = (prefix: string, defaults: BatchSettings): BatchSettings => {
    const throttleEnable = opt(`${prefix}-batch-throttle-enable`, defaults.throttleEnable);
    const qps = opt(`${prefix}-batch-throttle-qps`, defaults.throttleQPS);
    const burst = opt(`${prefix}-batch-throttle-burst`, defaults.throttleBurst);
    return {
      bufferSize: opt(`${prefix}-batch-buffer-size`, defaults.bufferSize),
      maxBatchSize: opt(`${prefix}-batch-max-size`, defaults.maxBatchSize),
      maxBatchWaitMs: opt(`${prefix}-batch-max-wait`, defaults.maxBatchWaitMs),
      throttleEnable,
      throttleQPS: throttleEnable && !(qps > 0) ? defaultBatch.throttleQPS : qps,
      throttleBurst: throttleEnable && !(qps > 0) && !(burst > 0) ? defaultBatch.throttleBurst : Math.max(1, burst),
    };
  };
  const truncate = (prefix: string): TruncateSettings => ({
    enabled: opt(`${prefix}-truncate-enabled`, noTruncate.enabled),
    maxEventSize: opt(`${prefix}-truncate-max-event-size`, noTruncate.maxEventSize),
    maxBatchSize: opt(`${prefix}-truncate-max-batch-size`, noTruncate.maxBatchSize),
  });

  const logPath = text("audit-log-path");
  // A's log batching: batches of 1, no wait, no throttle unless asked for.
  const logBatchDefaults: BatchSettings = config.release === "A"
    ? { bufferSize: 10000, maxBatchSize: 1, maxBatchWaitMs: 0, throttleEnable: false, throttleQPS: 0, throttleBurst: 0 }
    : { ...defaultBatch, throttleEnable: false };
  const logSettings: LogSettings | null = logPath === null ? null : {
    path: logPath,
    format: opt("audit-log-format", "json"),
    maxSizeMB: opt("audit-log-maxsize", 0),
    maxBackups: opt("audit-log-maxbackup", 0),
    maxAgeDays: opt("audit-log-maxage", 0),
    mode: opt<Mode>("audit-log-mode", "blocking"),
    version: opt<AuditVersion>("audit-log-version", defaultVersion),
    batch: batch("audit-log", logBatchDefaults),
    truncate: truncate("audit-log"),
  };

  const webhookFile = text("audit-webhook-config-file");
  const webhookSettings: WebhookSettings | null = webhookFile === null ? null : {
    configFile: webhookFile,
    initialBackoffMs: opt("audit-webhook-initial-backoff", defaultInitialBackoffMs),
    mode: opt<Mode>("audit-webhook-mode", "batch"),
    version: opt<AuditVersion>("audit-webhook-version", defaultVersion),
    batch: batch("audit-webhook", defaultBatch),
    truncate: truncate("audit-webhook"),
  };

  return { policyFile: text("audit-policy-file"), log: logSettings, webhook: webhookSettings };
}
