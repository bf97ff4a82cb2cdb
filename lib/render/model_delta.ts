/**
 * @module render/model_delta
 * A change of a few Ingresses among 10,000 applied to the last model of a proxy, without replaying
 * the others (docs/controller-scale.md). The full build (lib/render/model.ts) records, with its
 * model, how many route steps claim each route key and how often each backend, Service and Secret
 * was taken. A later build whose changed Ingresses only have routes and problems, add route keys
 * nobody claims and drop keys only they claimed, is exactly the last model with those routes,
 * backends, references and problems swapped: no rule between Ingresses can have decided anything
 * about them. The passes after the replay (canaries joining their main routes, `www` twins,
 * passthrough) look at a few route keys and hosts only: a delta must not touch those. Everything
 * else (changed Ingresses with TLS, default backends, canaries, `www`, passthrough, route
 * conflicts, `default-backend` fallbacks, another settings layer, more than DELTA_LIMIT changed
 * Ingresses) is built again from all fragments. Under a Strict host ownership policy
 * (render/host_ownership.ts) a delta may also add a host no one owns and drop a host its owner's
 * last Ingress names when no other namespace names it; anything that would move a host between
 * namespaces, refuse a claim, or touch a wildcard or the catch-all's owner is built in full, and so
 * is a new or dropped owner of a host a canary's TLS names, of a `www` twin, passthrough or regex
 * host (or one under such a wildcard), and a dropped owner of a host under another namespace's
 * wildcard (the wildcard's certificate stops excluding it): lib/render/delta_owners.ts.
 * tests/render/model_delta_test.ts and model_delta_property_test.ts compare both ways through random changes.
 */
import type { Backend, BuildResult, IngressFragment, Model, Problem, Resolved, Route } from "./model_types.ts";
import { type HostOwners, type OwnershipPolicy, type Stop, stopKey, wildcardOf } from "./host_ownership.ts";
import { ClaimCounts, type OwnerChange } from "./delta_owners.ts";
import { dec, inc } from "./counts.ts";
import { compareRoutes } from "./route_order.ts";
import { insertAt, insertSorted, lowerBound, removeAt, removeSorted, roomyCopy } from "./sorted.ts";
import { cmp } from "./show.ts";
import { noteRouteChange } from "./route_changes.ts";

/** An Ingress's place in the conflict order: creation time, then `namespace/name`. */
export interface IngressKey {
  t: number;
  id: string;
}

export function compareKeys(a: IngressKey, b: IngressKey): number {
  return a.t - b.t || cmp(a.id, b.id);
}

/** Above this many changed Ingresses the full build is about as fast and nothing is risked. */
export const DELTA_LIMIT = 256;

const byName = (a: Backend, b: Backend) => cmp(a.name, b.name);

/** What the full build counts while it replays (see the module header). */
export class MergeRecord {
  /** Route key → route steps of any Ingress with that key (winners and losers). */
  readonly claims = new Map<string, number>();
  /** Backend name → takes of a resolved reference holding it. */
  readonly takes = new Map<string, number>();
  readonly services = new Map<string, number>();
  readonly secrets = new Map<string, number>();
  /** The problems each Ingress's replay added, by id (only non-empty lists). */
  readonly problems = new Map<string, Problem[]>();

  /** A route step with this key (conflicting or not). */
  claim(key: string): void {
    inc(this.claims, key);
  }

  /** A Secret an Ingress read outside its backends (TLS, client certificate CA). */
  secret(name: string): void {
    inc(this.secrets, name);
  }

  take(r: Resolved): void {
    for (const b of r.backends) inc(this.takes, b.name);
    for (const s of r.services) inc(this.services, s);
    for (const s of r.secrets) inc(this.secrets, s);
  }
}

/** What the passes after the replay (model.ts) looked at and made: a delta leaves it as it is. */
export interface AfterReplay {
  /** Route keys the canaries joined. */
  keys: ReadonlySet<string>;
  /** Hosts whose routes the `www` twins and passthrough looked at (passthrough wildcards: the hosts under them). */
  hosts: ReadonlySet<string>;
  /** The canaries' backends (used without a route of their own). */
  backends: ReadonlySet<string>;
  /** The problems they reported, in order. */
  problems: readonly Problem[];
}

interface KeptFragment {
  fragment: IngressFragment;
  key: IngressKey;
  /** The build that last saw the Ingress (KeptMerge.epoch). */
  seen: number;
}

/** The arrays a delta changes in place once copied from the last model (KeptMerge's #owned). */
type Shared = "routes" | "backends" | "services" | "secrets" | "ids";

/** The state a delta starts from: the last model and everything needed to change it in place. */
export class KeptMerge {
  epoch = 0;
  readonly byId = new Map<string, KeptFragment>();
  readonly routeUses = new Map<string, number>();
  readonly fallbackTargets = new Set<string>();
  /** Sorted as the model wants them; the last model holds them too (copied before a change: #own). */
  routes: Route[];
  backends: Backend[];
  services: string[];
  secrets: string[];
  readonly accepted: IngressKey[] = [];
  /** `accepted`'s ids, index by index, as the last model holds them (copied before a change: #owned). */
  #acceptedIds: string[];
  /** The problems of the last result, until an Ingress's problems change (10,000 troubled Ingresses: 10,000 JSON texts). */
  #problems: Problem[] | null = null;
  /** The Services and Secrets whose counts a delta moved (#settle). */
  readonly #pending: ["services" | "secrets", string][] = [];
  /** The Ingresses with problems, oldest first. */
  readonly troubled: IngressKey[] = [];
  /**
   * Those of the arrays above that the last model holds (not to be changed in place): each is copied
   * before its own first change only, so that a change of routes hands the next model the same
   * backends array, and the render finds its views unchanged without a walk over them.
   */
  readonly #shared = new Set<Shared>(["routes", "backends", "services", "secrets", "ids"]);
  /** Strict policy: the claims of the kept Ingresses counted against the owners (lib/render/delta_owners.ts). */
  readonly #claims: ClaimCounts | null;
  /** The model's stops (copied before a change). */
  #stops: { host: string; stop: Stop }[];
  /**
   * The last delta's input, its entries index by index, and the lookup's generation then (see
   * `apply`). Kept from one delta to the next, so it holds the Ingress objects of the last build
   * only, as the ModelMemo's `latest` does.
   */
  #last: { inputs: unknown[]; entries: KeptFragment[]; generation: number } | null = null;
  /** The last apply found its changes in place (#inPlace): for tests. */
  inPlace = false;
  /** The route objects the delta under way took out of the routes and put in (see route_changes.ts). */
  #routesOut: Route[] = [];
  #routesIn: Route[] = [];

  constructor(
    /** The settings layers and model options of the build: another one builds in full. */
    readonly env: string,
    readonly record: MergeRecord,
    /** Route key → the route (the replay's map). */
    readonly routeByKey: Map<string, Route>,
    /** Backend name → the first Backend taken with that name (the replay's map). */
    readonly backendByName: Map<string, Backend>,
    /** The model the next delta starts from (its other fields are kept as they are). */
    public model: Model,
    fragments: readonly { fragment: IngressFragment; key: IngressKey; accepted: boolean }[],
    readonly after: AfterReplay,
    /** The decided owners (changed in place by deltas), null under InterNamespaceAllowed. */
    readonly owners: HostOwners | null = null,
    readonly policy: OwnershipPolicy | null = null,
  ) {
    this.#claims = owners ? new ClaimCounts(owners, after.hosts) : null;
    for (const { fragment, key, accepted } of fragments) {
      this.byId.set(fragment.id, { fragment, key, seen: 0 });
      if (accepted) this.accepted.push(key);
      if (record.problems.has(fragment.id)) this.troubled.push(key);
      this.#claims?.count(fragment, 1);
      this.#claims?.countUnclaimedTls(fragment, 1);
    }
    this.#stops = model.stops ?? [];
    for (const r of routeByKey.values()) inc(this.routeUses, r.backend);
    for (const b of backendByName.values()) {
      if (b.fallback && this.#used(b.name, false)) this.fallbackTargets.add(b.fallback);
    }
    this.routes = model.routes;
    this.backends = model.backends;
    this.services = model.refs.services;
    this.secrets = model.refs.secrets;
    this.#acceptedIds = model.ingresses;
  }

  /** `which` of the arrays, copied first if the last model holds it. */
  #owned(which: "routes"): Route[];
  #owned(which: "backends"): Backend[];
  #owned(which: "services" | "secrets" | "ids"): string[];
  #owned(which: Shared): unknown[] {
    const shared = this.#shared.delete(which);
    switch (which) {
      case "routes":
        return shared ? (this.routes = roomyCopy(this.routes)) : this.routes;
      case "backends":
        return shared ? (this.backends = roomyCopy(this.backends)) : this.backends;
      case "services":
        return shared ? (this.services = roomyCopy(this.services)) : this.services;
      case "secrets":
        return shared ? (this.secrets = roomyCopy(this.secrets)) : this.secrets;
      case "ids":
        return shared ? (this.#acceptedIds = roomyCopy(this.#acceptedIds)) : this.#acceptedIds;
    }
  }

  /** Adds `key` to the accepted Ingresses and its id to the model's at the same index. */
  #accept(key: IngressKey): void {
    insertAt(this.#owned("ids"), insertSorted(this.accepted, key, compareKeys), key.id);
  }

  /** Takes `key` out of the accepted Ingresses (if there) and its id out of the model's. */
  #unaccept(key: IngressKey): void {
    const i = lowerBound(this.accepted, key, compareKeys);
    if (i >= this.accepted.length || compareKeys(this.accepted[i], key) !== 0) return;
    removeAt(this.accepted, i);
    removeAt(this.#owned("ids"), i);
  }

  #used(name: string, fallbacks = true): boolean {
    return (this.routeUses.get(name) ?? 0) > 0 || name === this.model.defaultBackend ||
      this.after.backends.has(name) || (fallbacks && this.fallbackTargets.has(name));
  }

  /**
   * The model of `current` (every Ingress with its fragment and key) as a delta of the last one,
   * or null when it cannot be one (see the module header): then the caller builds in full and
   * replaces this state (a change that leaves nothing to serve is found only once applied).
   */
  apply<T>(
    current: readonly T[],
    fragmentOf: (t: T) => IngressFragment,
    keyOf: (t: T) => IngressKey,
    generation: number | null = null,
  ): BuildResult | null {
    const epoch = ++this.epoch;
    const added: { fragment: IngressFragment; key: IngressKey }[] = [];
    const removed: KeptFragment[] = [];
    // The same object at the same index as in the last delta, while nothing the fragments read has
    // changed (the same generation), has the fragment it had then: its entry is taken by index,
    // with no lookup. At 10,000 Ingresses, the lookups of fragmentOf and byId were most of a
    // one-Ingress change's model time (~8 ms).
    const last = generation !== null && this.#last?.generation === generation ? this.#last : null;
    const inPlace = last !== null ? this.#inPlace(last, current, fragmentOf, keyOf, removed, added) : null;
    this.inPlace = inPlace !== null;
    let remember: () => void;
    if (inPlace !== null) {
      // Only the changed indexes are written: at 100,000 Ingresses, marking every entry and copying
      // the input cost more than the change (a cache miss per entry).
      remember = () => {
        for (const i of inPlace) {
          last!.inputs[i] = current[i];
          last!.entries[i] = this.byId.get(last!.entries[i].fragment.id)!;
        }
      };
    } else {
      const general = this.#changes(last, current, fragmentOf, keyOf, epoch, removed, added);
      if (general === null) return null;
      const entries = general;
      remember = () => {
        if (generation === null) return;
        // The entries of changed Ingresses are those #add made: filled in where they stand (at 100,000
        // Ingresses a second array is 0.8 MB more for the collector at every change).
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i];
          if (typeof e === "string") entries[i] = this.byId.get(e)!;
        }
        // a copy of the input: callers may reuse their array
        this.#last = { inputs: current.slice(), entries: entries as KeptFragment[], generation };
      };
    }
    if (added.length === 0 && removed.length === 0) {
      remember();
      return this.#result(false);
    }
    if (!this.#appliable(removed, added)) return null;
    const ownership = this.#claims
      ? this.#claims.changes(removed.map((k) => k.fragment), added.map((a) => a.fragment))
      : [];
    if (ownership === null) return null;
    const routesBefore = this.routes;
    this.#routesOut = [];
    this.#routesIn = [];
    // Backends are placed once both are done: a changed Ingress is removed and added again, and
    // its backends should not leave the list and come back as new objects in between.
    const touched = new Set<string>();
    // An accepted Ingress that stays accepted at the same place keeps its id where it is: taking it
    // out and putting it back copied the model's 100,000 ids.
    const staying = new Set<string>();
    for (const a of added) {
      const was = a.fragment.accepted ? this.byId.get(a.fragment.id) : undefined;
      if (was?.fragment.accepted && removed.includes(was) && compareKeys(was.key, a.key) === 0) {
        staying.add(a.fragment.id);
      }
    }
    for (const k of removed) this.#remove(k, touched, staying);
    for (const a of added) this.#add(a.fragment, a.key, epoch, touched, staying);
    for (const n of touched) this.#place(n);
    this.#settle();
    if (this.#claims) {
      // Counted against the owners before the change (removed) and after it (added).
      for (const k of removed) this.#claims.count(k.fragment, -1);
      this.#ownHosts(ownership);
      for (const a of added) this.#claims.count(a.fragment, 1);
    }
    if (this.routeByKey.size === 0 && this.model.defaultBackend === null) return null;
    remember();
    if (this.routes !== routesBefore) {
      noteRouteChange(this.routes, { from: routesBefore, removed: this.#routesOut, added: this.#routesIn });
    }
    return this.#result(true);
  }

  /**
   * The changed Ingresses of `current` against the last delta's input `last`, when it is the same
   * length and each index that holds another object holds the same Ingress (by id) as then: the
   * indexes that changed (their removed and added fragments pushed), or null (`#changes` decides).
   * Walks the two arrays only, touching no entry of an unchanged Ingress.
   */
  #inPlace<T>(
    last: { inputs: unknown[]; entries: KeptFragment[] },
    current: readonly T[],
    fragmentOf: (t: T) => IngressFragment,
    keyOf: (t: T) => IngressKey,
    removed: KeptFragment[],
    added: { fragment: IngressFragment; key: IngressKey }[],
  ): number[] | null {
    const inputs = last.inputs;
    if (inputs.length !== current.length || this.byId.size !== current.length) return null;
    const changed: number[] = [];
    // Objects replaced with the same fragment (status writes) are not counted against DELTA_LIMIT.
    for (let i = 0; i < current.length; i++) if (inputs[i] !== current[i]) changed.push(i);
    for (const i of changed) {
      const was = last.entries[i];
      const fragment = fragmentOf(current[i]);
      // Another Ingress at this index (a move, a rename, a duplicate): the general walk sorts it out.
      if (fragment.id !== was.fragment.id || this.byId.get(fragment.id) !== was) {
        removed.length = added.length = 0;
        return null;
      }
      if (fragment === was.fragment) continue;
      removed.push(was);
      added.push({ fragment, key: keyOf(current[i]) });
      if (added.length > DELTA_LIMIT) {
        removed.length = added.length = 0;
        return null;
      }
    }
    return changed;
  }

  /**
   * The removed and added fragments of `current` (pushed), every entry marked with `epoch`: the
   * entries of `current` index by index (the id of a changed one, filled in once #add made it), or
   * null when it cannot be a delta.
   */
  #changes<T>(
    last: { inputs: readonly unknown[]; entries: KeptFragment[] } | null,
    current: readonly T[],
    fragmentOf: (t: T) => IngressFragment,
    keyOf: (t: T) => IngressKey,
    epoch: number,
    removed: KeptFragment[],
    added: { fragment: IngressFragment; key: IngressKey }[],
  ): (KeptFragment | string)[] | null {
    let seen = 0;
    const entries: (KeptFragment | string)[] = new Array(current.length);
    for (let i = 0; i < current.length; i++) {
      const c = current[i];
      if (last !== null && last.inputs[i] === c) {
        const kept = last.entries[i];
        if (kept.seen === epoch) return null; // the same id twice: let the full build report it
        kept.seen = epoch;
        seen++;
        entries[i] = kept;
        continue;
      }
      const fragment = fragmentOf(c);
      const kept = this.byId.get(fragment.id);
      if (kept?.seen === epoch) return null;
      entries[i] = fragment.id;
      if (kept) {
        kept.seen = epoch;
        seen++;
        // One fragment per Ingress object (and its key with it): the same fragment, the same Ingress.
        if (kept.fragment === fragment) {
          entries[i] = kept;
          continue;
        }
        removed.push(kept);
      }
      added.push({ fragment, key: keyOf(c) });
      if (added.length > DELTA_LIMIT) return null;
    }
    if (seen < this.byId.size) {
      for (const kept of this.byId.values()) {
        if (kept.seen !== epoch) removed.push(kept);
        if (removed.length > DELTA_LIMIT) return null;
      }
    }
    return entries;
  }

  /** Applies the owners' changes (ClaimCounts.changes): the decided owners and the stops of those hosts. */
  #ownHosts(changes: readonly OwnerChange[]): void {
    const owners = this.owners!;
    let stops: { host: string; stop: Stop }[] | null = null;
    for (const { claim, ns } of changes) {
      if (ns === null) owners.owners.delete(claim);
      else owners.owners.set(claim, ns);
      const stop = ns === null ? null : owners.stopOf(claim);
      const byKey = (a: { host: string }, b: { host: string }) => cmp(stopKey(a.host), stopKey(b.host));
      const i = lowerBound(this.#stops, { host: claim } as { host: string; stop: Stop }, byKey);
      const present = i < this.#stops.length && this.#stops[i].host === claim;
      if (!present && stop === null) continue;
      stops ??= roomyCopy(this.#stops);
      if (present && stop === null) removeAt(stops, i);
      else if (present) stops[i] = { host: claim, stop: stop! };
      else insertAt(stops, i, { host: claim, stop: stop! });
      this.#stops = stops;
    }
    if (stops) this.model = { ...this.model, stops };
  }

  #appliable(removed: readonly KeptFragment[], added: readonly { fragment: IngressFragment }[]): boolean {
    const freed = new Map<string, number>();
    const watched = (s: { key: string; host: string }) => {
      if (this.after.keys.has(s.key) || this.after.hosts.has(s.host)) return true;
      const w = s.host === "" ? null : wildcardOf(s.host);
      return w !== null && this.after.hosts.has(w);
    };
    const owners = this.owners;
    for (const { fragment } of removed) {
      // Steps of a claim another namespace owns were left out of the model: not this fragment's to remove.
      if (owners && fragment.accepted && fragment.claims.some((c) => owners.ownerOf(c) !== fragment.ns)) return false;
    }
    for (const { fragment } of [...removed, ...added]) {
      if (!simple(fragment)) return false;
      for (const s of fragment.steps) if (s.step === "route" && watched(s)) return false;
    }
    for (const { fragment } of removed) {
      for (const s of fragment.steps) {
        if (s.step !== "route") continue;
        if (this.record.claims.get(s.key) !== 1) return false;
        inc(freed, s.key);
      }
    }
    const taken = new Set<string>();
    for (const { fragment } of added) {
      for (const s of fragment.steps) {
        if (s.step !== "route") continue;
        if ((this.record.claims.get(s.key) ?? 0) - (freed.get(s.key) ?? 0) !== 0 || taken.has(s.key)) return false;
        taken.add(s.key);
      }
    }
    return true;
  }

  #remove(kept: KeptFragment, touched: Set<string>, staying: ReadonlySet<string>): void {
    const { fragment: f, key } = kept;
    this.byId.delete(f.id);
    const unserved = this.model.unserved ?? [];
    if (unserved.includes(f.id)) this.model = { ...this.model, unserved: unserved.filter((id) => id !== f.id) };
    if (f.accepted && !staying.has(f.id)) this.#unaccept(key);
    if (this.record.problems.delete(f.id)) {
      removeSorted(this.troubled, key, compareKeys);
      this.#problems = null;
    }
    for (const s of f.secrets) this.#unref(this.record.secrets, "secrets", s);
    this.#claims?.countUnclaimedTls(f, -1);
    for (const s of f.steps) {
      if (s.step !== "route") continue;
      const route = this.routeByKey.get(s.key);
      if (route && route.ingress !== f.id) continue; // another Ingress's (this one's step was refused)
      this.record.claims.delete(s.key);
      if (route) {
        this.routeByKey.delete(s.key);
        removeSorted(this.#owned("routes"), route, compareRoutes);
        this.#routesOut.push(route);
        dec(this.routeUses, route.backend);
        touched.add(route.backend);
      }
      const r = s.resolved;
      for (const b of r.backends) {
        if (dec(this.record.takes, b.name) <= 0) this.backendByName.delete(b.name);
        touched.add(b.name);
      }
      for (const n of r.services) this.#unref(this.record.services, "services", n);
      for (const n of r.secrets) this.#unref(this.record.secrets, "secrets", n);
    }
  }

  #add(f: IngressFragment, key: IngressKey, epoch: number, touched: Set<string>, staying: ReadonlySet<string>): void {
    this.byId.set(f.id, { fragment: f, key, seen: epoch });
    if (f.accepted && !staying.has(f.id)) this.#accept(key);
    for (const s of f.secrets) this.#ref(this.record.secrets, "secrets", s);
    this.#claims?.countUnclaimedTls(f, 1);
    const problems: Problem[] = [];
    for (const s of f.steps) {
      if (s.step === "problem") {
        problems.push(s.problem);
        continue;
      }
      if (s.step !== "route") continue;
      this.record.claim(s.key);
      const r = s.resolved;
      for (const p of r.problems) problems.push(p);
      for (const b of r.backends) {
        if (inc(this.record.takes, b.name) === 1 || !this.backendByName.has(b.name)) this.backendByName.set(b.name, b);
        touched.add(b.name);
      }
      for (const n of r.services) this.#ref(this.record.services, "services", n);
      for (const n of r.secrets) this.#ref(this.record.secrets, "secrets", n);
      if (r.name === null) continue;
      // The same route object as the full build makes (model.ts's replay): kept with the fragment.
      const { host, path, pathType, match } = s;
      const route = s.route ??= Object.freeze({ host, path, pathType, match, backend: r.name, ingress: f.id });
      this.routeByKey.set(s.key, route);
      insertSorted(this.#owned("routes"), route, compareRoutes);
      this.#routesIn.push(route);
      inc(this.routeUses, route.backend);
      touched.add(route.backend);
    }
    if (problems.length > 0) {
      this.record.problems.set(f.id, problems);
      insertSorted(this.troubled, key, compareKeys);
      this.#problems = null;
    }
  }

  /** Counts a use of `name`; the sorted list follows in #settle. */
  #ref(counts: Map<string, number>, sorted: "services" | "secrets", name: string): void {
    inc(counts, name);
    this.#pending.push([sorted, name]);
  }

  #unref(counts: Map<string, number>, sorted: "services" | "secrets", name: string): void {
    dec(counts, name);
    this.#pending.push([sorted, name]);
  }

  /**
   * Puts each Service and Secret whose count moved in its sorted list or takes it out, once the
   * removed and added fragments are all counted: a changed Ingress's references go and come back,
   * and the model's lists stay the same arrays when they end where they were.
   */
  #settle(): void {
    for (const [which, name] of this.#pending) {
      const counts = which === "services" ? this.record.services : this.record.secrets;
      const sorted = which === "services" ? this.services : this.secrets;
      const i = lowerBound(sorted, name, cmp);
      const present = i < sorted.length && sorted[i] === name;
      const used = (counts.get(name) ?? 0) > 0;
      if (used && !present) insertAt(this.#owned(which), i, name);
      else if (!used && present) removeAt(this.#owned(which), i);
    }
    this.#pending.length = 0;
  }

  /** Puts backend `name` in the model's list, takes it out, or swaps its object, as its uses say now. */
  #place(name: string): void {
    const b = this.backendByName.get(name);
    const i = lowerBound(this.backends, { name } as Backend, byName);
    const present = i < this.backends.length && this.backends[i].name === name;
    if (b && this.#used(name)) {
      if (!present) insertAt(this.#owned("backends"), i, b);
      // A changed Ingress is read again into new Backend objects: one that reads the same stays, so
      // that the model's backends (and the render's views of them) stay the same array.
      else if (this.backends[i] !== b && !sameFields(this.backends[i], b)) this.#owned("backends")[i] = b;
    } else if (present) removeAt(this.#owned("backends"), i);
  }

  /** The model (a new one when `changed`, else the last one) and the problems. */
  #result(changed: boolean): BuildResult {
    if (this.#problems === null) {
      const problems: Problem[] = [];
      for (const k of this.troubled) for (const p of this.record.problems.get(k.id)!) problems.push(p);
      for (const p of this.after.problems) problems.push(p);
      this.#problems = [...new Map(problems.map((p) => [JSON.stringify(p), p])).values()];
    }
    if (changed) {
      this.model = {
        ...this.model,
        ingresses: this.#acceptedIds,
        routes: this.routes,
        backends: this.backends,
        refs: { services: this.services, secrets: this.secrets },
      };
      for (const a of ["routes", "backends", "services", "secrets", "ids"] as const) this.#shared.add(a);
    }
    return { model: this.model, problems: this.#problems.slice(), servable: true, owners: this.owners?.owners ?? null };
  }
}

/** Whether `a` and `b` have the same fields with the very same values (nested objects by identity). */
function sameFields(a: object, b: object): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  return true;
}

/** Only routes and problems of its own: nothing another Ingress's replay looks at but route keys. */
function simple(f: IngressFragment): boolean {
  // its regexes change the other routes of its hosts (model.ts regexHosts)
  if (f.regexAll) return false;
  for (const s of f.steps) {
    if (s.step === "problem") continue;
    if (s.step !== "route") return false;
    for (const b of s.resolved.backends) if (b.fallback) return false;
  }
  return true;
}
