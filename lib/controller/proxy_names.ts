/**
 * @module controller/proxy_names
 * What keeps the names of proxies that share a namespace apart. A proxy's objects are named after it
 * (`<proxy>`, `<proxy>-stats`, `<proxy>-part-<slot>`, docs/config-transport.md), so a proxy named like
 * another proxy's derived object (`gw-team-web-part-0`: the proxy of Gateway `team/web-part-0`, and
 * part 0 of Gateway `team/web`'s) would block that proxy with an OwnershipConflict for as long as it
 * exists: a tenant squatting another tenant's names. Names built from user-chosen parts avoid the
 * endings below and take a hashed form instead.
 */

/** Endings of the objects derived from a proxy's name, and of a dedicated Ingress proxy's name. */
const DERIVED_ENDING = /(?:^|-)(?:stats|part-[0-9]+|haproxy)$/;

/** Whether a name made of `part` (a user-chosen name) could read as another proxy's derived object. */
export function endsLikeDerived(part: string): boolean {
  return DERIVED_ENDING.test(part);
}
