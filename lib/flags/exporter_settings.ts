/**
 * @module flags/exporter_settings
 * The flags of the hidden `exporter` command, read with the same table engine as `run`, as the
 * camelCase settings object `runExporter` (lib/exporter/command.ts) takes.
 */

import { UsageError } from "../common/errors.ts";
import { parseServerMetricFields } from "../exporter/fields.ts";
import { parseListenAddress } from "../exporter/listen_address.ts";
import type { ExporterSettings } from "../exporter/settings.ts";
import { parseScrapeUri } from "../exporter/stats_source.ts";
import { parseFlags } from "./parse.ts";
import { exporterTable } from "./table.ts";
import { validateFlags } from "./validate.ts";

export type { ExporterSettings };

/** Parses `exporter` flags; returns "help" when --help/-h was given. */
export function parseExporterFlags(argv: readonly string[]): ExporterSettings | "help" {
  const parsed = parseFlags(exporterTable, "A", argv);
  if (parsed.values.get("help") === true) return "help";
  if (parsed.args.length > 0) {
    throw new UsageError(`exporter takes no arguments, got ${JSON.stringify(parsed.args[0])} (options start with --)`);
  }
  validateFlags(exporterTable, parsed);
  const v = parsed.values;
  const scrapeUri = v.get("proxy.scrape-uri") as string;
  parseScrapeUri(scrapeUri);
  const listenAddress = v.get("listen-address") as string;
  parseListenAddress(listenAddress);
  const telemetryPath = v.get("telemetry-path") as string;
  if (!/^\/[\x21-\x7e]*$/.test(telemetryPath)) {
    throw new UsageError(
      `invalid value ${
        JSON.stringify(telemetryPath)
      } for --telemetry-path: give a URL path starting with / (e.g. /metrics)`,
    );
  }
  return Object.freeze({
    scrapeUri,
    serverMetricFields: parseServerMetricFields(v.get("proxy.server-metric-fields") as string),
    // Durations are parsed as bigint nanoseconds.
    timeoutMs: Number(v.get("proxy.timeout") as bigint) / 1e6,
    listenAddress,
    telemetryPath,
  });
}
