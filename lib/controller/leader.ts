/**
 * @module controller/leader
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go's `leaderelection` does it,
 * so that several controller replicas run safely: one writes, the others keep warm caches and
 * stand by.
 * - Acquire and renew are optimistic: a create when the Lease is absent, else an update carrying
 *   the resourceVersion just read; a 409 means someone else won.
 * - A holder counts as alive until `leaseDurationSeconds` after the standby *saw* its record
 *   change (the standby's own clock, never the holder's timestamps: no clock-skew assumption).
 * - The leader renews every `retryPeriodMs`; when no renew succeeded for `renewDeadlineMs` (before
 *   the `leaseDurationMs` a standby waits), its term ends at once: the term's AbortSignal aborts
 *   every write in flight, so two replicas never write at the same time.
 * - On stop the leader hands the Lease back (empty holder, 1 s duration): a standby takes over
 *   at its next try instead of waiting for expiry.
 *
 * The controller consults a `Leadership` only: `gatedWriter` refuses writes outside a term.
 */
import { randomUUID } from "node:crypto";
import type { ClusterClient, RequestOptions } from "../cluster/client.ts";
import { isStatus } from "../cluster/client.ts";
import { collectionPath, type KubeObject, objectPath, type ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { pause } from "../runtime/timers.ts";
import { leader as leaderGauge } from "./metrics.ts";
import { leaderElectionDefaults, type LeaderElectionTiming } from "./leader_timing.ts";
import { shortHash } from "./short_hash.ts";

export const leases: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

/** What the controller needs to know about leadership. */
export interface Leadership {
  /** Whether this process leads now. */
  readonly leading: boolean;
  /** The current term: aborted the moment it ends; null while not leading. */
  readonly term: AbortSignal | null;
  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: (leading: boolean) => void): () => void;
}

/** Leadership for a controller that runs alone (no election): always leading. */
export const soleLeader: Leadership = {
  leading: true,
  term: new AbortController().signal,
  onChange: () => () => {},
};

/** The part of the cluster client that writes. */
export type Writer = Pick<ClusterClient, "request">;

/**
 * `client` for the controller's writes: a write outside a term is refused with the term's end
 * reason, and a write in flight is aborted when the term ends. Reads pass through.
 */
export function gatedWriter(client: ClusterClient, leadership: Leadership): Writer {
  return {
    request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
      if (method === "GET") return client.request(method, path, opts);
      const term = leadership.term;
      if (!term || term.aborted) {
        return Promise.reject(term?.reason ?? new Error(`not the leader: ${method} ${path} refused`));
      }
      const signal = opts.signal ? AbortSignal.any([opts.signal, term]) : term;
      return client.request(method, path, { ...opts, signal });
    },
  };
}

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The Lease of one controller id (one election per id / ingress class). */
export function leaseName(controllerId: string): string {
  const name = `ingress-controller-leader-${controllerId}`;
  return dns1123Subdomain.test(name) && name.length <= 253
    ? name
    : `ingress-controller-leader-${shortHash(controllerId, 16)}`;
}

/** This replica's identity: the pod name (POD_NAME, else the host name) and a random suffix. */
export function holderIdentity(podName = Deno.env.get("POD_NAME")): string {
  return `${podName?.trim() || Deno.hostname()}_${randomUUID().slice(0, 8)}`;
}

export interface LeaderElectorOptions extends Partial<LeaderElectionTiming> {
  namespace: string;
  name: string;
  identity: string;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** metav1.MicroTime: RFC 3339 with exactly six fraction digits (the API server refuses three). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export class LeaderElector implements Leadership {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly timing: LeaderElectionTiming;
  #term: AbortController | null = null;
  #deadline: ReturnType<typeof setTimeout> | undefined;
  /** When (monotonic ms) the current term ends unless a renew succeeds first. */
  #deadlineAt = 0;
  #stop = new AbortController();
  #loop: Promise<void> | null = null;
  #listeners = new Set<(leading: boolean) => void>();
  /** The Lease spec last seen and when (monotonic ms) it was first seen: expiry counts from there. */
  #observed = { record: "", at: 0, holder: "" };
  #lastError = "";

  constructor(readonly client: ClusterClient, opts: LeaderElectorOptions) {
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.identity = opts.identity;
    this.timing = {
      leaseDurationMs: opts.leaseDurationMs ?? leaderElectionDefaults.leaseDurationMs,
      renewDeadlineMs: opts.renewDeadlineMs ?? leaderElectionDefaults.renewDeadlineMs,
      retryPeriodMs: opts.retryPeriodMs ?? leaderElectionDefaults.retryPeriodMs,
    };
    const t = this.timing;
    if (!(t.retryPeriodMs > 0 && t.retryPeriodMs < t.renewDeadlineMs && t.renewDeadlineMs < t.leaseDurationMs)) {
      throw new Error(
        `leader election: need 0 < retry period (${t.retryPeriodMs} ms) < renew deadline (${t.renewDeadlineMs} ms) < lease duration (${t.leaseDurationMs} ms)`,
      );
    }
  }

  get leading(): boolean {
    return this.#term !== null;
  }

  get term(): AbortSignal | null {
    return this.#term?.signal ?? null;
  }

  /** The holder last seen in the Lease ("" when none). */
  get holder(): string {
    return this.#observed.holder;
  }

  onChange(listener: (leading: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops trying; a leader ends its term first (no write after this), then hands the Lease back. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    if (!this.leading) return;
    this.#end("stopping");
    await this.#release();
  }

  async #run(): Promise<void> {
    const stop = this.#stop.signal;
    const t = this.timing;
    while (!stop.aborted) {
      const sent = performance.now();
      const timeout = this.leading ? Math.max(1, this.#deadlineAt - sent) : t.renewDeadlineMs;
      let outcome: "held" | "other" | "failed";
      try {
        outcome = await withTimeout(timeout, stop, (signal) => this.#tryAcquireOrRenew(signal));
        this.#lastError = "";
      } catch (err) {
        outcome = "failed";
        if (!stop.aborted) this.#failed(err);
      }
      if (stop.aborted && !this.leading) {
        // Acquired while stopping: hand it back at once, never start a term.
        if (outcome === "held") await this.#release();
        break;
      }
      if (outcome === "held") this.#renewed(sent);
      else if (outcome === "other" && this.leading) this.#end(`the Lease is held by ${this.#observed.holder}`);
      // A failed renew is retried until the deadline timer ends the term.
      await pause(this.leading ? t.retryPeriodMs : t.retryPeriodMs * (1 + 0.2 * Math.random()), stop);
    }
  }

  /** A successful acquire or renew sent at `sent`: the term lasts until `sent + renewDeadline`. */
  #renewed(sent: number): void {
    clearTimeout(this.#deadline);
    this.#deadlineAt = sent + this.timing.renewDeadlineMs;
    const left = this.#deadlineAt - performance.now();
    if (left <= 0) return this.#end("the renew answered after the renew deadline");
    this.#deadline = setTimeout(
      () => this.#end(`no renew succeeded within the renew deadline (${this.timing.renewDeadlineMs} ms)`),
      left,
    );
    if (this.leading) return;
    this.#term = new AbortController();
    leaderGauge.set(1);
    log.info("leader election: became the leader", { lease: `${this.namespace}/${this.name}`, id: this.identity });
    this.#notify(true);
  }

  #end(reason: string): void {
    clearTimeout(this.#deadline);
    const term = this.#term;
    if (!term) return;
    this.#term = null;
    leaderGauge.set(0);
    term.abort(new Error(`leadership lost: ${reason}`));
    (reason === "stopping" ? log.info : log.warn).call(log, "leader election: stopped leading", {
      lease: `${this.namespace}/${this.name}`,
      id: this.identity,
      reason,
    });
    this.#notify(false);
  }

  #notify(leading: boolean): void {
    for (const l of [...this.#listeners]) {
      try {
        l(leading);
      } catch (err) {
        log.error("leader election: a listener failed", { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  #failed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message === this.#lastError) return;
    this.#lastError = message;
    log.warn("leader election: cannot read or write the Lease", {
      lease: `${this.namespace}/${this.name}`,
      error: message,
    });
  }

  #observe(lease: KubeObject): LeaseSpec {
    const spec: LeaseSpec = lease.spec ?? {};
    const record = JSON.stringify(spec);
    if (record !== this.#observed.record) {
      const holder = spec.holderIdentity ?? "";
      if (holder !== this.#observed.holder && holder !== this.identity) {
        log.info("leader election: the Lease has a new holder", {
          lease: `${this.namespace}/${this.name}`,
          holder: holder || "(none)",
        });
      }
      this.#observed = { record, at: performance.now(), holder };
    }
    return spec;
  }

  async #tryAcquireOrRenew(signal: AbortSignal): Promise<"held" | "other"> {
    const now = Date.now();
    const path = objectPath(leases, this.namespace, this.name);
    let lease: KubeObject | null = null;
    try {
      lease = await this.client.request("GET", path, { signal });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
    const seconds = Math.max(1, Math.ceil(this.timing.leaseDurationMs / 1000));
    if (!lease) {
      const spec: LeaseSpec = {
        holderIdentity: this.identity,
        leaseDurationSeconds: seconds,
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      const body = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.name, namespace: this.namespace },
        spec,
      };
      try {
        this.#observe(await this.client.request("POST", collectionPath(leases, this.namespace), { body, signal }));
        return "held";
      } catch (err) {
        if (isStatus(err, 409)) return "other";
        throw err;
      }
    }
    const old = this.#observe(lease);
    const holder = old.holderIdentity ?? "";
    const durationMs = (old.leaseDurationSeconds ?? seconds) * 1000;
    if (holder && holder !== this.identity && performance.now() < this.#observed.at + durationMs) return "other";
    const mine = holder === this.identity;
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: seconds,
      acquireTime: mine && old.acquireTime ? old.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: (old.leaseTransitions ?? 0) + (mine ? 0 : 1),
    };
    try {
      this.#observe(await this.client.request("PUT", path, { body: { ...lease, spec }, signal }));
      return "held";
    } catch (err) {
      if (isStatus(err, 409)) return "other";
      throw err;
    }
  }

  /** Empties the holder when it is still us, so that a standby need not wait for expiry. */
  async #release(): Promise<void> {
    const path = objectPath(leases, this.namespace, this.name);
    try {
      await withTimeout(this.timing.renewDeadlineMs, null, async (signal) => {
        const lease: KubeObject = await this.client.request("GET", path, { signal });
        if (lease.spec?.holderIdentity !== this.identity) return;
        const now = microTime(Date.now());
        const spec: LeaseSpec = {
          ...lease.spec,
          holderIdentity: "",
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
        };
        await this.client.request("PUT", path, { body: { ...lease, spec }, signal });
      });
      log.info("leader election: released the Lease", { lease: `${this.namespace}/${this.name}`, id: this.identity });
    } catch (err) {
      // A standby takes over once the Lease expires.
      log.warn("leader election: cannot release the Lease", {
        lease: `${this.namespace}/${this.name}`,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

/** Runs `fn` with a signal that aborts after `ms` or with `outer`. */
async function withTimeout<T>(
  ms: number,
  outer: AbortSignal | null,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`no answer within ${Math.round(ms)} ms`)), ms);
  const onOuter = () => ac.abort(outer!.reason);
  outer?.addEventListener("abort", onOuter, { once: true });
  try {
    return await fn(ac.signal);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onOuter);
  }
}
