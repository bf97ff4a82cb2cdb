/**
 * @module controller/first_service_hold
 * At the controller's start, the Ingress status writes wait while the proxies it has just given a
 * first configuration start serving it. A first publish of a class of 10,000 Ingresses is followed
 * by 10,000 status PATCHes; they take the API server's CPU (and the controller's, for the watch
 * events they cause) in the very seconds the proxy reads its parts and HAProxy parses 10,000
 * backends, and that start took 3.9 s beside them against 1.1 s without them
 * (docs/controller-scale.md). A status says where the Ingress is served: it is written once the
 * proxy Deployment has an available pod (its readiness means HAProxy runs the configuration it
 * accepted), or when the proxy has had {@link FIRST_SERVICE_HOLD_MS} (more for a larger
 * configuration, as its check's time limit grows) to start, whichever comes first. Only the
 * publishes before the controller's first idle moment are waited for: later ones (a new class, a
 * new dedicated proxy) never hold the writes of the others. And only for a proxy of at least
 * {@link HOLD_FROM_MEMBERS} members: a few writes cost the proxy's start nothing, and a small
 * class's Ingresses show their address as soon as before.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { checkTimeLimit } from "../render/validate.ts";
import { deploymentAvailable } from "./proxy_pod.ts";

/** The longest wait for a proxy with up to 2 MB of `haproxy.cfg` (about 10,000 Ingresses); in proportion beyond. */
export const FIRST_SERVICE_HOLD_MS = 10_000;
/** The fewest members whose status writes are held for their proxy's first start. */
export const HOLD_FROM_MEMBERS = 1_000;
/** How often the proxy Deployments waited for are looked at (their cached objects: no API call). */
const LOOK_EVERY_MS = 250;

export interface FirstServiceHoldDeps {
  /** The status lane (lib/controller/status_lane.ts). */
  lane: { hold(): void; release(): void };
  /** A proxy Deployment as cached (the controller's owned objects). */
  deployment(namespace: string, name: string): KubeObject | null;
  /** The clock, in ms (tests). */
  now?: () => number;
  /** How often the Deployments are looked at again, in ms (tests). */
  lookEveryMs?: number;
}

export class FirstServiceHold {
  readonly #deps: FirstServiceHoldDeps;
  /** Publishes are still waited for: the controller has not been idle since it started. */
  #open = true;
  /** The proxies waited for, by `namespace/name`: until when. */
  readonly #waiting = new Map<string, { namespace: string; name: string; until: number }>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(deps: FirstServiceHoldDeps) {
    this.#deps = deps;
  }

  /** Whether status writes are held now. */
  get holding(): boolean {
    return this.#waiting.size > 0;
  }

  /**
   * The proxy `namespace/name` was just given a configuration of `configBytes` of `haproxy.cfg`
   * serving `members`: unless its Deployment has an available pod already (or the members are
   * few), the status writes wait for it.
   */
  published(namespace: string, name: string, members: number, configBytes: number): void {
    if (!this.#open || members < HOLD_FROM_MEMBERS) return;
    if (deploymentAvailable(this.#deps.deployment(namespace, name))) return;
    const now = this.#now();
    const until = now + checkTimeLimit(FIRST_SERVICE_HOLD_MS, configBytes);
    const key = `${namespace}/${name}`;
    if (this.#waiting.has(key)) return; // the first publish's wait stands
    if (this.#waiting.size === 0) this.#deps.lane.hold();
    this.#waiting.set(key, { namespace, name, until });
    this.#schedule();
  }

  /** The controller is idle: publishes from now on are not waited for (those waited for still are). */
  close(): void {
    this.#open = false;
  }

  /** Releases the writes at once (the controller stops). */
  stop(): void {
    this.#open = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.size === 0) return;
    this.#waiting.clear();
    this.#deps.lane.release();
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#look();
    }, this.#deps.lookEveryMs ?? LOOK_EVERY_MS);
  }

  #look(): void {
    const now = this.#now();
    for (const [key, w] of this.#waiting) {
      if (now >= w.until || deploymentAvailable(this.#deps.deployment(w.namespace, w.name))) this.#waiting.delete(key);
    }
    if (this.#waiting.size > 0) return this.#schedule();
    // Served (or given time enough): the writes go, and later publishes are not waited for.
    this.#open = false;
    this.#deps.lane.release();
  }

  #now(): number {
    return this.#deps.now ? this.#deps.now() : performance.now();
  }
}
