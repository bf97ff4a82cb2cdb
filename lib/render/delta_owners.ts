/**
 * @module render/delta_owners
 * What a model delta (lib/render/model_delta.ts) needs to know about host owners under a Strict
 * policy (lib/render/host_ownership.ts): how many kept Ingresses claim each host for its owner's
 * namespace and for others, which hosts canaries' TLS names without claiming them, and which owner
 * changes a delta may make itself (new and dropped exact hosts) rather than a full build.
 */
import type { IngressFragment } from "./model_types.ts";
import { CATCH_ALL, type HostOwners, wildcardOf } from "./host_ownership.ts";
import { dec, inc } from "./counts.ts";

/** A host's decided owner after a delta: a namespace, or null for none. */
export interface OwnerChange {
  claim: string;
  ns: string | null;
}

export class ClaimCounts {
  /**
   * Claim → how many kept Ingresses of its owner's namespace make it, and how many of other
   * namespaces (refused). Two flat counts, not one per namespace: 10,000 hosts stay 10,000 entries.
   */
  readonly #own = new Map<string, number>();
  readonly #other = new Map<string, number>();
  /**
   * Host → TLS steps of kept Ingresses that name it without claiming it (canaries claim nothing):
   * whether they serve a certificate for it depends on its owner, so a delta that gives the host an
   * owner or takes it away is built in full.
   */
  readonly #unclaimedTls = new Map<string, number>();

  constructor(
    /** The decided owners (changed in place by deltas). */
    readonly owners: HostOwners,
    /** Hosts the passes after the replay looked at (model_delta.ts AfterReplay). */
    readonly afterHosts: ReadonlySet<string>,
  ) {}

  /** Adds `by` to the counts of `f`'s claims, each as its owner's or another namespace's as the owners are now. */
  count(f: IngressFragment, by: number): void {
    if (!f.accepted) return;
    for (const c of f.claims) {
      const counts = this.owners.ownerOf(c) === f.ns ? this.#own : this.#other;
      const n = (counts.get(c) ?? 0) + by;
      if (n > 0) counts.set(c, n);
      else counts.delete(c);
    }
  }

  /** Adds `by` to the counts of the hosts `f`'s TLS steps name and its claims do not (a canary's). */
  countUnclaimedTls(f: IngressFragment, by: number): void {
    for (const s of f.steps) {
      if (s.step !== "tls") continue;
      for (const h of s.hosts) {
        if (f.claims.includes(h)) continue;
        if (by > 0) inc(this.#unclaimedTls, h);
        else dec(this.#unclaimedTls, h);
      }
    }
  }

  /**
   * Whether a change of `claim`'s decided owner changes more than its stop, which a delta cannot
   * follow: a TLS step that claims nothing (a canary's) serves the host by its owner; the `www`
   * twins, passthrough and regex hosts (and those under them) were decided after the replay.
   */
  #watched(claim: string): boolean {
    if (this.#unclaimedTls.has(claim) || this.afterHosts.has(claim)) return true;
    const w = wildcardOf(claim);
    return w !== null && this.afterHosts.has(w);
  }

  /**
   * The owners' changes of a delta that removes `removed` and adds `added` (model_delta.ts's module
   * header), or null when it would move, refuse or touch more than new and dropped exact hosts, or
   * when the host's owner decides more than its stop (#watched). Changes nothing.
   */
  changes(removed: readonly IngressFragment[], added: readonly IngressFragment[]): OwnerChange[] | null {
    const owners = this.owners;
    /** Claim → namespace → the change of its count. */
    const change = new Map<string, Map<string, number>>();
    const note = (f: IngressFragment, by: number) => {
      if (!f.accepted) return;
      for (const c of f.claims) {
        let per = change.get(c);
        if (!per) change.set(c, per = new Map());
        per.set(f.ns, (per.get(f.ns) ?? 0) + by);
      }
    };
    for (const f of removed) note(f, -1);
    for (const f of added) note(f, 1);
    const out: OwnerChange[] = [];
    for (const [claim, per] of change) {
      const wide = claim === CATCH_ALL || claim.startsWith("*.");
      const owner = owners.ownerOf(claim);
      if (owner === null) {
        // No one claims it now: one namespace may take a new exact host (its stop is its own).
        const adding = [...per].filter(([, by]) => by > 0);
        if (adding.length === 0) continue;
        if (adding.length > 1 || wide || this.#watched(claim)) return null;
        out.push({ claim, ns: adding[0][0] });
        continue;
      }
      let others = this.#other.get(claim) ?? 0;
      for (const [ns, by] of per) {
        // A claim another namespace owns is refused: the full build reports it.
        if (ns !== owner && by > 0) return null;
        if (ns !== owner) others += by;
      }
      const own = (this.#own.get(claim) ?? 0) + (per.get(owner) ?? 0);
      const decided = owners.owners.get(claim);
      if ((per.get(owner) ?? 0) > 0 && decided === undefined && owners.pinned(claim) === null) {
        // Owned through its wildcard: decided now, as the full build does; the Warnings of other
        // namespaces' claims on it would then read otherwise.
        if (others > 0 || this.#watched(claim)) return null;
        out.push({ claim, ns: owner });
      } else if (decided === owner && own <= 0) {
        // The owner's last claim goes: it moves to another namespace (a full build), or no one has it.
        if (others > 0 || wide || this.#watched(claim)) return null;
        // Under another namespace's wildcard the host becomes that namespace's: the wildcard's
        // certificate no longer excludes it (model.ts excludeOwnedHosts), a full build.
        const w = wildcardOf(claim);
        const cover = w === null ? null : owners.ownerOf(w);
        if (cover !== null && cover !== owner) return null;
        out.push({ claim, ns: null });
      }
    }
    return out;
  }
}
