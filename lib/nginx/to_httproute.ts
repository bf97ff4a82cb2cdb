/**
 * @module nginx/to_httproute
 * The migration preview (`nginx-check --output httproute`): what Ingresses written for ingress-nginx
 * become in the Gateway API. Each Ingress's annotations are read as the compatibility mode applies
 * them (nginx/translate.ts `translateIngress` and the mode's defaults, nginx/convert.ts
 * `compatDefaults`: our keys, parsed by lib/annotations' parsers), so the preview claims exactly what
 * this controller serves today, then each key of ours with a Gateway API form becomes a match or
 * filter of an HTTPRoute: redirects to HTTPS (a route on the HTTP listener), `redirect-to`,
 * `app-root` and `www-redirect` (RequestRedirect), `rewrite-target` (URLRewrite, the `P(/|$)(.*)` +
 * `/$2` regex form as a prefix), a `Host` set (URLRewrite hostname), header edits and `hsts`
 * (Request/ResponseHeaderModifier), CORS (the CORS filter, nginx/httproute_cors.ts), the backend
 * timeout (timeouts.backendRequest), regex paths (RegularExpression: with `path-regex: all` every path
 * of the host, other Ingresses' too, as the model makes them) and canaries (weighted backendRefs,
 * header matches). What the Gateway API cannot say the same way is a note (case, the idiom's place
 * after the host's regexes, the / the HTTPS redirect drops). Every annotation gets a verdict; an Ingress that restricts who may
 * reach it (authentication, address lists, client certificates, backend verification) in a way the
 * Gateway API cannot is withheld: its route is shown, never emitted, since applying it would open
 * the Ingress's paths. The TLS sections become the Gateway listeners (and ReferenceGrants) the routes
 * need, as a suggestion. Pure: no I/O (the YAML text: nginx/httproute_yaml.ts). Its parts: the shapes
 * (nginx/httproute_types.ts), the settings read (nginx/httproute_settings.ts), the one-value pieces
 * (nginx/httproute_filters.ts), CORS (nginx/httproute_cors.ts) and the verdicts (nginx/httproute_verdicts.ts).
 */
import { pathRegexProblem } from "../annotations/values.ts";
import type {
  HTTPBackendRef,
  HTTPRoute,
  HTTPRouteMatch,
  HTTPRouteRule,
  Listener,
  ParentReference,
  ReferenceGrant,
} from "../gateway/api.ts";
import { GROUP } from "../gateway/api.ts";
import { isDns1123Label, isDns1123Subdomain, isHost } from "../render/patterns.ts";
import {
  backendRequestTimeout,
  headerFilters,
  hstsValue,
  matchesFromStart,
  prefixRewriteOf,
  redirectFilter,
  regexMatch,
} from "./httproute_filters.ts";
import { keysSet, setting, settingsOf } from "./httproute_settings.ts";
import { CORS_KEYS, corsMapping } from "./httproute_cors.ts";
import {
  type GatewayRef,
  HTTP_PORT,
  HTTPS_PORT,
  type IngressBackend,
  type IngressMigration,
  type IngressObject,
  type MigrationPlan,
  type PathRule,
  type Reading,
  type ServiceLike,
} from "./httproute_types.ts";
import { verdicts, WITHHOLDS } from "./httproute_verdicts.ts";

export type {
  GatewayRef,
  IngressBackend,
  IngressMigration,
  IngressObject,
  MigrationPlan,
  ServiceLike,
} from "./httproute_types.ts";
export { HTTP_PORT, HTTPS_PORT } from "./httproute_types.ts";
export { backendRequestTimeout, openEndedRegex, prefixRewriteOf } from "./httproute_filters.ts";

/** `namespace/name` of the Gateway, or a one-line reason. */
export function parseGatewayRef(raw: string): GatewayRef | string {
  const m = /^([^/]+)\/([^/]+)$/.exec(raw);
  if (!m || !isDns1123Label(m[1]) || !isDns1123Subdomain(m[2])) {
    return `${JSON.stringify(raw)} is not NAMESPACE/NAME of a Gateway`;
  }
  return { namespace: m[1], name: m[2] };
}

const showHost = (h: string) => h === "" ? "(any host)" : h;

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
    why: new Map(),
    cors: null,
    withheld: [],
    regexPaths: [],
  };
}

/** The CORS filter of a main Ingress's rules, its verdicts and notes (a canary's keys are not carried). */
function readCors(r: Reading): void {
  const c = corsMapping(r.settings);
  for (const [k, form] of c.forms) r.forms.set(k, form);
  r.notes.push(...c.notes);
  r.cors = c.filter;
  if (c.unmapped !== null) {
    for (const k of CORS_KEYS) {
      r.unmapped.add(k);
      r.why.set(k, c.unmapped);
    }
  }
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
  const all = [...filters, ...(r.cors ? [r.cors] : []), ...rewrite];
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
    readCors(r);
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
    // HSTS: the Ingress sends it on HTTPS answers only; a route on every listener sends it over HTTP too
    if (hstsValue(r.settings) === null) {
      for (const k of ["hsts-max-age", "hsts-include-subdomains", "hsts-preload"]) {
        r.forms.set(k, "nothing to carry over (hsts is off)");
      }
    } else if (
      routes.some((x) => x.spec.parentRefs?.[0]?.port !== HTTPS_PORT && (x.spec.rules ?? []).some((u) => u.backendRefs))
    ) {
      r.notes.push(
        "Strict-Transport-Security: the routes on every listener send it on plain HTTP answers too (the Ingress: on " +
          "HTTPS answers only), where browsers ignore it (RFC 6797, 8.1)",
      );
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
