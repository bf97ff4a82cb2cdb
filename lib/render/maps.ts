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
 *   HTTPS, by host part, value `1` (308) or the redirect's status code (`ssl-redirect-code`),
 *   followed by `s` when the redirect drops a trailing slash (`ssl-redirect-trailing-slash: drop`).
 * - `routes-regex.map` (`map_reg`, first match in file order): regex paths (`path-regex`), key
 *   `^<host part as regex>(?=/)(?i:<regex>)`, in the routes' match order (longest regex first).
 *   It is the one map whose order matters, so it is never sorted, and the proxy replaces it as a
 *   whole (runtime_changes.ts): `add map` would append an entry at the end of the list.
 * - `passthrough.map` (`map_str`, by SNI): the `ssl-passthrough` hosts, by host part, value their
 *   `mode tcp` backend (docs/ssl-passthrough.md), or `ic_terminate` for a host under a passthrough
 *   wildcard that another namespace serves (its connections are terminated as usual).
 * - `owned-hosts.map` (`map_str`): owned hosts, by host part, whose requests no route of their owner
 *   matched: `404`, or `catch-all` (skip the wildcard rules, go on to the host-less ones), so they
 *   never reach another namespace's wildcard or host-less rules (render/host_ownership.ts).
 * This module imports only name patterns and small helpers, so the proxy can check received map files with it.
 */
import { canonicalPath, isHost, isPath, isProxyName } from "./patterns.ts";
import { pathRegexProblem } from "../annotations/values.ts";
import type { Route } from "./model_types.ts";
import { compareRoutes } from "./route_order.ts";
import { insertSorted, lowerBound, removeSorted } from "./sorted.ts";
import { routeChangeFrom } from "./route_changes.ts";
import { cmp } from "./show.ts";

const NO_STOPS: readonly { host: string; stop: string }[] = Object.freeze([]);

/** The map files: ConfigMap keys (contracts.md §4) and file names in the proxy's cert dir. */
export const MAP_FILES = [
  "routes-exact.map",
  "routes-prefix.map",
  "redirect-hosts.map",
  "routes-regex.map",
  "passthrough.map",
  "owned-hosts.map",
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
export type MapRoute = Pick<Route, "host" | "path" | "pathType" | "match" | "backend">;

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
 * routes keep that order in their map. With a memo (one per proxy), a change of a few routes
 * changes the sorted lines of the last call instead of sorting them all again.
 */
export function routeMaps(
  routes: readonly MapRoute[],
  redirectHosts: readonly string[],
  redirectCodes: Readonly<Record<string, string>> = {},
  passthrough: readonly { host: string; backend: string }[] = [],
  memo: MapsMemo | null = null,
  stops: readonly { host: string; stop: string }[] = NO_STOPS,
): RouteMaps {
  const last = memo?.last;
  const tables = (last && changedTables(last, routes, memo!)) ?? sortedTables(routes);
  const small = (last?.small.redirectHosts === redirectHosts && last.small.redirectCodes === redirectCodes &&
      last.small.passthrough === passthrough && last.small.stops === stops)
    ? last.small
    : smallMaps(redirectHosts, redirectCodes, passthrough, stops);
  if (memo) memo.last = { ...tables, small };
  return {
    "routes-exact.map": tables.texts.exact,
    "routes-prefix.map": tables.texts.prefix,
    "redirect-hosts.map": small.texts.redirect,
    "routes-regex.map": tables.texts.regex,
    "passthrough.map": small.texts.passthrough,
    "owned-hosts.map": small.texts.stops,
  };
}

/** The route tables as sorted lines, with how many routes claim each key. */
interface Tables {
  routes: readonly MapRoute[];
  /** `<table> <key>` → the routes claiming it (the first one's line is in the map). */
  claims: Map<string, number>;
  /** The sorted lines of the exact and prefix maps (the regex map keeps the routes' order). */
  lines: { exact: string[]; prefix: string[] };
  texts: { exact: string; prefix: string; regex: string };
}

interface SmallMaps {
  redirectHosts: readonly string[];
  redirectCodes: Readonly<Record<string, string>>;
  passthrough: readonly { host: string; backend: string }[];
  stops: readonly { host: string; stop: string }[];
  texts: { redirect: string; passthrough: string; stops: string };
}

/** What routeMaps keeps between the calls for one proxy (lib/render/render.ts's RenderMemo holds it). */
export class MapsMemo {
  last: (Tables & { small: SmallMaps }) | null = null;
  /** Calls whose tables followed a model delta's noted change (for tests). */
  followed = 0;
}

/** Above this many changed routes, sorting everything again is as fast. */
const DIFF_LIMIT = 512;

function sortedTables(routes: readonly MapRoute[]): Tables {
  const tables = {
    exact: new Map<string, string>(),
    prefix: new Map<string, string>(),
    regex: new Map<string, string>(),
  };
  const claims = new Map<string, number>();
  for (const r of routes) {
    const entry = entryOf(r);
    const table = tables[entry.table];
    const claim = `${entry.table} ${entry.key}`;
    claims.set(claim, (claims.get(claim) ?? 0) + 1);
    if (!table.has(entry.key)) table.set(entry.key, entry.line);
  }
  const exact = [...tables.exact.values()].sort();
  const prefix = [...tables.prefix.values()].sort();
  return {
    routes,
    claims,
    lines: { exact, prefix },
    texts: { exact: exact.join(""), prefix: prefix.join(""), regex: [...tables.regex.values()].join("") },
  };
}

/**
 * routes-regex.map as sortedTables writes it: in match order, the first route of each key only (two
 * routes of one host, Prefix and ImplementationSpecific `/x`, have one key; a second line would be dead).
 */
function regexText(routes: readonly MapRoute[]): string {
  const lines = new Map<string, string>();
  for (const r of routes) {
    const e = entryOf(r);
    if (e.table === "regex" && !lines.has(e.key)) lines.set(e.key, e.line);
  }
  return [...lines.values()].join("");
}

/**
 * The tables of `routes` as a change of `last`, or null (sort them again) when many routes
 * changed or a changed key is claimed by more than one route (which one wins is a matter of order).
 * A model delta notes what it took out and put in (route_changes.ts); otherwise both route lists
 * are in match order, so one walk finds what was removed and added.
 */
function changedTables(last: Tables, routes: readonly MapRoute[], memo: MapsMemo): Tables | null {
  const before = last.routes;
  // The model of a reconcile that changed nothing hands back the very same list.
  if (before === routes) return last;
  const noted = routeChangeFrom(routes, before);
  const removed: MapRoute[] = [];
  const added: MapRoute[] = [];
  if (noted !== null) {
    if (noted.removed.length + noted.added.length > DIFF_LIMIT) return null;
    memo.followed++;
    for (const r of noted.removed) removed.push(r);
    for (const r of noted.added) added.push(r);
  } else {
    let i = 0;
    let j = 0;
    while (i < before.length || j < routes.length) {
      if (i < before.length && j < routes.length && before[i] === routes[j]) {
        i++, j++;
        continue;
      }
      const order = i >= before.length ? 1 : j >= routes.length ? -1 : compareRoutes(before[i], routes[j]);
      if (order <= 0) removed.push(before[i++]);
      if (order >= 0) added.push(routes[j++]);
      if (removed.length + added.length > DIFF_LIMIT) return null;
    }
  }
  if (removed.length === 0 && added.length === 0) return { ...last, routes };
  const claims = last.claims;
  const gone = removed.map(entryOf);
  const come = added.map(entryOf);
  const claim = (e: MapEntry) => `${e.table} ${e.key}`;
  const freed = new Set<string>();
  for (const e of gone) {
    if (claims.get(claim(e)) !== 1) return null;
    freed.add(claim(e));
  }
  const taken = new Set<string>();
  for (const e of come) {
    const k = claim(e);
    if ((claims.has(k) && !freed.has(k)) || taken.has(k)) return null;
    taken.add(k);
  }
  // From here on the last tables are changed in place: they are this call's now. The sorted
  // files' texts are edited, not joined again from 100,000 lines (lineEdits).
  for (const e of gone) claims.delete(claim(e));
  for (const e of come) claims.set(claim(e), 1);
  // A line that goes and comes back (a changed Ingress's unchanged route) is left where it is.
  const lineOf = (e: MapEntry) => `${e.table} ${e.line}`;
  const goneLines = new Set(gone.map(lineOf));
  const back = new Set(come.map(lineOf).filter((l) => goneLines.has(l)));
  const texts = { ...last.texts };
  for (const table of ["exact", "prefix"] as const) {
    const out = gone.filter((e) => e.table === table && !back.has(lineOf(e))).map((e) => e.line);
    const into = come.filter((e) => e.table === table && !back.has(lineOf(e))).map((e) => e.line);
    if (out.length + into.length > 0) texts[table] = lineEdits(texts[table], last.lines[table], out, into);
  }
  if (gone.some((e) => e.table === "regex") || come.some((e) => e.table === "regex")) {
    texts.regex = regexText(routes);
  }
  return { routes, claims, lines: last.lines, texts };
}

/**
 * `text` (the sorted `lines` joined) with the lines `out` taken out and `into` put in, and `lines`
 * changed the same way in place. The new text is joined once from the pieces between the edits,
 * found in the old text: a splice per line made a chain of slices that the next lookup flattened,
 * a copy of the whole file (3 MB at 100,000 routes) per line.
 */
function lineEdits(text: string, lines: string[], out: readonly string[], into: readonly string[]): string {
  /** Edits by position in `text`: a removal skips its line, an insertion goes before what starts there. */
  const edits: { at: number; remove: string | null; insert: string | null }[] = [];
  for (const line of out) edits.push({ at: lineAt(text, line), remove: line, insert: null });
  for (const line of into) {
    const next = lowerBound(lines, line, cmp);
    edits.push({ at: next < lines.length ? lineAt(text, lines[next]) : text.length, remove: null, insert: line });
  }
  // By position; at one position the insertions (in line order) before the removal of the line there.
  edits.sort((a, b) =>
    a.at - b.at || (a.insert === null ? 1 : 0) - (b.insert === null ? 1 : 0) || cmp(a.insert ?? "", b.insert ?? "")
  );
  const pieces: string[] = [];
  let from = 0;
  for (const e of edits) {
    if (e.at > from) pieces.push(text.slice(from, e.at));
    from = Math.max(from, e.at);
    if (e.insert !== null) pieces.push(e.insert);
    else from = e.at + e.remove!.length;
  }
  if (from < text.length) pieces.push(text.slice(from));
  for (const line of out) removeSorted(lines, line, cmp);
  for (const line of into) insertSorted(lines, line, cmp);
  return pieces.join("");
}

/** Where `line` (a whole line of `text`, `\n` included, found once in it) starts. */
function lineAt(text: string, line: string): number {
  if (text.startsWith(line)) return 0;
  const at = text.indexOf(`\n${line}`);
  if (at < 0) throw new Error(`bug: map line ${JSON.stringify(line)} not in its text`);
  return at + 1;
}

function smallMaps(
  redirectHosts: readonly string[],
  redirectCodes: Readonly<Record<string, string>>,
  passthrough: readonly { host: string; backend: string }[],
  stops: readonly { host: string; stop: string }[],
): SmallMaps {
  const redirect = new Map(
    redirectHosts.map((h) => [hostKey(h), /^30[1278]s?$/.test(redirectCodes[h]) ? redirectCodes[h] : "1"]),
  );
  const texts = {
    redirect: mapText(redirect),
    passthrough: mapText(new Map(passthrough.map((p) => [hostKey(p.host), p.backend]))),
    stops: stopsText(stops),
  };
  return { redirectHosts, redirectCodes, passthrough, stops, texts };
}

/** The lines of each stop (the model keeps its stop objects from one change to the next). */
const stopLines = new WeakMap<object, string>();

/**
 * `owned-hosts.map` of stops in key order (the model's order): their lines joined, not sorted
 * again. With a catch-all of one namespace every other namespace's host has a stop, so a host
 * added at 10,000 must not sort 10,000 lines.
 */
function stopsText(stops: readonly { host: string; stop: string }[]): string {
  let text = "";
  let last = "";
  for (const s of stops) {
    let line = stopLines.get(s);
    if (line === undefined) stopLines.set(s, line = checkedLine(hostKey(s.host), s.stop));
    if (line <= last) throw new Error(`bug: owned-hosts.map lines out of order at ${JSON.stringify(line)}`);
    last = line;
    text += line;
  }
  return text;
}

function entryOf(r: MapRoute): MapEntry {
  let entry = entries.get(r);
  if (entry?.backend !== r.backend) {
    entry = mapEntry(r);
    if (Object.isFrozen(r)) entries.set(r, entry);
  }
  return entry;
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
    // Joined, not concatenated: a kept concatenation stays a chain of its pieces until read whole.
    [table, key] = r.match === "exact"
      ? ["exact", [host, path].join("")]
      : ["prefix", [host, path, path === "/" ? "" : "/"].join("")];
  }
  return { table, key, backend: r.backend, line: checkedLine(key, r.backend) };
}

function checkedLine(key: string, value: string): string {
  const l = `${key} ${value}`;
  if (!MAP_LINE.test(l)) throw new Error(`bug: unsafe map line ${JSON.stringify(l)}`);
  return [l, "\n"].join("");
}

/** The sorted text of a map file of plain values (checked here). */
function mapText(entries: Map<string, string>): string {
  return [...entries].map(([k, v]) => checkedLine(k, v)).sort().join("");
}
