/**
 * @module gateway/render_routes
 * How the route entries of one Gateway port are looked up (docs/gateway-rendering.md): in the
 * routing map files where the lookups give the model's order, as rank-guarded configuration lines
 * where they cannot.
 *
 * Map keys are `<listener port>:<host part><path>` in the three route maps of lib/render/maps.ts
 * (the host part as there: the host, `.suffix` of a wildcard, nothing for any host), and each value
 * is `<backend>:<rank>`. A request is looked up host group by host group — its own host, then its
 * suffixes of WILDCARD_DEPTH down to one label (a Gateway wildcard matches one or more labels),
 * then no host — and in each group in `routes-exact.map`, the regex list, then the longest prefix
 * of `routes-prefix.map`. That finds the first unconditioned entry of the model's order as long as
 * the order agrees with those lookups where two entries can match one request; an entry that
 * would break the agreement (and every entry with header, query parameter or method conditions, and
 * every wildcard deeper than WILDCARD_DEPTH) becomes a guarded line instead.
 *
 * Guarded lines run in the model's order after the map lookups. The k-th guarded line of a port
 * takes the request if its conditions hold and the rank of what was found so far is greater than
 * k; it then sets the rank to k. A map entry's rank is the number of guarded entries before it in
 * the model's order, so the first matching entry of the whole order wins, and a change of map
 * entries alone never changes a guarded line.
 *
 * Listener isolation: after the last entry of each listener with a hostname comes a stop, an entry
 * of the listener's hostname and the prefix `/` to the built-in 404, so a request whose Host that
 * listener wins never reaches the entries of a less specific listener; an entry whose hostname such
 * a listener covers whole never serves a request and is left out.
 */
import type { ProxyPort, RouteEntry } from "./model_types.ts";
import { canonicalPath } from "../render/patterns.ts";
import { MAP_LINE } from "../render/maps.ts";
import {
  checked,
  checkedHostname,
  checkedPath,
  checkedTarget,
  isFieldName,
  isFieldValue,
  isMethod,
  isPathRegex,
  isValueRegex,
  word,
} from "./render_checks.ts";

/** The longest wildcard suffix (in labels) looked up through the maps; deeper wildcards are guarded lines. */
export const WILDCARD_DEPTH = 5;
/** The rank of "nothing found": greater than any guarded line's index. */
export const NO_RANK = 999999999;

/** The route maps' lines of one port. */
export interface PortMaps {
  exact: string[];
  prefix: string[];
  /** In lookup order. */
  regex: string[];
}

export interface PortRoutes {
  maps: PortMaps;
  /** The guarded lines, without indentation, in order. */
  guarded: string[];
}

type Table = "exact" | "regex" | "prefix";

/** The map key's host part: the host, `.suffix` for `*.suffix`, "" for any host. */
function hostPart(hostname: string): string {
  return hostname.startsWith("*.") ? hostname.slice(1) : hostname;
}

/** The host parts less specific than `part` that also match a host it matches (wildcard suffixes, any host). */
function widerHostParts(part: string): string[] {
  if (part === "") return [];
  const wider = [""];
  for (let i = part.indexOf(".", 1); i > 0; i = part.indexOf(".", i + 1)) wider.push(part.slice(i));
  return wider;
}

/** The element-wise prefixes of a canonical path shorter than itself: `/a/b` → `/`, `/a`. */
function shorterPrefixes(path: string): string[] {
  if (path === "/") return [];
  const out = ["/"];
  for (let i = path.indexOf("/", 1); i > 0; i = path.indexOf("/", i + 1)) out.push(path.slice(0, i));
  return out;
}

/** What the map entries of a port so far claim, to check the next one against. */
class Claims {
  readonly hosts = new Set<string>();
  readonly keys = new Set<string>();
  /** Per host part: its prefixes and path regexes (anchored, as JavaScript regexes). */
  readonly byHost = new Map<string, { prefixes: Set<string>; regexes: RegExp[] }>();

  of(part: string) {
    let c = this.byHost.get(part);
    if (!c) this.byHost.set(part, c = { prefixes: new Set(), regexes: [] });
    return c;
  }
}

/**
 * The map table and key of an unconditioned entry, or null when the lookups could not give it its
 * place in the model's order (see the module header): it is then a guarded line.
 */
function mapPlace(
  port: number,
  e: RouteEntry,
  claims: Claims,
): { table: Table; key: string; shadowed: boolean } | null {
  const part = hostPart(e.hostname);
  if (e.hostname.startsWith("*.") && part.split(".").length - 1 > WILDCARD_DEPTH) return null;
  // an earlier entry of a wider host would be found after this one
  if (widerHostParts(part).some((h) => claims.hosts.has(h))) return null;
  const c = claims.byHost.get(part);
  let table: Table;
  let key: string;
  if (e.path.type === "RegularExpression") {
    // an earlier prefix of this host that some path of the regex is under would be found after it
    const start = literalStart(e.path.value);
    if (c && [...c.prefixes].some((p) => overlaps(p, start))) return null;
    table = "regex";
    key = `^${port}:${regexHostPart(part)}(?=/)(?:${e.path.value})$`;
  } else {
    const path = canonicalPath(e.path.value);
    if (e.path.type === "Exact") {
      // an earlier regex or prefix of this host that matches the path too would be found after it
      if (
        c && (c.regexes.some((r) => r.test(path)) || [...shorterPrefixes(path), path].some((p) => c.prefixes.has(p)))
      ) {
        return null;
      }
      table = "exact";
      key = `${port}:${part}${path}`;
    } else {
      // an earlier shorter prefix would be found after this longer one
      if (c && shorterPrefixes(path).some((p) => c.prefixes.has(p))) return null;
      table = "prefix";
      key = `${port}:${part}${path}${path === "/" ? "" : "/"}`;
    }
  }
  return { table, key, shadowed: claims.keys.has(`${table} ${key}`) };
}

/**
 * The literal text every path a path regex matches starts with: its characters up to the first
 * one with a meaning in a regex (less the last one if a quantifier follows it); "" for a regex
 * with an alternation anywhere.
 */
export function literalStart(regex: string): string {
  if (regex.includes("|")) return "";
  const m = /^[^.[\]()*+?{}|\\^$]*/.exec(regex)![0];
  return /^[*?{]/.test(regex.slice(m.length)) ? m.slice(0, -1) : m;
}

/** Whether a path under prefix `prefix` (element-wise) can start with `start`. */
function overlaps(prefix: string, start: string): boolean {
  const p = prefix === "/" ? "/" : `${prefix}/`;
  return p.startsWith(start) || start.startsWith(p) || start === prefix;
}

/** The host part as a regex prefix: dots as `[.]` (a host part has no other regex character). */
function regexHostPart(part: string): string {
  return part.replaceAll(".", "[.]");
}

function claim(claims: Claims, e: RouteEntry, table: Table, key: string): void {
  const part = hostPart(e.hostname);
  claims.hosts.add(part);
  claims.keys.add(`${table} ${key}`);
  const c = claims.of(part);
  if (table === "regex") c.regexes.push(new RegExp(`^(?:${e.path.value})$`));
  if (table === "prefix") c.prefixes.add(canonicalPath(e.path.value));
}

function mapLine(key: string, value: string): string {
  const line = `${key} ${value}`;
  if (!MAP_LINE.test(line)) throw new Error(`bug: unsafe map line ${JSON.stringify(line)}`);
  return `${line}\n`;
}

/** An entry with conditions beyond host and path. */
function conditioned(e: RouteEntry): boolean {
  return e.headers.length > 0 || e.queryParams.length > 0 || e.method !== null;
}

/** Checks the fields of an entry the renderer places (hostname, path, conditions). */
function checkEntry(e: RouteEntry): void {
  checkedHostname(e.hostname);
  if (e.path.type === "RegularExpression") checked(isPathRegex, "path regex", e.path.value);
  else if (e.path.type === "Exact" || e.path.type === "PathPrefix") checkedPath(e.path.value);
  else throw new Error(`bug: path type ${JSON.stringify(e.path.type)} in the Gateway model`);
  if (e.path.type === "PathPrefix" && e.path.value !== "/" && e.path.value.endsWith("/")) {
    throw new Error(`bug: PathPrefix ${JSON.stringify(e.path.value)} not canonical in the Gateway model`);
  }
  for (const m of [...e.headers, ...e.queryParams]) {
    checked(isFieldName, "header or query parameter name", m.name);
    if (m.type === "Exact") checked(isFieldValue, "match value", m.value);
    else if (m.type === "RegularExpression") checked(isValueRegex, "match regex", m.value);
    else throw new Error(`bug: match type ${JSON.stringify(m.type)} in the Gateway model`);
  }
  if (e.method !== null) checked(isMethod, "method", e.method);
}

/** The condition words of a guarded entry (host, path, method, headers, query parameters). */
function conditions(e: RouteEntry): string[] {
  const out: string[] = [];
  if (e.hostname.startsWith("*.")) {
    // one or more labels before the suffix; a host starting with `.` has an empty first label
    out.push(`{ var(txn.host) -m end ${e.hostname.slice(1)} }`, "!{ var(txn.host) -m beg . }");
  } else if (e.hostname !== "") {
    out.push(`{ var(txn.host) -m str ${e.hostname} }`);
  }
  const v = e.path.value;
  if (e.path.type === "Exact") out.push(`{ var(txn.path) -m str -- ${word(canonicalPath(v))} }`);
  else if (e.path.type === "PathPrefix") {
    // element-wise, as the prefix map: `<path>/` starts with `<prefix>/`
    const p = canonicalPath(v);
    if (p !== "/") out.push(`{ var(txn.pslash) -m beg -- ${word(`${p}/`)} }`);
  } else out.push(`{ var(txn.path) -m reg -- ${word(`^(?:${v})$`)} }`);
  if (e.method !== null) out.push(`{ method ${e.method} }`);
  for (const h of e.headers) {
    out.push(`{ req.fhdr(${h.name}) ${valueMatch(h.type, h.value)} }`);
  }
  for (const q of e.queryParams) {
    out.push(`{ urlp(${q.name}) ${valueMatch(q.type, q.value)} }`);
  }
  return out;
}

function valueMatch(type: string, value: string): string {
  // HAProxy ends an inline condition at a word `}`, quoted or not: an exact `}` is matched as a regex.
  if (type === "Exact" && value === "}") return `-m reg -- ${word("^\\}$")}`;
  return type === "Exact" ? `-m str -- ${word(value)}` : `-m reg -- ${word(`^(?:${value})$`)}`;
}

/**
 * The map lines and guarded lines of one port. `target` gives the backend an entry's rule routes
 * to (its Service backend for a rule that needs no backend of its own).
 */
export function portRoutes(p: ProxyPort, target: (rule: string) => string, stop: string): PortRoutes {
  const maps: PortMaps = { exact: [], prefix: [], regex: [] };
  const guarded: string[] = [];
  const claims = new Claims();
  for (const e of p.routes) checkEntry(e);
  for (const { e, isStop } of withListenerStops(p.routes)) {
    const to = checkedTarget(isStop ? stop : target(e.rule));
    const place = conditioned(e) ? null : mapPlace(p.port, e, claims);
    if (place === null) {
      const k = guarded.length;
      guarded.push(
        [
          `http-request set-var(txn.hit) str(${to}:${k}) if { var(txn.hit),field(2,:) -m int gt ${k} }`,
          ...conditions(e),
        ]
          .join(" "),
      );
      continue;
    }
    // the same key earlier in the order takes every request this one would
    if (place.shadowed) continue;
    claim(claims, e, place.table, place.key);
    maps[place.table].push(mapLine(place.key, `${to}:${guarded.length}`));
  }
  return { maps, guarded };
}

/**
 * The entries with a stop after the last entry of each listener with a hostname (listener
 * isolation): a request whose Host that listener matches, and that none of its entries took,
 * goes to `stop` (404) before any entry of a less specific listener can take it. The model orders
 * the entries by listener, most specific first; another order is a bug.
 */
function withListenerStops(routes: readonly RouteEntry[]): { e: RouteEntry; isStop: boolean }[] {
  const out: { e: RouteEntry; isStop: boolean }[] = [];
  const done: string[] = [];
  const close = (listener: string) => {
    // an earlier listener covering this one would have taken its requests first
    const wider = widerHostParts(hostPart(listener));
    if (done.some((l) => wider.includes(hostPart(l)))) {
      throw new Error(
        `bug: entries of listener ${JSON.stringify(listener)} after a less specific one in the Gateway model`,
      );
    }
    done.push(listener);
    if (listener === "") return;
    const e: RouteEntry = {
      hostname: checkedHostname(listener),
      listenerHostname: listener,
      path: { type: "PathPrefix", value: "/" },
      headers: [],
      queryParams: [],
      method: null,
      rule: "",
      route: "",
    };
    out.push({ e, isStop: true });
  };
  let current: string | null = null;
  for (const e of routes) {
    const listener = e.listenerHostname ?? "";
    if (listener !== current) {
      if (current !== null) close(current);
      if (done.includes(listener)) {
        throw new Error(`bug: entries of listener ${JSON.stringify(listener)} not together in the Gateway model`);
      }
      current = listener;
    }
    // a more specific listener takes every request this entry matches: it never serves one
    if (done.some((l) => covers(l, e.hostname))) continue;
    out.push({ e, isStop: false });
  }
  if (current !== null) close(current);
  return out;
}

/** Whether every host entry hostname `h` matches is matched by listener hostname `l` (which has one). */
function covers(l: string, h: string): boolean {
  if (h === "" || l === "") return h === l;
  return hostPart(h) === hostPart(l) || (l.startsWith("*.") && widerHostParts(hostPart(h)).includes(hostPart(l)));
}
