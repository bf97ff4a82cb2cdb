/**
 * @module exporter/fields
 * Which columns of HAProxy's CSV statistics become which Prometheus metric, with the names,
 * labels and types of the Prometheus haproxy_exporter, for frontends, backends and servers; and
 * the `--proxy.server-metric-fields` list (0-based column numbers of the server metrics to export).
 */

import { UsageError } from "../common/errors.ts";

/** What one CSV column becomes. */
export interface FieldMetric {
  /** Name after `haproxy_<frontend|backend|server>_`. */
  readonly name: string;
  readonly help: string;
  readonly type: "gauge" | "counter";
  /** The `code` label of the HTTP response class columns. */
  readonly code?: string;
  /** How the CSV text becomes the value: integer (default), status (1 = up), milliseconds → seconds. */
  readonly value?: "status" | "msToSeconds";
}

/** Column numbers (0-based) of the CSV fields the exporter reads besides the metric columns. */
export const PXNAME = 0;
export const SVNAME = 1;
/** 0 = frontend, 1 = backend, 2 = server, 3 = listener. */
export const TYPE = 32;

type Table = Readonly<Record<number, FieldMetric>>;

const gauge = (name: string, help: string, value?: FieldMetric["value"]): FieldMetric => ({
  name,
  help,
  type: "gauge",
  ...(value ? { value } : {}),
});
const counter = (name: string, help: string): FieldMetric => ({ name, help, type: "counter" });

/** hrsp_1xx … hrsp_other (columns 39–44). */
const httpResponses: Table = Object.fromEntries(
  ["1xx", "2xx", "3xx", "4xx", "5xx", "other"].map((code, i) => [
    39 + i,
    { name: "http_responses_total", help: "Total of HTTP responses.", type: "counter", code },
  ]),
);

const compression: Table = {
  51: counter("compressor_bytes_in_total", "Number of HTTP response bytes fed to the compressor"),
  52: counter("compressor_bytes_out_total", "Number of HTTP response bytes emitted by the compressor"),
  53: counter("compressor_bytes_bypassed_total", "Number of bytes that bypassed the HTTP compressor"),
  54: counter("http_responses_compressed_total", "Number of HTTP responses that were compressed"),
};

const averages: Table = {
  58: gauge(
    "http_queue_time_average_seconds",
    "Avg. HTTP queue time for last 1024 successful connections.",
    "msToSeconds",
  ),
  59: gauge(
    "http_connect_time_average_seconds",
    "Avg. HTTP connect time for last 1024 successful connections.",
    "msToSeconds",
  ),
  60: gauge(
    "http_response_time_average_seconds",
    "Avg. HTTP response time for last 1024 successful connections.",
    "msToSeconds",
  ),
  61: gauge(
    "http_total_time_average_seconds",
    "Avg. HTTP total time for last 1024 successful connections.",
    "msToSeconds",
  ),
};

/** Columns 4–9, the same for frontends, backends and servers. */
const sessions: Table = {
  4: gauge("current_sessions", "Current number of active sessions."),
  5: gauge("max_sessions", "Maximum observed number of active sessions."),
  6: gauge("limit_sessions", "Configured session limit."),
  7: counter("sessions_total", "Total number of sessions."),
  8: counter("bytes_in_total", "Current total of incoming bytes."),
  9: counter("bytes_out_total", "Current total of outgoing bytes."),
};

/** Columns 13–16 of backends and servers. */
const errors: Table = {
  13: counter("connection_errors_total", "Total of connection errors."),
  14: counter("response_errors_total", "Total of response errors."),
  15: counter("retry_warnings_total", "Total of retry warnings."),
  16: counter("redispatch_warnings_total", "Total of redispatch warnings."),
};

const selected: Table = {
  30: counter(
    "server_selected_total",
    "Total number of times a server was selected, either for new sessions, or when re-dispatching.",
  ),
};

const aborts: Table = {
  49: counter("client_aborts_total", "Total number of data transfers aborted by the client."),
  50: counter("server_aborts_total", "Total number of data transfers aborted by the server."),
};

export const frontendFields: Table = {
  ...sessions,
  10: counter("requests_denied_total", "Total of requests denied for security."),
  12: counter("request_errors_total", "Total of request errors."),
  33: gauge("current_session_rate", "Current number of sessions per second over last elapsed second."),
  34: gauge("limit_session_rate", "Configured limit on new sessions per second."),
  35: gauge("max_session_rate", "Maximum observed number of sessions per second."),
  ...httpResponses,
  48: counter("http_requests_total", "Total HTTP requests."),
  ...compression,
  79: counter("connections_total", "Total number of connections."),
};

export const backendFields: Table = {
  2: gauge("current_queue", "Current number of queued requests not assigned to any server."),
  3: gauge("max_queue", "Maximum observed number of queued requests not assigned to any server."),
  ...sessions,
  ...errors,
  17: gauge("up", "Current health status of the backend (1 = UP, 0 = DOWN).", "status"),
  18: gauge("weight", "Total weight of the servers in the backend."),
  19: gauge("current_server", "Current number of active servers"),
  ...selected,
  33: gauge("current_session_rate", "Current number of sessions per second over last elapsed second."),
  35: gauge("max_session_rate", "Maximum number of sessions per second."),
  ...httpResponses,
  ...aborts,
  ...compression,
  ...averages,
};

/** Every server metric; `--proxy.server-metric-fields` picks among these. */
export const serverFields: Table = {
  2: gauge("current_queue", "Current number of queued requests assigned to this server."),
  3: gauge("max_queue", "Maximum observed number of queued requests assigned to this server."),
  ...sessions,
  ...errors,
  17: gauge("up", "Current health status of the server (1 = UP, 0 = DOWN).", "status"),
  18: gauge("weight", "Current weight of the server."),
  21: counter("check_failures_total", "Total number of failed health checks."),
  24: counter("downtime_seconds_total", "Total downtime in seconds."),
  ...selected,
  33: gauge("current_session_rate", "Current number of sessions per second over last elapsed second."),
  35: gauge("max_session_rate", "Maximum observed number of sessions per second."),
  38: gauge("check_duration_seconds", "Previously run health check duration, in seconds", "msToSeconds"),
  ...httpResponses,
  ...aborts,
  ...averages,
};

/** Server field numbers in ascending order. */
export const knownServerFields: readonly number[] = Object.keys(serverFields).map(Number).sort((a, b) => a - b);

/**
 * `--proxy.server-metric-fields`: comma-separated column numbers, each a known server field.
 * Empty means no server metrics. Returns the numbers ascending, without repeats.
 */
export function parseServerMetricFields(text: string, option = "--proxy.server-metric-fields"): readonly number[] {
  if (text.trim() === "") return Object.freeze([]);
  const picked = new Set<number>();
  for (const part of text.split(",")) {
    const item = part.trim();
    if (!/^\d{1,3}$/.test(item)) {
      throw new UsageError(
        `invalid value ${JSON.stringify(text)} for ${option}: ${JSON.stringify(item)} is not a field number ` +
          `(comma-separated numbers of: ${knownServerFields.join(",")})`,
      );
    }
    const n = Number(item);
    if (!Object.hasOwn(serverFields, n)) {
      throw new UsageError(
        `invalid value ${JSON.stringify(text)} for ${option}: ${n} is not a server metric field ` +
          `(known: ${knownServerFields.join(",")})`,
      );
    }
    picked.add(n);
  }
  return Object.freeze([...picked].sort((a, b) => a - b));
}

/**
 * The status column as haproxy_exporter reads it: UP (also "UP 1/3" while rising), OPEN, DRAIN
 * and "no check" are up; DOWN, NOLB, MAINT (any form) and anything else are down.
 */
export function statusUp(text: string): 0 | 1 {
  return /^(UP|OPEN|DRAIN|no check)\b/.test(text) ? 1 : 0;
}
