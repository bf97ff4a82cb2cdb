/**
 * @module nginx/to_httproute
 * The migration preview (`nginx-check --output httproute`): what Ingresses written for ingress-nginx
 * become in the Gateway API. Each Ingress's annotations are read as the compatibility mode applies
 * them (nginx/translate.ts `translateIngress` and the mode's defaults, nginx/convert.ts
 * `compatDefaults`: our keys, parsed by lib/annotations' parsers), so the preview claims exactly what
 * this controller serves today, then each key of ours with a Gateway API form becomes a match or
 * filter of an HTTPRoute: redirects to HTTPS (a route on the HTTP listener), `redirect-to`,
 * `app-root` and `www-redirect` (RequestRedirect), `rewrite-target` (URLRewrite, the `P(/|$)(.*)` +
 * `/$2` regex form as a prefix), a `Host` set (URLRewrite hostname), header edits
 * (Request/ResponseHeaderModifier), regex paths (RegularExpression: with `path-regex: all` every path
 * of the host, other Ingresses' too, as the model makes them) and canaries (weighted backendRefs,
 * header matches). What the Gateway API cannot say the same way is a note (case, the idiom's place
 * after the host's regexes, the / the HTTPS redirect drops). Every annotation gets a verdict; an Ingress that restricts who may
 * reach it (authentication, address lists, client certificates, backend verification) in a way the
 * Gateway API cannot is withheld: its route is shown, never emitted, since applying it would open
 * the Ingress's paths. The TLS sections become the Gateway listeners (and ReferenceGrants) the routes
 * need, as a suggestion. Pure: no I/O (the YAML text: nginx/httproute_yaml.ts).
 */
import { readAnnotation } from "../annotations/resolve.ts";
import { PREFIX, specOf } from "../annotations/table.ts";
import { bool, type HeaderLine, pathRegexProblem } from "../annotations/values.ts";
import type {
  HTTPBackendRef,
  HTTPHeader,
  HTTPPathModifier,
  HTTPRoute,
  HTTPRouteFilter,
  HTTPRouteMatch,
  HTTPRouteRule,
  Listener,
  ParentReference,
  ReferenceGrant,
} from "../gateway/api.ts";
import { GROUP } from "../gateway/api.ts";
import { isDns1123Label, isDns1123Subdomain, isHost } from "../render/patterns.ts";
import { NGINX_PREFIX, NGINX_RULES } from "./table.ts";
import { checkIngress, type IngressLike, translateIngress } from "./translate.ts";
import { compatDefaults, convertedAnnotations } from "./convert.ts";

export interface IngressBackend {
  readonly service?: { readonly name?: string; readonly port?: { readonly number?: number; readonly name?: string } };
  readonly resource?: unknown;
}

/** The parts of an Ingress the preview reads. */
export interface IngressObject extends IngressLike {
  readonly spec?: {
    readonly defaultBackend?: IngressBackend;
    readonly tls?: readonly { readonly hosts?: readonly string[]; readonly secretName?: string }[];
    readonly rules?: readonly {
      readonly host?: string;
      readonly http?: {
        readonly paths?: readonly {
          readonly path?: string;
          readonly pathType?: string;
          readonly backend?: IngressBackend;
        }[];
      };
    }[];
  };
}

/** A Service as far as named ports go. */
export interface ServiceLike {
  readonly metadata?: { readonly namespace?: string; readonly name?: string };
  readonly spec?: { readonly ports?: readonly { readonly name?: string; readonly port?: number }[] };
}

/** The Gateway the routes attach to. */
export interface GatewayRef {
  readonly namespace: string;
  readonly name: string;
}

/** The listener ports the routes attach to and the suggested listeners use. */
export const HTTP_PORT = 80;
export const HTTPS_PORT = 443;

/** What one Ingress becomes. */
export interface IngressMigration {
  readonly namespace: string;
  readonly name: string;
  /** One line per annotation: what becomes of it. */
  readonly verdicts: string[];
  /** What else the user must know (TLS, matching differences, the canary's main Ingress). */
  readonly notes: string[];
  readonly routes: HTTPRoute[];
  /** Why `routes` must not be applied (shown as comments only), or null. */
  readonly withheld: string | null;
}

export interface MigrationPlan {
  readonly gateway: GatewayRef;
  readonly ingresses: IngressMigration[];
  /** Listeners the Gateway needs: one HTTP listener, one HTTPS listener per TLS host. */
  readonly listeners: Listener[];
  /** Grants that let the Gateway read certificates of other namespaces. */
  readonly grants: ReferenceGrant[];
}

/** `namespace/name` of the Gateway, or a one-line reason. */
export function parseGatewayRef(raw: string): GatewayRef | string {
  const m = /^([^/]+)\/([^/]+)$/.exec(raw);
  if (!m || !isDns1123Label(m[1]) || !isDns1123Subdomain(m[2])) {
    return `${JSON.stringify(raw)} is not NAMESPACE/NAME of a Gateway`;
  }
  return { namespace: m[1], name: m[2] };
}

/**
 * Keys of ours whose Ingress must not become an HTTPRoute here (what the route would lose): access
 * restrictions the Gateway API cannot express, and TLS towards the backend or passed through.
 */
const WITHHOLDS: Readonly<Record<string, string>> = {
  "allow-list": "a source address allow-list",
  "deny-list": "a source address deny-list",
  "auth-url": "external authentication",
  "auth-signin": "external authentication",
  "auth-basic-secret": "basic authentication",
  "client-cert-ca-secret": "client certificate verification",
  "backend-ca-secret": "verification of the backend's certificate (BackendTLSPolicy is not served here yet)",
  "ssl-passthrough": "TLS passthrough (a TLSRoute's job, not an HTTPRoute's)",
};

/** Keys with a Gateway API form that this preview does not write (or that the Gateways do not serve). */
function notServedYet(key: string): string | null {
  if (key.startsWith("cors-")) {
    return "the Gateways serve the CORS filter, but this preview does not write it yet: add a CORS filter to the rule";
  }
  if (key.startsWith("sticky-cookie")) return "sessionPersistence is experimental and not served here";
  return null;
}

/** The Gateway API form of each key of ours that has one (the keys the preview maps). */
const FORMS: Readonly<Record<string, string>> = {
  "ssl-redirect": `an HTTPRoute on the HTTP listener (port ${HTTP_PORT}) with RequestRedirect scheme https`,
  "ssl-redirect-code": "the statusCode of the RequestRedirect to https",
  "ssl-redirect-trailing-slash": "the RequestRedirect to https, which keeps the path as sent, a / ending it too",
  "force-ssl-redirect": `an HTTPRoute on the HTTP listener (port ${HTTP_PORT}) with RequestRedirect scheme https`,
  "path-regex": "RegularExpression path matches",
  "rewrite-target": "URLRewrite path",
  "app-root": "a rule for Exact / with RequestRedirect (302, ReplaceFullPath)",
  "redirect-to": "RequestRedirect (scheme, hostname, port, ReplaceFullPath)",
  "redirect-code": "the statusCode of the RequestRedirect",
  "www-redirect": "an HTTPRoute for the www twin with RequestRedirect hostname (308)",
  "request-headers-set": "RequestHeaderModifier set (Host: URLRewrite hostname)",
  "request-headers-add": "RequestHeaderModifier add",
  "request-headers-delete": "RequestHeaderModifier remove",
  "response-headers-set": "ResponseHeaderModifier set",
  "response-headers-add": "ResponseHeaderModifier add",
  "response-headers-delete": "ResponseHeaderModifier remove",
  "canary": "a backendRef of the main Ingress's HTTPRoute",
  "canary-weight": "backendRef weights on the main Ingress's HTTPRoute",
  "canary-header": "a rule with a header match on the main Ingress's HTTPRoute",
  "canary-header-value": "the value of the canary's header match",
  "timeout-server": "rules[].timeouts.backendRequest (the Gateways' backend timeout, HAProxy's timeout server as here)",
};

type Settings = Readonly<Record<string, string>>;

/**
 * Our keys as the compatibility mode applies them: the Ingress's own, then the translated ones, then
 * ingress-nginx's defaults where they differ from ours (nginx/convert.ts `COMPAT_DEFAULTS`), whose
 * names (without prefix) are `defaults`.
 */
function settingsOf(ing: IngressObject): { settings: Settings; defaults: string[] } {
  const annotations = ing.metadata?.annotations ?? {};
  const own = Object.fromEntries(Object.entries(annotations).filter(([k]) => !k.startsWith(NGINX_PREFIX)));
  const translated = translateIngress(ing).annotations;
  const defaults = compatDefaults({ namespace: ing.metadata?.namespace ?? "", annotations }, translated);
  return {
    settings: { ...own, ...translated, ...defaults },
    defaults: Object.keys(defaults).map((k) => k.slice(PREFIX.length)),
  };
}

/** A key's parsed value, else its default's, else null (an invalid value counts as unset, as in the model). */
function setting<T>(s: Settings, key: string): T | null {
  const read = readAnnotation<T>(s, key);
  if (read?.parsed.ok) return read.parsed.value;
  const spec = specOf(key)!;
  if (spec.default === null) return null;
  const p = spec.value.parse(spec.default);
  return p.ok ? p.value as T : null;
}

/** Keys of ours (without prefix) the Ingress's settings set. */
function keysSet(s: Settings): string[] {
  return Object.keys(s).filter((k) => k.startsWith(PREFIX)).map((k) => k.slice(PREFIX.length))
    .filter((k) => specOf(k) !== undefined);
}

const showHost = (h: string) => h === "" ? "(any host)" : h;

/**
 * The Ingress's regex (matched from the start of the path, its end open) as a RegularExpression that
 * this Gateway matches against the whole path: `.*` after each top-level alternative not ending in `$`.
 */
export function openEndedRegex(re: string): string {
  const alts: string[] = [];
  let [depth, inClass, start] = [0, false, 0];
  for (let i = 0; i < re.length; i++) {
    const c = re[i];
    if (c === "\\") i++;
    else if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|" && depth === 0) {
      alts.push(re.slice(start, i));
      start = i + 1;
    }
  }
  alts.push(re.slice(start));
  return alts.map((a) => /(?:^|[^\\])\$$/.test(a) || a.endsWith(".*") ? a : `${a}.*`).join("|");
}

/**
 * ingress-nginx's rewrite idiom `P(/|$)(.*)` with target `T$2` (T ending in `/`, P a literal path):
 * the same as PathPrefix P with ReplacePrefixMatch T. Null for any other regex or target.
 */
export function prefixRewriteOf(regex: string, target: string): { prefix: string; replace: string } | null {
  const r = /^(\/[A-Za-z0-9_~,;=:@\/-]*[A-Za-z0-9_~,;=:@-])\(\/\|\$\)\(\.\*\)$/.exec(regex);
  const t = /^(\/(?:[A-Za-z0-9._~!*+,;=:@\/-]*\/)?)\$2$/.exec(target);
  return r && t ? { prefix: r[1], replace: t[1] } : null;
}

/** The match of an Ingress path, and the path rewrite it needs. */
interface PathRule {
  match: HTTPRouteMatch;
  rewritePath: HTTPPathModifier | null;
}

/** What the preview reads of one Ingress once. */
interface Reading {
  ing: IngressObject;
  ns: string;
  name: string;
  settings: Settings;
  /** Keys of `settings` that are only the compatibility mode's defaults. */
  defaults: string[];
  canary: boolean;
  verdicts: string[];
  notes: string[];
  /** Keys of ours that have no Gateway API form here (for the verdicts). */
  unmapped: Set<string>;
  /** Forms that depend on the value, by key of ours (over FORMS). */
  forms: Map<string, string>;
  withheld: string[];
  /** The Ingress's paths the Gateway matches as regexes, by host; `prefix`: the `P(/|$)(.*)` idiom's PathPrefix. */
  regexPaths: { host: string; raw: string; prefix: string | null }[];
}

function read(ing: IngressObject): Reading {
  const ns = ing.metadata?.namespace ?? "default";
  const name = ing.metadata?.name ?? "";
  const { settings, defaults } = settingsOf(ing);
  return {
    ing,
    ns,
    name,
    settings,
    defaults,
    canary: setting<boolean>(settings, "canary") === true,
    verdicts: [],
    notes: [],
    unmapped: new Set(),
    forms: new Map(),
    withheld: [],
    regexPaths: [],
  };
}

/** Which paths of an Ingress are regexes (`path-regex`): none, the ImplementationSpecific ones, all. */
function regexPathsOf(r: Reading): "false" | "true" | "all" {
  return setting<"false" | "true" | "all">(r.settings, "path-regex") ?? "false";
}

/** A path is one of the Ingress's own regexes: `path-regex: all`, or `true` and ImplementationSpecific. */
function ownRegex(r: Reading, pathType: string | undefined): boolean {
  const paths = regexPathsOf(r);
  return paths === "all" || (paths === "true" && pathType === "ImplementationSpecific");
}

/**
 * The hosts where every path is a regex, as the model makes them (render/model.ts `regexHosts`,
 * ingress-nginx's enforceRegexModifier): those an Ingress with `path-regex: all` (use-regex or
 * rewrite-target in compatibility mode) routes with a valid regex path, the other Ingresses' paths
 * of the host too. Canaries route nothing of their own.
 */
function regexHostsOf(readings: readonly Reading[]): Set<string> {
  const out = new Set<string>();
  for (const r of readings) {
    if (r.canary || regexPathsOf(r) !== "all") continue;
    for (const rule of r.ing.spec?.rules ?? []) {
      const host = rule.host ?? "";
      if (host !== "" && !isHost(host)) continue;
      const paths = rule.http?.paths ?? [];
      if (
        paths.some((p) => pathRegexProblem(p.path ?? (p.pathType === "ImplementationSpecific" ? "/" : "")) === null)
      ) {
        out.add(host);
      }
    }
  }
  return out;
}

/**
 * A regex path as a Gateway match: `/` (every path, from its start) as PathPrefix `/`, which matches
 * the same paths and keeps its place after every other regex of the host, as the Ingress's
 * longest-first order does; any other as a RegularExpression open at its end.
 */
function regexMatch(regex: string): HTTPRouteMatch {
  return regex === "/"
    ? { path: { type: "PathPrefix", value: "/" } }
    : { path: { type: "RegularExpression", value: openEndedRegex(regex) } };
}

/**
 * The path match of one Ingress path and the rewrite it needs, or a reason it has none. `regexHost`:
 * another Ingress makes every path of the path's host a regex.
 */
function pathRule(
  r: Reading,
  host: string,
  path: string | undefined,
  pathType: string | undefined,
  regexHost: boolean,
): PathRule | string {
  const rewrite = setting<{ target: string; captures: boolean }>(r.settings, "rewrite-target");
  const raw = path ?? (pathType === "ImplementationSpecific" ? "/" : "");
  if (pathType !== "Exact" && pathType !== "Prefix" && pathType !== "ImplementationSpecific") {
    return `path type ${JSON.stringify(pathType)} is not served`;
  }
  if (ownRegex(r, pathType)) {
    const problem = pathRegexProblem(raw);
    if (problem !== null) return `as a regex (path-regex) it ${problem}`;
    const idiom = rewrite?.captures ? prefixRewriteOf(raw, rewrite.target) : null;
    r.regexPaths.push({ host, raw, prefix: idiom?.prefix ?? null });
    if (idiom) {
      const form = `PathPrefix ${idiom.prefix} with URLRewrite ReplacePrefixMatch ${idiom.replace} (the same as ` +
        `${raw} with ${rewrite!.target})`;
      r.forms.set("rewrite-target", form).set("path-regex", form);
      return {
        match: { path: { type: "PathPrefix", value: idiom.prefix } },
        rewritePath: { type: "ReplacePrefixMatch", replacePrefixMatch: idiom.replace },
      };
    }
    if (rewrite?.captures) {
      r.unmapped.add("rewrite-target");
      r.notes.push(`${raw}: served without its rewrite (URLRewrite has no regex captures)`);
    }
    return {
      match: regexMatch(raw),
      rewritePath: rewrite && !rewrite.captures ? { type: "ReplaceFullPath", replaceFullPath: rewrite.target } : null,
    };
  }
  if (!raw.startsWith("/")) return `path ${JSON.stringify(raw)} is not absolute`;
  const exact = pathType === "Exact";
  if (rewrite?.captures) r.unmapped.add("rewrite-target"); // ignored on these paths, as by the Ingress
  const prefixRewrite = rewrite && !rewrite.captures;
  // As the model: on a host where every path is a regex, a path becomes its regex unless it is no
  // valid regex or its route rewrites its prefix (then it keeps its match, with a Warning there).
  const own = exact ? raw : raw.replace(/\/+$/, "") || "/";
  if (regexHost && !prefixRewrite && pathRegexProblem(own) === null) {
    r.regexPaths.push({ host, raw: own, prefix: null });
    r.notes.push(
      `${showHost(host)} ${raw} (${pathType}): a regex, as every path of the host, since an Ingress of the host ` +
        "has use-regex or rewrite-target (as in ingress-nginx)",
    );
    return { match: regexMatch(own), rewritePath: null };
  }
  return {
    match: { path: { type: exact ? "Exact" : "PathPrefix", value: raw } },
    rewritePath: prefixRewrite
      ? exact
        ? { type: "ReplaceFullPath", replaceFullPath: rewrite.target }
        : { type: "ReplacePrefixMatch", replacePrefixMatch: rewrite.target }
      : null,
  };
}

/** The backendRef of an Ingress backend, or why there is none. */
function backendRef(
  ns: string,
  backend: IngressBackend | undefined,
  services: readonly ServiceLike[],
): HTTPBackendRef | string {
  const svc = backend?.service;
  if (!svc?.name) return "a backend that is not a Service has no backendRef form";
  if (typeof svc.port?.number === "number") return { name: svc.name, port: svc.port.number };
  const portName = svc.port?.name;
  const found = services.find((s) => s.metadata?.namespace === ns && s.metadata?.name === svc.name)
    ?.spec?.ports?.find((p) => p.name === portName)?.port;
  if (typeof found === "number") return { name: svc.name, port: found };
  return `Service ${ns}/${svc.name}: its port ${JSON.stringify(portName ?? "")} is named, and the Service is not ` +
    "in the input (the file, or the Services the cluster let us list) to look its number up: give the Services " +
    "too, or port numbers";
}

/** The request and response header filters of a path, and the Host a URLRewrite sets. */
function headerFilters(s: Settings): { filters: HTTPRouteFilter[]; host: string | null } {
  const lines = (key: string) => setting<HeaderLine[]>(s, key) ?? [];
  const names = (key: string) => setting<string[]>(s, key) ?? [];
  const filters: HTTPRouteFilter[] = [];
  let host: string | null = null;
  const reqSet = lines("request-headers-set").filter((h) => {
    if (h.name.toLowerCase() !== "host") return true;
    host = h.value;
    return false;
  });
  const edits = (set: HeaderLine[], add: HeaderLine[], remove: string[]) => ({
    ...(set.length ? { set: set.map((h): HTTPHeader => ({ name: h.name, value: h.value })) } : {}),
    ...(add.length ? { add: add.map((h): HTTPHeader => ({ name: h.name, value: h.value })) } : {}),
    ...(remove.length ? { remove } : {}),
  });
  const req = edits(reqSet, lines("request-headers-add"), names("request-headers-delete"));
  if (Object.keys(req).length) filters.push({ type: "RequestHeaderModifier", requestHeaderModifier: req });
  const res = edits(lines("response-headers-set"), lines("response-headers-add"), names("response-headers-delete"));
  if (Object.keys(res).length) filters.push({ type: "ResponseHeaderModifier", responseHeaderModifier: res });
  return { filters, host };
}

/**
 * `timeout-server` (HAProxy time: digits and ms, s or m) as a Gateway API duration (GEP-2257: up to
 * five digits per unit, h m s ms in this order), the rule's `timeouts.backendRequest`.
 */
export function backendRequestTimeout(value: string | null): string | null {
  const m = value === null ? null : /^([0-9]{1,6})(ms|s|m)$/.exec(value);
  if (!m) return null;
  let ms = Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 }[m[2]] ?? 0);
  const parts: string[] = [];
  for (const [unit, size] of [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]] as const) {
    const n = Math.floor(ms / size);
    ms -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
  }
  return parts.length > 0 ? parts.join("") : null;
}

/** `redirect-to` as a RequestRedirect filter. */
function redirectFilter(url: string, code: number): HTTPRouteFilter {
  const u = new URL(url);
  return {
    type: "RequestRedirect",
    requestRedirect: {
      scheme: u.protocol.slice(0, -1),
      hostname: u.hostname,
      ...(u.port ? { port: Number(u.port) } : {}),
      path: { type: "ReplaceFullPath", replaceFullPath: u.pathname || "/" },
      statusCode: code,
    },
  };
}

/** A canary of a main Ingress's path, as the main route's rules take it. */
interface CanaryOf {
  reading: Reading;
  ref: HTTPBackendRef;
}

/** The rules of one path of the main Ingress: canary header rules first, then the weighted default. */
function rulesOfPath(
  r: Reading,
  pr: PathRule,
  ref: HTTPBackendRef,
  canary: CanaryOf | undefined,
): HTTPRouteRule[] {
  const redirectTo = setting<string>(r.settings, "redirect-to");
  if (redirectTo !== null) {
    const code = Number(setting<string>(r.settings, "redirect-code") ?? "302");
    return [{ matches: [pr.match], filters: [redirectFilter(redirectTo, code)] }];
  }
  const { filters, host } = headerFilters(r.settings);
  const rewrite = pr.rewritePath || host !== null
    ? [{
      type: "URLRewrite",
      urlRewrite: { ...(host !== null ? { hostname: host } : {}), ...(pr.rewritePath ? { path: pr.rewritePath } : {}) },
    }]
    : [];
  const all = [...filters, ...rewrite];
  const backendRequest = backendRequestTimeout(setting<string>(r.settings, "timeout-server"));
  const rule = (match: HTTPRouteMatch, backendRefs: HTTPBackendRef[]): HTTPRouteRule => ({
    matches: [match],
    ...(all.length ? { filters: all } : {}),
    backendRefs,
    ...(backendRequest !== null ? { timeouts: { backendRequest } } : {}),
  });
  if (!canary) return [rule(pr.match, [ref])];
  const c = canary.reading.settings;
  const out: HTTPRouteRule[] = [];
  const header = setting<string>(c, "canary-header");
  if (header !== null) {
    const value = setting<string>(c, "canary-header-value");
    out.push(rule({ ...pr.match, headers: [{ name: header, value: value ?? "always" }] }, [canary.ref]));
    if (value === null) out.push(rule({ ...pr.match, headers: [{ name: header, value: "never" }] }, [ref]));
  }
  const weight = setting<number>(c, "canary-weight") ?? 0;
  out.push(
    rule(
      pr.match,
      weight <= 0
        ? [ref]
        : weight >= 100
        ? [canary.ref]
        : [{ ...ref, weight: 100 - weight }, { ...canary.ref, weight }],
    ),
  );
  return out;
}

/** The verdict of each annotation of the Ingress (ours and ingress-nginx's). */
function verdicts(r: Reading): string[] {
  const out: string[] = [];
  const annotations = r.ing.metadata?.annotations ?? {};
  const rows = new Map(checkIngress(r.ing).map((row) => [row.annotation, row]));
  const ctx = { namespace: r.ns, annotations };
  const formOf = (ours: string[]) => {
    if (ours.every((k) => specOf(k)!.value === bool && readAnnotation(r.settings, k)?.raw === "false")) {
      return "nothing to carry over (false)";
    }
    const missing = ours.filter((k) => !FORMS[k] || r.unmapped.has(k));
    if (missing.length > 0) {
      const why = missing.map((k) => {
        const more = WITHHOLDS[k] ?? notServedYet(k);
        return more ? `${k}: ${more}` : k;
      }).join(", ");
      return `no Gateway API form served here (${why}); stays an Ingress annotation`;
    }
    return [...new Set(ours.map((k) => r.forms.get(k) ?? FORMS[k]))].join("; ");
  };
  for (const ann of Object.keys(annotations).sort()) {
    if (ann.startsWith(NGINX_PREFIX)) {
      const row = rows.get(ann)!;
      if (row.verdict !== "supported" && row.verdict !== "translated") {
        out.push(`${ann}: ${row.verdict} by this controller (${row.note}); nothing to carry over`);
        continue;
      }
      const key = ann.slice(NGINX_PREFIX.length);
      const converted = Object.keys(convertedAnnotations([key], ctx)).map((k) => k.slice(PREFIX.length));
      // keys read by another key's conversion (auth-type, affinity-mode, …) answer for the keys they serve
      const ours = converted.length > 0 ? converted : [...(NGINX_RULES[key]?.to ?? [])];
      const backendProtocol = ours.includes("backend-protocol") ? backendProtocolVerdict(r) : null;
      if (backendProtocol) out.push(`${ann}: ${backendProtocol}`);
      else if (ours.length === 0) out.push(`${ann}: nothing to carry over (${row.note || "no effect alone"})`);
      else out.push(`${ann}: ${formOf(ours)}`);
    } else if (ann.startsWith(PREFIX) && specOf(ann.slice(PREFIX.length))) {
      const key = ann.slice(PREFIX.length);
      out.push(`${ann}: ${key === "backend-protocol" ? backendProtocolVerdict(r) : formOf([key])}`);
    } else if (ann.startsWith("cert-manager.io/")) {
      out.push(`${ann}: annotate the Gateway instead (cert-manager's gateway-shim issues the listeners' certificates)`);
    }
  }
  return out;
}

function backendProtocolVerdict(r: Reading): string {
  const p = setting<string>(r.settings, "backend-protocol");
  if (p === "h2") return "set appProtocol: kubernetes.io/h2c on the Service's port (the Gateway API form of h2c)";
  if (p === "h1") return "nothing to carry over (HTTP/1.1 is the default)";
  r.unmapped.add("backend-protocol");
  return "no Gateway API form served here for TLS to the backend (BackendTLSPolicy); stays an Ingress annotation";
}

/** The hosts of the Ingress's TLS sections (their rule hosts when a section lists none), with the Secret. */
function tlsHosts(r: Reading): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const ruleHosts = (r.ing.spec?.rules ?? []).map((x) => x.host ?? "").filter((h) => h !== "");
  for (const t of r.ing.spec?.tls ?? []) {
    const hosts = (t.hosts ?? []).length > 0 ? t.hosts! : ruleHosts;
    for (const h of hosts) if (isHost(h) && !out.has(h)) out.set(h, t.secretName ?? null);
  }
  return out;
}

/**
 * The Ingress orders a host's regexes longest first; the Gateway tries every RegularExpression
 * before any PathPrefix. A `P(/|$)(.*)` idiom, which becomes PathPrefix P, therefore comes after
 * the shorter regexes of its host that the Ingress tried after it: where one of them matches under
 * P too, the requests go elsewhere, which the idiom's Ingress is told.
 */
function prefixAfterRegexes(r: Reading, readings: readonly Reading[]): void {
  for (const idiom of r.regexPaths) {
    if (idiom.prefix === null) continue;
    const under = [idiom.prefix, `${idiom.prefix}/`];
    const before = readings.flatMap((o) => o.regexPaths).filter((x) =>
      x.host === idiom.host && x.prefix === null && x.raw !== "/" && x.raw.length <= idiom.raw.length &&
      under.some((path) => matchesFromStart(x.raw, path))
    ).map((x) => x.raw);
    if (before.length === 0) continue;
    r.notes.push(
      `${showHost(idiom.host)} ${idiom.raw}: the Gateway tries the regex ${[...new Set(before)].join(", ")} before ` +
        `PathPrefix ${idiom.prefix}, the Ingress tried this longer regex first: requests under ${idiom.prefix} ` +
        "that both match go elsewhere through the Gateway",
    );
  }
}

/** The Ingress's match of a regex path (from the start, case-insensitively); unreadable here: a match. */
function matchesFromStart(regex: string, path: string): boolean {
  try {
    return new RegExp(`^(?:${regex})`, "i").test(path);
  } catch {
    return true;
  }
}

/** The `www.` twin of a host (or the bare twin of a `www.` host). */
function twinOf(host: string): string | null {
  if (host.startsWith("*.")) return null;
  const twin = host.startsWith("www.") ? host.slice(4) : `www.${host}`;
  return isHost(twin) ? twin : null;
}

/** At most this many hostnames, and rules, in one HTTPRoute (the CRD's maxItems). */
const ROUTE_LIST_MAX = 16;

/** `xs` in runs of `n` (one empty run for an empty list). */
function chunks<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out.length ? out : [[]];
}

/** Plans the migration of `ingresses` to HTTPRoutes attached to `gateway`. */
export function planMigration(
  ingresses: readonly IngressObject[],
  gateway: GatewayRef,
  services: readonly ServiceLike[] = [],
): MigrationPlan {
  const readings = ingresses.map(read);
  const regexHosts = regexHostsOf(readings);
  const key = (ns: string, host: string, path: string) => `${ns}\u0000${host}\u0000${path}`;
  const canaries = new Map<string, CanaryOf>();
  for (const r of readings.filter((x) => x.canary)) {
    const own = keysSet(r.settings).filter((k) => !k.startsWith("canary") && !r.defaults.includes(k));
    if (own.length > 0) {
      r.notes.push(`its own ${own.join(", ")} ${own.length > 1 ? "are" : "is"} not carried to its backendRef`);
    }
    for (const rule of r.ing.spec?.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const ref = backendRef(r.ns, p.backend, services);
        if (typeof ref === "string") r.notes.push(ref);
        else {
          const k = key(r.ns, rule.host ?? "", p.path ?? "/");
          if (!canaries.has(k)) canaries.set(k, { reading: r, ref });
        }
      }
    }
  }
  const used = new Set<Reading>();
  const listeners = new Map<string, Listener>();
  listeners.set("http", {
    name: "http",
    port: HTTP_PORT,
    protocol: "HTTP",
    allowedRoutes: { namespaces: { from: "All" } },
  });
  const grants = new Map<string, ReferenceGrant>();
  const parent = (port: number | null): ParentReference => ({
    name: gateway.name,
    namespace: gateway.namespace,
    ...(port !== null ? { port } : {}),
  });
  const out: IngressMigration[] = [];

  for (const r of readings) {
    const routeOf = (suffix: string, hostnames: string[], rules: HTTPRouteRule[], port: number | null): HTTPRoute => ({
      apiVersion: `${GROUP}/v1`,
      kind: "HTTPRoute",
      metadata: { name: `${r.name}${suffix}`, namespace: r.ns },
      spec: { parentRefs: [parent(port)], ...(hostnames.length ? { hostnames } : {}), rules },
    } as HTTPRoute);
    const routes: HTTPRoute[] = [];
    if (r.canary) {
      r.verdicts.push(...verdicts(r));
      out.push({ namespace: r.ns, name: r.name, verdicts: r.verdicts, notes: r.notes, routes, withheld: null });
      continue;
    }
    // Rules by host ("": the Ingress's rules without host).
    const tls = tlsHosts(r);
    const redirectHosts = new Set<string>();
    if (setting<boolean>(r.settings, "ssl-redirect") === true) { for (const h of tls.keys()) redirectHosts.add(h); }
    const force = setting<boolean>(r.settings, "force-ssl-redirect") === true;
    const byHost = new Map<string, HTTPRouteRule[]>();
    const appRoot = setting<string>(r.settings, "app-root");
    for (const rule of r.ing.spec?.rules ?? []) {
      const host = rule.host ?? "";
      if (host !== "" && !isHost(host)) {
        r.notes.push(`host ${JSON.stringify(host)} is not a valid host: left out`);
        continue;
      }
      if (force && host !== "") redirectHosts.add(host);
      const rules = byHost.get(host) ?? [];
      byHost.set(host, rules);
      for (const p of rule.http?.paths ?? []) {
        const pr = pathRule(r, host, p.path, p.pathType, regexHosts.has(host));
        if (typeof pr === "string") {
          r.notes.push(`${showHost(host)} ${p.path ?? ""}: ${pr}; left out`);
          continue;
        }
        const ref = backendRef(r.ns, p.backend, services);
        if (typeof ref === "string") {
          r.withheld.push(ref);
          continue;
        }
        const canary = canaries.get(key(r.ns, host, p.path ?? "/"));
        if (canary) {
          used.add(canary.reading);
          canary.reading.notes.push(
            `merged into the HTTPRoute of ${r.ns}/${r.name} (${showHost(host)} ${p.path ?? "/"})`,
          );
          r.notes.push(`${showHost(host)} ${p.path ?? "/"}: the canary ${r.ns}/${canary.reading.name} is merged here`);
        }
        rules.push(...rulesOfPath(r, pr, ref, canary));
      }
      if (appRoot !== null && host !== "" && rules.length > 0) {
        rules.unshift({
          matches: [{ path: { type: "Exact", value: "/" } }],
          filters: [{
            type: "RequestRedirect",
            requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: appRoot }, statusCode: 302 },
          }],
        });
      }
    }
    if (r.ing.spec?.defaultBackend) {
      const ref = backendRef(r.ns, r.ing.spec.defaultBackend, services);
      if (typeof ref === "string") r.withheld.push(ref);
      else {
        r.notes.push(
          "spec.defaultBackend: a rule for every path of any host not otherwise routed (a route without hostnames)",
        );
        byHost.set("", [...(byHost.get("") ?? []), { backendRefs: [ref] }]);
      }
    }
    // Hosts with the same rules and redirect share a route; rules without host (any host) get their own.
    const groups = new Map<string, { hosts: string[]; rules: HTTPRouteRule[]; redirected: boolean }>();
    for (const [host, rules] of byHost) {
      if (rules.length === 0) continue;
      const redirected = redirectHosts.has(host);
      const sig = `${host === ""}\u0000${redirected}\u0000${JSON.stringify(rules)}`;
      const g = groups.get(sig) ?? { hosts: [], rules, redirected };
      g.hosts.push(host);
      groups.set(sig, g);
    }
    let n = 0;
    for (const g of groups.values()) {
      // the CRD's limits: 16 hostnames and 16 rules a route
      for (const hostnames of chunks(g.hosts.filter((h) => h !== ""), ROUTE_LIST_MAX)) {
        for (const rules of chunks(g.rules, ROUTE_LIST_MAX)) {
          const suffix = n++ === 0 ? "" : `-${n}`;
          routes.push(routeOf(suffix, hostnames, rules, g.redirected ? HTTPS_PORT : null));
        }
      }
    }
    const redirected = [...redirectHosts].filter((h) => byHost.has(h) || tls.has(h)).sort();
    const code = Number(setting<string>(r.settings, "ssl-redirect-code") ?? "308");
    for (const [i, hostnames] of chunks(redirected, ROUTE_LIST_MAX).entries()) {
      if (hostnames.length === 0) continue;
      routes.push(routeOf(i === 0 ? "-https-redirect" : `-https-redirect-${i + 1}`, hostnames, [{
        filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: code } }],
      }], HTTP_PORT));
    }
    if (redirected.length > 0 && setting<string>(r.settings, "ssl-redirect-trailing-slash") === "drop") {
      r.unmapped.add("ssl-redirect-trailing-slash");
      r.notes.push(
        "the redirect to HTTPS: the Ingress drops a / ending the path (GET /docs/ → https://<host>/docs), as " +
          "ingress-nginx does without preserve-trailing-slash; the RequestRedirect keeps the path as sent " +
          "(https://<host>/docs/)",
      );
    }
    if (setting<boolean>(r.settings, "www-redirect") === true) {
      const twins = new Map<string, string[]>();
      for (const h of byHost.keys()) {
        const twin = twinOf(h);
        if (twin && !byHost.has(twin)) twins.set(h, [...(twins.get(h) ?? []), twin]);
      }
      for (const [i, [host, names]] of [...twins].entries()) {
        routes.push(routeOf(i === 0 ? "-www" : `-www-${i + 1}`, names, [{
          filters: [{ type: "RequestRedirect", requestRedirect: { hostname: host, statusCode: 308 } }],
        }], null));
      }
    }
    const lost = [
      ...new Set(
        keysSet(r.settings).filter((k) => WITHHOLDS[k] && ![null, false].includes(setting(r.settings, k))).map((k) =>
          WITHHOLDS[k]
        ),
      ),
    ];
    const protocol = setting<string>(r.settings, "backend-protocol");
    if (protocol === "h1-tls" || protocol === "h2-tls") {
      lost.push("TLS to the backend (BackendTLSPolicy is not served here yet: the route would send plain HTTP)");
    }
    if (lost.length > 0) {
      r.withheld.unshift(
        `the route would lose ${lost.join(", ")}, and applying it would serve its paths without: keep the Ingress`,
      );
    }
    // TLS: the listeners (and grants) the routes need.
    for (const [host, secret] of r.withheld.length ? [] : tls) {
      if (secret === null) {
        r.notes.push(`TLS for ${host} uses the controller's default certificate: give its listener a certificate`);
        continue;
      }
      const name = `https-${host.replace(/^\*\./, "wildcard.")}`;
      const existing = listeners.get(name);
      const ref = { kind: "Secret", name: secret, namespace: r.ns };
      if (existing) {
        const had = existing.tls?.certificateRefs?.[0];
        if (had && (had.name !== secret || had.namespace !== r.ns)) {
          r.notes.push(
            `TLS for ${host}: listener ${name} already uses Secret ${had.namespace}/${had.name}; ${r.ns}/${secret} is not used`,
          );
        }
        continue;
      }
      r.notes.push(
        `TLS for ${host}: the Gateway's listener ${name} (port ${HTTPS_PORT}) with Secret ${r.ns}/${secret}`,
      );
      listeners.set(name, {
        name,
        hostname: host,
        port: HTTPS_PORT,
        protocol: "HTTPS",
        tls: { mode: "Terminate", certificateRefs: [ref] },
        allowedRoutes: {
          namespaces: { from: "Selector", selector: { matchLabels: { "kubernetes.io/metadata.name": r.ns } } },
        },
      });
      if (r.ns !== gateway.namespace) {
        const g = grants.get(r.ns) ?? {
          apiVersion: `${GROUP}/v1beta1`,
          kind: "ReferenceGrant",
          metadata: {
            name: `gateway-${gateway.namespace}-${gateway.name}-certificates`.slice(0, 253),
            namespace: r.ns,
          },
          spec: { from: [{ group: GROUP, kind: "Gateway", namespace: gateway.namespace }], to: [] },
        } as ReferenceGrant;
        if (!g.spec.to.some((t) => t.name === secret)) g.spec.to.push({ group: "", kind: "Secret", name: secret });
        grants.set(r.ns, g);
      }
    }
    // `/` matches every path in any case
    if (r.regexPaths.some((x) => x.raw !== "/")) {
      r.notes.push(
        "regex paths: the Gateway matches them (and the prefixes they became) case-sensitively; the Ingress " +
          "matched them case-insensitively",
      );
    }
    for (const h of byHost.keys()) {
      if (h.startsWith("*.")) {
        r.notes.push(`${h}: the Gateway's wildcard matches one or more labels, the Ingress's one`);
      }
    }
    r.verdicts.push(...verdicts(r));
    out.push({
      namespace: r.ns,
      name: r.name,
      verdicts: r.verdicts,
      notes: r.notes,
      routes,
      withheld: r.withheld.length ? r.withheld.join("; ") : null,
    });
  }
  for (const r of readings) prefixAfterRegexes(r, readings);
  for (const r of readings.filter((x) => x.canary && !used.has(x))) {
    const m = out.find((x) => x.namespace === r.ns && x.name === r.name)!;
    m.notes.push(
      "no Ingress of its namespace serves its host and path: nothing to merge into (as the Ingress: ignored)",
    );
  }
  return {
    gateway,
    ingresses: out,
    listeners: [...listeners.values()],
    grants: [...grants.values()],
  };
}
