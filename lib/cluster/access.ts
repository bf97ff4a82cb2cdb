/**
 * @module cluster/access
 * Where the cluster is and who we are: `--kubeconfig` when given, else the in-cluster service
 * account; and the operator's own namespace for `--restrict-to-operator-namespace`.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { existsSync, readFileSync } from "node:fs";
import { SetupError } from "../errors.ts";

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Loads the kubeconfig file, or the in-cluster configuration when `path` is null or empty. */
export function loadKubeConfig(path: string | null | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    if (!existsSync(path)) {
      throw new SetupError(`--kubeconfig: file ${path} does not exist; give the path of a readable kubeconfig file`);
    }
    try {
      kc.loadFromFile(path);
    } catch (err) {
      throw new SetupError(`--kubeconfig: cannot load ${path}: ${oneLine(err)}; fix the file or give another one`);
    }
  } else {
    if (!Deno.env.get("KUBERNETES_SERVICE_HOST")) {
      throw new SetupError(
        "no cluster configuration: --kubeconfig is unset and KUBERNETES_SERVICE_HOST is not set (not in a pod); give --kubeconfig",
      );
    }
    kc.loadFromCluster();
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new SetupError(`--kubeconfig: ${path || "in-cluster configuration"} has no current cluster with a server`);
  }
  return kc;
}

/**
 * The operator's namespace: `POD_NAMESPACE`, else the service-account namespace file, else `default`.
 * `saDir` is only for tests.
 */
export function operatorNamespace(saDir = serviceAccountDir): string {
  const fromEnv = Deno.env.get("POD_NAMESPACE")?.trim();
  if (fromEnv) return fromEnv;
  try {
    const fromFile = readFileSync(`${saDir}/namespace`, "utf-8").trim();
    if (fromFile) return fromFile;
  } catch {
    // not in a pod: fall through to the documented default
  }
  return "default";
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
}
