/**
 * @module cluster/metadata_list
 * The names, labels, annotations, owners and uids of a namespace's objects of one kind, in one
 * paged list of their metadata only (`PartialObjectMetadataList`): what the controller needs to
 * know whether objects it is about to create exist, and whose they are, without one GET per name
 * (a first publish of 100,000 Ingresses looks up ~670 part ConfigMaps) nor their data (the parts
 * of a large configuration are megabytes).
 */
import type { ClusterClient } from "./client.ts";
import { collectionPath, type KubeObject, type ResourceType } from "./resources.ts";

/** Metadata objects per page (they are small: names, labels, annotations, owners). */
const PAGE = 500;

const ACCEPT = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";

/**
 * The objects of kind `r` in `namespace` by name, each `{apiVersion, kind: "PartialObjectMetadata",
 * metadata}` (no data, spec nor status). The same RBAC as a list of the kind.
 */
export async function listMetadata(
  client: ClusterClient,
  r: ResourceType,
  namespace: string,
): Promise<Map<string, KubeObject>> {
  const byName = new Map<string, KubeObject>();
  let cont: string | undefined;
  do {
    const page = await client.request("GET", collectionPath(r, namespace), {
      query: { limit: PAGE, continue: cont },
      accept: ACCEPT,
    });
    if (page?.kind !== "PartialObjectMetadataList") {
      throw new Error(
        `listing ${r.plural} in ${namespace}: the API server answered ${page?.kind ?? "nothing"}, not their metadata`,
      );
    }
    for (const item of page.items ?? []) byName.set(item.metadata.name, item);
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return byName;
}
