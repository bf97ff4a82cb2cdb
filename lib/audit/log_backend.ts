/**
 * @module audit/log_backend
 * The log backend: events as JSON lines (in the configured API version) or legacy text lines,
 * appended to a rotating file or standard output. A batch (or a truncation-split part of one) is one
 * write of whole lines.
 */
import { SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import type { Backend } from "./backend.ts";
import { encodeEvents, splitBatches } from "./encode.ts";
import type { AuditEvent } from "./event.ts";
import { eventsDropped, eventsWritten } from "./metrics.ts";
import { type LineSink, RotatingFile, StdoutSink } from "./rotating_file.ts";
import { eventLegacy } from "./serialize.ts";
import type { LogSettings } from "./settings.ts";
import { everyFewSeconds } from "./throttled_log.ts";

/** lumberjack's size limit when none is given, which kube-apiserver inherited. */
export const defaultMaxSizeMB = 100;

export class LogBackend implements Backend {
  readonly name = "log";
  /** One FIFO writer. */
  readonly inOrder = true;
  readonly #warnFailed = everyFewSeconds();

  private constructor(readonly settings: LogSettings, private readonly sink: LineSink) {}

  static async open(settings: LogSettings, now?: () => number): Promise<LogBackend> {
    if (settings.path === "-") return new LogBackend(settings, new StdoutSink());
    try {
      const file = await RotatingFile.open(settings.path, {
        maxSizeBytes: (settings.maxSizeMB > 0 ? settings.maxSizeMB : defaultMaxSizeMB) * 1024 * 1024,
        maxBackups: settings.maxBackups,
        maxAgeDays: settings.maxAgeDays,
      }, now);
      return new LogBackend(settings, file);
    } catch (err) {
      throw new SetupError(
        `--audit-log-path ${settings.path}: cannot open the audit log (${(err as Error).message}); ` +
          "give a writable file path or -",
      );
    }
  }

  async process(events: AuditEvent[]): Promise<void> {
    const s = this.settings;
    if (s.format === "legacy" && !s.truncate.enabled) {
      // Nothing to measure: the legacy line needs no JSON.
      return await this.#write(events.map((e) => eventLegacy(e) + "\n"));
    }
    const encoded = encodeEvents(events, s.version, s.truncate, this.name);
    for (const batch of splitBatches(encoded, s.truncate)) {
      await this.#write(batch.map((e) => (s.format === "legacy" ? eventLegacy(e.event) : e.json) + "\n"));
    }
  }

  async #write(lines: string[]): Promise<void> {
    try {
      await this.sink.write(lines);
      eventsWritten.inc({ backend: this.name }, lines.length);
    } catch (err) {
      eventsDropped.inc({ backend: this.name, reason: "write_error" }, lines.length);
      this.#warnFailed((suppressed) =>
        log.error("cannot write audit events to --audit-log-path", {
          path: this.settings.path,
          events: lines.length,
          error: (err as Error).message,
          suppressed,
        })
      );
    }
  }

  /** Writes to a file never wait on anything that could be given up. */
  abort(): void {}

  async close(): Promise<void> {
    await this.sink.close();
  }
}
