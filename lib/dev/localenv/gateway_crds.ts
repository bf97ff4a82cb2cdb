/**
 * @module lib/dev/localenv/gateway_crds
 * The Gateway API's CRDs (standard channel of the pinned module, built and cached by
 * lib/dev/localenv/build.sh `gateway-crds`) installed into a test API server, waiting until each
 * is established, for the tests and benches of the Gateway API source.
 */
import { parseManifests } from "../deploy/apply.ts";
import type { KubeObject, ResourceType } from "../../cluster/resources.ts";
import type { Cluster } from "./harness.ts";
import { eventually } from "./harness.ts";

export const crdResource: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};

/** The directory of the standard channel's CRD files (built once, then cached). */
export async function gatewayCrdDir(): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: [new URL("./build.sh", import.meta.url).pathname, "gateway-crds"],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("lib/dev/localenv/build.sh gateway-crds failed (see its output above)");
  return `${new TextDecoder().decode(out.stdout).trim().split("\n").pop()}/crds/standard`;
}

/** The CustomResourceDefinitions of the standard channel. */
export async function gatewayCrds(): Promise<KubeObject[]> {
  const dir = await gatewayCrdDir();
  const crds: KubeObject[] = [];
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.name.endsWith(".yaml")) continue;
    for (const doc of parseManifests(await Deno.readTextFile(`${dir}/${e.name}`))) {
      if (doc.kind === "CustomResourceDefinition") crds.push(doc);
    }
  }
  return crds;
}

/** Installs the CRDs into `cluster` and waits until the API server serves each of them. */
export async function installGatewayCrds(cluster: Cluster): Promise<void> {
  const crds = await gatewayCrds();
  for (const crd of crds) await cluster.apply(crdResource, crd);
  for (const crd of crds) {
    await eventually(`CRD ${crd.metadata.name} established`, async () => {
      const c = await cluster.get(crdResource, null, crd.metadata.name);
      return (c?.status?.conditions ?? []).some((x: { type: string; status: string }) =>
        x.type === "Established" && x.status === "True"
      );
    });
  }
}
