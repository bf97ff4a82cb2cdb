/**
 * @module render/maps
 * The routing tables of one proxy as HAProxy map files (docs/routing-maps.md): a request is
 * routed by at most six tree lookups, whatever the number of routes, and a route-only change is
 * a change of these files alone, which the proxy applies through the Runtime API.
 *
 * Keys are `<host part><path>`: the host part is the exact host (`a.example.com`), a wildcard host
 * without its `*` (`.example.com`), or nothing for host-less rules; the path is in the form the
 * frontends normalize request paths to. A valid host has no `/` and never starts with `.`, and
 * every path starts with `/`, so the three kinds of keys cannot be confused with each other.
 * - `routes-exact.map` (`map_str`): Exact routes, key `<host part><path>`.
 * - `routes-prefix.map` (`map_beg`, longest match): Prefix and ImplementationSpecific routes, key
 *   `<host part><path>/` (the root prefix `/` once). The request is looked up as
 *   `<host part><path>/`, so `/foo` matches `/foo` and `/foo/bar` but not `/foobar`.
 * - `redirect-hosts.map` (`map_str`): the hosts whose plain HTTP requests are redirected to
 *   HTTPS, by host part, value `1` (308) or the redirect's status code (`ssl-redirect-code`).
 * - `routes-regex.map` (`map_reg`, first match in file order): regex paths (`path-regex`), key
 *   `^<host part as regex>(?=/)(?i:<regex>)`, in the routes' match order (longest regex first).
 *   It is the one map whose order matters, so it is never sorted, and the proxy replaces it as a
 *   whole (runtime_changes.ts): `add map` would append an entry at the end of the list.
 * - `passthrough.map` (`map_str`, by SNI): the `ssl-passthrough` hosts, by host part, value their
 *   `mode tcp` backend (docs/ssl-passthrough.md).
 * This module imports only name patterns, so the proxy can check received map files with it.
 */
import { canonicalPath, isHost, isPath, isProxyName } from "./patterns.ts";
import { pathRegexProblem } from "../annotations/values.ts";

/** The map files: ConfigMap keys (contracts.md §4) and file names in the proxy's cert dir. */
export const MAP_FILES = [
  "routes-exact.map",
  "routes-prefix.map",
  "redirect-hosts.map",
  "routes-regex.map",
  "passthrough.map",
] as const;
export type MapFile = typeof MAP_FILES[number];
/** The maps whose line order is their lookup order (`map_reg` walks its list and stops at the first match). */
export const ORDERED_MAP_FILES: ReadonlySet<string> = new Set<MapFile>(["routes-regex.map"]);
export type RouteMaps = Record<MapFile, string>;

/**
 * One map line: a key of printable ASCII without spaces that cannot start a comment, one space,
 * a backend name (or `1`). Nothing else may reach a map file or a Runtime API payload: a space
 * would split a key, a line break would add an entry, an empty line would end a payload.
 */
export const MAP_LINE = /^[!-"$-~][!-~]* [A-Za-z0-9_.:-]{1,200}$/;

/** The map key's host part of a rule host: the host, `.suffix` for `*.suffix`, "" for any host. */
export function hostKey(host: string): string {
  if (host === "") return "";
  if (!isHost(host)) throw new Error(`bug: unvalidated host ${JSON.stringify(host)} in model`);
  return host.startsWith("*.") ? host.slice(1) : host;
}

/** The route fields the maps need (a subset of model.ts's Route). */
export interface MapRoute {
  host: string;
  path: string;
  match: "exact" | "prefix" | "regex";
  backend: string;
}

/**
 * The `routes-regex.map` key of a regex route: anchored at the host part (dots as `[.]`, so no
 * backslash), `(?=/)` so that the host part ends exactly there (a host has no `/`; the path starts
 * with one), and the path regex case-insensitive (ingress-nginx's `~*`) in a non-capturing group,
 * so a top-level `|` of the regex cannot reach outside it.
 */
export function regexKey(host: string, regex: string): string {
  const problem = pathRegexProblem(regex);
  if (problem !== null) throw new Error(`bug: unvalidated path regex ${JSON.stringify(regex)}: ${problem}`);
  return `^${hostKey(host).replaceAll(".", "[.]")}(?=/)(?i:${regex})`;
}

/**
 * The map files of `routes` (in match order) and `redirectHosts`. The first route of a key wins
 * (Prefix before ImplementationSpecific for the same path, as the model orders them); regex
 * routes keep that order in their map.
 */
export function routeMaps(
  routes: readonly MapRoute[],
  redirectHosts: readonly string[],
  redirectCodes: Readonly<Record<string, string>> = {},
  passthrough: readonly { host: string; backend: string }[] = [],
): RouteMaps {
  const exact = new Map<string, string>();
  const prefix = new Map<string, string>();
  const regex = new Map<string, string>();
  const tables = { exact, prefix, regex };
  for (const r of routes) {
    let entry = entries.get(r);
    if (entry?.backend !== r.backend) {
      entry = mapEntry(r);
      if (Object.isFrozen(r)) entries.set(r, entry);
    }
    const table = tables[entry.table];
    if (!table.has(entry.key)) table.set(entry.key, entry.line);
  }
  const redirect = new Map(
    redirectHosts.map((h) => [hostKey(h), /^30[1278]$/.test(redirectCodes[h]) ? redirectCodes[h] : "1"]),
  );
  return {
    "routes-exact.map": mapText(exact, true, true),
    "routes-prefix.map": mapText(prefix, true, true),
    "redirect-hosts.map": mapText(redirect),
    "routes-regex.map": mapText(regex, false, true),
    "passthrough.map": mapText(new Map(passthrough.map((p) => [hostKey(p.host), p.backend]))),
  };
}

/** A route's place in the map files: its table, key and checked line. */
interface MapEntry {
  table: "exact" | "prefix" | "regex";
  key: string;
  backend: string;
  /** `<key> <backend>\n`, checked against MAP_LINE. */
  line: string;
}

/** The entries of frozen routes (the model's routes of unchanged Ingresses are the same objects each time). */
const entries = new WeakMap<MapRoute, MapEntry>();

function mapEntry(r: MapRoute): MapEntry {
  if (!isProxyName(r.backend)) throw new Error(`bug: unsafe backend name ${JSON.stringify(r.backend)} in model`);
  let table: MapEntry["table"];
  let key: string;
  if (r.match === "regex") {
    [table, key] = ["regex", regexKey(r.host, r.path)];
  } else {
    if (!isPath(r.path)) throw new Error(`bug: unvalidated path ${JSON.stringify(r.path)} in model`);
    const path = canonicalPath(r.path);
    const host = hostKey(r.host);
    [table, key] = r.match === "exact" ? ["exact", host + path] : ["prefix", host + (path === "/" ? "/" : `${path}/`)];
  }
  return { table, key, backend: r.backend, line: checkedLine(key, r.backend) };
}

function checkedLine(key: string, value: string): string {
  const l = `${key} ${value}`;
  if (!MAP_LINE.test(l)) throw new Error(`bug: unsafe map line ${JSON.stringify(l)}`);
  return `${l}\n`;
}

/** The text of a map file whose values are checked lines (`lines`) or plain values (checked here). */
function mapText(entries: Map<string, string>, sort = true, lines = false): string {
  const out = lines ? [...entries.values()] : [...entries].map(([k, v]) => checkedLine(k, v));
  if (sort) out.sort();
  return out.join("");
}
