/**
 * @module render/render
 * Turns a Model into the three pieces of contracts.md §4: `haproxy.cfg`, `crt-list` and the list
 * of Secrets the proxy writes. The templates receive a View in which every cluster value is
 * already placed for its spot (ACL values in single quotes, slot lines in their fixed shape), so a
 * template never has to quote anything itself.
 */
import type { Model, Route } from "./model.ts";
import { canonicalPath, isHost, isPath, isProxyName, PEM_FILE, sq, wildcardRegex } from "./patterns.ts";
import { slotLines } from "./slots.ts";
import { compileTemplates, TemplateError, type Templates } from "./templates.ts";

/** The name of the built-in backend that answers 404 when no route and no default backend match. */
export const BUILTIN_DEFAULT_BACKEND = "ic_default_404";

export interface SecretFile {
  file: string;
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
}

/** What the templates get as `it`. */
export interface View {
  model: Model;
  hasTls: boolean;
  /** One entry per `use_backend` line, in match order; `cond` is a complete HAProxy condition. */
  routes: { backend: string; cond: string }[];
  /** Conditions of `http-request redirect scheme https` lines. */
  redirects: string[];
  backends: { name: string; balance: string; timeoutServer: string | null; slots: string[] }[];
  /** Name of the backend for requests that match no route. */
  defaultBackend: string;
  builtinDefaultBackend: string;
  /** Lines of the crt-list: `<file> [<sni>…]`. */
  crtList: string[];
}

function hostCond(host: string): string | null {
  if (host === "") return null;
  if (!isHost(host)) throw new Error(`bug: unvalidated host ${JSON.stringify(host)} in model`);
  return host.startsWith("*.")
    ? `{ var(txn.host) -m reg ${sq(wildcardRegex(host))} }`
    : `{ var(txn.host) -m str ${sq(host)} }`;
}

/**
 * The conditions of one route: an element-wise prefix needs two lines (`== p` or starts with `p/`).
 * The path is compared in the form the frontends normalize request paths to.
 */
function routeConds(r: Route): string[] {
  if (!isPath(r.path)) throw new Error(`bug: unvalidated path ${JSON.stringify(r.path)} in model`);
  const host = hostCond(r.host);
  const path = canonicalPath(r.path);
  const paths = r.match === "exact"
    ? [`{ path -m str ${sq(path)} }`]
    : path === "/"
    ? [null]
    : [`{ path -m str ${sq(path)} }`, `{ path -m beg ${sq(`${path}/`)} }`];
  return paths.map((p) => [host, p].filter((c) => c !== null).join(" ") || "TRUE");
}

function checkName(name: string): string {
  if (!isProxyName(name)) throw new Error(`bug: unsafe backend name ${JSON.stringify(name)} in model`);
  return name;
}

export function buildView(model: Model): View {
  const crtList = model.tls.map((c) => {
    if (!PEM_FILE.test(c.file)) throw new Error(`bug: unsafe file ${c.file}`);
    for (const h of c.hosts) if (!isHost(h)) throw new Error(`bug: unvalidated host ${JSON.stringify(h)}`);
    return [c.file, ...c.hosts].join(" ");
  });
  const hasTls = crtList.length > 0;
  return {
    model,
    hasTls,
    routes: model.routes.flatMap((r) => routeConds(r).map((cond) => ({ backend: checkName(r.backend), cond }))),
    redirects: hasTls ? model.redirectHosts.map((h) => hostCond(h) ?? "FALSE") : [],
    backends: model.backends.map((b) => ({
      name: checkName(b.name),
      balance: b.balance,
      timeoutServer: b.timeoutServer,
      slots: slotLines(b.servers),
    })),
    defaultBackend: checkName(model.defaultBackend ?? BUILTIN_DEFAULT_BACKEND),
    builtinDefaultBackend: BUILTIN_DEFAULT_BACKEND,
    crtList,
  };
}

/** Renders the configuration, the crt-list and the Secret list of a model. Throws TemplateError. */
export function render(model: Model, templates: Templates): Rendered {
  const view = buildView(model);
  const config = renderRoot(templates, "haproxy.cfg", view);
  const crtList = renderRoot(templates, "tls", view);
  return {
    config,
    crtList,
    secrets: model.tls.map((c) => ({ file: c.file, namespace: c.namespace, name: c.name })),
  };
}

function renderRoot(templates: Templates, name: string, view: View): string {
  try {
    return templates.eta.render(`@${name}`, view);
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    throw new TemplateError(templates.sources[name] ?? name, err);
  }
}

/** The `data` of the ConfigMap the controller publishes (contracts.md §4). */
export function configMapData(r: Rendered): { "haproxy.cfg": string; "crt-list": string; "secrets.json": string } {
  return { "haproxy.cfg": r.config, "crt-list": r.crtList, "secrets.json": JSON.stringify(r.secrets) };
}

/** A model that uses every feature (routes of each kind, TLS, redirect, endpoints): for start-up checks. */
export function sampleModel(): Model {
  const be = (name: string, servers: { address: string; port: number }[]) => ({
    name,
    namespace: "sample",
    service: name.split("_")[2],
    port: 80,
    servers,
    slots: Math.max(4, servers.length),
    balance: "roundrobin" as const,
    timeoutServer: name.endsWith("b_80") ? "30s" : null,
  });
  return {
    ingresses: ["sample/sample"],
    routes: [
      { host: "a.example.com", path: "/x", pathType: "Exact", match: "exact", backend: "be_sample_a_80", ingress: "" },
      { host: "*.example.com", path: "/", pathType: "Prefix", match: "prefix", backend: "be_sample_b_80", ingress: "" },
      { host: "", path: "/api", pathType: "Prefix", match: "prefix", backend: "be_sample_a_80", ingress: "" },
    ],
    backends: [
      be("be_sample_a_80", [{ address: "10.0.0.1", port: 8080 }]),
      be("be_sample_b_80", [{ address: "[fd00::1]", port: 8080 }]),
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
  return compileTemplates(customGlob, [buildView(full), buildView(plain)]);
}
