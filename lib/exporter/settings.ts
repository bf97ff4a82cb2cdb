/**
 * @module exporter/settings
 * What the `exporter` sidecar needs to run, as lib/flags/exporter_settings.ts reads it from its
 * flags; the exporter itself never looks at the option table.
 */

export interface ExporterSettings {
  /** `http(s)://…/;csv` (the stats page) or `unix:/path/to/stats.sock` (`show stat`). */
  readonly scrapeUri: string;
  /** Column numbers of the server metrics to export, ascending. */
  readonly serverMetricFields: readonly number[];
  /** Time limit of one read of HAProxy's statistics in milliseconds; 0 means none. */
  readonly timeoutMs: number;
  /** `host:port`; an empty host listens on every interface. */
  readonly listenAddress: string;
  /** Path of the metrics, starting with `/`. */
  readonly telemetryPath: string;
}
