/**
 * @module exporter/collect
 * One scrape of HAProxy as Prometheus metrics: fetch the CSV statistics within the timeout, read
 * each row (Go encoding/csv rules, as haproxy_exporter), and build a fresh prom-client Registry
 * with the frontend, backend and selected server metrics, `haproxy_up` and the exporter's own
 * counters (which live across scrapes).
 */

import client from "prom-client";
import { readCsvRecord } from "../common/gosyntax.ts";
import { log } from "../log/logger.ts";
import {
  backendFields,
  type FieldMetric,
  frontendFields,
  PXNAME,
  serverFields,
  statusUp,
  SVNAME,
  TYPE,
} from "./fields.ts";
import { fetchStats, type StatsUri } from "./stats_source.ts";

export interface CollectorOptions {
  readonly uri: StatsUri;
  /** Server columns to export (see fields.ts); others are left out. */
  readonly serverMetricFields: readonly number[];
  /** Time limit of one read of the statistics in milliseconds; 0 means none. */
  readonly timeoutMs: number;
}

export interface ScrapeResult {
  /** Whether the statistics could be read. */
  readonly up: boolean;
  /** Why not, in one line. */
  readonly error: string | null;
  /** CSV rows or values that could not be read in this scrape. */
  readonly parseFailures: number;
  readonly registry: client.Registry;
}

const rowKinds = {
  "0": { prefix: "frontend", labels: ["frontend"] },
  "1": { prefix: "backend", labels: ["backend"] },
  "2": { prefix: "server", labels: ["backend", "server"] },
} as const;

/** One metric family being filled from the rows of a scrape. */
interface Family {
  readonly spec: FieldMetric;
  readonly labelNames: readonly string[];
  readonly samples: { labels: Record<string, string>; value: number }[];
}

/** Reads HAProxy on every `scrape()`; `close()` releases its HTTP connections. */
export class HaproxyCollector {
  readonly #opts: CollectorOptions;
  readonly #serverFields: Readonly<Record<number, FieldMetric>>;
  readonly #http: Deno.HttpClient | undefined;
  #scrapes = 0;
  #parseFailures = 0;

  constructor(opts: CollectorOptions) {
    this.#opts = opts;
    this.#serverFields = Object.fromEntries(opts.serverMetricFields.map((n) => [n, serverFields[n]]));
    // A fresh connection per scrape: an idle pooled one may be closed by haproxy's old worker
    // during a reload just as the next scrape reuses it.
    this.#http = opts.uri.kind === "http" ? Deno.createHttpClient({ poolMaxIdlePerHost: 0 }) : undefined;
  }

  async scrape(): Promise<ScrapeResult> {
    const started = performance.now();
    this.#scrapes++;
    const families = new Map<string, Family>();
    let up = true;
    let error: string | null = null;
    let failures = 0;
    try {
      const csv = await fetchStats(this.#opts.uri, { timeoutMs: this.#opts.timeoutMs, client: this.#http });
      failures = this.#readCsv(csv, families);
    } catch (err) {
      up = false;
      error = (err as Error).message.split("\n")[0];
      log.error("cannot scrape haproxy", { error });
    }
    this.#parseFailures += failures;
    const registry = new client.Registry();
    for (const [name, f] of families) addFamily(registry, name, f);
    new client.Gauge({ name: "haproxy_up", help: "Was the last scrape of haproxy successful.", registers: [registry] })
      .set(up ? 1 : 0);
    new client.Counter({
      name: "haproxy_exporter_scrapes_total",
      help: "Current total HAProxy scrapes.",
      registers: [registry],
    }).inc(this.#scrapes);
    new client.Counter({
      name: "haproxy_exporter_csv_parse_failures_total",
      help: "Number of errors while parsing CSV.",
      registers: [registry],
    }).inc(this.#parseFailures);
    new client.Gauge({
      name: "haproxy_exporter_scrape_duration_seconds",
      help: "Time this scrape of haproxy took (reading and parsing the statistics).",
      registers: [registry],
    }).set((performance.now() - started) / 1000);
    return { up, error, parseFailures: failures, registry };
  }

  close(): void {
    this.#http?.close();
  }

  /** Adds the samples of every row; returns the number of rows or values that could not be read. */
  #readCsv(csv: string, families: Map<string, Family>): number {
    let failures = 0;
    for (const line of csv.split("\n")) {
      const text = line.endsWith("\r") ? line.slice(0, -1) : line;
      if (text === "" || text.startsWith("#")) continue;
      let row: string[];
      try {
        row = readCsvRecord(text);
      } catch (err) {
        log.warn("cannot read a CSV row of haproxy's statistics", { error: (err as Error).message });
        failures++;
        continue;
      }
      if (row.length <= TYPE) {
        log.warn("haproxy's statistics row has too few fields", { fields: row.length, needed: TYPE + 1 });
        failures++;
        continue;
      }
      const kind = rowKinds[row[TYPE] as keyof typeof rowKinds];
      if (!kind) continue; // listeners (3) and anything newer
      const fields = kind.prefix === "frontend"
        ? frontendFields
        : kind.prefix === "backend"
        ? backendFields
        : this.#serverFields;
      const names = kind.prefix === "server" ? [row[PXNAME], row[SVNAME]] : [row[PXNAME]];
      for (const [column, spec] of Object.entries(fields)) {
        const raw = row[Number(column)];
        if (raw === undefined || raw === "") continue; // older HAProxy or not applicable here
        const value = fieldValue(spec, raw);
        if (value === null) {
          log.warn("cannot read a value of haproxy's statistics", { column: Number(column), value: raw });
          failures++;
          continue;
        }
        const name = `haproxy_${kind.prefix}_${spec.name}`;
        const labelNames = spec.code ? [...kind.labels, "code"] : [...kind.labels];
        let family = families.get(name);
        if (!family) families.set(name, family = { spec, labelNames, samples: [] });
        const labels: Record<string, string> = Object.fromEntries(kind.labels.map((l, i) => [l, names[i]]));
        if (spec.code) labels.code = spec.code;
        family.samples.push({ labels, value });
      }
    }
    return failures;
  }
}

/** The number in a CSV cell, or null when it is not one (counters are never negative). */
function fieldValue(spec: FieldMetric, raw: string): number | null {
  if (spec.value === "status") return statusUp(raw);
  if (!/^-?\d+$/.test(raw)) return null;
  const n = Number(raw);
  if (spec.type === "counter" && n < 0) return null;
  return spec.value === "msToSeconds" ? n / 1000 : n;
}

function addFamily(registry: client.Registry, name: string, f: Family): void {
  const common = { name, help: f.spec.help, labelNames: f.labelNames, registers: [registry] };
  if (f.spec.type === "counter") {
    const c = new client.Counter(common);
    for (const s of f.samples) c.inc(s.labels, s.value);
  } else {
    const g = new client.Gauge(common);
    for (const s of f.samples) g.set(s.labels, s.value);
  }
}
