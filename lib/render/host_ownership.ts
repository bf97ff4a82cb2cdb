/**
 * @module render/host_ownership
 * Who may serve a host in a shared proxy (docs/host-ownership.md). With the default `Strict`
 * policy, as the OpenShift router's `namespaceOwnership: Strict`, every host belongs to one
 * namespace: the namespace of the oldest Ingress naming it (in a rule or a TLS entry), unless an
 * administrator pinned it. A wildcard host `*.example.com` is a claim of its own, on every host one
 * label under it that no older Ingress of another namespace names; the catch-all (host-less rules
 * and `spec.defaultBackend`) is the claim `""` on every host no one owns. Rules, TLS entries,
 * redirects, canaries and passthrough of other namespaces for a host are not served there.
 *
 * Ownership is sticky: a host stays with its owner while the owner's namespace has an Ingress
 * naming it (`previous`), even when an Ingress of another namespace is older than the owner's
 * remaining ones. `InterNamespaceAllowed` (ingress-nginx's merging) has no owners.
 *
 * A request for an owned host that none of its owner's routes match must not fall through to
 * another namespace's wildcard or host-less rules: `stops` lists those hosts for the proxy's
 * `owned-hosts.map` (templates/routes.eta).
 */
import { isDns1123Label, isHost } from "./patterns.ts";
import { cmp } from "./show.ts";

export type NamespaceOwnership = "Strict" | "InterNamespaceAllowed";
export const NAMESPACE_OWNERSHIP: readonly NamespaceOwnership[] = ["Strict", "InterNamespaceAllowed"];

/**
 * A host an administrator gave to a namespace: an exact host, `*.<domain>` (the wildcard host and
 * every host under the domain, at any depth), or `*` (the catch-all).
 */
export interface HostPin {
  readonly host: string;
  readonly namespace: string;
}

export interface OwnershipPolicy {
  readonly mode: NamespaceOwnership;
  readonly pins: readonly HostPin[];
}

export const DEFAULT_OWNERSHIP: OwnershipPolicy = Object.freeze({ mode: "Strict", pins: Object.freeze([]) });

/** The claim of host-less rules and `spec.defaultBackend`: every host no one owns. */
export const CATCH_ALL = "";

/** What a request for an owned host does when none of its owner's routes match (owned-hosts.map values). */
export type Stop =
  /** The built-in 404: nothing of another namespace may answer. */
  | "404"
  /** Skip the wildcard rules (another namespace's), go on to the host-less rules and default backend (the owner's). */
  | "catch-all";

/**
 * A host's key in `owned-hosts.map` (lib/render/maps.ts's host part): the host, `.suffix` for
 * `*.suffix`. The stops are kept in this order, which is also the order of the map's sorted lines
 * (a key's space sorts before any character a longer key goes on with), so the map is written
 * without sorting it again.
 */
export function stopKey(host: string): string {
  return host.startsWith("*.") ? host.slice(1) : host;
}

/** `*.b.c` for `a.b.c`; null for a name of one label or a wildcard. */
export function wildcardOf(host: string): string | null {
  if (host.startsWith("*.")) return null;
  const dot = host.indexOf(".");
  return dot < 0 ? null : `*${host.slice(dot)}`;
}

/** `host=namespace` pairs, separated by commas or line breaks (the `pinned-hosts` setting), or why not. */
export function parsePins(text: string): { ok: true; pins: HostPin[] } | { ok: false; reason: string } {
  const pins: HostPin[] = [];
  const seen = new Set<string>();
  for (const item of text.split(/[\s,]+/).filter((s) => s !== "")) {
    const eq = item.indexOf("=");
    const host = eq < 0 ? item : item.slice(0, eq);
    const namespace = eq < 0 ? "" : item.slice(eq + 1);
    if (host !== "*" && !isHost(host)) {
      return { ok: false, reason: `has ${JSON.stringify(host)}, which is not a host, *.domain or *` };
    }
    if (!isDns1123Label(namespace)) {
      return { ok: false, reason: `has ${JSON.stringify(item)}, which is not host=namespace` };
    }
    if (seen.has(host)) return { ok: false, reason: `pins ${host} twice` };
    seen.add(host);
    pins.push({ host, namespace });
  }
  return { ok: true, pins };
}

/** One Ingress's claims, in the order the decision reads them (oldest Ingress first). */
export interface Claimant {
  readonly ns: string;
  readonly claims: readonly string[];
}

/**
 * The owners of one proxy's hosts under a Strict policy: decided claims and pins. `ownerOf` is
 * the namespace that may serve a host (exact, wildcard or the catch-all), or null: no one owns it.
 */
export class HostOwners {
  /** Decided claims (exact hosts, wildcard hosts, the catch-all) → namespace. */
  readonly owners = new Map<string, string>();
  readonly #exactPins = new Map<string, string>();
  /** `.domain` → namespace, from `*.domain` pins. */
  readonly #domainPins = new Map<string, string>();
  #catchAllPin: string | null = null;
  /** Some claim is a wildcard or the catch-all, or a pin is (`decide`; a delta never adds one). */
  #wide = false;

  constructor(readonly policy: OwnershipPolicy) {
    for (const p of policy.pins) {
      if (p.host === "*") this.#catchAllPin = p.namespace;
      else if (p.host.startsWith("*.")) this.#domainPins.set(p.host.slice(1), p.namespace);
      else this.#exactPins.set(p.host, p.namespace);
    }
  }

  /** The pin deciding `claim`, or null. A domain pin covers its wildcard and every host below it. */
  pinned(claim: string): string | null {
    if (this.policy.pins.length === 0) return null;
    if (claim === CATCH_ALL) return this.#catchAllPin;
    const exact = this.#exactPins.get(claim);
    if (exact !== undefined) return exact;
    if (this.#domainPins.size === 0) return null;
    // `*.a.b` is covered by a pin of `*.a.b` or `*.b`; `x.a.b` by `*.a.b` or `*.b`.
    const dot = claim.indexOf(".");
    let rest = dot < 0 ? "" : claim.slice(dot);
    while (rest !== "") {
      const ns = this.#domainPins.get(rest);
      if (ns !== undefined) return ns;
      const next = rest.indexOf(".", 1);
      rest = next < 0 ? "" : rest.slice(next);
    }
    return null;
  }

  /** The namespace that may serve `host` (a rule or TLS host, a wildcard, or CATCH_ALL), or null. */
  ownerOf(host: string): string | null {
    const pin = this.pinned(host);
    if (pin !== null) return pin;
    const own = this.owners.get(host);
    if (own !== undefined) return own;
    if (host === CATCH_ALL || host.startsWith("*.")) return null;
    const w = wildcardOf(host);
    return w === null ? null : this.ownerOf(w);
  }

  /** Whether namespace `ns` may serve `host`. */
  mayServe(ns: string, host: string): boolean {
    return this.ownerOf(host) === ns;
  }

  /**
   * Decides the claims of `claimants` (oldest first): pins, then each claim its previous owner
   * still makes (sticky), then the oldest claimant. An exact host under a wildcard another
   * namespace already owns is that namespace's, not the younger claimant's.
   */
  decide<T>(
    list: readonly T[],
    claimantOf: (t: T) => Claimant | null,
    previous: ReadonlyMap<string, string> | null,
  ): void {
    // Sticky: a claim whose previous owner still makes it stays with it. And whether any claim is a
    // wildcard or the catch-all: without one, no host is covered by another's and nothing stops.
    let wide = this.#catchAllPin !== null || this.#domainPins.size > 0;
    for (const t of list) {
      const claimant = claimantOf(t);
      if (claimant === null) continue;
      const { ns, claims } = claimant;
      for (const c of claims) {
        if (!wide && (c === CATCH_ALL || c.startsWith("*."))) wide = true;
        if (previous !== null && previous.get(c) === ns && this.pinned(c) === null) this.owners.set(c, ns);
      }
    }
    this.#wide = wide;
    for (const t of list) {
      const claimant = claimantOf(t);
      if (claimant === null) continue;
      const { ns, claims } = claimant;
      for (const c of claims) {
        if (this.owners.has(c) || this.pinned(c) !== null) continue;
        const w = wide ? wildcardOf(c) : null;
        const cover = w === null ? null : this.ownerOf(w);
        if (cover !== null && cover !== ns) continue;
        this.owners.set(c, ns);
      }
    }
  }

  /** Every exact and wildcard host with an owner (decided or pinned), sorted. */
  ownedHosts(): string[] {
    return [...this.#owned()].sort(cmp);
  }

  #owned(): Set<string> {
    const hosts = new Set<string>();
    for (const h of this.owners.keys()) if (h !== CATCH_ALL) hosts.add(h);
    for (const h of this.#exactPins.keys()) hosts.add(h);
    for (const d of this.#domainPins.keys()) hosts.add(`*${d}`);
    return hosts;
  }

  /** The stop of one owned host (exact or wildcard), or null: falling through reaches only its owner's rules. */
  stopOf(host: string, catchAll = this.ownerOf(CATCH_ALL)): Stop | null {
    const owner = this.ownerOf(host);
    if (owner === null) return null;
    const w = wildcardOf(host);
    const wildOwner = w === null ? null : this.ownerOf(w);
    if (wildOwner !== null && wildOwner !== owner) return catchAll === owner ? "catch-all" : "404";
    // The wildcard is the owner's (its own stop decides what follows) or no one's.
    if (wildOwner === null && catchAll !== null && catchAll !== owner) return "404";
    return null;
  }

  /** The stops of every owned host, in the order of their map keys (`stopKey`). */
  stops(): [string, Stop][] {
    // Without a wildcard or a catch-all with an owner, nothing of another namespace is in any host's way.
    if (!this.#wide) return [];
    const out: [string, Stop][] = [];
    const catchAll = this.ownerOf(CATCH_ALL);
    for (const h of this.#owned()) {
      const s = this.stopOf(h, catchAll);
      if (s !== null) out.push([h, s]);
    }
    return out.sort(([a], [b]) => cmp(stopKey(a), stopKey(b)));
  }
}
