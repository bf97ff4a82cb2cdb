/**
 * @module render/proxy_options
 * The proxy-wide settings of one proxy group (global ConfigMap, overridden by the class's
 * parameters: lib/controller/global_settings.ts) as the templates place them: timeouts in the
 * `defaults` section, `maxconn`, TLS floor and ciphers, ALPN, the default certificate, the
 * sources whose PROXY protocol header the public listeners read, and the access log. The log
 * formats are constants of this file: no cluster value ever reaches a `log-format` string; the
 * only variable parts are the format's name and a sampling ratio. HAProxy writes the lines to its
 * own stdout, the proxy container's, with no process in between (docs/access-log.md).
 * Every value is checked again here with an anchored pattern, so a caller that skipped the
 * parser cannot put a raw string into the configuration.
 */
import type { Cidr } from "../annotations/values.ts";
import { PEM_FILE } from "./patterns.ts";
import { quantityValue } from "../cluster/quantity.ts";

export type AccessLog = "json" | "text" | "off";
export type SslVersion = "TLSv1.0" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";

export interface ProxyOptions {
  /** HAProxy time values (`5s`, `250ms`, `1m`), one per `timeout` of the defaults section. */
  timeouts: { connect: string; client: string; server: string; httpRequest: string; tunnel: string };
  /** Global `maxconn`; null: HAProxy's default (from the file-descriptor limit). */
  maxconn: number | null;
  sslMinVersion: SslVersion;
  /** OpenSSL cipher list for TLS ≤ 1.2; null: HAProxy's default. */
  sslCiphers: string | null;
  /** TLS 1.3 cipher suites; null: HAProxy's default. */
  sslCiphersuites: string | null;
  /** Offer HTTP/2 by ALPN on the HTTPS frontend. */
  http2: boolean;
  accessLog: AccessLog;
  /** Percentage of requests logged, 1-100 (N of every 100: a counter, not a dice). */
  accessLogSample: number;
  /** Served for TLS connections whose SNI matches no certificate; null: the first certificate. */
  defaultCertificate: { file: string; namespace: string; name: string } | null;
  /**
   * `accept-proxy-protocol`: connections from these sources must start with a PROXY protocol
   * header (v1 or v2), whose address becomes the client's; others are read as sent. Absent or
   * empty: no PROXY header is read.
   */
  acceptProxy?: readonly Cidr[] | null;
  /**
   * `nbthread`: HAProxy's threads, 1–64. Absent or null: HAProxy's default, one per CPU the
   * process may run on, which in a pod is every CPU of the node whatever the pod's CPU limit
   * (docs/controller-scale.md: threads cost start time and memory per server).
   */
  threads?: number | null;
  /**
   * `server-header`: the `Server` header added to responses that have none (the backend's own is
   * kept); absent or null: none is added.
   */
  serverHeader?: string | null;
}

/**
 * The `Server` header's default: the product's name without a version (as ingress-nginx's `nginx`
 * with its default `server-tokens: false`), so clients and the Ingress conformance suite, which
 * asserts a `Server` header, see one, and nothing tells an attacker which release runs.
 */
export const DEFAULT_SERVER_HEADER = "ingress-controller";
/** A `server-header` value: product tokens and comments, without `%`, quotes or backslashes; "" turns it off. */
export const SERVER_HEADER = /^(?:[A-Za-z0-9!#$&*+.^_`|~()/:;=?@,-]+(?: [A-Za-z0-9!#$&*+.^_`|~()/:;=?@,-]+)*)?$/;
export const SERVER_HEADER_MAX = 128;

export const DEFAULT_PROXY_OPTIONS: ProxyOptions = Object.freeze({
  timeouts: Object.freeze({ connect: "5s", client: "60s", server: "60s", httpRequest: "10s", tunnel: "1h" }),
  maxconn: null,
  sslMinVersion: "TLSv1.2",
  sslCiphers: null,
  sslCiphersuites: null,
  http2: true,
  accessLog: "json",
  accessLogSample: 100,
  defaultCertificate: null,
  serverHeader: DEFAULT_SERVER_HEADER,
}) as ProxyOptions;

/** HAProxy 2.6's most threads on 64-bit builds (MAX_THREADS). */
export const MAX_THREADS = 64;

/**
 * The threads for a CPU limit (a Kubernetes quantity: `2`, `1.5`, `500m`): the limit rounded up,
 * 1 to MAX_THREADS; null for no limit. More threads than the CFS quota lets run only add
 * contention, start time and per-thread memory.
 */
export function threadsForCpuLimit(limit: string | undefined): number | null {
  const cores = limit === undefined ? null : quantityValue(limit);
  if (cores === null) return null;
  return Math.min(MAX_THREADS, Math.max(1, Math.ceil(cores - 1e-9)));
}

/** HAProxy time: a whole number with a unit (the range is the parser's: annotations/values.ts `duration`). */
export const TIME = /^[1-9][0-9]{0,9}(?:ms|s|m|h|d)$/;
export const SSL_VERSION = /^TLSv1\.[0-3]$/;
/** OpenSSL cipher list / TLS 1.3 suites: names, `:`, `!`, `+`, `-`, `@STRENGTH`-style words. */
export const CIPHERS = /^[A-Za-z0-9_+!@=.-]+(?::[A-Za-z0-9_+!@=.-]+){0,127}$/;

/**
 * JSON lines: every string field is either a HAProxy token that cannot hold `"` or `\` (method,
 * proxy and server names, IPs, TLS version) or passed through the `json` converter (host, path),
 * which escapes quotes, backslashes and every non-ASCII or control byte.
 */
const JSON_FIELDS = [
  `"time":"%trg"`,
  `"ts":%Ts.%ms`,
  `"client_ip":"%ci"`,
  `"client_port":%cp`,
  `"frontend":"%f"`,
  `"method":"%HM"`,
  `"host":"%[var(txn.host),json(utf8s)]"`,
  `"path":"%[var(txn.path),json(utf8s)]"`,
  `"status":%ST`,
  `"bytes":%B`,
  `"backend":"%b"`,
  `"server":"%s"`,
  `"tq":%Tq`,
  `"tw":%Tw`,
  `"tc":%Tc`,
  `"tr":%Tr`,
  `"ta":%Ta`,
  `"tls":"%sslv"`,
  `"termination":"%tsc"`,
];
export const JSON_LOG_FORMAT = `{${JSON_FIELDS.join(",")}}`;
/** One line, space-separated; host and path JSON-escaped inside quotes, `-` for an absent TLS version. */
export const TEXT_LOG_FORMAT =
  `%trg %ci:%cp %f %HM "%[var(txn.host),json(utf8s)]" "%[var(txn.path),json(utf8s)]" %ST %B %b/%s ` +
  `%Tq/%Tw/%Tc/%Tr/%Ta %sslv %tsc`;

/**
 * HAProxy's `error-log-format`: the line of a connection that never became a request HAProxy could
 * route (a failed TLS handshake, a bad PROXY header, a request HTTP could not parse or that timed out
 * before its headers ended: status 0, 400, 408, 501). The same fields, then `error`, HAProxy's
 * reason for the connection's failure (`fc_err_str`; empty for the HTTP errors, whose status says
 * it). Without it HAProxy would write such lines in its own fixed, non-JSON form.
 */
// (no `$` anchor: HAProxy expands `$` in double quotes; no other message starts with Success)
const ERROR = `%[fc_err_str,regsub(^Success,),json(utf8s)]`;
export const JSON_ERROR_LOG_FORMAT = `{${
  [...JSON_FIELDS.slice(0, -1), `"error":"${ERROR}"`, JSON_FIELDS.at(-1)].join(",")
}}`;
export const TEXT_ERROR_LOG_FORMAT = `${TEXT_LOG_FORMAT} "${ERROR}"`;

/**
 * The `ssl-passthrough` frontend's lines (one per TLS connection passed through, docs/ssl-passthrough.md):
 * a TCP frontend has no HTTP fields, so `time` is the accept date and `sni` the server name the client sent.
 */
const TCP_JSON_FIELDS = [
  `"time":"%t"`,
  `"ts":%Ts.%ms`,
  `"client_ip":"%ci"`,
  `"client_port":%cp`,
  `"frontend":"%f"`,
  `"sni":"%[var(sess.ic_sni),json(utf8s)]"`,
  `"bytes":%B`,
  `"backend":"%b"`,
  `"server":"%s"`,
  `"tw":%Tw`,
  `"tc":%Tc`,
  `"tt":%Tt`,
  `"termination":"%ts"`,
];
export const TCP_JSON_LOG_FORMAT = `{${TCP_JSON_FIELDS.join(",")}}`;
export const TCP_TEXT_LOG_FORMAT = `%t %ci:%cp %f "%[var(sess.ic_sni),json(utf8s)]" %B %b/%s %Tw/%Tc/%Tt %ts`;
export const TCP_JSON_ERROR_LOG_FORMAT = `{${
  [...TCP_JSON_FIELDS.slice(0, -1), `"error":"${ERROR}"`, TCP_JSON_FIELDS.at(-1)].join(",")
}}`;
export const TCP_TEXT_ERROR_LOG_FORMAT = `${TCP_TEXT_LOG_FORMAT} "${ERROR}"`;

/**
 * The level of every access line, and the most a frontend's logger lets through. HAProxy's own
 * notices on a frontend's logger (`Proxy http stopped …` at a reload or a stop, `Paused`/`Resumed`)
 * are `warning`s: below it, they never reach stdout (HAProxy also prints them on stderr). Requests
 * are raised to it by a rule (`set-log-level`), the lines written before any rule ran by `option
 * log-separate-errors`.
 */
export const ACCESS_LOG_LEVEL = "err";

/**
 * An access log line of either format (JSON starts with its `time` field, text with the date);
 * HAProxy's own messages ("Proxy http stopped", "Server … is DOWN") never do.
 */
export const ACCESS_LOG_LINE = /^(?:\{"time":"|\d\d\/[A-Z][a-z]{2}\/\d{4}:)/;

/** A log-format string as a double-quoted HAProxy argument. */
function quoted(format: string): string {
  return `"${format.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** The lines the templates place, every value checked for its spot. */
export interface ProxyView {
  timeouts: { connect: string; client: string; server: string; httpRequest: string; tunnel: string };
  maxconn: number | null;
  /** `nbthread`; null: HAProxy's default. */
  threads: number | null;
  /** `ssl-default-bind-options` arguments. */
  sslBindOptions: string;
  sslCiphers: string | null;
  sslCiphersuites: string | null;
  alpn: string;
  /**
   * `strict-sni` on the TLS binds: without a default certificate of the administrator's, a TLS name
   * no certificate serves is refused in the handshake, so no Ingress's certificate is ever served
   * as the default (HAProxy's default is the first crt-list line's).
   */
  strictSni: boolean;
  /**
   * The `log` line of each frontend that serves clients (never of the backends, whose server
   * notices would reach stdout: HAProxy prints them on stderr anyway); null: no access log.
   */
  logTarget: string | null;
  /** Quoted `log-format` argument; null: no access log. */
  logFormat: string | null;
  /** Quoted `error-log-format` argument; null: no access log. */
  errorLogFormat: string | null;
  /** Quoted `log-format` argument of the `ssl-passthrough` TCP frontend; null: no access log. */
  tcpLogFormat: string | null;
  /** Quoted `error-log-format` argument of the `ssl-passthrough` TCP frontend; null: no access log. */
  tcpErrorLogFormat: string | null;
  /** `set-log-level` argument that raises each request's line to what the logger lets through. */
  logLevel: string;
  /** The public frontends' lines reading the PROXY header of trusted sources (without indentation); empty: none. */
  acceptProxy: string[];
  /** The HTTP frontends' line adding `Server` to responses without one (without indentation); null: none. */
  serverHeader: string | null;
}

/** Reduces `n` of 100 to the smallest `a-b:c` HAProxy `sample` ranges: `1:4` for 25. */
export function sampleRatio(percent: number): string {
  const gcd = (a: number, b: number): number => b === 0 ? a : gcd(b, a % b);
  const g = gcd(percent, 100);
  const n = percent / g, of = 100 / g;
  return n === 1 ? `1:${of}` : `1-${n}:${of}`;
}

function check(ok: boolean, what: string, value: unknown): void {
  if (!ok) throw new Error(`bug: unchecked proxy setting ${what} ${JSON.stringify(value)}`);
}

export function proxyView(o: ProxyOptions): ProxyView {
  for (const [k, t] of Object.entries(o.timeouts)) check(TIME.test(t), `timeout ${k}`, t);
  check(
    o.maxconn === null || (Number.isInteger(o.maxconn) && o.maxconn >= 1 && o.maxconn <= 10_000_000),
    "maxconn",
    o.maxconn,
  );
  const threads = o.threads ?? null;
  check(threads === null || (Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS), "nbthread", threads);
  check(SSL_VERSION.test(o.sslMinVersion), "ssl-min-version", o.sslMinVersion);
  for (const c of [o.sslCiphers, o.sslCiphersuites]) check(c === null || CIPHERS.test(c), "ciphers", c);
  check(["json", "text", "off"].includes(o.accessLog), "access-log", o.accessLog);
  const sample = o.accessLogSample;
  check(Number.isInteger(sample) && sample >= 1 && sample <= 100, "access-log-sample", sample);
  check(
    o.defaultCertificate === null || PEM_FILE.test(o.defaultCertificate.file),
    "default certificate",
    o.defaultCertificate,
  );
  const logging = o.accessLog !== "off";
  const json = o.accessLog === "json";
  const trusted = (o.acceptProxy ?? []).map((c) => {
    const t = `${c.address}/${c.bits}`;
    check(/^[0-9A-Fa-f:.]{2,45}\/[0-9]{1,3}$/.test(t), "accept-proxy-protocol", t);
    return t;
  });
  // HAProxy reads at most 64 words a line: 32 sources an `acl` line (same-name ACLs are ORed)
  const acceptProxy: string[] = [];
  for (let i = 0; i < trusted.length; i += 32) {
    acceptProxy.push(`acl ic_proxy_trusted src ${trusted.slice(i, i + 32).join(" ")}`);
  }
  if (acceptProxy.length > 0) acceptProxy.push("tcp-request connection expect-proxy layer4 if ic_proxy_trusted");
  const server = o.serverHeader ?? "";
  check(SERVER_HEADER.test(server) && server.length <= SERVER_HEADER_MAX, "server-header", server);
  return {
    timeouts: { ...o.timeouts },
    maxconn: o.maxconn,
    threads,
    sslBindOptions: `ssl-min-ver ${o.sslMinVersion} no-tls-tickets`,
    sslCiphers: o.sslCiphers,
    sslCiphersuites: o.sslCiphersuites,
    alpn: o.http2 ? "h2,http/1.1" : "http/1.1",
    strictSni: o.defaultCertificate === null,
    logTarget: logging
      ? `stdout format raw ${sample < 100 ? `sample ${sampleRatio(sample)} ` : ""}local0 ${ACCESS_LOG_LEVEL}`
      : null,
    logFormat: logging ? quoted(json ? JSON_LOG_FORMAT : TEXT_LOG_FORMAT) : null,
    errorLogFormat: logging ? quoted(json ? JSON_ERROR_LOG_FORMAT : TEXT_ERROR_LOG_FORMAT) : null,
    tcpLogFormat: logging ? quoted(json ? TCP_JSON_LOG_FORMAT : TCP_TEXT_LOG_FORMAT) : null,
    tcpErrorLogFormat: logging ? quoted(json ? TCP_JSON_ERROR_LOG_FORMAT : TCP_TEXT_ERROR_LOG_FORMAT) : null,
    logLevel: ACCESS_LOG_LEVEL,
    acceptProxy,
    // after every other response rule, and on the proxy's own answers too (redirects, 404, 503)
    serverHeader: server === ""
      ? null
      : `http-after-response set-header Server '${server}' if !{ res.hdr(server) -m found }`,
  };
}
