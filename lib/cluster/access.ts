/**
 * @module cluster/access
 * Where the cluster is and who we are: `--kubeconfig` when given, else the in-cluster service
 * account; and the operator's own namespace for `--restrict-to-operator-namespace`.
 */
import { existsSync } from "node:fs";
import { oneLine, SetupError } from "../common/errors.ts";
import {
  type ClusterAccess,
  inClusterAccess,
  type InClusterEnv,
  inClusterEnv,
  kubeConfigFileAccess,
  serviceAccountDir,
} from "./kubeconfig.ts";

export type { ClusterAccess } from "./kubeconfig.ts";

/** Where the in-cluster configuration is read from; only tests give another. */
export interface InClusterSource {
  readonly saDir: string;
  readonly env?: InClusterEnv;
}

/**
 * Loads the kubeconfig file, or the in-cluster configuration when `path` is null or empty. Every
 * failure is a one-line SetupError naming `--<option>`.
 */
export function loadKubeConfig(
  path: string | null | undefined,
  option = "kubeconfig",
  inCluster: InClusterSource = { saDir: serviceAccountDir },
): ClusterAccess {
  if (path) {
    if (!existsSync(path)) {
      throw new SetupError(`--${option}: file ${path} does not exist; give the path of a readable kubeconfig file`);
    }
    try {
      return kubeConfigFileAccess(path);
    } catch (err) {
      throw new SetupError(`--${option}: cannot load ${path}: ${oneLine(err)}; fix the file or give another one`);
    }
  }
  const env = inCluster.env ?? inClusterEnv();
  if (!env.host) {
    throw new SetupError(
      `no cluster configuration: --${option} is unset and KUBERNETES_SERVICE_HOST is not set (not in a pod); give --${option}`,
    );
  }
  try {
    return inClusterAccess(inCluster.saDir, env);
  } catch (err) {
    throw new SetupError(`--${option} is unset and the in-cluster configuration cannot be loaded: ${oneLine(err)}`);
  }
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
