/**
 * @module lib/dev/conformance/cluster_setup
 * What the suite needs in the cluster before it runs: the Gateway API CRDs of the pinned version
 * (server-side applied as `kubectl apply --server-side` would, then Established), the chart
 * installed from the node's images with its GatewayClass, the controller Ready, and an admin
 * kubeconfig that works inside the cluster's network namespace (the API server's Service address,
 * which its certificate names).
 */
import { join } from "node:path";
import { collectionPath, resources } from "../../cluster/resources.ts";
import { applyManifests, parseManifests } from "../deploy/apply.ts";
import { api, CONTROLLER_LABELS, readyPods } from "../deploy/in_cluster.ts";
import { chartDir, helm, NAMESPACE, RELEASE_NAME } from "../deploy/manifests.ts";
import { eventually } from "../localenv/harness.ts";
import { writeKubeConfig } from "../localenv/kubeconfig.ts";
import type { Cluster } from "../localnode/mod.ts";

/** The GatewayClass the chart creates and the suite is pointed at (`-gateway-class`). */
export const GATEWAY_CLASS = "ingress-controller";

/** Applies every CRD file of `crdDir` (and the policy objects beside them) and waits until each CRD is Established. */
export async function applyCrds(c: Pick<Cluster, "adminFetch">, crdDir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const e of Deno.readDir(crdDir)) if (e.isFile && e.name.endsWith(".yaml")) files.push(e.name);
  files.sort();
  const objects = [];
  for (const f of files) objects.push(...parseManifests(await Deno.readTextFile(join(crdDir, f))));
  await applyManifests((p, init) => c.adminFetch(p, init), objects, { fieldManager: "conformance-harness" });
  const crds = objects.filter((o) => o.kind === "CustomResourceDefinition").map((o) => o.metadata.name);
  for (const name of crds) {
    await eventually(`CRD ${name} Established`, async () => {
      const crd = await api(c, "GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      return (crd.status?.conditions ?? []).some((x: any) => x.type === "Established" && x.status === "True") ||
        undefined;
    }, 60_000);
  }
  return crds;
}

/**
 * `helm install` of the chart with the Gateway API on (`gatewayAPI.enabled`) and its GatewayClass
 * (`gatewayClass.create`), each Gateway's proxy in the Gateway's own namespace
 * (`gatewayAPI.proxiesInGatewayNamespace`: the class then claims GatewayInfrastructure,
 * whose test looks for the proxy there), the node's images never pulled, plus
 * the caller's `--set` values; resolves once the controller pod is Ready.
 */
export async function installChart(c: Cluster, helmSets: readonly string[], workDir: string): Promise<void> {
  const env = {
    HELM_CACHE_HOME: join(workDir, "helm/cache"),
    HELM_CONFIG_HOME: join(workDir, "helm/config"),
    HELM_DATA_HOME: join(workDir, "helm/data"),
  };
  const sets = [
    "gatewayAPI.enabled=true",
    "gatewayAPI.proxiesInGatewayNamespace=true",
    "gatewayClass.create=true",
    `gatewayClass.name=${GATEWAY_CLASS}`,
    "image.pullPolicy=Never",
    ...helmSets,
  ];
  await helm([
    "install",
    RELEASE_NAME,
    chartDir,
    "--namespace",
    NAMESPACE,
    "--create-namespace",
    "--kubeconfig",
    c.kubeconfig,
    ...sets.flatMap((s) => ["--set", s]),
  ], env);
  await readyPods(c, CONTROLLER_LABELS, 1, { ns: NAMESPACE, timeoutMs: 300_000 });
}

/** The GatewayClass's conditions and supported features as one line each (what the suite will read). */
export async function gatewayClassLines(c: Cluster, name = GATEWAY_CLASS): Promise<string[]> {
  const res = await c.adminFetch(`/apis/gateway.networking.k8s.io/v1/gatewayclasses/${name}`);
  if (res.status === 404) {
    await res.body?.cancel();
    return [`GatewayClass ${name}: not found`];
  }
  const gc = await res.json();
  const conds = (gc.status?.conditions ?? []).map((x: any) => `${x.type}=${x.status} (${x.reason})`);
  const features = (gc.status?.supportedFeatures ?? []).map((f: any) => f.name ?? f);
  return [
    `GatewayClass ${name} (controllerName ${gc.spec?.controllerName}): ${conds.join(", ") || "no conditions"}`,
    `  supportedFeatures: ${features.join(", ") || "none"}`,
  ];
}

/** An admin kubeconfig for processes inside the cluster's network namespace: the API server through its Service. */
export function insideKubeconfig(c: Cluster, path: string): Promise<string> {
  return writeKubeConfig(path, {
    server: "https://10.0.0.1:443",
    caPem: c.caPem,
    user: "admin",
    credentials: c.admin,
  });
}

/**
 * What is worth reading after a run, copied out of the cluster before it is removed, into `dir`:
 * every container's log (`pod-logs/<namespace>_<pod>_<uid>/<container>/*.log`, as the kubelet wrote
 * them: the controller's, the proxies', the backends') and the Gateway API objects left in the
 * cluster with their status (`gateway-api-objects.json`).
 */
export async function collectDiagnostics(c: Cluster, dir: string): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const cp = await new Deno.Command("cp", { args: ["-r", join(c.dir, "pod-logs"), join(dir, "pod-logs")] }).output();
  if (!cp.success) throw new Error(`copying the pod logs failed: ${new TextDecoder().decode(cp.stderr)}`);
  const objects: Record<string, unknown> = {};
  // Every Gateway API kind the controller reads, at its own version (ReferenceGrant is v1beta1).
  for (const r of Object.values(resources).filter((r) => r.group === "gateway.networking.k8s.io")) {
    // One kind the API server cannot list (yet) does not lose the others.
    objects[r.plural] = await api(c, "GET", collectionPath(r)).then(
      (list) => list.items,
      (err) => `not listed: ${(err as Error).message}`,
    );
  }
  await Deno.writeTextFile(join(dir, "gateway-api-objects.json"), JSON.stringify(objects, null, 2) + "\n");
}
