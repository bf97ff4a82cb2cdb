/**
 * @module controller/gateway_parents
 * Which of our Gateways each route names in its `parentRefs`, and the reverse: a route's change
 * queues exactly the Gateways it named before or names now (one index per route kind).
 */
import type { KubeObject } from "../cluster/resources.ts";
import type { ParentReference } from "../gateway/api.ts";
import { namesGateway } from "./gateway_status.ts";

/** The Gateways (`namespace/name`) each route of one kind names, and the reverse. */
export class ParentIndex {
  /** Gateway → the routes (`namespace/name`) whose parentRefs name it. */
  readonly routesOf = new Map<string, Set<string>>();
  /** Route → the Gateways its parentRefs named when last seen. */
  readonly #parentsOf = new Map<string, string[]>();

  /** Records the Gateways route `key` names `now`; returns those it named before or names now. */
  update(key: string, now: readonly string[]): Set<string> {
    const before = this.#parentsOf.get(key) ?? [];
    for (const gw of before) this.routesOf.get(gw)?.delete(key);
    for (const gw of now) {
      let set = this.routesOf.get(gw);
      if (!set) this.routesOf.set(gw, set = new Set());
      set.add(key);
    }
    if (now.length > 0) this.#parentsOf.set(key, [...now]);
    else this.#parentsOf.delete(key);
    return new Set([...before, ...now]);
  }
}

/** The Gateway keys (`namespace/name`) a route's parentRefs name. */
export function parentGateways(route: KubeObject | undefined): string[] {
  if (!route) return [];
  const ns = route.metadata.namespace!;
  const refs: ParentReference[] = Array.isArray(route.spec?.parentRefs) ? route.spec.parentRefs : [];
  const out = new Set<string>();
  for (const ref of refs) {
    if (typeof ref?.name !== "string") continue;
    const key = `${ref.namespace ?? ns}/${ref.name}`;
    if (namesGateway(ref, ns, key)) out.add(key);
  }
  return [...out];
}
