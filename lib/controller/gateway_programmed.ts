/**
 * @module controller/gateway_programmed
 * When a published Gateway may say `Programmed`: its proxy Deployment has an available pod, the
 * proxy Service has that pod as a ready endpoint, the Service has an address, and (from a
 * controller in a pod) its cluster IP accepts a connection (lib/controller/address_probe.ts). Until
 * then the Gateway is looked at again every second.
 */
import type { KubeObject } from "../cluster/resources.ts";
import type { ClusterLookup } from "../render/model_types.ts";
import { AddressProbes, type Dial, tcpDial } from "./address_probe.ts";
import type { GroupKey } from "./groups.ts";
import { deploymentAvailable } from "./proxy_pod.ts";

/** How soon a Gateway whose proxy is not ready yet is looked at again. */
const PROGRAMMED_RECHECK_MS = 1_000;

export interface ProgrammedDeps {
  lookup: ClusterLookup;
  /** A proxy Deployment as cached (the controller's owned objects). */
  deployment(namespace: string, name: string): KubeObject | null;
  /** Looks at `group` again in `ms`. */
  later(group: GroupKey, ms: number): void;
  /** How the proxy Service's cluster IP is probed; default: in a pod only. */
  dial?: Dial | null;
}

/**
 * Whether a Service has a ready endpoint in its EndpointSlices as cached: the proxy pod is not only
 * available but routed to through the Gateway's address (kube-proxy programs the Service from the
 * same slices).
 */
function hasReadyEndpoint(lookup: ClusterLookup, namespace: string, service: string): boolean {
  return lookup.endpointSlices(namespace, service).some((slice) =>
    (slice.endpoints ?? []).some((e) => e.conditions?.ready !== false && (e.addresses ?? []).length > 0)
  );
}

export class ProgrammedCheck {
  readonly #deps: ProgrammedDeps;
  readonly #probes: AddressProbes;

  constructor(deps: ProgrammedDeps) {
    this.#deps = deps;
    const dial = deps.dial !== undefined ? deps.dial : Deno.env.get("KUBERNETES_SERVICE_HOST") ? tcpDial : null;
    this.#probes = new AddressProbes(dial, (group) => deps.later(group as GroupKey, 0));
  }

  /**
   * Why `group`'s Gateway, whose proxy objects are `namespace/name`, is not Programmed yet (it is
   * then looked at again), or null when it may be; `addresses`: how many it shows.
   */
  pending(
    group: GroupKey,
    namespace: string,
    name: string,
    service: KubeObject | undefined,
    addresses: number,
  ): string | null {
    const podAvailable = deploymentAvailable(this.#deps.deployment(namespace, name));
    const available = podAvailable && hasReadyEndpoint(this.#deps.lookup, namespace, name);
    const probe = available && addresses > 0
      ? this.#probes.verdict(group, service?.spec?.clusterIP, service?.spec?.ports?.[0]?.port)
      : (this.#probes.forget(group), "unknown");
    if (!available || probe === "waiting") this.#deps.later(group, PROGRAMMED_RECHECK_MS);
    if (probe === "waiting") return "waiting for the proxy Service's address to accept connections";
    if (!podAvailable) return "waiting for the Gateway's proxy pods";
    if (!available || addresses === 0) return "waiting for the proxy Service to route to the Gateway's proxy pods";
    return null;
  }

  /** The Gateway of `group` is gone. */
  forget(group: GroupKey): void {
    this.#probes.forget(group);
  }
}
