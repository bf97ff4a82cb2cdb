/**
 * @module render/model
 * Builds the typed, validated, sorted model of one proxy from cluster objects. Everything the
 * templates see comes from here and has passed an anchored pattern (render/patterns.ts).
 *
 * Policy (what happens to invalid input; each case adds a problem that the controller turns
 * into an Event on the object):
 * - Ingress with an invalid namespace or name, or outside the allowed namespace: ignored.
 * - Rule with an invalid host: the rule is dropped.
 * - Path with an invalid path or pathType, or a non-Service backend: the path is dropped.
 * - Path whose Service, Service port or endpoints cannot be resolved: the route is kept and its
 *   backend has no servers (HAProxy answers 503) so the route goes live as soon as endpoints
 *   appear, without a reload.
 * - Endpoint whose address is not an IP literal of its slice's type, or is unspecified, loopback,
 *   link-local or link-local multicast (what the API server's ValidateEndpointIP refuses): the
 *   endpoint is dropped (`InvalidEndpoints` on the EndpointSlice).
 * - Two paths with the same host + path + pathType (also across ingresses): the oldest ingress
 *   (creationTimestamp, then namespace/name) wins, the other gets a `RouteConflict` problem.
 * - Several default backends: the oldest ingress's wins, the others get `DefaultBackendConflict`.
 * - TLS entry with a missing or invalid Secret or an invalid host: TLS is dropped for those hosts
 *   (they stay reachable over HTTP, without redirect). A host listed with two different Secrets
 *   keeps the oldest ingress's (the other gets `TLSHostConflict`).
 * - Annotation with an invalid value: the default applies.
 * `servable` is false when nothing at all can be routed (no route and no default backend).
 *
 * Matching (what the rendered ACLs do):
 * - Exact: the request path equals `path`. Prefix: element-wise, `/foo` matches `/foo` and
 *   `/foo/bar` but not `/foobar`; a trailing slash in `path` is ignored. ImplementationSpecific:
 *   treated exactly like Prefix, except with the Ingress annotation `path-regex`: then `path` is
 *   a regular expression matched case-insensitively from the start of the path (values.ts's
 *   pathRegex; an invalid one drops the path), after the host's Exact paths and before its
 *   prefixes, the longest regex first (lib/render/maps.ts, docs/routing-maps.md).
 * - Host: compared with the Host header without its port, lower-cased. `*.example.com` matches
 *   exactly one label (`a.example.com`, not `example.com` nor `a.b.example.com`).
 * - Order: rules of exact hosts first, then wildcard hosts, then rules without host; within each,
 *   longer paths first and Exact before prefix at equal length. A request whose host has rules but
 *   none of whose paths match falls through to the wildcard and host-less rules, then to the
 *   default backend (the oldest ingress's spec.defaultBackend, else a built-in 404).
 */
import type {
  V1EndpointSlice,
  V1Ingress,
  V1IngressBackend,
  V1Secret,
  V1Service,
  V1ServicePort,
} from "@kubernetes/client-node";
import type { Risk } from "../annotations/table.ts";
import {
  isDns1123Label,
  isDns1123Subdomain,
  isHost,
  isIPv4,
  isIPv6,
  isPath,
  isPortName,
  isPortNumber,
  isProxyName,
  REFUSED_ENDPOINT_RANGES,
  refusedEndpointRange,
} from "./patterns.ts";
import { readAnnotation, resolveSetting, valueMessage } from "../annotations/resolve.ts";
import { pathRegex, type ServiceRef } from "../annotations/values.ts";
import { slotCount } from "./slots.ts";
import { type CanaryRule, type CanarySettings, canarySettings, reservedName } from "./canary.ts";
import { type BackendSettings, DEFAULT_SETTINGS, type ResolveContext, settingsHash } from "./settings.ts";
import { type SecretLike, tlsSummaryOf } from "./tls_secret.ts";
import { hasTableAnnotations, memoBackendSettings, type MemoSettings } from "./settings_memo.ts";

export type PathType = "Exact" | "Prefix" | "ImplementationSpecific";
export type Match = "exact" | "prefix" | "regex";
export type { Balance } from "./settings.ts";
import type { Balance } from "./settings.ts";

/** One routing rule. `host` "" means any host; `match` is how `path` is compared. */
export interface Route {
  host: string;
  path: string;
  pathType: PathType;
  /** `regex`: `path` is a path regex (ImplementationSpecific with `path-regex`). */
  match: Match;
  backend: string;
  /** `namespace/name` of the ingress the route comes from. */
  ingress: string;
}

/** An endpoint: `address` as written in the configuration (IPv4, or bracketed IPv6). */
export interface Server {
  address: string;
  port: number;
}

export interface Backend {
  /**
   * `be_<namespace>_<service>_<port>`; parts are validated, `_` cannot occur in them. A route whose
   * annotations set something points to a variant `be_<namespace>_<service>_<port>_<hash>` holding
   * those settings (docs/annotations-rendering.md).
   */
  name: string;
  namespace: string;
  service: string;
  /** The Service port as the ingress refers to it: a number or a port name. */
  port: number | string;
  servers: Server[];
  /** max(4, next power of two ≥ servers.length). */
  slots: number;
  balance: Balance;
  /** `timeout server` for this backend, e.g. `30s`; null: the defaults section applies. */
  timeoutServer: string | null;
  /** Everything the annotations set (lib/render/settings.ts); absent: none. */
  settings?: BackendSettings;
  /** `default-backend`: the backend that answers while this one has no usable server. */
  fallback?: string;
  /** `tcp`: an `ssl-passthrough` backend, `be_<ns>_<svc>_<port>_tcp`, which gets TLS connections as they come. */
  mode?: "tcp";
}

/** One TLS certificate: a kubernetes.io/tls Secret written by the proxy as `file` in its cert dir. */
export interface TlsCert {
  file: string;
  namespace: string;
  name: string;
  /** SNI names served with this certificate, sorted; empty: no filter (the names in the certificate). */
  hosts: string[];
}

/** A host's client certificate check (`client-cert-*`), rendered on its crt-list line. */
export interface ClientCertCheck {
  namespace: string;
  name: string;
  verify: "required" | "optional";
}

export interface Model {
  /** `namespace/name` of the ingresses merged into this model, oldest first. */
  ingresses: string[];
  /** Routes in match order: exact hosts, wildcard hosts, any host; longer paths first; Exact before prefix. */
  routes: Route[];
  /** Sorted by name. */
  backends: Backend[];
  /** Backend name of the ingress default backend; null: the built-in 404. */
  defaultBackend: string | null;
  /** Sorted by file. */
  tls: TlsCert[];
  /** Hosts whose plain HTTP requests are redirected to HTTPS, sorted. */
  redirectHosts: string[];
  /** The redirect's status code per host when not 308 (`ssl-redirect-code`). */
  redirectCodes?: Record<string, string>;
  /** Canary rules (lib/render/canary.ts), sorted by main backend. */
  canaries?: CanaryRule[];
  /** TLS hosts that ask for client certificates: the CA Secret (its `_ca.pem` file) and the check. */
  clientCerts?: Record<string, ClientCertCheck>;
  /** `ssl-passthrough` hosts and their `mode tcp` backend, sorted by host (docs/ssl-passthrough.md). */
  passthrough?: { host: string; backend: string }[];
  /** Objects the model depends on (`namespace/name`), sorted: re-render when one of them changes. */
  refs: { services: string[]; secrets: string[] };
}

export type ProblemKind = "Ingress" | "Service" | "EndpointSlice" | "Secret";

/** Something wrong with one object; the controller emits it as a Warning Event on `object`. */
export interface Problem {
  object: string;
  kind: ProblemKind;
  reason: string;
  message: string;
}

/** Access to the cluster state (the controller's caches; tests use `lookupFromLists`). */
export interface ClusterLookup {
  service(namespace: string, name: string): V1Service | undefined;
  /** The EndpointSlices labelled `kubernetes.io/service-name=<service>` in `namespace`. */
  endpointSlices(namespace: string, service: string): readonly V1EndpointSlice[];
  /** A full Secret or the summary the controller caches (lib/render/tls_secret.ts): only its verdict is read. */
  secret(namespace: string, name: string): SecretLike | undefined;
}

export interface ModelInput {
  ingresses: readonly V1Ingress[];
  lookup: ClusterLookup;
  /** With --restrict-to-operator-namespace: ingresses of other namespaces are refused. */
  namespace?: string | null;
  /**
   * Accept loopback endpoint addresses (127.0.0.0/8, ::1), which the API server refuses and the
   * model refuses too by default. Only for tests and benchmarks whose backends listen on the host's
   * loopback and whose objects never pass an API server; the controller never sets it.
   */
  allowLoopbackEndpoints?: boolean;
  /**
   * The lower layers of annotations/resolve.ts's precedence, bare keys: the controller's global
   * ConfigMap and the class's parameters (lib/controller/global_settings.ts).
   */
  layers?: { global?: Readonly<Record<string, string>>; class?: Readonly<Record<string, string>> };
  /** Annotations of this risk and above are ignored (the global `annotation-risk-limit`). */
  disableRiskAtOrAbove?: Risk | null;
}

export interface BuildResult {
  model: Model;
  problems: Problem[];
  servable: boolean;
}

/** The legacy prefix; its keys are aliases of `ingress-controller.io/` keys (lib/annotations/table.ts). */
export const ANNOTATION_PREFIX = "ingress.kubernetes.io/";
export const SSL_REDIRECT_ANNOTATION = `${ANNOTATION_PREFIX}ssl-redirect`;
export const BALANCE_ANNOTATION = `${ANNOTATION_PREFIX}load-balance`;
export const TIMEOUT_ANNOTATION = `${ANNOTATION_PREFIX}timeout-server`;
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** A lookup over plain lists (tests, benchmarks, the demo). */
export function lookupFromLists(lists: {
  services?: readonly V1Service[];
  endpointSlices?: readonly V1EndpointSlice[];
  secrets?: readonly V1Secret[];
}): ClusterLookup {
  const key = (ns: string | undefined, n: string | undefined) => `${ns ?? ""}/${n ?? ""}`;
  const services = new Map((lists.services ?? []).map((s) => [key(s.metadata?.namespace, s.metadata?.name), s]));
  const secrets = new Map((lists.secrets ?? []).map((s) => [key(s.metadata?.namespace, s.metadata?.name), s]));
  const slices = new Map<string, V1EndpointSlice[]>();
  for (const s of lists.endpointSlices ?? []) {
    const k = key(s.metadata?.namespace, s.metadata?.labels?.[SERVICE_NAME_LABEL]);
    slices.set(k, [...(slices.get(k) ?? []), s]);
  }
  return {
    service: (ns, n) => services.get(key(ns, n)),
    endpointSlices: (ns, svc) => slices.get(key(ns, svc)) ?? [],
    secret: (ns, n) => secrets.get(key(ns, n)),
  };
}

function timestampOf(i: V1Ingress): number {
  const t = i.metadata?.creationTimestamp as unknown;
  const ms = t instanceof Date ? t.getTime() : typeof t === "string" ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : Number.MAX_SAFE_INTEGER;
}

function idOf(i: { metadata?: { namespace?: string; name?: string } }): string {
  return `${i.metadata?.namespace ?? ""}/${i.metadata?.name ?? ""}`;
}

/** `list` sorted by compareIngresses, each key computed once (not per comparison: 10,000 ingresses meant ~300,000 date parses). */
function oldestFirst(list: readonly V1Ingress[]): V1Ingress[] {
  return list.map((i) => ({ i, t: timestampOf(i), id: idOf(i) }))
    .sort((a, b) => a.t - b.t || cmp(a.id, b.id))
    .map((k) => k.i);
}

/** Oldest first; then namespace/name: the order in which ingresses win conflicts. */
export function compareIngresses(a: V1Ingress, b: V1Ingress): number {
  return timestampOf(a) - timestampOf(b) || cmp(idOf(a), idOf(b));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** JSON for messages, non-ASCII escaped too: keeps a hostile value on one line and visibly quoted. */
function show(v: unknown): string {
  const s = (JSON.stringify(v) ?? String(v)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return s.length > 80 ? `${s.slice(0, 77)}..."` : s;
}

/** Prefix paths compare element-wise: a trailing slash means nothing (except for the root). */
function normalizePrefix(path: string): string {
  const p = path.replace(/\/+$/, "");
  return p === "" ? "/" : p;
}

function sliceProblem(ctx: Context, ns: string, slice: V1EndpointSlice, message: string): void {
  const object = `${ns}/${slice.metadata?.name ?? ""}`;
  ctx.problems.push({ object, kind: "EndpointSlice", reason: "InvalidEndpoints", message });
}

interface Context {
  lookup: ClusterLookup;
  allowLoopbackEndpoints: boolean;
  /** The global and class layers and the risk cut-off the settings are resolved with. */
  resolve: ResolveContext;
  /** The settings of a route without annotations of its own, as JSON (computed once per model). */
  baseline?: string;
  /** JSON of `resolve` and of DEFAULT_SETTINGS (computed once per model). */
  resolveKey?: string;
  defaultJson?: string;
  /** `path-regex` of an Ingress without annotations of the table (the global and class layers). */
  regexByDefault?: boolean;
  problems: Problem[];
  backends: Map<string, Backend>;
  services: Set<string>;
  secrets: Set<string>;
}

/** Builds the model of one proxy; see the module header for what happens to invalid input. */
export function buildModel(input: ModelInput): BuildResult {
  const ctx: Context = {
    lookup: input.lookup,
    allowLoopbackEndpoints: input.allowLoopbackEndpoints === true,
    resolve: { layers: input.layers ?? {}, disableRiskAtOrAbove: input.disableRiskAtOrAbove ?? null },
    problems: [],
    backends: new Map(),
    services: new Set(),
    secrets: new Set(),
  };
  const ingresses = oldestFirst(input.ingresses);
  const accepted: string[] = [];
  const routes = new Map<string, Route>();
  const certs = new Map<string, TlsCert>();
  /** SNI host → the certificate file serving it (the first, i.e. oldest, ingress wins). */
  const sniOwner = new Map<string, { file: string; secret: string; ingress: string }>();
  const redirect = new Map<string, string>();
  /** Host → its client certificate check and the Ingress that set it (the oldest wins). */
  const clientCerts = new Map<string, ClientCertCheck & { ingress: string }>();
  let defaultBackend: { name: string; ingress: string } | null = null;
  /** Paths of canary Ingresses, joined to their main routes once every Ingress is read. */
  const canaryPaths: { key: string; backend: string; settings: CanarySettings; where: string; problem: Report }[] = [];
  /** Hosts of Ingresses with `www-redirect`: their twins (`www.` added or removed) redirect to them. */
  const wwwHosts: { host: string; ns: string; id: string }[] = [];
  /** Hosts of Ingresses with `ssl-passthrough`, in Ingress order. */
  const passHosts: { host: string; id: string; problem: Report }[] = [];

  for (const ing of ingresses) {
    const ns = ing.metadata?.namespace;
    const name = ing.metadata?.name;
    const id = idOf(ing);
    const problem = (reason: string, message: string) =>
      ctx.problems.push({ object: id, kind: "Ingress", reason, message });
    if (!isDns1123Label(ns) || !isDns1123Subdomain(name)) {
      problem("InvalidName", `ingress namespace/name ${show(id)} is not a valid DNS-1123 name; ingress ignored`);
      continue;
    }
    if (input.namespace && ns !== input.namespace) {
      problem(
        "NamespaceRefused",
        `ingress is outside the operator namespace ${input.namespace} (--restrict-to-operator-namespace); ignored`,
      );
      continue;
    }
    accepted.push(id);
    const annotations = ing.metadata?.annotations ?? {};
    // Most Ingresses set none of the table's keys: their defaults need no reading.
    const own = hasTableAnnotations(annotations);
    const sslRedirect = !own || boolAnnotation(annotations, "ssl-redirect", true, problem);
    const redirectCode = own
      ? annotationValue<string>(annotations, "ssl-redirect-code", problem, "; using 308") ?? "308"
      : "308";
    const canary = own ? canarySettings(annotations, problem) : null;
    const www = own && boolAnnotation(annotations, "www-redirect", false, problem);
    const regexPaths = own
      ? pathRegexOn(ctx, annotations, problem)
      : (ctx.regexByDefault ??= pathRegexOn(ctx, {}, () => {}));
    const clientCert = own ? clientCertCheck(ctx, ns, annotations, problem) : null;
    let tlsHosts = 0;
    const passthrough = own && boolAnnotation(annotations, "ssl-passthrough", false, problem);
    // as ingress-nginx: HTTPS is terminated in front of the proxy, so the hosts need no TLS of their own
    const forceRedirect = own && !canary && boolAnnotation(annotations, "force-ssl-redirect", false, problem);

    // TLS
    for (const [t, tls] of (ing.spec?.tls ?? []).entries()) {
      const hosts: string[] = [];
      for (const h of tls.hosts ?? []) {
        if (isHost(h)) hosts.push(h);
        else problem("InvalidHost", `spec.tls[${t}].hosts: ${show(h)} is not a valid host; ignored`);
      }
      const cert = tlsCert(ctx, ns, tls.secretName, `spec.tls[${t}]`, problem);
      if (!cert) continue;
      const served: string[] = [];
      for (const h of hosts) {
        const owner = sniOwner.get(h);
        if (owner === undefined || owner.file === cert.file) {
          sniOwner.set(h, { file: cert.file, secret: `${cert.namespace}/${cert.name}`, ingress: id });
          served.push(h);
        } else {
          problem(
            "TLSHostConflict",
            `spec.tls[${t}]: host ${h} already uses Secret ${owner.secret} ` +
              `of ingress ${owner.ingress}, which is older; ignored for this Secret`,
          );
        }
      }
      tlsHosts += served.length;
      const existing = certs.get(cert.file);
      const merged = new Set([...(existing?.hosts ?? []), ...served]);
      certs.set(cert.file, { ...cert, hosts: [...merged].sort() });
      if (sslRedirect) {
        for (const h of served) if (!redirect.has(h)) redirect.set(h, redirectCode);
      }
      for (const h of clientCert ? served : []) {
        const owner = clientCerts.get(h);
        const same = owner && owner.namespace === ns && owner.name === clientCert!.name &&
          owner.verify === clientCert!.verify;
        if (!owner || same) {
          if (!owner) clientCerts.set(h, { ...clientCert!, ingress: id });
        } else {
          problem(
            "ClientCertConflict",
            `spec.tls[${t}]: host ${h} already checks client certificates as ingress ${owner.ingress} says, ` +
              "which is older; client-cert annotations ignored for this host",
          );
        }
      }
    }

    if (clientCert && tlsHosts === 0) {
      problem(
        "ClientCertWithoutTLS",
        "annotation ingress-controller.io/client-cert-ca-secret: the Ingress serves no TLS host (spec.tls), so no " +
          `client certificate is asked for${clientCert.verify === "required" ? " and every request gets 403" : ""}`,
      );
    }

    // default backend
    if (ing.spec?.defaultBackend) {
      const be = resolveBackend(ctx, ns, ing.spec.defaultBackend, "spec.defaultBackend", annotations, null, problem);
      if (be) {
        if (defaultBackend === null) defaultBackend = { name: be, ingress: id };
        else if (defaultBackend.name !== be) {
          problem(
            "DefaultBackendConflict",
            `spec.defaultBackend is ignored: ingress ${defaultBackend.ingress} is older and sets the default backend`,
          );
        }
      }
    }

    // rules
    for (const [r, rule] of (ing.spec?.rules ?? []).entries()) {
      const host = rule.host ?? "";
      if (host !== "" && !isHost(host)) {
        problem("InvalidHost", `spec.rules[${r}].host: ${show(host)} is not a valid host; rule ignored`);
        continue;
      }
      if (www && !canary && host !== "" && !host.startsWith("*.")) wwwHosts.push({ host, ns, id });
      if (passthrough && !canary && host !== "") passHosts.push({ host, id, problem });
      if (forceRedirect && host !== "" && !redirect.has(host)) redirect.set(host, redirectCode);
      for (const [p, hp] of (rule.http?.paths ?? []).entries()) {
        const where = `spec.rules[${r}].http.paths[${p}]`;
        const pathType = hp.pathType as PathType;
        if (pathType !== "Exact" && pathType !== "Prefix" && pathType !== "ImplementationSpecific") {
          problem("InvalidPathType", `${where}.pathType: ${show(hp.pathType)} is not supported; path ignored`);
          continue;
        }
        const raw = hp.path ?? (pathType === "ImplementationSpecific" ? "/" : undefined);
        const regex = regexPaths && pathType === "ImplementationSpecific";
        if (regex) {
          const parsed = pathRegex.parse(raw ?? "");
          if (!parsed.ok) {
            problem("InvalidPath", `${where}.path: ${show(raw)} ${parsed.reason} (a path-regex path); path ignored`);
            continue;
          }
        } else if (!isPath(raw)) {
          problem(
            "InvalidPath",
            `${where}.path: ${show(raw)} is not an absolute path of letters, digits and -._~!*+,;=:@/%XX; path ignored`,
          );
          continue;
        }
        const match: Match = regex ? "regex" : pathType === "Exact" ? "exact" : "prefix";
        const path = match === "prefix" ? normalizePrefix(raw!) : raw!;
        const key = `${host} ${path} ${pathType}`;
        if (canary) {
          const be = resolveBackend(
            ctx,
            ns,
            hp.backend,
            `${where}.backend`,
            annotations,
            { path, match },
            problem,
            name,
          );
          if (be) canaryPaths.push({ key, backend: be, settings: canary, where, problem });
          continue;
        }
        const winner = routes.get(key);
        if (winner) {
          problem(
            "RouteConflict",
            `${where}: host ${show(host || "*")} path ${show(path)} (${pathType}) is already routed by ` +
              `ingress ${winner.ingress}${winner.ingress === id ? "" : ", which is older"}; path ignored`,
          );
          continue;
        }
        const be = resolveBackend(ctx, ns, hp.backend, `${where}.backend`, annotations, { path, match }, problem, name);
        if (!be) continue;
        routes.set(key, { host, path, pathType, match, backend: be, ingress: id });
      }
    }
  }

  const canaries = joinCanaries(ctx, routes, canaryPaths);
  addWwwTwins(ctx, routes, wwwHosts);
  const passthrough = passthroughBackends(ctx, routes, passHosts);
  const model: Model = {
    canaries,
    ingresses: accepted,
    routes: [...routes.values()].sort(compareRoutes),
    backends: [...usedBackends(ctx, routes, canaries, defaultBackend), ...passthrough.backends]
      .sort((a, b) => cmp(a.name, b.name)),
    defaultBackend: (defaultBackend as { name: string } | null)?.name ?? null,
    tls: [...certs.values()].sort((a, b) => cmp(a.file, b.file)),
    redirectHosts: [...redirect.keys()].sort(),
    redirectCodes: Object.fromEntries([...redirect].filter(([, c]) => c !== "308").sort()),
    ...(clientCerts.size > 0
      ? {
        clientCerts: Object.fromEntries(
          [...clientCerts].sort(([a], [b]) => cmp(a, b)).map(([h, { namespace, name, verify }]) => [h, {
            namespace,
            name,
            verify,
          }]),
        ),
      }
      : {}),
    passthrough: passthrough.hosts,
    refs: { services: [...ctx.services].sort(), secrets: [...ctx.secrets].sort() },
  };
  const servable = model.routes.length > 0 || model.defaultBackend !== null;
  if (!servable) {
    for (const id of accepted) {
      ctx.problems.push({
        object: id,
        kind: "Ingress",
        reason: "NothingToServe",
        message: "no valid rule and no default backend: every request gets 404",
      });
    }
  }
  const unique = new Map(ctx.problems.map((p) => [JSON.stringify(p), p]));
  return { model, problems: [...unique.values()], servable };
}

/**
 * Each canary path joins the main route of its host, path and type (another Ingress's): the route
 * then points to a reserved copy of its backend, named for the route, which the canary rules key on.
 */
function joinCanaries(
  ctx: Context,
  routes: Map<string, Route>,
  paths: { key: string; backend: string; settings: CanarySettings; where: string; problem: Report }[],
): CanaryRule[] {
  const out = new Map<string, CanaryRule>();
  const joined = new Set<string>();
  for (const c of paths) {
    const main = routes.get(c.key);
    if (!main) {
      c.problem("CanaryWithoutMain", `${c.where}: no other Ingress routes this host and path; canary ignored`);
      continue;
    }
    if (joined.has(c.key)) {
      c.problem("CanaryConflict", `${c.where}: the route already has a canary (of an older Ingress); canary ignored`);
      continue;
    }
    joined.add(c.key);
    const reserved = reservedName(main.backend, c.key);
    const original = ctx.backends.get(main.backend)!;
    ctx.backends.set(reserved, { ...original, name: reserved });
    main.backend = reserved;
    out.set(reserved, { main: reserved, canary: c.backend, ...c.settings });
  }
  return [...out.values()].sort((a, b) => cmp(a.main, b.main));
}

/**
 * `www-redirect`: the twin of each host (`www.` added or removed) gets a root route to a backend
 * that redirects to the host, unless some Ingress routes the twin itself (its routes win).
 */
function addWwwTwins(
  ctx: Context,
  routes: Map<string, Route>,
  hosts: { host: string; ns: string; id: string }[],
): void {
  const routed = new Set([...routes.values()].map((r) => r.host));
  for (const { host, ns, id } of hosts) {
    const twin = host.startsWith("www.") ? host.slice(4) : `www.${host}`;
    if (routed.has(twin) || !isHost(twin)) continue;
    routed.add(twin);
    const settings: BackendSettings = { ...structuredClone(DEFAULT_SETTINGS), wwwRedirectTo: host };
    const name = `be_${ns}_www_${settingsHash(settings)}`;
    if (!ctx.backends.has(name)) {
      ctx.backends.set(name, {
        name,
        namespace: ns,
        service: "www",
        port: 0,
        servers: [],
        slots: slotCount(0),
        balance: "roundrobin",
        timeoutServer: null,
        settings,
      });
    }
    routes.set(`${twin} / Prefix`, {
      host: twin,
      path: "/",
      pathType: "Prefix",
      match: "prefix",
      backend: name,
      ingress: id,
    });
  }
}

/**
 * `ssl-passthrough`: as ingress-nginx, a host's TLS connections go to the Service of its root path
 * (`/`, Prefix or ImplementationSpecific) of the same Ingress, through a `mode tcp` copy of that
 * Service's backend with its own server slots. A host without such a path keeps TLS termination.
 */
function passthroughBackends(
  ctx: Context,
  routes: Map<string, Route>,
  hosts: { host: string; id: string; problem: Report }[],
): { hosts: { host: string; backend: string }[]; backends: Backend[] } {
  const out = new Map<string, string>();
  const backends = new Map<string, Backend>();
  for (const { host, id, problem } of hosts) {
    if (out.has(host)) continue;
    const root = [routes.get(`${host} / Prefix`), routes.get(`${host} / ImplementationSpecific`)]
      .find((r) => r?.ingress === id);
    const b = root && ctx.backends.get(root.backend);
    if (!b) {
      problem(
        "InvalidAnnotation",
        `annotation ingress-controller.io/ssl-passthrough: host ${host} has no root path (/) of this Ingress ` +
          "to pass TLS connections to; its TLS connections are terminated by the proxy",
      );
      continue;
    }
    const name = `be_${b.namespace}_${b.service}_${b.port}_tcp`;
    if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${show(name)}`);
    const { settings: _, ...plain } = b;
    backends.set(name, { ...plain, name, mode: "tcp", timeoutServer: null });
    out.set(host, name);
  }
  return {
    hosts: [...out].map(([host, backend]) => ({ host, backend })).sort((a, b) => cmp(a.host, b.host)),
    backends: [...backends.values()],
  };
}

/** The backends something routes to (a canary's main route leaves its former backend unused). */
function usedBackends(
  ctx: Context,
  routes: Map<string, Route>,
  canaries: CanaryRule[],
  defaultBackend: { name: string } | null,
): Backend[] {
  const used = new Set([...routes.values()].map((r) => r.backend));
  for (const c of canaries) used.add(c.canary);
  if (defaultBackend) used.add(defaultBackend.name);
  for (const name of [...used]) {
    const fallback = ctx.backends.get(name)?.fallback;
    if (fallback) used.add(fallback);
  }
  return [...ctx.backends.values()].filter((b) => used.has(b.name)).sort((a, b) => cmp(a.name, b.name));
}

function hostRank(host: string): number {
  return host === "" ? 2 : host.startsWith("*.") ? 1 : 0;
}

const TYPE_RANK: Record<PathType, number> = { Exact: 0, Prefix: 1, ImplementationSpecific: 2 };

/** Match order: the first route whose host and path match wins (see Model.routes). */
export function compareRoutes(a: Route, b: Route): number {
  return hostRank(a.host) - hostRank(b.host) || cmp(a.host, b.host) || b.path.length - a.path.length ||
    TYPE_RANK[a.pathType] - TYPE_RANK[b.pathType] || cmp(a.path, b.path);
}

type Report = (reason: string, message: string) => void;

/** Reads a key of the annotation table (ours or its legacy alias); an invalid value is a problem. */
function annotationValue<T>(
  annotations: Record<string, string>,
  key: string,
  problem: Report,
  tail = "",
): T | undefined {
  const read = readAnnotation<T>(annotations, key);
  if (!read) return undefined;
  const parsed = read.parsed;
  if (parsed.ok) return parsed.value;
  problem("InvalidAnnotation", valueMessage(read.name, read.raw, parsed.reason) + tail);
  return undefined;
}

/** `path-regex` through the precedence and risk limit of the backend settings (lib/render/settings.ts). */
function pathRegexOn(ctx: Context, annotations: Record<string, string>, problem: Report): boolean {
  const r = resolveSetting<boolean>("path-regex", { ...ctx.resolve.layers, ingress: annotations }, {
    disableRiskAtOrAbove: ctx.resolve.disableRiskAtOrAbove,
  });
  for (const p of r.problems) problem("InvalidAnnotation", `${p.message}; ignored`);
  return r.value === true;
}

function boolAnnotation(annotations: Record<string, string>, key: string, dflt: boolean, problem: Report): boolean {
  return annotationValue<boolean>(annotations, key, problem, `; using ${dflt}`) ?? dflt;
}

/**
 * The client certificate check an Ingress asks for (`client-cert-ca-secret`, `client-cert-verify`),
 * or null: none, or its CA Secret is unusable (reported; then no certificate is asked for, and the
 * routes' `required` check refuses every request: fail closed).
 */
function clientCertCheck(
  ctx: Context,
  ns: string,
  annotations: Record<string, string>,
  problem: Report,
): ClientCertCheck | null {
  const name = annotationValue<string>(annotations, "client-cert-ca-secret", problem, "; ignored");
  if (name === undefined) return null;
  const verify = annotationValue<"required" | "optional">(annotations, "client-cert-verify", problem, "; ignored") ??
    "required";
  ctx.secrets.add(`${ns}/${name}`);
  const secret = ctx.lookup.secret(ns, name);
  if (!secret || !tlsSummaryOf(secret).ca) {
    problem(
      "InvalidSecret",
      `annotation ingress-controller.io/client-cert-ca-secret: Secret ${ns}/${name} ` +
        `${secret ? "has no ca.crt of PEM certificates" : "not found"}; no client certificate is asked for` +
        (verify === "required" ? " and every request gets 403" : ""),
    );
    return null;
  }
  return { namespace: ns, name, verify };
}

function tlsCert(
  ctx: Context,
  ns: string,
  secretName: string | undefined,
  where: string,
  problem: Report,
): Omit<TlsCert, "hosts"> | null {
  if (secretName === undefined || secretName === "") {
    problem("MissingSecret", `${where}.secretName is empty; TLS for these hosts is ignored`);
    return null;
  }
  if (!isDns1123Subdomain(secretName)) {
    problem("InvalidSecretName", `${where}.secretName: ${show(secretName)} is not a valid name; TLS ignored`);
    return null;
  }
  ctx.secrets.add(`${ns}/${secretName}`);
  const secret = ctx.lookup.secret(ns, secretName);
  if (!secret) {
    problem("SecretNotFound", `${where}: Secret ${ns}/${secretName} not found; TLS for these hosts is ignored`);
    return null;
  }
  if (!tlsSummaryOf(secret).valid) {
    problem(
      "InvalidSecret",
      `${where}: Secret ${ns}/${secretName} is not a kubernetes.io/tls Secret with PEM tls.crt and tls.key; ` +
        `TLS for these hosts is ignored`,
    );
    return null;
  }
  return { file: `${ns}_${secretName}.pem`, namespace: ns, name: secretName };
}

/** Resolves an ingress backend to a backend name (creating the Backend once); null: path unusable. */
function resolveBackend(
  ctx: Context,
  ns: string,
  backend: V1IngressBackend | undefined,
  where: string,
  annotations: Record<string, string>,
  path: { path: string; match: Match } | null,
  problem: Report,
  /** The Ingress's name, which error pages send (X-Ingress-Name). */
  ingress = "",
): string | null {
  const svc = backend?.service;
  if (!svc) {
    problem("UnsupportedBackend", `${where}: only Service backends are supported; path ignored`);
    return null;
  }
  if (!isDns1123Label(svc.name)) {
    problem("InvalidBackend", `${where}.service.name: ${show(svc.name)} is not a valid Service name; path ignored`);
    return null;
  }
  const portRef: number | string | undefined = svc.port?.number ?? svc.port?.name;
  if (!isPortNumber(portRef) && !isPortName(portRef)) {
    problem(
      "InvalidBackend",
      `${where}.service.port: ${show(svc.port)} is neither a port number nor a port name; path ignored`,
    );
    return null;
  }
  ctx.services.add(`${ns}/${svc.name}`);
  const serviceAnnotations = ctx.lookup.service(ns, svc.name)?.metadata?.annotations ?? {};
  ctx.resolveKey ??= JSON.stringify(ctx.resolve);
  let resolved: MemoSettings = memoBackendSettings(ctx.resolveKey, ctx.resolve, annotations, serviceAnnotations, path, {
    namespace: ns,
    secret: (name) => {
      ctx.secrets.add(`${ns}/${name}`);
      return ctx.lookup.secret(ns, name);
    },
  });
  for (const [reason, message] of resolved.problems) problem(reason, message);
  if (resolved.settings.errorPages) resolved = withIngress(resolved, ingress);
  const settings = resolved.settings;
  // What every route gets without annotations of its own (the global and class layers): such
  // routes share the plain backend, which then carries those settings; only a route that sets
  // something else gets a variant.
  ctx.baseline ??= memoBackendSettings(ctx.resolveKey, ctx.resolve, {}, {}, null).json;
  const plain = resolved.json === ctx.baseline;
  ctx.defaultJson ??= JSON.stringify(DEFAULT_SETTINGS);
  const carries = !plain || resolved.json !== ctx.defaultJson;
  const base = `be_${ns}_${svc.name}_${portRef}`;
  const name = plain ? base : `${base}_${resolved.hash()}`;
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${show(name)}`);
  if (ctx.backends.has(name)) return name;
  const servers = settings.serviceUpstream
    ? clusterIpServer(ctx, ns, svc.name, portRef, where, problem)
    : memoServers(ctx, ns, svc.name, portRef, where, problem);
  const fallback = settings.defaultBackend ? fallbackBackend(ctx, ns, settings.defaultBackend, problem) : null;
  ctx.backends.set(name, {
    name,
    namespace: ns,
    service: svc.name,
    port: portRef,
    servers,
    slots: slotCount(servers.length),
    balance: settings.balance,
    timeoutServer: settings.timeouts.server,
    ...(carries ? { settings } : {}),
    ...(fallback ? { fallback } : {}),
  });
  return name;
}

/**
 * Settings with error pages name their Ingress (X-Ingress-Name): each Ingress gets its own variant,
 * as equal settings of two Ingresses would otherwise share one and send one name for both.
 */
function withIngress(m: MemoSettings, ingress: string): MemoSettings {
  const settings: BackendSettings = { ...m.settings, errorPages: { ...m.settings.errorPages!, ingress } };
  let hash: string | null = null;
  return {
    settings,
    json: JSON.stringify(settings),
    hash: () => hash ??= settingsHash(settings),
    problems: m.problems,
  };
}

/** What resolveServers found for a Service object, a port and the slices it was given. */
interface ServersSeen {
  slices: readonly V1EndpointSlice[];
  loopback: boolean;
  servers: Server[];
  sliceProblems: Problem[];
}

/**
 * The caches hand out the same object until it changes, so a Service's servers are computed again
 * only when the Service or one of its EndpointSlices was replaced: at 10,000 ingresses this was a
 * fifth of the model's time. Only results without a problem of the route's own are kept (those
 * messages name the route).
 */
const serversSeen = new WeakMap<V1Service, Map<number | string, ServersSeen>>();

function memoServers(
  ctx: Context,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const svc = ctx.lookup.service(ns, service);
  const slices = ctx.lookup.endpointSlices(ns, service);
  const seen = svc ? serversSeen.get(svc)?.get(portRef) : undefined;
  if (
    seen && seen.loopback === ctx.allowLoopbackEndpoints && seen.slices.length === slices.length &&
    seen.slices.every((s, i) => s === slices[i])
  ) {
    ctx.problems.push(...seen.sliceProblems);
    return seen.servers;
  }
  let own = false;
  const before = ctx.problems.length;
  const servers = resolveServers(ctx, ns, service, portRef, where, (reason, message) => {
    own = true;
    problem(reason, message);
  });
  if (svc && !own) {
    let byPort = serversSeen.get(svc);
    if (!byPort) serversSeen.set(svc, byPort = new Map());
    byPort.set(portRef, {
      slices: [...slices],
      loopback: ctx.allowLoopbackEndpoints,
      servers,
      sliceProblems: ctx.problems.slice(before),
    });
  }
  return servers;
}

/**
 * The plain backend of a `default-backend` Service (its first port when none is given, as
 * ingress-nginx); null (with a problem) when it cannot be resolved. The Ingress's annotations do
 * not apply to it, as in ingress-nginx.
 */
function fallbackBackend(ctx: Context, ns: string, ref: ServiceRef, problem: Report): string | null {
  const where = "annotation ingress-controller.io/default-backend";
  const port = ref.port ?? ctx.lookup.service(ns, ref.service)?.spec?.ports?.[0]?.port;
  if (port === undefined) {
    problem("ServiceNotFound", `${where}: Service ${ns}/${ref.service} not found; ignored`);
    return null;
  }
  const backend = typeof port === "number" ? { number: port } : { name: port };
  return resolveBackend(ctx, ns, { service: { name: ref.service, port: backend } }, where, {}, null, problem);
}

/** The Service and its port `portRef` (number or name); null (with a problem) when a route cannot use them. */
function servicePort(
  ctx: Context,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): { svc: V1Service; sp: V1ServicePort } | null {
  const svc = ctx.lookup.service(ns, service);
  if (!svc) {
    problem("ServiceNotFound", `${where}: Service ${ns}/${service} not found; requests get 503 until it exists`);
    return null;
  }
  if (svc.spec?.type === "ExternalName") {
    problem("UnsupportedService", `${where}: Service ${ns}/${service} is of type ExternalName; requests get 503`);
    return null;
  }
  const sp = (svc.spec?.ports ?? []).find((p) => typeof portRef === "number" ? p.port === portRef : p.name === portRef);
  if (!sp) {
    problem("PortNotFound", `${where}: Service ${ns}/${service} has no port ${show(portRef)}; requests get 503`);
    return null;
  }
  return { svc, sp };
}

/** `service-upstream`: the Service's cluster IP and port as the one server; none (with a problem) without one. */
function clusterIpServer(
  ctx: Context,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const found = servicePort(ctx, ns, service, portRef, where, problem);
  if (!found) return [];
  const ip = found.svc.spec?.clusterIP;
  const v6 = isIPv6(ip);
  if (!(v6 || isIPv4(ip)) || !isPortNumber(found.sp.port)) {
    problem(
      "UnsupportedService",
      `${where}: service-upstream needs a cluster IP, and Service ${ns}/${service} has none (headless); requests get 503`,
    );
    return [];
  }
  const range = refusedEndpointRange(ip);
  if (range !== null && !(range === "loopback" && ctx.allowLoopbackEndpoints)) {
    problem(
      "UnsupportedService",
      `${where}: cluster IP ${show(ip)} ${REFUSED_ENDPOINT_RANGES[range]}; requests get 503`,
    );
    return [];
  }
  return [{ address: v6 ? `[${ip.toLowerCase()}]` : ip, port: found.sp.port }];
}

/** Service port (by number or name) → its name/targetPort → the ready endpoints of the matching EndpointSlice port. */
function resolveServers(
  ctx: Context,
  ns: string,
  service: string,
  portRef: number | string,
  where: string,
  problem: Report,
): Server[] {
  const found = servicePort(ctx, ns, service, portRef, where, problem);
  if (!found) return [];
  const sp = found.sp;
  const portName = sp.name ?? "";
  const target = sp.targetPort;
  const seen = new Map<string, Server>();
  for (const slice of ctx.lookup.endpointSlices(ns, service)) {
    if (slice.metadata?.labels?.[SERVICE_NAME_LABEL] !== service) continue;
    const v6 = slice.addressType === "IPv6";
    if (!v6 && slice.addressType !== "IPv4") continue;
    const slicePorts = slice.ports ?? [];
    let port = slicePorts.find((p) => (p.name ?? "") === portName)?.port;
    if (port === undefined && slicePorts.length === 0 && typeof target === "number") port = target;
    if (!isPortNumber(port)) {
      if (port !== undefined) sliceProblem(ctx, ns, slice, `port ${show(port)} is invalid; slice ignored`);
      continue;
    }
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      const addr = ep.addresses?.[0];
      const ok = v6 ? isIPv6(addr) : isIPv4(addr);
      if (!ok) {
        sliceProblem(ctx, ns, slice, `address ${show(addr)} is not an ${slice.addressType} address; endpoint ignored`);
        continue;
      }
      // Defence in depth: the API server refuses these too, but a proxy must never be pointed at itself.
      const range = refusedEndpointRange(addr);
      if (range !== null && !(range === "loopback" && ctx.allowLoopbackEndpoints)) {
        sliceProblem(ctx, ns, slice, `address ${show(addr)} ${REFUSED_ENDPOINT_RANGES[range]}; endpoint ignored`);
        continue;
      }
      const address = v6 ? `[${addr.toLowerCase()}]` : addr;
      seen.set(`${address}:${port}`, { address, port });
    }
  }
  return [...seen.values()].sort((a, b) => cmp(a.address, b.address) || a.port - b.port);
}
