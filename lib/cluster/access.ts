/**
 * @module cluster/access
 * Where the cluster is and who we are: `--kubeconfig` when given, else the in-cluster service
 * account; and the operator's own namespace for `--restrict-to-operator-namespace`.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { existsSync } from "node:fs";
import { oneLine, SetupError } from "../errors.ts";

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
 * The operator's namespace: `POD_NAMESPACE`, else the service-account namespace file, else
 * `default` when that file does not exist (not in a pod). A file that exists but cannot be read,
 * or is empty, is a SetupError: guessing `default` there would silently watch the wrong namespace.
 * The parameters are only for tests.
 */
export function operatorNamespace(
  saDir = serviceAccountDir,
  podNamespace: string | undefined = Deno.env.get("POD_NAMESPACE"),
): string {
  const fromEnv = podNamespace?.trim();
  if (fromEnv) return fromEnv;
  const path = `${saDir}/namespace`;
  let fromFile: string;
  try {
    fromFile = Deno.readTextFileSync(path).trim();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return "default";
    throw new SetupError(
      `cannot read the service-account namespace file ${path}: ${oneLine(err)}; fix its mount or set POD_NAMESPACE`,
    );
  }
  if (!fromFile) {
    throw new SetupError(`the service-account namespace file ${path} is empty; fix its mount or set POD_NAMESPACE`);
  }
  return fromFile;
}
