/**
 * @module render/features/access_limits
 * Who may use a route and how much: `allow-list`, `deny-list` (403), the rate limits
 * `rate-limit-rps`, `rate-limit-rpm`, `rate-limit-connections` with `rate-limit-allow-list` (a
 * stick table per backend, 429) and `max-body-size` (413 on `Content-Length`). Addresses have
 * passed the anchored CIDR parser and are checked again as they are written, 32 to an `acl` line.
 */
import type { Cidr } from "../../annotations/values.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface RateLimit {
  rps: number | null;
  /** null when `rps` is set: a backend holds one request-rate table. */
  rpm: number | null;
  connections: number | null;
  /** Addresses the limits do not apply to. */
  allow: Cidr[];
}

export interface AccessLimits {
  /** Bytes of `Content-Length`; null: no limit. */
  maxBody: number | null;
  allow: Cidr[] | null;
  deny: Cidr[] | null;
  rate: RateLimit | null;
}

export function readAccessLimits(r: SettingsReader): AccessLimits {
  const body = r.get<number>("max-body-size");
  const allow = r.set<Cidr[]>("allow-list");
  const deny = r.set<Cidr[]>("deny-list");
  const rps = r.set<number>("rate-limit-rps"), rpm = r.set<number>("rate-limit-rpm");
  const connections = r.set<number>("rate-limit-connections");
  if (rps !== null && rpm !== null) {
    r.report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/rate-limit-rpm is ignored: rate-limit-rps is set too and a backend holds one request-rate table",
    );
  }
  const rate = rps !== null || rpm !== null || connections !== null
    ? { rps, rpm: rps !== null ? null : rpm, connections, allow: r.set<Cidr[]>("rate-limit-allow-list") ?? [] }
    : null;
  return { maxBody: body ? body : null, allow, deny, rate };
}

function cidrs(list: readonly Cidr[]): string[] {
  return list.map((c) => {
    const t = `${c.address}/${c.bits}`;
    if (!/^[0-9a-f:.]+\/[0-9]{1,3}$/.test(t)) throw new Error(`bug: unvalidated CIDR ${t}`);
    return t;
  });
}

/** `acl NAME src …` lines, 32 addresses a line (HAProxy reads at most 64 words per line; same-name ACLs are ORed). */
function srcAcl(name: string, list: readonly Cidr[]): string[] {
  const all = cidrs(list);
  const out: string[] = [];
  for (let i = 0; i < all.length; i += 32) out.push(`acl ${name} src ${all.slice(i, i + 32).join(" ")}`);
  return out;
}

/** `allow-list`, then `deny-list`: 403 for a client outside the one or inside the other. */
export function accessListLines(a: Pick<AccessLimits, "allow" | "deny">): string[] {
  const l: string[] = [];
  if (a.allow) l.push(...srcAcl("ic_allow", a.allow), "http-request deny deny_status 403 if !ic_allow");
  if (a.deny) l.push(...srcAcl("ic_deny", a.deny), "http-request deny deny_status 403 if ic_deny");
  return l;
}

/** A stick table of client addresses (request rate over 1 s or 60 s, connections), each limit a 429. */
export function rateLimitLines(rate: RateLimit): string[] {
  const l: string[] = [];
  const window = rate.rps !== null ? "1s" : "60s";
  l.push(`stick-table type ipv6 size 100k expire 120s store http_req_rate(${window}),conn_cur`);
  if (rate.allow.length > 0) {
    l.push(...srcAcl("ic_rate_allow", rate.allow), "http-request track-sc0 src if !ic_rate_allow");
  } else l.push("http-request track-sc0 src");
  const limit = rate.rps ?? rate.rpm;
  if (limit !== null) l.push(`http-request deny deny_status 429 if { sc_http_req_rate(0) gt ${limit} }`);
  if (rate.connections !== null) {
    l.push(`http-request deny deny_status 429 if { sc_conn_cur(0) gt ${rate.connections} }`);
  }
  return l;
}

/**
 * The largest limit a body without Content-Length (chunked) is held to: HAProxy 2.6 counts such a
 * body only as far as it fits in one buffer (`tune.bufsize`, 16 KiB, less the headers and the
 * rewrite reserve), so the proxy waits for at most limit + 1 bytes and refuses more. Above it, such
 * bodies are not counted (README: the difference list of proxy-body-size and max-body-size).
 */
export const CHUNKED_BODY_LIMIT_MAX = 8192;

export function bodySizeLines(maxBody: number): string[] {
  const lines = [`http-request deny deny_status 413 if { req.hdr_val(content-length) gt ${maxBody} }`];
  if (maxBody < CHUNKED_BODY_LIMIT_MAX) {
    // Without Content-Length the size is known only once the body is in: wait for one byte past the limit.
    const unsized = "!{ req.hdr(content-length) -m found } { req.hdr(transfer-encoding) -m found }";
    lines.push(
      `http-request wait-for-body time 10s at-least ${maxBody + 1} if ${unsized}`,
      `http-request deny deny_status 413 if !{ req.hdr(content-length) -m found } { req.body_size gt ${maxBody} }`,
    );
  }
  return lines;
}
