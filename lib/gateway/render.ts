/**
 * @module gateway/render
 * Turns the proxy model of one Gateway into the pieces the proxy reads (contracts.md §4, the
 * `Rendered` of lib/render/render.ts): `haproxy.cfg` with one frontend per port, the crt-list of
 * the HTTPS listeners' certificates, the Secrets the proxy writes, and the routing map files.
 * The configuration shares the Ingress proxy's sections (global, defaults, stats, request path
 * normalization, backends, the built-in 404) through their templates; the Gateway's own are under
 * templates/gateway/. How requests are routed: docs/gateway-rendering.md.
 */
import type { GatewayProxyModel, ProxyPort, TlsCert } from "./model_types.ts";
import { BUILTIN_DEFAULT_BACKEND, type Rendered, renderRoot, type SecretFile } from "../render/render.ts";
import type { RouteMaps } from "../render/maps.ts";
import { isHost, PEM_FILE } from "../render/patterns.ts";
import { withConfigMapCas } from "../render/configmap_ca.ts";
import type { Templates } from "../render/templates.ts";
import { DEFAULT_PROXY_OPTIONS, type ProxyOptions, type ProxyView, proxyView } from "../render/proxy_options.ts";
import { containerPort, containerPortClashes } from "./ports.ts";
import { NO_RANK, portRoutes, WILDCARD_DEPTH } from "./render_routes.ts";
import { checkedHostname } from "./render_checks.ts";
import { type BackendView, ruleOutput, serviceBackendView } from "./render_rules.ts";
import { tlsFrontends, type TlsFrontendView } from "./render_tls.ts";
import { clientCertLines, clientValidationBind } from "./render_client_validation.ts";

/** One port's frontend as templates/gateway/frontend.eta places it. */
export interface FrontendView {
  /** `http_<port>` or `https_<port>`. */
  name: string;
  /** The listener port. */
  port: number;
  https: boolean;
  /** The `bind` line's arguments. */
  bind: string;
  /** The map keys' start for this port: `<port>:`. */
  key: string;
  /** `:<port>` for redirects that keep the listener's port, "" for the scheme's default port. */
  lport: string;
  /** Rank-guarded routing lines (lib/gateway/render_routes.ts), without indentation. */
  guarded: string[];
  /** HTTPS: the lines that answer 421 when the Host selects another listener than the SNI did. */
  misdirected: string[];
  /** HTTPS with client validation: the lines that tell the backends what the client's certificate was. */
  clientCert: string[];
}

/** What the Gateway templates get as `it`. */
export interface GatewayView {
  model: GatewayProxyModel;
  proxy: ProxyView;
  /** The shared global section loads no Lua file for a Gateway. */
  luaFiles: string[];
  frontends: FrontendView[];
  /** The TLS ports' frontends (lib/gateway/render_tls.ts). */
  tlsFrontends: TlsFrontendView[];
  /** Service backends and the rules' own, sorted by name. */
  backends: BackendView[];
  /** The lines that pick a weighted rule's target (lib/gateway/render_rules.ts), in every frontend. */
  choice: string[];
  /** Some entry is in the regex map: the frontends look it up. */
  hasRegex: boolean;
  /** The wildcard suffix lengths looked up, longest first. */
  depths: number[];
  noRank: number;
  builtinDefaultBackend: string;
  crtList: string[];
  /** Some HTTPS port checks client certificates: no shared TLS session cache (lib/gateway/render_client_validation.ts). */
  noSslSessionCache: boolean;
}

function bug(message: string): never {
  throw new Error(`bug: ${message} in the Gateway model`);
}

/**
 * The crt-list of the HTTPS ports' certificates and the TLS ports' in Terminate mode, one line per
 * file with the SNI names of every listener using it. The certificate of a listener without
 * hostname is served to any name no other line names: HAProxy's default is the first line, so it
 * comes first (with `!*` if it names nothing else). All these ports read the one crt-list: a
 * certificate is offered on every such port of the Gateway for its names, and of two
 * hostname-less listeners on two ports the lower port's is the default of both (`defaults`: the
 * ports with a hostname-less listener, bound without `strict-sni`).
 */
function crtLines(ports: readonly ProxyPort[]): { lines: string[]; secrets: SecretFile[]; defaults: Set<number> } {
  const files = new Map<string, { cert: TlsCert; hosts: Set<string>; excluded: Set<string> }>();
  let first: string | null = null;
  const defaults = new Set<number>();
  for (const p of ports) {
    if (p.protocol !== "HTTPS" && p.protocol !== "TLS") continue;
    for (const c of p.certs) {
      if (!PEM_FILE.test(c.file)) bug(`certificate file ${JSON.stringify(c.file)}`);
      for (const h of [...c.hosts, ...c.excluded ?? []]) if (!isHost(h)) bug(`SNI name ${JSON.stringify(h)}`);
      let f = files.get(c.file);
      if (!f) files.set(c.file, f = { cert: c, hosts: new Set(), excluded: new Set() });
      if (f.cert.namespace !== c.namespace || f.cert.name !== c.name) bug(`file ${c.file} of two Secrets`);
      for (const h of c.hosts) f.hosts.add(h);
      for (const h of c.excluded ?? []) f.excluded.add(h);
      if (c.hosts.length === 0) {
        first ??= c.file;
        defaults.add(p.port);
      }
    }
  }
  const line = (file: string) => {
    const f = files.get(file)!;
    const sni = [...f.hosts, ...[...f.excluded].map((h) => `!${h}`)];
    return [file, ...(sni.length > 0 ? sni : ["!*"])].join(" ");
  };
  // a file that only a second hostname-less listener uses names nothing: left out
  const named = [...files.keys()].filter((f) => f !== first && files.get(f)!.hosts.size > 0);
  const listed = [...(first !== null ? [first] : []), ...named];
  const secrets = listed.map((file) => {
    const { namespace, name } = files.get(file)!.cert;
    return { file, namespace, name };
  }).sort((a, b) => a.file < b.file ? -1 : a.file > b.file ? 1 : 0);
  return { lines: listed.map(line), secrets, defaults };
}

/** A condition that `sample` (a lower-case host) matches listener hostname `h` (exact, or `*.suffix`: one or more labels). */
function hostCondition(sample: string, h: string): string {
  const host = checkedHostname(h);
  if (host === "") bug("empty listener hostname");
  return host.startsWith("*.")
    ? `{ ${sample} -m end ${host.slice(1)} } !{ ${sample} -m beg . }`
    : `{ ${sample} -m str ${host} }`;
}

/**
 * Misdirected requests (RFC 9110 §15.5.20): on an HTTPS port, the TLS SNI picked a listener (the
 * most specific hostname matching it, else the one without hostname) and so picked its
 * certificate; a request on that connection whose Host picks another listener is answered 421, so
 * a client reusing a connection for another host (HTTP/2 coalescing) retries on a new one rather
 * than be served by a listener it did not authenticate. `hostnames`: the port's listener
 * hostnames, most specific first; none: every request picks the one listener, nothing to check.
 */
function misdirectedLines(hostnames: readonly string[]): string[] {
  if (hostnames.length === 0) return [];
  const lines: string[] = [];
  for (const [v, sample] of [["txn.lsni", "ssl_fc_sni,lower"], ["txn.lhost", "var(txn.host)"]] as const) {
    hostnames.forEach((h, i) => {
      lines.push(`http-request set-var(${v}) str(${i}) if !{ var(${v}) -m found } ${hostCondition(sample, h)}`);
    });
    lines.push(`http-request set-var(${v}) str(none) if !{ var(${v}) -m found }`);
  }
  lines.push(
    `http-request return status 421 content-type text/plain string "misdirected request: this connection's TLS ` +
      `server name is for another listener" if { ssl_fc_sni -m found } !{ var(txn.lsni),strcmp(txn.lhost) eq 0 }`,
  );
  return lines;
}

/** The view of `model` (every value checked for its spot) and its route maps. */
export function buildGatewayView(
  model: GatewayProxyModel,
  proxy: ProxyOptions = DEFAULT_PROXY_OPTIONS,
): { view: GatewayView; maps: RouteMaps; secrets: SecretFile[] } {
  const ports = [...model.ports];
  for (let i = 0; i < ports.length; i++) {
    const p = ports[i];
    if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) bug(`port ${p.port}`);
    if (p.protocol !== "HTTP" && p.protocol !== "HTTPS" && p.protocol !== "TLS") {
      bug(`protocol ${JSON.stringify(p.protocol)}`);
    }
    if (i > 0 && ports[i - 1].port >= p.port) bug("ports not sorted or twice");
  }
  const clash = containerPortClashes(ports.map((p) => p.port))[0];
  if (clash) bug(`listener ports ${clash[0]} and ${clash[1]} of one container port`);
  const services = new Map<string, BackendView>();
  for (const b of model.backends) {
    if (services.has(b.name)) bug(`backend ${b.name} twice`);
    services.set(b.name, serviceBackendView(b));
  }
  const tlsPorts = ports.filter((p) => p.protocol === "TLS");
  const httpPorts = ports.filter((p) => p.protocol !== "TLS");
  const rules = ruleOutput(model.rules, services, httpPorts.flatMap((p) => p.routes));
  const tlsRules = new Map((model.tlsRules ?? []).map((r) => [r.name, r]));
  for (const r of tlsRules.values()) {
    for (const t of r.targets) {
      if (services.get(t.backend) === undefined) bug(`TLS rule ${r.name} to unknown backend ${t.backend}`);
    }
  }
  const tls = crtLines(ports);
  const passthrough: string[] = [];
  const tlsViews = tlsPorts.flatMap((p) => {
    const ssl = `ssl crt-list "\${IC_CERT_DIR}/crt-list"${tls.defaults.has(p.port) ? "" : " strict-sni"}`;
    const out = tlsFrontends(p, tlsRules, `"\${IC_BIND_ADDR}:${containerPort(p.port)}"`, ssl);
    passthrough.push(...out.lines);
    return out.views;
  });
  const target = (rule: string) => rules.target.get(rule) ?? bug(`route to unknown rule ${JSON.stringify(rule)}`);
  const pv = proxyView(proxy);
  const exact: string[] = [];
  const prefix: string[] = [];
  const regex: string[] = [];
  const anyValidation = httpPorts.some((p) => p.protocol === "HTTPS" && p.clientValidation !== undefined);
  const frontends = httpPorts.map((p): FrontendView => {
    const routes = portRoutes(p, target, BUILTIN_DEFAULT_BACKEND);
    exact.push(...routes.maps.exact);
    prefix.push(...routes.maps.prefix);
    regex.push(...routes.maps.regex);
    const https = p.protocol === "HTTPS";
    let bind = `"\${IC_BIND_ADDR}:${containerPort(p.port)}"`;
    if (https) {
      if (!p.certs.some((c) => c.hosts.length > 0) && !tls.defaults.has(p.port)) {
        bug(`HTTPS port ${p.port} without certificate`);
      }
      bind += ` ssl crt-list "\${IC_CERT_DIR}/crt-list" alpn ${pv.alpn}${
        tls.defaults.has(p.port) ? "" : " strict-sni"
      }${clientValidationBind(p.clientValidation)}`;
    }
    return {
      name: `${https ? "https" : "http"}_${p.port}`,
      port: p.port,
      https,
      bind,
      key: `${p.port}:`,
      lport: p.port === (https ? 443 : 80) ? "" : `:${p.port}`,
      guarded: routes.guarded,
      misdirected: https ? misdirectedLines(p.listenerHostnames ?? []) : [],
      clientCert: clientCertLines(https ? p.clientValidation : undefined, anyValidation),
    };
  });
  const backends = [...services.values(), ...rules.backends].sort((a, b) => a.name < b.name ? -1 : 1);
  for (let i = 1; i < backends.length; i++) {
    if (backends[i - 1].name === backends[i].name) bug(`backend ${backends[i].name} twice`);
  }
  const view: GatewayView = {
    model,
    proxy: pv,
    luaFiles: [],
    frontends,
    tlsFrontends: tlsViews,
    backends,
    choice: rules.choice,
    hasRegex: regex.length > 0,
    depths: Array.from({ length: WILDCARD_DEPTH }, (_, i) => WILDCARD_DEPTH - i),
    noRank: NO_RANK,
    builtinDefaultBackend: BUILTIN_DEFAULT_BACKEND,
    crtList: tls.lines,
    noSslSessionCache: anyValidation,
  };
  const maps: RouteMaps = {
    "routes-exact.map": exact.sort().join(""),
    "routes-prefix.map": prefix.sort().join(""),
    "redirect-hosts.map": "",
    "routes-regex.map": regex.join(""),
    "passthrough.map": passthrough.sort().join(""),
    "owned-hosts.map": "",
  };
  const cas = [...backendCas(model.backends), ...frontendCas(ports)];
  return { view, maps, secrets: withConfigMapCas(tls.secrets, cas) };
}

/** The CA ConfigMaps the HTTPS ports check their clients' certificates against (spec.tls.frontend). */
function frontendCas(ports: readonly ProxyPort[]): { namespace: string; name: string }[] {
  return ports.flatMap((p) =>
    p.protocol === "HTTPS" && p.clientValidation
      ? [{ namespace: p.clientValidation.ca.namespace, name: p.clientValidation.ca.name }]
      : []
  );
}

/** The CA ConfigMaps the backends' BackendTLSPolicies check their certificates against. */
function backendCas(backends: GatewayProxyModel["backends"]): { namespace: string; name: string }[] {
  const out: { namespace: string; name: string }[] = [];
  for (const b of backends) {
    const ca = b.tls?.ca;
    if (ca && ca !== "system") out.push({ namespace: ca.namespace, name: ca.name });
  }
  return out;
}

/** Renders the configuration, crt-list, Secret list and route maps of one Gateway's proxy. Throws TemplateError (a broken custom template) or a bug Error (an unchecked value). */
export function renderGateway(
  model: GatewayProxyModel,
  templates: Templates,
  proxy: ProxyOptions = DEFAULT_PROXY_OPTIONS,
): Rendered {
  const { view, maps, secrets } = buildGatewayView(model, proxy);
  return {
    config: renderRoot(templates, "gateway/haproxy.cfg", view),
    crtList: renderRoot(templates, "tls", view),
    secrets,
    maps,
  };
}
