/**
 * @module gateway/render_rules
 * The backends of a Gateway's rules and the frontend lines that choose between a rule's targets
 * (docs/gateway-rendering.md). A rule without filters with one target and no invalid share needs
 * nothing of its own: its entries route straight to the target's Service backend, so a change of
 * its paths stays a map change. Any other rule `gw_x` gets
 * - a redirect: backend `gw_x` answers with the redirect;
 * - no target: backend `gw_x` answers 500 (a GRPCRoute's rule: 503 with grpc-status 14, UNAVAILABLE);
 * - one target, no invalid share: backend `gw_x` with the rule's filter lines and the target's
 *   server slots (the same lines as the Service backend's, so an endpoint change is a Runtime API
 *   change for both);
 * - several targets or an invalid share: the frontends draw a number per request and pick
 *   `gw_x.<i>` (filter lines and target i's slots) by the weights; the invalid share stays on
 *   `gw_x`, which answers 500.
 * The frontend hands the rule backends `txn.host` (the Host without port, lower-cased), `txn.path`
 * (the normalized path the entry matched), `txn.pslash` (that path and `/`) and `txn.lport`
 * (`:<listener port>` unless it is the scheme's default).
 */
import type { Backend, HeaderEdits, PathModifier, RouteEntry, RuleBackend, Target } from "./model_types.ts";
import { corsLines } from "./render_cors.ts";
import { MAX_TIMEOUT_MS } from "./validate.ts";
import { type BackendTls, tlsServerParams } from "./backend_tls.ts";
import { canonicalPath, isHost, isIPv4, isIPv6, isPortNumber, isProxyName } from "../render/patterns.ts";
import { growable, slotLines } from "../render/slots.ts";
import {
  checked,
  checkedPath,
  isFieldName,
  isFieldValue,
  isRuleName,
  logFormatWord,
  REDIRECT_CODES,
  word,
} from "./render_checks.ts";

/** A backend as the shared backends template (templates/backends.eta) places it. */
export interface BackendView {
  name: string;
  balance: string;
  lines: string[];
  slots: string[];
}

export interface RuleOutput {
  /** Rule name → the backend its entries route to (its Service backend, or the rule's own). */
  target: Map<string, string>;
  /** The rules' own backends. */
  backends: BackendView[];
  /** The frontends' lines that pick a weighted rule's target, without indentation. */
  choice: string[];
}

const BALANCES: ReadonlySet<string> = new Set(["roundrobin", "leastconn", "source"]);
const TIME = /^[1-9][0-9]{0,9}(?:ms|s|m|h|d)$/;
/** At most this much weight in one rule (the Gateway API caps one weight at 1,000,000). */
const MAX_TOTAL_WEIGHT = 1_000_000_000;

function bug(message: string): never {
  throw new Error(`bug: ${message} in the Gateway model`);
}

/** A Service backend's view: checked name, balance, timeout and server slots (`proto h2` for h2c Services). */
export function serviceBackendView(b: Backend & { proto?: "h2"; tls?: BackendTls | null }): BackendView {
  if (!isProxyName(b.name) || b.name.includes(":") || !/^be_/.test(b.name)) {
    bug(`backend name ${JSON.stringify(b.name)}`);
  }
  if (!BALANCES.has(b.balance)) bug(`balance ${JSON.stringify(b.balance)}`);
  if (b.timeoutServer !== null && !TIME.test(b.timeoutServer)) bug(`timeout ${JSON.stringify(b.timeoutServer)}`);
  if (b.proto !== undefined && b.proto !== "h2") bug(`proto ${JSON.stringify(b.proto)}`);
  for (const s of b.servers) {
    const ip = s.address.startsWith("[") && s.address.endsWith("]") ? s.address.slice(1, -1) : s.address;
    const ok = s.address === ip ? isIPv4(ip) : isIPv6(ip);
    if (!ok || !isPortNumber(s.port)) bug(`server ${JSON.stringify(s)}`);
  }
  if (b.mode !== undefined && (b.mode !== "tcp" || !b.name.endsWith("_tcp") || b.proto !== undefined)) {
    bug(`mode of backend ${JSON.stringify(b.name)}`);
  }
  // a TLSRoute's backend relays the connection as it comes (TLS passthrough)
  const grows = growable(b.balance, false);
  if (b.mode === "tcp") {
    return { name: b.name, balance: b.balance, lines: ["mode tcp"], slots: slotLines(b.servers, "", grows) };
  }
  return {
    name: b.name,
    balance: b.balance,
    lines: [
      ...b.timeoutServer !== null ? [`timeout server ${b.timeoutServer}`] : [],
      // A BackendTLSPolicy that cannot be used: the servers are never reached unverified, and the
      // client gets a 5xx as the API asks (500: a configuration error, as for an invalid backendRef).
      ...b.tls === null ? ["http-request deny deny_status 500"] : [],
    ],
    slots: slotLines(b.servers, serverParams(b), grows),
  };
}

/** The servers' parameters: HTTP/2 (cleartext, or over TLS by ALPN) and a BackendTLSPolicy's check. */
function serverParams(b: { proto?: "h2"; tls?: BackendTls | null }): string {
  if (b.tls) return tlsServerParams(b.tls, b.proto === "h2");
  return b.proto === "h2" ? "proto h2" : "";
}

/** A rule that routes straight to its one target. */
function direct(r: RuleBackend): boolean {
  return r.requestHeaders === null && r.responseHeaders === null && r.redirect === null && r.rewrite === null &&
    (r.cors ?? null) === null && (r.timeoutMs ?? null) === null && r.targets.length === 1 &&
    !r.targets[0].requestHeaders && !r.targets[0].responseHeaders && r.invalidWeight === 0;
}

/**
 * The `timeout server` of a rule with `timeouts`: the wait for the backend's answer and between its
 * pieces; 0 (off) is HAProxy's longest timeout (24.8 days), so the defaults' does not apply.
 */
function timeoutLines(ms: number | null | undefined): string[] {
  if (ms === null || ms === undefined) return [];
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_TIMEOUT_MS) bug(`timeout ${ms}`);
  return [`timeout server ${ms === 0 ? MAX_TIMEOUT_MS : ms}ms`];
}

function headerLines(directive: "http-request" | "http-response", edits: HeaderEdits | null): string[] {
  if (edits === null) return [];
  const name = (n: string) => checked(isFieldName, "header name", n);
  const value = (v: string) => logFormatWord(checked(isFieldValue, "header value", v));
  return [
    ...edits.set.map((h) => `${directive} set-header ${name(h.name)} ${value(h.value)}`),
    ...edits.add.map((h) => `${directive} add-header ${name(h.name)} ${value(h.value)}`),
    ...edits.remove.map((n) => `${directive} del-header ${name(n)}`),
  ];
}

/**
 * The prefixes a ReplacePrefixMatch replaces: the paths the rule's entries matched (the API allows
 * the modifier only with PathPrefix matches), without a trailing `/`, longest first.
 */
function matchedPrefixes(rule: string, entries: readonly RouteEntry[]): string[] {
  const paths = new Set<string>();
  for (const e of entries) {
    if (e.path.type !== "PathPrefix") bug(`ReplacePrefixMatch of rule ${rule} with a ${e.path.type} match`);
    const p = canonicalPath(checkedPath(e.path.value));
    paths.add(p === "/" ? "" : p);
  }
  // a rule no entry routes to is never asked
  if (paths.size === 0) paths.add("");
  return [...paths].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
}

/**
 * The lines that set `txn.rest` to what follows the prefix the request matched (longest first
 * where the rule has several: the entry that took the request had the longest).
 */
function restLines(prefixes: readonly string[]): string[] {
  const rest = (p: string) => `http-request set-var(txn.rest) var(txn.path),bytes(${p.length})`;
  if (prefixes.length === 1) return [rest(prefixes[0])];
  const lines: string[] = [];
  prefixes.forEach((p, i) => {
    const first = i === 0 ? "" : " !{ var(txn.pfx) -m found }";
    lines.push(`http-request set-var(txn.pfx) int(${i}) if { var(txn.pslash) -m beg -- ${word(`${p}/`)} }${first}`);
  });
  prefixes.forEach((p, i) => lines.push(`${rest(p)} if { var(txn.pfx) -m int eq ${i} }`));
  return lines;
}

/** The new path of a modifier as a log-format text (`txn.rest`: what follows the matched prefix). */
interface NewPath {
  /** Lines to run first (they set `txn.rest`). */
  setup: string[];
  /** [condition, log-format path] pairs, the first whose condition holds applies ("" always). */
  variants: [string, string][];
}

function newPath(rule: string, m: PathModifier, entries: readonly RouteEntry[]): NewPath {
  if (m.type === "ReplaceFullPath") {
    return { setup: [], variants: [["", canonicalPath(checkedPath(m.value)).replaceAll("%", "%%")]] };
  }
  if (m.type !== "ReplacePrefixMatch") bug(`path modifier ${JSON.stringify(m.type)}`);
  // "" replaces the prefix with nothing; `/x/` and `/x` alike: the rest starts with `/` or is empty
  const value = m.value === "" ? "" : canonicalPath(checkedPath(m.value));
  const replacement = value.endsWith("/") ? value.slice(0, -1) : value;
  const setup = restLines(matchedPrefixes(rule, entries));
  const lf = replacement.replaceAll("%", "%%");
  if (replacement !== "") return { setup, variants: [["", `${lf}%[var(txn.rest)]`]] };
  // nothing before the rest: the rest, or `/` when the path was the prefix itself
  return { setup, variants: [["{ var(txn.rest) -m len gt 0 }", "%[var(txn.rest)]"], ["", "/"]] };
}

function redirectLines(r: RuleBackend, entries: readonly RouteEntry[]): string[] {
  const rd = r.redirect!;
  if (!REDIRECT_CODES.has(rd.statusCode)) bug(`redirect status ${rd.statusCode}`);
  if (rd.scheme !== null && rd.scheme !== "http" && rd.scheme !== "https") bug(`scheme ${JSON.stringify(rd.scheme)}`);
  if (rd.port !== null && !isPortNumber(rd.port)) bug(`redirect port ${rd.port}`);
  let host = "%[var(txn.host)]";
  if (rd.hostname !== null) {
    if (!isHost(rd.hostname) || rd.hostname.startsWith("*")) bug(`redirect hostname ${JSON.stringify(rd.hostname)}`);
    host = rd.hostname;
  }
  const schemes: [string, "http" | "https"][] = rd.scheme !== null
    ? [["", rd.scheme]]
    : [["{ ssl_fc }", "https"], ["", "http"]];
  const known = { http: 80, https: 443 } as const;
  const path = rd.path === null ? null : newPath(r.name, rd.path, entries);
  const lines = path ? [...path.setup, "http-request set-var(txn.qs) query,regsub(^,?)"] : [];
  for (const [schemeCond, scheme] of schemes) {
    // no port: the scheme's own when the redirect names one, else the listener's (the frontend's txn.lport)
    const port = rd.port ?? (rd.scheme !== null ? known[scheme] : null);
    const portText = port === null ? "%[var(txn.lport)]" : port === known[scheme] ? "" : `:${port}`;
    const origin = `${scheme}://${host}${portText}`;
    const code = `code ${rd.statusCode}`;
    if (path === null) {
      lines.push(`http-request redirect prefix ${word(origin)} ${code}${schemeCond ? ` if ${schemeCond}` : ""}`);
      continue;
    }
    for (const [pathCond, p] of path.variants) {
      const cond = [schemeCond, pathCond].filter((c) => c !== "").join(" ");
      lines.push(
        `http-request redirect location ${word(`${origin}${p}%[var(txn.qs)]`)} ${code}${cond ? ` if ${cond}` : ""}`,
      );
    }
  }
  return lines;
}

function rewriteLines(r: RuleBackend, entries: readonly RouteEntry[]): string[] {
  const rw = r.rewrite;
  if (rw === null) return [];
  const lines: string[] = [];
  if (rw.hostname !== null) {
    if (!isHost(rw.hostname) || rw.hostname.startsWith("*")) bug(`rewrite hostname ${JSON.stringify(rw.hostname)}`);
    lines.push(`http-request set-header Host ${rw.hostname}`);
  }
  if (rw.path !== null) {
    const path = newPath(r.name, rw.path, entries);
    lines.push(...path.setup);
    let seen = "";
    for (const [cond, p] of path.variants) {
      // set-path keeps the query string; a later variant runs only where the earlier did not
      const when = [cond, seen].filter((c) => c !== "").join(" ");
      lines.push(`http-request set-path ${word(p)}${when ? ` if ${when}` : ""}`);
      if (cond !== "") seen = `!${cond}`;
    }
  }
  return lines;
}

/** What a rule does to a request it forwards: CORS, request headers, rewrite, response headers; its timeout. */
function filterLines(r: RuleBackend, entries: readonly RouteEntry[]): string[] {
  return [
    ...timeoutLines(r.timeoutMs),
    ...corsLines(r.cors ?? null),
    ...headerLines("http-request", r.requestHeaders),
    ...rewriteLines(r, entries),
    ...headerLines("http-response", r.responseHeaders),
  ];
}

/** A backendRef's own header filters: after the rule's, only for requests sent to that backend. */
function targetLines(t: Target): string[] {
  return [
    ...headerLines("http-request", t.requestHeaders ?? null),
    ...headerLines("http-response", t.responseHeaders ?? null),
  ];
}

const ANSWER_500 = `http-request return status 500 content-type text/plain string "no usable backend for this route"`;
/**
 * A gRPC client reads a call's outcome from `grpc-status` (14: UNAVAILABLE, what the GRPCRoute spec
 * asks for an invalid backend); an HTTP 503 maps to the same code for clients that look at the
 * HTTP status first.
 */
const ANSWER_GRPC_UNAVAILABLE = `http-request return status 503 content-type application/grpc ` +
  `hdr grpc-status 14 hdr grpc-message "no usable backend for this route"`;

/** What a rule answers to the requests it has no backend for. */
function unusable(r: RuleBackend): string {
  return r.grpc ? ANSWER_GRPC_UNAVAILABLE : ANSWER_500;
}

/**
 * The rules' backends and choice lines. `entries`: every route entry of the model (a
 * ReplacePrefixMatch replaces the prefix its rule's entries matched).
 */
export function ruleOutput(
  rules: readonly RuleBackend[],
  backends: ReadonlyMap<string, BackendView>,
  entries: readonly RouteEntry[],
): RuleOutput {
  const byRule = new Map<string, RouteEntry[]>();
  for (const e of entries) {
    const list = byRule.get(e.rule);
    if (list) list.push(e);
    else byRule.set(e.rule, [e]);
  }
  const target = new Map<string, string>();
  const views: BackendView[] = [];
  const choice: string[] = [];
  for (const r of rules) {
    const name = checked(isRuleName, "rule name", r.name);
    if (target.has(name)) bug(`rule ${name} twice`);
    const mine = byRule.get(name) ?? [];
    const weights = r.targets.map((t) => t.weight);
    if (
      ![...weights, r.invalidWeight].every((w) => Number.isInteger(w) && w >= 0) || weights.some((w) => w === 0) ||
      weights.reduce((a, b) => a + b, r.invalidWeight) > MAX_TOTAL_WEIGHT
    ) {
      bug(`weights of rule ${name}`);
    }
    const services = r.targets.map((t) => backends.get(t.backend) ?? bug(`target ${t.backend} of rule ${name}`));
    if (r.redirect !== null) {
      target.set(name, name);
      views.push(
        own(name, [
          ...corsLines(r.cors ?? null),
          ...headerLines("http-request", r.requestHeaders),
          ...redirectLines(r, mine),
        ]),
      );
    } else if (direct(r)) {
      target.set(name, services[0].name);
    } else if (services.length === 0) {
      target.set(name, name);
      views.push(own(name, [unusable(r)]));
    } else if (services.length === 1 && r.invalidWeight === 0) {
      target.set(name, name);
      views.push(copy(name, services[0], [...filterLines(r, mine), ...targetLines(r.targets[0])]));
    } else {
      target.set(name, name);
      views.push(own(name, [unusable(r)]));
      const total = weights.reduce((a, b) => a + b, r.invalidWeight);
      const lines = filterLines(r, mine);
      const rule = `{ var(txn.route) -m str ${name} }`;
      choice.push(`http-request set-var(txn.rnd) rand(${total}) if ${rule}`);
      let upTo = 0;
      services.forEach((s, i) => {
        upTo += weights[i];
        views.push(copy(`${name}.${i}`, s, [...lines, ...targetLines(r.targets[i])]));
        choice.push(`http-request set-var(txn.route) str(${name}.${i}) if ${rule} { var(txn.rnd) -m int lt ${upTo} }`);
      });
    }
  }
  return { target, backends: views, choice };
}

/** A backend without servers that answers itself. */
function own(name: string, lines: string[]): BackendView {
  return { name, balance: "roundrobin", lines, slots: [] };
}

/** A backend with `lines` before the servers of Service backend `service` (a timeout of `lines` replaces the Service's). */
function copy(name: string, service: BackendView, lines: string[]): BackendView {
  const own = lines.some((l) => l.startsWith("timeout server "));
  const base = own ? service.lines.filter((l) => !l.startsWith("timeout server ")) : service.lines;
  return { name, balance: service.balance, lines: [...base, ...lines], slots: service.slots };
}
