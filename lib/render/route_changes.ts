/**
 * @module render/route_changes
 * What a model delta (lib/render/model_delta.ts) did to the routes of the model before it: the routes
 * array it started from and the route objects it took out and put in. The render's walks over the
 * routes (the lookups the frontends make, the map files) then follow the change instead of walking
 * 100,000 routes again. Kept by the new routes array (a model's arrays are never changed once handed
 * out), so it goes with the array.
 */

/** The routes array `from` with `removed` taken out and `added` put in (each route object at most once). */
export interface RouteChange<R extends object = object> {
  readonly from: readonly R[];
  readonly removed: readonly R[];
  readonly added: readonly R[];
}

/**
 * The array before is held weakly: held strongly, each routes array would keep the one before it,
 * and that one the one before it, every array of every change (0.8 MB each at 100,000 routes).
 */
const changes = new WeakMap<
  readonly object[],
  { from: WeakRef<readonly object[]>; removed: object[]; added: object[] }
>();

/** Notes that `routes` is `change` applied to `change.from`. */
export function noteRouteChange<R extends object>(routes: readonly R[], change: RouteChange<R>): void {
  changes.set(routes, { from: new WeakRef(change.from), removed: [...change.removed], added: [...change.added] });
}

/** How `routes` came from `from`, when a delta noted it; null: walk them. */
export function routeChangeFrom<R extends object>(routes: readonly R[], from: readonly R[]): RouteChange<R> | null {
  const change = changes.get(routes);
  if (change === undefined || change.from.deref() !== from) return null;
  return { from, removed: change.removed as R[], added: change.added as R[] };
}
