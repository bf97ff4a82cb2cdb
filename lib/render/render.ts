/**
 * @module render/render
 * Turns a Model into the pieces of contracts.md §4: `haproxy.cfg`, `crt-list`, the list of Secrets
 * the proxy writes and the routing map files (lib/render/maps.ts). The templates receive a View in
 * which every cluster value is already placed for its spot (slot lines in their fixed shape, names
 * checked); routes and redirect hosts are not in the configuration at all but in the map files, so
 * a route-only change leaves `haproxy.cfg` as it is.
 */
import type { Backend, Model, Route } from "./model_types.ts";
import { routeChangeFrom } from "./route_changes.ts";
import { wildcardOf } from "./host_ownership.ts";
import { isHost, isProxyName, PEM_FILE } from "./patterns.ts";
import { type MapFile, MapsMemo, type RouteMaps, routeMaps } from "./maps.ts";
import { growable, slotLines } from "./slots.ts";
import { settingsLines } from "./settings_lines.ts";
import type { SecretId } from "./settings_reader.ts";
import { caFile } from "./features/backend_protocol.ts";
import { canaryLines } from "./canary.ts";
import { luaLoads } from "./lua.ts";
import { extAuthResolverLines } from "./features/ext_auth.ts";
import { errorPageLines, errorPagesRouting, fallbackLines } from "./features/error_pages.ts";
import { compileTemplates, TemplateError, type Templates } from "./templates.ts";
import { DEFAULT_PROXY_OPTIONS, type ProxyOptions, type ProxyView, proxyView } from "./proxy_options.ts";

/** The name of the built-in backend that answers 404 when no route and no default backend match. */
export const BUILTIN_DEFAULT_BACKEND = "ic_default_404";

/**
 * A `secrets.json` entry (contracts.md §4): `kind` absent is `tls`; an `htpasswd` entry has no file;
 * a `configmap-ca` entry names a ConfigMap (lib/render/configmap_ca.ts).
 */
export interface SecretFile {
  kind?: "ca" | "htpasswd" | "configmap-ca";
  file?: string;
  namespace: string;
  name: string;
}

export interface Rendered {
  /** `haproxy.cfg` */
  config: string;
  /** `crt-list` (empty when there is no TLS). */
  crtList: string;
  /** `secrets.json` entries, sorted by file. */
  secrets: SecretFile[];
  /** The routing map files by name (lib/render/maps.ts). */
  maps: RouteMaps;
}

/** What the templates get as `it`. */
export interface View {
  model: Model;
  hasTls: boolean;
  /** Some host is `ssl-passthrough`: the HTTPS port is a `mode tcp` frontend routing by SNI. */
  passthrough: boolean;
  /** `lines`: what the annotations set (lib/render/settings_lines.ts), `timeout server` included. */
  backends: { name: string; balance: string; timeoutServer: string | null; lines: string[]; slots: string[] }[];
  /** The status codes of HTTPS redirects in use besides 308 (`ssl-redirect-code`), sorted. */
  redirectCodes: string[];
  /**
   * The status codes of HTTPS redirects that drop a trailing slash (`ssl-redirect-trailing-slash`,
   * map value `<code>s`), sorted.
   */
  redirectDropCodes: string[];
  /** The frontends' canary rules (lib/render/canary.ts), without indentation. */
  canaryLines: string[];
  /**
   * Some route is a regex path: the frontends look up `routes-regex.map` too, and HAProxy keeps its pattern
   * cache (without a regex route every list match is short, and the cache costs more than it saves).
   */
  hasRegex: boolean;
  /** Which lookups the frontends make (routesIn): a lookup no route or entry could answer is left out. */
  routing: Routing;
  /** `default-backend`: a route's backend without usable server hands its requests to its fallback. */
  fallbackLines: string[];
  /** Name of the backend for requests that match no route. */
  defaultBackend: string;
  builtinDefaultBackend: string;
  /** Lines of the crt-list: `<file> [<sni>…]`; the default certificate, if any, first. */
  crtList: string[];
  /** Proxy-wide settings (lib/render/proxy_options.ts). */
  proxy: ProxyView;
  /** Lua files `global` loads from `${IC_LUA_DIR}` (lib/render/lua.ts): only those some backend uses. */
  luaFiles: string[];
  /** The `resolvers` section auth host names are resolved with; empty when no auth URL names a host. */
  authResolvers: string[];
  /** The HTTP frontend reads redirect-hosts.map (some TLS, or `force-ssl-redirect` hosts). */
  httpsRedirect: boolean;
  /** The routing lines of the internal frontend of error pages (lib/render/features/error_pages.ts); empty: none. */
  errorPages: string[];
  /** Some host asks for client certificates: no shared TLS session cache (`tune.ssl.cachesize 0`). */
  noSslSessionCache: boolean;
}

function checkName(name: string): string {
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${JSON.stringify(name)} in model`);
  return name;
}

type ViewBackend = View["backends"][number];

/** The kinds of routes of one host group: which of its map lookups can match. */
export interface GroupKinds {
  exact: boolean;
  regex: boolean;
  prefix: boolean;
}

/**
 * The lookups the frontends make (templates/routes.eta, docs/routing-maps.md): per host group (the
 * request's host, its wildcard part, no host) the kinds of path its routes have; whether owned hosts
 * (owned-hosts.map) exist by exact host and by wildcard; whether redirect-hosts.map has exact hosts
 * and wildcards. A lookup that cannot match is not rendered: the first route of a new group or kind,
 * the first owned host or the first wildcard redirect changes `haproxy.cfg` (a reload), as the first
 * regex route does.
 */
export interface Routing {
  host: GroupKinds;
  wild: GroupKinds;
  any: GroupKinds;
  /** Some wildcard route or wildcard owned host: the request's wildcard part is computed. */
  wildPart: boolean;
  ownedHost: boolean;
  ownedWild: boolean;
  redirectHost: boolean;
  redirectWild: boolean;
}

/** How many routes of each host group (host, wildcard, any) have each kind of path (exact, regex, prefix). */
type KindCounts = Int32Array;
const GROUPS = 3;
function kindIndex(r: Route): number {
  const group = r.host === "" ? 2 : r.host.startsWith("*.") ? 1 : 0;
  return group * GROUPS + (r.match === "exact" ? 0 : r.match === "regex" ? 1 : 2);
}

/** The kind counts of `routes`: one pass over them. */
function kindCounts(routes: readonly Route[]): KindCounts {
  const counts = new Int32Array(GROUPS * 3);
  for (let i = 0; i < routes.length; i++) counts[kindIndex(routes[i])]++;
  return counts;
}

/**
 * The kind counts of `routes`, from the last ones in `memo` when a model delta noted how `routes`
 * came from the routes counted then (a route change at 100,000 routes walked them all).
 */
function kindCountsOf(routes: readonly Route[], memo: RenderMemo | null): KindCounts {
  const last = memo?.kinds;
  if (last?.routes === routes) return last.counts;
  const change = last ? routeChangeFrom(routes, last.routes) : null;
  let counts: KindCounts;
  if (change) {
    memo!.followed++;
    counts = last!.counts.slice();
    for (const r of change.removed) counts[kindIndex(r)]--;
    for (const r of change.added) counts[kindIndex(r)]++;
  } else counts = kindCounts(routes);
  if (memo) memo.kinds = { routes, counts };
  return counts;
}

function groupKinds(counts: KindCounts, group: number): GroupKinds {
  const at = group * GROUPS;
  return { exact: counts[at] > 0, regex: counts[at + 1] > 0, prefix: counts[at + 2] > 0 };
}

/** Routing of `model`: its routes' kinds counted (kindCountsOf), its stops and redirect hosts looked at. */
export function routesIn(model: Model, httpsRedirect: boolean, memo: RenderMemo | null = null): Routing {
  const counts = kindCountsOf(model.routes, memo);
  const host = groupKinds(counts, 0), wild = groupKinds(counts, 1), any = groupKinds(counts, 2);
  const stops = model.stops ?? [];
  const redirects = httpsRedirect ? model.redirectHosts : [];
  // A delta hands on the same stops and redirect hosts when only routes changed (100,000 each under Strict ownership).
  let hosts = memo?.hostKinds;
  if (hosts?.stops !== stops || hosts.redirects !== redirects) {
    hosts = {
      stops,
      redirects,
      ownedHost: stops.some((s) => !s.host.startsWith("*.")),
      ownedWild: stops.some((s) => s.host.startsWith("*.")),
      redirectHost: redirects.some((h) => !h.startsWith("*.")),
      redirectWild: redirects.some((h) => h.startsWith("*.")),
    };
    if (memo) memo.hostKinds = hosts;
  }
  return {
    host,
    wild,
    any,
    wildPart: wild.exact || wild.regex || wild.prefix || hosts.ownedWild,
    ownedHost: hosts.ownedHost,
    ownedWild: hosts.ownedWild,
    redirectHost: hosts.redirectHost,
    redirectWild: hosts.redirectWild,
  };
}

/**
 * What render keeps between the renders of one proxy (the controller keeps one per proxy): each
 * Backend object's view, and the last `haproxy.cfg` with what it was rendered from. A change of
 * routes only (they live in the map files) then renders no template, and hands back the very same
 * configuration text, which every later comparison sees at once. Only for callers whose model
 * objects are never changed in place (lib/render/model.ts's ModelMemo keeps Backend objects).
 */
export class RenderMemo {
  readonly views = new WeakMap<Backend, ViewBackend>();
  /** The view of each backend name seen last: a re-read backend that came out the same keeps it. */
  readonly named = new Map<string, ViewBackend>();
  last: { backends: readonly ViewBackend[]; rest: string; config: string } | null = null;
  /** The last render's backends and their views, index by index (see memoViews). */
  lastViews: { backends: readonly Backend[]; views: readonly ViewBackend[] } | null = null;
  /**
   * What the last render made of its backends besides their views, for the same backends array (a
   * model delta hands on the very same array when only routes changed: 100,000 backends are then not
   * walked again).
   */
  lastOfBackends: { backends: readonly Backend[]; derived: OfBackends } | null = null;
  /** The map files' sorted lines (lib/render/maps.ts). */
  readonly maps = new MapsMemo();
  /** Renders whose route kinds followed a model delta's noted change (for tests). */
  followed = 0;
  /** The kind counts of the last routes (routesIn). */
  kinds: { routes: readonly Route[]; counts: KindCounts } | null = null;
  /** The last `secrets.json` list, kept while its inputs are the same objects (secretList). */
  secrets: {
    tls: readonly object[];
    defaultCertificate: unknown;
    clientCerts: unknown;
    backendSecrets: readonly SecretFile[];
    list: SecretFile[];
  } | null = null;
  /** What routesIn found in the last stops and redirect hosts. */
  hostKinds: {
    stops: readonly { host: string }[];
    redirects: readonly string[];
    ownedHost: boolean;
    ownedWild: boolean;
    redirectHost: boolean;
    redirectWild: boolean;
  } | null = null;
}

export function buildView(
  model: Model,
  proxy: ProxyOptions = DEFAULT_PROXY_OPTIONS,
  memo: RenderMemo | null = null,
): View {
  const crtList = model.tls.flatMap((c) => {
    if (!PEM_FILE.test(c.file)) throw new Error(`bug: unsafe file ${c.file}`);
    const excluded = c.excluded ?? [];
    for (const h of [...c.hosts, ...excluded]) {
      if (!isHost(h)) throw new Error(`bug: unvalidated host ${JSON.stringify(h)}`);
    }
    // A line without SNI filters would serve the certificate for every name: never for an Ingress's.
    if (c.hosts.length === 0) throw new Error(`bug: certificate ${c.file} without hosts`);
    // hosts asking for client certificates get lines of their own: the options of a line apply to all its names
    const byCheck = new Map<string, string[]>();
    for (const h of c.hosts) {
      const check = model.clientCerts?.[h];
      const options = check ? `[ca-file ${caFile(check)} verify ${check.verify}]` : "";
      byCheck.set(options, [...(byCheck.get(options) ?? []), h]);
    }
    return [...byCheck].flatMap(([options, hosts]) =>
      crtLineHosts(hosts, excluded).map((part) => {
        // negative filters (hosts another namespace owns under a wildcard) on the lines with that wildcard
        const not = excluded.filter((h) => part.includes(wildcardOf(h)!)).map((h) => `!${h}`);
        return [c.file, ...(options ? [options] : []), ...part, ...not].join(" ");
      })
    );
  });
  // HAProxy serves the first certificate of the crt-list when no SNI filter matches.
  if (proxy.defaultCertificate) crtList.unshift(`${proxy.defaultCertificate.file} !*`);
  const hasTls = crtList.length > 0;
  // TLS hosts are redirected, and without TLS of the proxy's own the hosts of force-ssl-redirect
  const httpsRedirect = hasTls || model.redirectHosts.length > 0;
  const ofBackends = memo?.lastOfBackends?.backends === model.backends
    ? memo.lastOfBackends.derived
    : madeOfBackends(model.backends);
  if (memo) memo.lastOfBackends = { backends: model.backends, derived: ofBackends };
  const routing = routesIn(model, httpsRedirect, memo);
  return {
    model,
    hasTls,
    httpsRedirect,
    passthrough: (model.passthrough ?? []).length > 0,
    backends: memo ? memoViews(memo, model.backends) : model.backends.map(backendView),
    canaryLines: canaryLines((model.canaries ?? []).map((c) => ({
      ...c,
      main: checkName(c.main),
      canary: checkName(c.canary),
    }))),
    hasRegex: routing.host.regex || routing.wild.regex || routing.any.regex,
    routing,
    fallbackLines: ofBackends.fallbackLines,
    redirectCodes: [...new Set(Object.values(model.redirectCodes ?? {}))].filter((c) => /^30[1278]$/.test(c)).sort(),
    redirectDropCodes: [...new Set(Object.values(model.redirectCodes ?? {}))]
      .filter((c) => /^30[1278]s$/.test(c)).map((c) => c.slice(0, 3)).sort(),
    defaultBackend: checkName(model.defaultBackend ?? BUILTIN_DEFAULT_BACKEND),
    builtinDefaultBackend: BUILTIN_DEFAULT_BACKEND,
    crtList,
    // hosts checked against different CAs share the bind: a session resumed from HAProxy's shared
    // cache would skip the check of the host it is resumed for (templates/global.eta)
    noSslSessionCache: Object.keys(model.clientCerts ?? {}).length > 0,
    proxy: proxyView(proxy),
    luaFiles: ofBackends.luaFiles,
    authResolvers: ofBackends.authResolvers,
    errorPages: ofBackends.errorPages,
  };
}

/** The fields of a View made from the backends alone (besides their views). */
interface OfBackends {
  fallbackLines: string[];
  luaFiles: string[];
  authResolvers: string[];
  errorPages: string[];
  /** The Secret files the backends use (secretList). */
  secrets: SecretFile[];
}

function madeOfBackends(backends: readonly Backend[]): OfBackends {
  const pageBackends = backends.filter((b) => b.settings?.errorPages && b.fallback);
  return {
    fallbackLines: fallbackLines(backends),
    luaFiles: luaLoads(backends.some((b) => b.settings?.extAuth?.target), pageBackends.length > 0),
    authResolvers: backends.some((b) => b.settings?.extAuth?.target?.address === "name") ? extAuthResolverLines() : [],
    errorPages: errorPagesRouting(pageBackends.map((b) => b.fallback!)),
    secrets: backendSecrets(backends),
  };
}

/**
 * The backends' views, the same objects as before for backends that are the same objects or came
 * out the same (a changed Ingress is read again and gets new Backend objects).
 */
function memoViews(memo: RenderMemo, backends: readonly Backend[]): ViewBackend[] {
  // A route-only change keeps every Backend object in its place: its view is taken by index, not
  // looked up (10,000 WeakMap lookups were a millisecond of every change).
  const last = memo.lastViews;
  if (last !== null && last.backends === backends) return last.views as ViewBackend[];
  const out = backends.map((b, i) => {
    if (last !== null && last.backends[i] === b) return last.views[i];
    let view = memo.views.get(b);
    if (view) return view;
    view = backendView(b);
    const was = memo.named.get(view.name);
    if (was && JSON.stringify(was) === JSON.stringify(view)) view = was;
    else memo.named.set(view.name, view);
    memo.views.set(b, view);
    return view;
  });
  // Not copied: a model's arrays are never changed once it is built (model_delta.ts copies before a change).
  memo.lastViews = { backends, views: out };
  // Names of backends gone are dropped now and then, not on every render.
  if (memo.named.size > 2 * out.length + 64) {
    memo.named.clear();
    for (const v of out) memo.named.set(v.name, v);
  }
  return out;
}

/** A backend as the templates see it: what its settings set, its slot lines. */
function backendView(b: Backend): ViewBackend {
  const name = checkName(b.name);
  // a passthrough backend relays TLS as it comes: the HTTP settings cannot apply (as in ingress-nginx)
  if (b.mode === "tcp") {
    return {
      name,
      balance: b.balance,
      timeoutServer: null,
      lines: ["mode tcp"],
      slots: slotLines(b.servers, "", growable(b.balance, false)),
    };
  }
  const { lines, serverParams } = b.settings
    ? settingsLines(b.settings, name)
    : { lines: b.timeoutServer ? [`timeout server ${b.timeoutServer}`] : [], serverParams: "" };
  if (serverParams) lines.push(`default-server ${serverParams}`);
  const pages = b.settings?.errorPages;
  if (pages && b.fallback) {
    lines.unshift(...errorPageLines({
      fallback: checkName(b.fallback),
      codes: pages.codes,
      namespace: b.namespace,
      ingress: pages.ingress,
      service: b.service,
      port: b.port,
    }));
  }
  const grows = growable(b.balance, (b.settings?.sticky ?? null) !== null);
  return { name, balance: b.balance, timeoutServer: b.timeoutServer, lines, slots: slotLines(b.servers, "", grows) };
}

/** Renders the configuration, the crt-list and the Secret list of a model. Throws TemplateError. */
/**
 * HAProxy 2.6 refuses a crt-list line longer than 65,535 characters or of more than 2,048 words
 * (ssl_crtlist.c), which one Secret named by the TLS sections of thousands of Ingresses would make:
 * its hosts are spread over as many lines of the same file as needed (HAProxy loads the file once).
 */
const CRT_LINE_CHARS = 60_000;
const CRT_LINE_WORDS = 1_000;

/** `hosts` in groups that each fit one crt-list line with their negative filters from `excluded`. */
function crtLineHosts(hosts: readonly string[], excluded: readonly string[]): string[][] {
  const parts: string[][] = [[]];
  let chars = 0, words = 0;
  for (const h of hosts) {
    const not = excluded.filter((x) => wildcardOf(x) === h);
    const size = h.length + 1 + not.reduce((n, x) => n + x.length + 2, 0);
    if (parts.at(-1)!.length > 0 && (chars + size > CRT_LINE_CHARS || words + 1 + not.length > CRT_LINE_WORDS)) {
      parts.push([]);
      chars = words = 0;
    }
    parts.at(-1)!.push(h);
    chars += size;
    words += 1 + not.length;
  }
  return parts;
}

export function render(
  model: Model,
  templates: Templates,
  proxy: ProxyOptions = DEFAULT_PROXY_OPTIONS,
  memo: RenderMemo | null = null,
): Rendered {
  const view = buildView(model, proxy, memo);
  const config = renderConfig(templates, view, memo);
  const crtList = renderRoot(templates, "tls", view);
  return {
    config,
    crtList,
    secrets: secretList(model, proxy, memo),
    maps: routeMaps(
      model.routes,
      view.httpsRedirect ? model.redirectHosts : [],
      model.redirectCodes,
      model.passthrough,
      memo?.maps ?? null,
      model.stops,
    ),
  };
}

/** The order of `secrets.json`: a collator is what `localeCompare` uses, without building one per call. */
const SECRET_ORDER = new Intl.Collator();

/**
 * Every Secret the proxy writes: certificates, CA bundles (backend and client checks), htpasswd files;
 * each once, in the order of their keys. Linear apart from the sort: with 10,000 TLS Secrets a list
 * deduplicated by searching it took seconds per render.
 */
function secretList(model: Model, proxy: ProxyOptions, memo: RenderMemo | null): SecretFile[] {
  // buildView has just derived what the backends use (memo.lastOfBackends) for this model's backends.
  const backendList = memo?.lastOfBackends?.backends === model.backends ? memo.lastOfBackends.derived.secrets : null;
  const last = memo?.secrets;
  if (
    last && last.tls === model.tls && backendList !== null && last.backendSecrets === backendList &&
    last.defaultCertificate === proxy.defaultCertificate && last.clientCerts === model.clientCerts
  ) return last.list;
  const byKey = new Map<string, SecretFile>();
  const add = (s: SecretFile) => {
    const key = `${s.kind ?? "tls"} ${s.file ?? ""} ${s.namespace}/${s.name}`;
    if (!byKey.has(key)) byKey.set(key, s);
  };
  if (proxy.defaultCertificate) add(tlsFile(proxy.defaultCertificate));
  for (let i = 0; i < model.tls.length; i++) add(tlsFile(model.tls[i]));
  for (const id of Object.values(model.clientCerts ?? {})) add(caSecret(id));
  const others = backendList ?? backendSecrets(model.backends);
  for (let i = 0; i < others.length; i++) add(others[i]);
  const list = [...byKey.keys()].sort(SECRET_ORDER.compare).map((k) => byKey.get(k)!);
  if (memo && backendList !== null) {
    memo.secrets = {
      tls: model.tls,
      defaultCertificate: proxy.defaultCertificate,
      clientCerts: model.clientCerts,
      backendSecrets: backendList,
      list,
    };
  }
  return list;
}

function tlsFile(c: { file: string; namespace: string; name: string }): SecretFile {
  return { file: c.file, namespace: c.namespace, name: c.name };
}

function caSecret(id: SecretId): SecretFile {
  return { kind: "ca", file: caFile(id), namespace: id.namespace, name: id.name };
}

/** The CA bundles and htpasswd files of `backends`' settings, in backend order. */
function backendSecrets(backends: readonly Backend[]): SecretFile[] {
  const others: SecretFile[] = [];
  // Indexed: this runs once per change, often before V8 optimizes it, and an unoptimized for-of
  // allocates a result object per element (10,000 backends).
  for (let i = 0; i < backends.length; i++) {
    const settings = backends[i].settings;
    if (!settings) continue;
    if (settings.backendTls?.ca) others.push(caSecret(settings.backendTls.ca));
    const auth = settings.basicAuth?.secret;
    if (auth) others.push({ kind: "htpasswd", namespace: auth.namespace, name: auth.name });
  }
  return others;
}

/**
 * `haproxy.cfg` of `view`: the last one again when nothing it is made of changed (same backend
 * views, same other fields; routes are not in it). Custom templates may read anything, so with
 * them every render runs the templates.
 */
function renderConfig(templates: Templates, view: View, memo: RenderMemo | null): string {
  if (!memo || templates.custom) return renderRoot(templates, "haproxy.cfg", view);
  const { model: _, backends, ...others } = view;
  const rest = JSON.stringify(others);
  const last = memo.last;
  if (
    last && last.rest === rest &&
    (last.backends === backends ||
      (last.backends.length === backends.length && last.backends.every((b, i) => b === backends[i])))
  ) {
    return last.config;
  }
  const config = renderRoot(templates, "haproxy.cfg", view);
  memo.last = { backends, rest, config };
  return config;
}

/** Renders root template `name` (the Gateway renderer's views too); an error names the template's file. */
export function renderRoot(templates: Templates, name: string, view: object): string {
  try {
    return templates.eta.render(`@${name}`, view);
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    throw new TemplateError(templates.sources[name] ?? name, err);
  }
}

/** The `data` of the ConfigMap the controller publishes (contracts.md §4). */
export function configMapData(
  r: Rendered,
): { "haproxy.cfg": string; "crt-list": string; "secrets.json": string } & Record<MapFile, string> {
  return { "haproxy.cfg": r.config, "crt-list": r.crtList, "secrets.json": secretsJson(r.secrets), ...r.maps };
}

/** `secrets.json`: a JSON array with one item per line, so a long list can travel in parts (docs/config-transport.md). */
function secretsJson(secrets: readonly unknown[]): string {
  return `[${secrets.map((s) => JSON.stringify(s)).join(",\n")}]`;
}

/** A model that uses every feature (routes of each kind, TLS, redirect, endpoints): for start-up checks. */
export function sampleModel(): Model {
  const be = (name: string, servers: { address: string; port: number }[]) => ({
    name,
    namespace: "sample",
    service: name.split("_")[2],
    port: 80,
    servers,
    slots: Math.max(1, servers.length),
    balance: "roundrobin" as const,
    timeoutServer: name.endsWith("b_80") ? "30s" : null,
  });
  return {
    ingresses: ["sample/sample"],
    routes: [
      { host: "a.example.com", path: "/x", pathType: "Exact", match: "exact", backend: "be_sample_a_80", ingress: "" },
      { host: "*.example.com", path: "/", pathType: "Prefix", match: "prefix", backend: "be_sample_b_80", ingress: "" },
      { host: "", path: "/api", pathType: "Prefix", match: "prefix", backend: "be_sample_a_80", ingress: "" },
      {
        host: "",
        path: "/v[0-9]+/(.*)",
        pathType: "ImplementationSpecific",
        match: "regex",
        backend: "be_sample_b_80",
        ingress: "",
      },
    ],
    backends: [
      be("be_sample_a_80", [{ address: "10.0.0.1", port: 8080 }]),
      { ...be("be_sample_b_80", [{ address: "[fd00::1]", port: 8080 }]), fallback: "be_sample_a_80" },
    ],
    defaultBackend: null,
    tls: [{ file: "sample_tls.pem", namespace: "sample", name: "tls", hosts: ["a.example.com"] }],
    redirectHosts: ["a.example.com"],
    refs: { services: [], secrets: [] },
  };
}

/**
 * Compiles the built-in templates plus those matching `customGlob` once, and renders a sample
 * model with them; a broken custom template is a SetupError naming the file.
 */
export function loadTemplates(customGlob: string | null): Promise<Templates> {
  const full = sampleModel();
  const plain: Model = { ...full, tls: [], redirectHosts: [], defaultBackend: "be_sample_a_80" };
  const passthrough: Model = { ...plain, passthrough: [{ host: "p.example.com", backend: "be_sample_a_80" }] };
  const both: Model = { ...full, passthrough: passthrough.passthrough };
  return compileTemplates(customGlob, [full, plain, passthrough, both].map((m) => buildView(m)));
}
