/**
 * @module render/settings
 * The per-backend settings annotations change (docs/annotations-rendering.md): resolved from the
 * Ingress's and (for backend-scoped keys) the Service's annotations through the table's parsers and
 * precedence (lib/annotations/resolve.ts), then rendered as the lines of the backend *variant* the
 * Ingress's routes point to. Every value placed in a line has passed its anchored parser and is
 * written in single quotes (no environment expansion, no escapes in HAProxy) by `quoted`, which
 * refuses anything the parsers should have refused; nothing of a user's is written verbatim.
 */
import { createHash } from "node:crypto";
import { resolveSetting } from "../annotations/resolve.ts";
import type { Risk } from "../annotations/table.ts";
import type { Cidr, HeaderLine, Origin, ServiceRef } from "../annotations/values.ts";
import { type ExtAuth, extAuthLines, resolveExtAuth } from "./ext_auth.ts";
import { userlistName } from "./secret_content.ts";
import { type SecretLike, tlsSummaryOf } from "./tls_secret.ts";
import { CA_FILE } from "./patterns.ts";

export type Balance = "roundrobin" | "leastconn" | "source";

export interface HeaderEdits {
  set: HeaderLine[];
  add: HeaderLine[];
  del: string[];
}

export interface Cors {
  origins: Origin[];
  methods: string[];
  headers: string[];
  expose: string[] | null;
  credentials: boolean;
  maxAge: number;
}

/** What the annotations of one route set for its backend; `null`/empty: the defaults section applies. */
export interface BackendSettings {
  balance: Balance;
  timeouts: {
    connect: string | null;
    server: string | null;
    queue: string | null;
    tunnel: string | null;
    /** `timeout server` of server-sent events requests (`Accept: text/event-stream`). */
    sse: string | null;
  };
  hsts: { maxAge: number; subdomains: boolean; preload: boolean } | null;
  redirectTo: { url: string; code: string } | null;
  appRoot: string | null;
  maxBody: number | null;
  allow: Cidr[] | null;
  deny: Cidr[] | null;
  rate: { rps: number | null; rpm: number | null; connections: number | null; allow: Cidr[] } | null;
  request: HeaderEdits;
  response: HeaderEdits;
  cors: Cors | null;
  sticky: { name: string; maxAge: string | null; secure: boolean; sameSite: string | null } | null;
  proxyProtocol: "v1" | "v2" | null;
  /** `service-upstream`: one server, the Service's cluster IP (absent: its endpoints). */
  serviceUpstream?: true;
  protocol: "h1" | "h2" | "h1-tls" | "h2-tls";
  /**
   * With a TLS protocol: the SNI sent and checked; `verify`: the backend certificate is checked,
   * against the CA bundle of the Secret `ca` (written by the proxy); without a usable `ca` the
   * backend is not reached at all (503: fails closed, never unverified).
   */
  backendTls: { sni: string | null; verify: boolean; ca?: SecretId | null } | null;
  /** HTTP basic authentication against the htpasswd Secret's userlist (written by the proxy). */
  basicAuth?: { secret: SecretId; realm: string } | null;
  /**
   * The Ingress asks its TLS hosts for client certificates (the crt-list checks them): `required`
   * refuses requests without a verified certificate for this host; `header` carries it to the backend.
   */
  clientCert?: { verify: "required" | "optional"; header: string | null } | null;
  /** A `www-redirect` twin host's backend: every request goes to this host, same scheme, path and query (308). */
  wwwRedirectTo: string | null;
  /**
   * Prefix rewrite: the route's path prefix and what replaces it; regex rewrite (a regex path): the
   * route's regex and the path that replaces the whole path, `$1`…`$9` from its captures.
   */
  rewrite: { prefix: string; target: string } | { regex: string; target: string } | null;
  /** `default-backend`: the Service answering while the route's Service has no ready endpoint. */
  defaultBackend: ServiceRef | null;
  /**
   * `error-codes` (with `default-backend`): answers with these codes are replaced by the default
   * backend's page (lib/render/error_pages.ts). `ingress` (sent as X-Ingress-Name) is filled in by
   * the model, so each Ingress has its own variant.
   */
  errorPages?: { codes: number[]; ingress: string } | null;
  /** External authentication (lib/render/ext_auth.ts). */
  extAuth: ExtAuth | null;
}

export const DEFAULT_SETTINGS: BackendSettings = {
  balance: "roundrobin",
  timeouts: { connect: null, server: null, queue: null, tunnel: null, sse: null },
  hsts: null,
  redirectTo: null,
  appRoot: null,
  maxBody: null,
  allow: null,
  deny: null,
  rate: null,
  request: { set: [], add: [], del: [] },
  response: { set: [], add: [], del: [] },
  cors: null,
  sticky: null,
  proxyProtocol: null,
  protocol: "h1",
  backendTls: null,
  rewrite: null,
  wwwRedirectTo: null,
  defaultBackend: null,
  extAuth: null,
};

/** A Secret of the Ingress's namespace that the proxy writes (contracts.md §4). */
export interface SecretId {
  namespace: string;
  name: string;
}

/** The Ingress's namespace and its Secrets (as the controller caches them: summaries, no data). */
export interface SecretScope {
  namespace: string;
  secret(name: string): SecretLike | undefined;
}

/** A refused value: the annotation and its one-line message. */
export type SettingReport = (reason: string, message: string) => void;

type Ann = Readonly<Record<string, string>>;

/** The layers below the Ingress (global, per class: bare keys) and the risk cut-off of the annotations. */
export interface ResolveContext {
  layers: { global?: Ann; class?: Ann };
  disableRiskAtOrAbove: Risk | null;
}

/**
 * The settings of a route of `ingress` (its annotations) to a Service (its annotations), for the
 * route's `path` (`null`: the default backend). Invalid values are reported and ignored.
 * `secrets`: the Ingress's namespace and Secrets, which the keys naming a Secret need (without
 * them, as for the baseline of a route without annotations, those keys render nothing).
 */
export function resolveBackendSettings(
  ingress: Ann,
  service: Ann,
  path: { path: string; match: "exact" | "prefix" | "regex" } | null,
  report: SettingReport,
  context: ResolveContext = { layers: {}, disableRiskAtOrAbove: null },
  secrets: SecretScope | null = null,
): BackendSettings {
  const layers = { ...context.layers, ingress, service };
  const risk = { disableRiskAtOrAbove: context.disableRiskAtOrAbove };
  const get = <T>(key: string): T | null => {
    const r = resolveSetting<T>(key, layers, risk);
    for (const p of r.problems) report("InvalidAnnotation", `${p.message}; ignored`);
    return r.value;
  };
  /** Only a value some layer set (the default leaves the defaults section in charge). */
  const set = <T>(key: string): T | null => {
    const r = resolveSetting<T>(key, layers, risk);
    for (const p of r.problems) report("InvalidAnnotation", `${p.message}; ignored`);
    return r.source === "default" ? null : r.value;
  };
  const s: BackendSettings = structuredClone(DEFAULT_SETTINGS);
  s.balance = get<Balance>("load-balance") ?? "roundrobin";
  s.timeouts = {
    connect: set("timeout-connect"),
    server: set("timeout-server"),
    queue: set("timeout-queue"),
    tunnel: set("timeout-tunnel"),
    sse: set("timeout-sse"),
  };
  if (get<boolean>("hsts")) {
    s.hsts = {
      maxAge: get<number>("hsts-max-age")!,
      subdomains: get<boolean>("hsts-include-subdomains")!,
      preload: get<boolean>("hsts-preload")!,
    };
  }
  const to = set<string>("redirect-to");
  if (to) s.redirectTo = { url: to, code: get<string>("redirect-code")! };
  s.appRoot = set<string>("app-root");
  const body = get<number>("max-body-size");
  s.maxBody = body ? body : null;
  s.allow = set<Cidr[]>("allow-list");
  s.deny = set<Cidr[]>("deny-list");
  const rps = set<number>("rate-limit-rps"), rpm = set<number>("rate-limit-rpm");
  const connections = set<number>("rate-limit-connections");
  if (rps !== null && rpm !== null) {
    report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/rate-limit-rpm is ignored: rate-limit-rps is set too and a backend holds one request-rate table",
    );
  }
  if (rps !== null || rpm !== null || connections !== null) {
    s.rate = { rps, rpm: rps !== null ? null : rpm, connections, allow: set<Cidr[]>("rate-limit-allow-list") ?? [] };
  }
  s.request = {
    set: set("request-headers-set") ?? [],
    add: set("request-headers-add") ?? [],
    del: set("request-headers-delete") ?? [],
  };
  s.response = {
    set: set("response-headers-set") ?? [],
    add: set("response-headers-add") ?? [],
    del: set("response-headers-delete") ?? [],
  };
  if (get<boolean>("cors-enable")) {
    s.cors = {
      origins: get<Origin[]>("cors-allow-origin")!,
      methods: get<string[]>("cors-allow-methods")!,
      headers: get<string[]>("cors-allow-headers")!,
      expose: get<string[]>("cors-expose-headers"),
      credentials: get<boolean>("cors-allow-credentials")!,
      maxAge: get<number>("cors-max-age")!,
    };
  }
  if (get<boolean>("sticky-cookie")) {
    s.sticky = {
      name: get<string>("sticky-cookie-name")!,
      maxAge: get<string>("sticky-cookie-max-age"),
      secure: get<boolean>("sticky-cookie-secure")!,
      sameSite: get<string>("sticky-cookie-samesite"),
    };
  }
  if (get<boolean>("service-upstream")) s.serviceUpstream = true;
  const pp = get<string>("backend-proxy-protocol");
  s.proxyProtocol = pp === "v1" || pp === "v2" ? pp : null;
  const protocol = get<BackendSettings["protocol"]>("backend-protocol") ?? "h1";
  s.protocol = protocol;
  const ca = set<string>("backend-ca-secret");
  if (protocol === "h1-tls" || protocol === "h2-tls") {
    // ingress-nginx does not verify TLS backends by default either; a CA Secret asks for verification,
    // which fails closed (503) while that Secret is unusable
    s.backendTls = { sni: set<string>("backend-sni"), verify: ca !== null };
    if (ca !== null) {
      const usable = usableSecret(
        "backend-ca-secret",
        ca,
        secrets,
        "ca",
        report,
        "every request gets 503 (the backend is never reached unverified)",
      );
      if (usable) s.backendTls.ca = usable;
    }
  }
  s.extAuth = resolveExtAuth(layers, risk, report);
  const htpasswd = set<string>("auth-basic-secret");
  if (htpasswd !== null && secrets) {
    // a missing or bad Secret still renders the check: its userlist is empty and denies everyone
    usableSecret("auth-basic-secret", htpasswd, secrets, "htpasswd", report, "every request gets 401");
    s.basicAuth = { secret: { namespace: secrets.namespace, name: htpasswd }, realm: get<string>("auth-basic-realm")! };
  }
  const clientCa = set<string>("client-cert-ca-secret");
  const header = set<string>("client-cert-header");
  if (clientCa !== null) {
    s.clientCert = { verify: get<"required" | "optional">("client-cert-verify") ?? "required", header };
  } else if (header !== null) {
    report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/client-cert-header needs client-cert-ca-secret; ignored",
    );
  }
  const rewrite = set<{ target: string; captures: boolean }>("rewrite-target");
  if (rewrite && path) {
    if (path.match === "regex") s.rewrite = { regex: path.path, target: rewrite.target };
    else if (rewrite.captures) {
      report(
        "InvalidAnnotation",
        `annotation ingress-controller.io/rewrite-target: $1…$9 need a regex path (path-regex and pathType ` +
          `ImplementationSpecific); ignored for path ${path.path}`,
      );
    } else s.rewrite = { prefix: path.path, target: rewrite.target };
  }
  // a route's fallback (the frontends key it on the route's backend): nothing for spec.defaultBackend itself
  if (path) s.defaultBackend = set<ServiceRef>("default-backend");
  const codes = path ? set<number[]>("error-codes") : null;
  if (codes && !s.defaultBackend) {
    report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/error-codes has no effect without default-backend; ignored",
    );
  } else if (codes) s.errorPages = { codes, ingress: "" };
  return s;
}

/**
 * Checks the Secret `name` an annotation names for `kind` (summary verdicts only) and reports why it
 * is unusable (`fallback`: what happens then); the Secret when usable, else null.
 */
function usableSecret(
  key: string,
  name: string,
  secrets: SecretScope | null,
  kind: "ca" | "htpasswd",
  report: SettingReport,
  fallback: string,
): SecretId | null {
  if (!secrets) return null;
  const where = `annotation ingress-controller.io/${key}: Secret ${secrets.namespace}/${name}`;
  const secret = secrets.secret(name);
  const summary = secret && tlsSummaryOf(secret);
  let why: string | null = null;
  if (!summary) why = "not found";
  else if (kind === "ca" && !summary.ca) why = `is unusable: ${summary.caReason}`;
  else if (kind === "htpasswd" && !summary.htpasswd) why = "has no auth key (htpasswd file)";
  else if (kind === "htpasswd" && summary.htpasswd!.refused.length > 0) {
    report("InvalidSecret", `${where}: ${summary.htpasswd!.refused.join("; ")}; those lines are ignored`);
  }
  if (why === null) return { namespace: secrets.namespace, name };
  report("InvalidSecret", `${where} ${why}; ${fallback}`);
  return null;
}

/** Whether a route with these settings can use the plain backend `be_<ns>_<svc>_<port>`. */
export function isDefaultSettings(s: BackendSettings): boolean {
  return JSON.stringify(s) === JSON.stringify(DEFAULT_SETTINGS);
}

/** The variant suffix of settings: 10 hex digits of their SHA-256 (stable across runs and processes). */
export function settingsHash(s: BackendSettings): string {
  return createHash("sha256").update(JSON.stringify(s)).digest("hex").slice(0, 10);
}

/**
 * A single-quoted HAProxy argument. Inside single quotes HAProxy expands nothing and knows no
 * escape, so only `'` and line breaks could change the line's structure; the parsers refuse them,
 * and finding one here is a bug.
 */
export function quoted(s: string): string {
  if (/['\r\n\0]/.test(s)) throw new Error(`bug: unquotable value ${JSON.stringify(s)}`);
  return `'${s}'`;
}

/** A log-format argument (set-header values, return headers): `%` must not reach it unescaped. */
function literal(s: string): string {
  if (s.includes("%")) throw new Error(`bug: % in a literal ${JSON.stringify(s)}`);
  return quoted(s);
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

function regexEscape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function headerValue(h: HeaderLine): string {
  return `${h.name} ${literal(h.value)}`;
}

/** The configuration lines of a backend with settings `s` (without indentation) and its `default-server` params. */
export function settingsLines(s: BackendSettings, backend: string): { lines: string[]; serverParams: string } {
  const l: string[] = [];
  const t = s.timeouts;
  if (t.connect) l.push(`timeout connect ${t.connect}`);
  if (t.server) l.push(`timeout server ${t.server}`);
  if (t.queue) l.push(`timeout queue ${t.queue}`);
  if (t.tunnel) l.push(`timeout tunnel ${t.tunnel}`);
  if (t.sse) l.push(`http-request set-timeout server ${t.sse} if { req.hdr(accept) -m sub text/event-stream }`);
  if (s.allow) l.push(...srcAcl("ic_allow", s.allow), "http-request deny deny_status 403 if !ic_allow");
  if (s.deny) l.push(...srcAcl("ic_deny", s.deny), "http-request deny deny_status 403 if ic_deny");
  if (s.rate) {
    const window = s.rate.rps !== null ? "1s" : "60s";
    l.push(`stick-table type ipv6 size 100k expire 120s store http_req_rate(${window}),conn_cur`);
    if (s.rate.allow.length > 0) {
      l.push(...srcAcl("ic_rate_allow", s.rate.allow), "http-request track-sc0 src if !ic_rate_allow");
    } else l.push("http-request track-sc0 src");
    const limit = s.rate.rps ?? s.rate.rpm;
    if (limit !== null) l.push(`http-request deny deny_status 429 if { sc_http_req_rate(0) gt ${limit} }`);
    if (s.rate.connections !== null) {
      l.push(`http-request deny deny_status 429 if { sc_conn_cur(0) gt ${s.rate.connections} }`);
    }
  }
  if (s.clientCert) l.push(...clientCertLines(s.clientCert));
  if (s.basicAuth) {
    // as ingress-nginx, the Authorization header is passed on to the backend
    const ul = userlistName(s.basicAuth.secret.namespace, s.basicAuth.secret.name);
    l.push(`http-request auth realm ${quoted(s.basicAuth.realm)} unless { http_auth(${ul}) }`);
  }
  const unverifiable = s.backendTls?.verify === true && !s.backendTls.ca;
  if (unverifiable) l.push("http-request deny deny_status 503");
  if (s.maxBody !== null) {
    l.push(`http-request deny deny_status 413 if { req.hdr_val(content-length) gt ${s.maxBody} }`);
  }
  if (s.wwwRedirectTo) {
    if (!/^[a-z0-9.-]+$/.test(s.wwwRedirectTo)) throw new Error(`bug: unvalidated host ${s.wwwRedirectTo}`);
    l.push(`http-request redirect prefix https://${s.wwwRedirectTo} code 308 if { ssl_fc }`);
    l.push(`http-request redirect prefix http://${s.wwwRedirectTo} code 308`);
  }
  if (s.redirectTo) l.push(`http-request redirect location ${literal(s.redirectTo.url)} code ${s.redirectTo.code}`);
  if (s.appRoot) l.push(`http-request redirect location ${literal(s.appRoot)} code 302 if { path / }`);
  if (s.cors) l.push(...corsLines(s.cors));
  // After the answers that need no authentication (redirects, CORS preflights: as ingress-nginx's
  // rewrite phase comes before its access phase), before the request's own header edits.
  if (s.extAuth) l.push(...extAuthLines(s.extAuth));
  for (const h of s.request.del) l.push(`http-request del-header ${h}`);
  for (const h of s.request.set) l.push(`http-request set-header ${headerValue(h)}`);
  for (const h of s.request.add) l.push(`http-request add-header ${headerValue(h)}`);
  if (s.rewrite) l.push(rewriteLine(s.rewrite));
  for (const h of s.response.del) l.push(`http-response del-header ${h}`);
  for (const h of s.response.set) l.push(`http-response set-header ${headerValue(h)}`);
  for (const h of s.response.add) l.push(`http-response add-header ${headerValue(h)}`);
  if (s.hsts) {
    const v = `max-age=${s.hsts.maxAge}${s.hsts.subdomains ? "; includeSubDomains" : ""}${
      s.hsts.preload ? "; preload" : ""
    }`;
    l.push(`http-response set-header Strict-Transport-Security ${literal(v)} if { ssl_fc }`);
  }
  if (s.sticky) {
    const c = s.sticky;
    l.push(`dynamic-cookie-key ${quoted(backend)}`);
    l.push(
      `cookie ${c.name} insert indirect nocache dynamic httponly` + (c.secure ? " secure" : "") +
        (c.sameSite ? ` attr SameSite=${c.sameSite}` : "") +
        // maxlife bounds the cookie on the proxy's side, Max-Age in the browser (as ingress-nginx)
        (c.maxAge ? ` maxlife ${c.maxAge} attr Max-Age=${seconds(c.maxAge)}` : ""),
    );
  }
  const params: string[] = [];
  if (s.proxyProtocol) params.push(s.proxyProtocol === "v2" ? "send-proxy-v2" : "send-proxy");
  if (s.protocol === "h2") params.push("proto h2");
  if (s.backendTls && !unverifiable) {
    params.push("ssl", s.backendTls.ca ? `verify required ca-file ${caFile(s.backendTls.ca)}` : "verify none");
    if (s.backendTls.sni) params.push(`sni str(${s.backendTls.sni})`);
    if (s.backendTls.sni && s.backendTls.verify) params.push(`verifyhost ${s.backendTls.sni}`);
    params.push(s.protocol === "h2-tls" ? "alpn h2" : "alpn http/1.1");
  }
  return { lines: l, serverParams: params.join(" ") };
}

/** The proxy's file of a CA Secret (contracts.md §4), relative to `ca-base` (the cert dir). */
export function caFile(id: SecretId): string {
  const file = `${id.namespace}_${id.name}_ca.pem`;
  if (!CA_FILE.test(file)) throw new Error(`bug: unsafe CA file ${file}`);
  return file;
}

/**
 * The client certificate was checked by the crt-list line of the SNI name the connection asked
 * for: it vouches for this host only if that name is the request's host (a client could send
 * another SNI, one without a check or with another CA, then this Host). The incoming header is
 * always removed, so a client can never set it itself.
 */
function clientCertLines(c: NonNullable<BackendSettings["clientCert"]>): string[] {
  const l = [
    "acl ic_cert_sni ssl_fc_sni,lower,strcmp(txn.host) eq 0",
    "acl ic_cert_used ssl_c_used",
    "acl ic_cert_valid ssl_c_verify 0",
  ];
  if (c.verify === "required") {
    // 421: the connection was made for another host; a browser retries on a new connection
    l.push("http-request deny deny_status 421 if { ssl_fc } !ic_cert_sni");
    l.push("http-request deny deny_status 403 unless ic_cert_sni ic_cert_used ic_cert_valid");
  }
  if (c.header) {
    l.push(`http-request del-header ${c.header}`);
    l.push(`http-request set-header ${c.header} %[ssl_c_der,base64] if ic_cert_sni ic_cert_used ic_cert_valid`);
  }
  return l;
}

function seconds(d: string): number {
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(d);
  if (!m) throw new Error(`bug: unvalidated duration ${d}`);
  return Math.max(1, Math.floor(Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[m[2]]!));
}

/**
 * A regex path's rewrite: the whole path becomes the target (the query string is kept), `$n` the
 * regex's captures, as ingress-nginx's `rewrite (?i)<regex> <target> break`. The target is a
 * log-format string in HAProxy: `%` is doubled; the regex is the route's (case-insensitive too).
 */
function rewriteLine(r: NonNullable<BackendSettings["rewrite"]>): string {
  if ("regex" in r) {
    const target = formatLiteral(r.target).replace(/\$([1-9])/g, "\\$1");
    return `http-request replace-path ${quoted(`^(?i:${r.regex})`)} ${quoted(target)}`;
  }
  return prefixRewriteLine(r);
}

/**
 * A path placed in a log-format argument (replace-path's target): `%` doubled, so a target's `%XX`
 * escape stays an escape instead of making HAProxy refuse the whole configuration.
 */
function formatLiteral(path: string): string {
  return path.replaceAll("%", "%%");
}

/** `/prefix` + target: `/prefix` → target, `/prefix/rest` → target joined with `/rest`. */
function prefixRewriteLine(r: { prefix: string; target: string }): string {
  const prefix = r.prefix === "/" ? "" : regexEscape(r.prefix);
  const target = formatLiteral(r.target.replace(/\/$/, ""));
  // `\1` is the rest after the prefix, starting with `/` or empty; an empty result becomes `/`.
  return target === ""
    ? `http-request replace-path ${quoted(`^${prefix}/?(.*)$`)} ${quoted("/\\1")}`
    : `http-request replace-path ${quoted(`^${prefix}(/.*)?$`)} ${quoted(`${target}\\1`)}`;
}

function originAcl(origins: readonly Origin[]): string[] {
  const out: string[] = [];
  for (const o of origins) {
    if (o.kind === "exact") out.push(`acl ic_cors_origin req.hdr(origin) -m str ${quoted(o.origin)}`);
    else if (o.kind === "wildcard") {
      const [scheme, rest] = o.origin.split("*.");
      out.push(
        `acl ic_cors_origin req.hdr(origin) -m reg ${quoted(`^${regexEscape(scheme)}[^.]+\\.${regexEscape(rest)}$`)}`,
      );
    } else if (o.kind === "regex") out.push(`acl ic_cors_origin req.hdr(origin) -m reg ${quoted(o.pattern)}`);
  }
  return out;
}

function corsLines(c: Cors): string[] {
  const any = c.origins.some((o) => o.kind === "any");
  const l: string[] = any ? ["acl ic_cors_origin req.hdr(origin) -m found"] : originAcl(c.origins);
  // `*` cannot be sent with credentials (the Fetch standard): then the request's origin is echoed.
  const allowOrigin = any && !c.credentials ? "'*'" : "'%[var(txn.ic_cors_origin)]'";
  l.push("http-request set-var(txn.ic_cors_origin) req.hdr(origin) if ic_cors_origin");
  const common = [`hdr Access-Control-Allow-Origin ${allowOrigin}`];
  if (c.credentials) common.push("hdr Access-Control-Allow-Credentials 'true'");
  if (!any || c.credentials) common.push("hdr Vary 'Origin'");
  l.push(
    "http-request return status 204 " + [
      ...common,
      `hdr Access-Control-Allow-Methods ${literal(c.methods.join(", "))}`,
      `hdr Access-Control-Allow-Headers ${literal(c.headers.join(", "))}`,
      `hdr Access-Control-Max-Age '${c.maxAge}'`,
    ].join(" ") + " if METH_OPTIONS ic_cors_origin { req.hdr(access-control-request-method) -m found }",
  );
  const when = " if { var(txn.ic_cors_origin) -m found }";
  for (const h of common) l.push(`http-response set-header ${h.slice(4)}${when}`);
  if (c.expose) l.push(`http-response set-header Access-Control-Expose-Headers ${literal(c.expose.join(", "))}${when}`);
  return l;
}
