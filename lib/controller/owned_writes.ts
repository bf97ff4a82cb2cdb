/**
 * @module controller/owned_writes
 * The writes the controller makes to the objects it owns, each bound to one object identity so
 * that a same-named object someone else made is never changed (lib/controller/ownership.ts):
 * - create: POST, which answers 409 AlreadyExists instead of merging into an existing object (a
 *   server-side apply would create-or-merge). The create's managedFields entry (an "Update") is
 *   then turned into an "Apply" entry, as if the object had been applied, so that later applies
 *   also remove the fields they no longer set;
 * - update: server-side apply with `metadata.uid`: the API server refuses it (409 when no object
 *   has the name, 422 when another object has it) instead of creating or merging;
 * - delete: with `preconditions.uid` (409 when another object has the name by now).
 */
import { isStatus } from "../cluster/client.ts";
import { collectionPath, type KubeObject, objectPath, type ResourceType } from "../cluster/resources.ts";
import { fieldManager } from "./objects.ts";
import type { Writer } from "./leader.ts";

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
  [field: string]: unknown;
}

/** Creates `obj`; rejects with a 409 ApiError when an object of that name exists. */
export async function createOwned(client: Writer, r: ResourceType, obj: KubeObject): Promise<KubeObject> {
  const created: KubeObject = await client.request("POST", collectionPath(r, obj.metadata.namespace), {
    query: { fieldManager },
    body: obj,
  });
  const uid = created.metadata.uid!;
  const entries = (created.metadata as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? [];
  const ours = (e: ManagedFieldsEntry) => e.manager === fieldManager && e.operation === "Update" && !e.subresource;
  if (!entries.some(ours)) return created;
  try {
    return await client.request("PATCH", objectPath(r, obj.metadata.namespace, obj.metadata.name), {
      body: [
        { op: "test", path: "/metadata/uid", value: uid },
        {
          op: "replace",
          path: "/metadata/managedFields",
          value: entries.map((e) => ours(e) ? { ...e, operation: "Apply", time: undefined } : e),
        },
      ],
      contentType: "application/json-patch+json",
    });
  } catch (err) {
    // An object whose fields later applies could not remove is not left behind: the next
    // reconcile creates it again.
    await deleteOwned(client, r, obj.metadata.namespace!, obj.metadata.name, uid).catch(() => {});
    throw err;
  }
}

/** Server-side apply of `obj` to the object `uid` only (force: the fields are ours). */
export function applyOwned(client: Writer, r: ResourceType, obj: KubeObject, uid: string): Promise<KubeObject> {
  return client.request("PATCH", objectPath(r, obj.metadata.namespace, obj.metadata.name), {
    query: { fieldManager, force: "true" },
    body: { ...obj, metadata: { ...obj.metadata, uid } },
    contentType: "application/apply-patch+yaml",
  });
}

/** Deletes the object `uid`: "deleted", "gone" (no such object) or "replaced" (another object has the name). */
export async function deleteOwned(
  client: Writer,
  r: ResourceType,
  namespace: string,
  name: string,
  uid: string,
): Promise<"deleted" | "gone" | "replaced"> {
  try {
    await client.request("DELETE", objectPath(r, namespace, name), {
      body: { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Background", preconditions: { uid } },
    });
    return "deleted";
  } catch (err) {
    if (isStatus(err, 404)) return "gone";
    if (isStatus(err, 409)) return "replaced";
    throw err;
  }
}
