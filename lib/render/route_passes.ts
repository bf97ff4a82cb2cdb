/**
 * @module render/route_passes
 * The passes the model (render/model.ts) makes over the routes merged from every Ingress, before
 * they are ordered: a host made all-regex by one Ingress (`path-regex: all`, ingress-nginx's
 * enforceRegexModifier), canaries joining their main routes, and the `www-redirect` twins.
 */
import { pathRegexProblem } from "../annotations/values.ts";
import { isHost } from "./patterns.ts";
import { growable, slotCount } from "./slots.ts";
import { type CanaryRule, type CanarySettings, reservedName } from "./canary.ts";
import { type BackendSettings, DEFAULT_SETTINGS, settingsHash } from "./settings.ts";
import type { ReadContext, Report } from "./backend_resolve.ts";
import type { Route } from "./model_types.ts";
import { cmp, show } from "./show.ts";
import type { HostOwners } from "./host_ownership.ts";

export interface CanaryPath {
  /** The canary Ingress's namespace: it joins routes of that namespace only. */
  ns: string;
  key: string;
  backend: string;
  settings: CanarySettings;
  where: string;
  problem: Report;
}

/**
 * As ingress-nginx (enforceRegexModifier): once an Ingress with `path-regex: all` routes a host,
 * every path of that host is a regex matched from its start, case-insensitively, the other
 * Ingresses' Exact and Prefix paths too, all in one longest-first order (`/` then comes after
 * `/.well-known/acme/challenge` of another Ingress). A path that is no valid regex, or whose route
 * rewrites its prefix, keeps its own match and is reported.
 */
export function regexHosts(ctx: ReadContext, routes: Map<string, Route>, hosts: ReadonlySet<string>): void {
  if (hosts.size === 0) return;
  for (const [key, route] of routes) {
    if (route.match === "regex" || !hosts.has(route.host)) continue;
    const problem = pathRegexProblem(route.path);
    const rewrites = ctx.backends.get(route.backend)?.settings?.rewrite;
    if (problem === null && !rewrites) {
      routes.set(key, Object.freeze({ ...route, match: "regex" as const }));
      continue;
    }
    ctx.problems.push({
      object: route.ingress,
      kind: "Ingress",
      reason: "InvalidPath",
      message: `host ${show(route.host || "*")} path ${show(route.path)} (${route.pathType}) stays a ` +
        `${route.match} path where another Ingress makes every path of the host a regex (path-regex: all): ` +
        (problem !== null ? `as a regex it ${problem}` : "its route rewrites its prefix"),
    });
  }
}

/**
 * Each canary path joins the main route of its host, path and type (another Ingress's): the route
 * then points to a reserved copy of its backend, named for the route, which the canary rules key on.
 */
export function joinCanaries(ctx: ReadContext, routes: Map<string, Route>, paths: CanaryPath[]): CanaryRule[] {
  const out = new Map<string, CanaryRule>();
  const joined = new Set<string>();
  for (const c of paths) {
    const main = routes.get(c.key);
    // Only a route of the canary's own namespace: another namespace's traffic is never split off.
    if (!main || namespaceOf(main.ingress) !== c.ns) {
      c.problem(
        "CanaryWithoutMain",
        `${c.where}: no other Ingress of namespace ${c.ns} routes this host and path; canary ignored`,
      );
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
    // a copy: the route object of an unchanged Ingress is kept between models
    routes.set(c.key, { ...main, backend: reserved });
    out.set(reserved, { main: reserved, canary: c.backend, ...c.settings });
  }
  return [...out.values()].sort((a, b) => cmp(a.main, b.main));
}

/** The namespace of an Ingress id `namespace/name` ("" for a route the model made itself). */
export function namespaceOf(ingress: string): string {
  const slash = ingress.indexOf("/");
  return slash < 0 ? "" : ingress.slice(0, slash);
}

/** The `www-redirect` twin of a host: `www.` added or removed. */
export function wwwTwin(host: string): string {
  return host.startsWith("www.") ? host.slice(4) : `www.${host}`;
}

/**
 * `www-redirect`: the twin of each host (`www.` added or removed) gets a root route to a backend
 * that redirects to the host, unless some Ingress routes the twin itself (its routes win).
 */
export function addWwwTwins(
  ctx: ReadContext,
  routes: Map<string, Route>,
  hosts: { host: string; ns: string; id: string }[],
  owners: HostOwners | null,
): void {
  if (hosts.length === 0) return;
  const routed = new Set([...routes.values()].map((r) => r.host));
  for (const { host, ns, id } of hosts) {
    const twin = wwwTwin(host);
    if (routed.has(twin) || !isHost(twin)) continue;
    // The twin is not claimed by the Ingress: it may take it only while no other namespace owns it.
    const twinOwner = owners?.ownerOf(twin) ?? null;
    if (twinOwner !== null && twinOwner !== ns) continue;
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
        slots: slotCount(0, growable("roundrobin", settings.sticky !== null)),
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
