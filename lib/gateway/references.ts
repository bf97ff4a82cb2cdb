/**
 * @module gateway/references
 * ReferenceGrant checks: a reference from an object in one namespace to an object in another is
 * allowed only when a ReferenceGrant in the target's namespace names the referring kind and
 * namespace in `from` and the target's group and kind (and, when it names one, the target's name)
 * in `to`. Same-namespace references need no grant. Entries of `from` and of `to` are ORed.
 */
import type { ReferenceGrant } from "./api.ts";

export interface RefFrom {
  group: string;
  kind: string;
  namespace: string;
}

export interface RefTo {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Whether `from` may refer to `to` (same namespace, or a grant in `to.namespace` allows it). */
export function referenceAllowed(grants: readonly ReferenceGrant[], from: RefFrom, to: RefTo): boolean {
  if (from.namespace === to.namespace) return true;
  return grants.some((g) =>
    g.metadata?.namespace === to.namespace &&
    (g.spec?.from ?? []).some((f) =>
      (f.group ?? "") === from.group && f.kind === from.kind && f.namespace === from.namespace
    ) &&
    (g.spec?.to ?? []).some((t) =>
      (t.group ?? "") === to.group && t.kind === to.kind &&
      (t.name === undefined || t.name === "" || t.name === to.name)
    )
  );
}
