/**
 * @module auth/lookup
 * `--authentication-skip-lookup=false`: the cluster publishes its client CA and front-proxy
 * (request-header) settings in the ConfigMap kube-system/extension-apiserver-authentication;
 * settings the flags leave empty are taken from there, as Kubernetes' delegated authentication does.
 */
import { type ClusterClient, isStatus } from "../cluster/client.ts";
import { SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";

export interface ClusterAuthenticationConfig {
  readonly clientCA: string | null;
  readonly requestHeaderCA: string | null;
  readonly allowedNames: readonly string[];
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

function jsonList(value: unknown, key: string): string[] {
  if (typeof value !== "string" || value.trim() === "") return [];
  try {
    const parsed = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.map(String);
  } catch {
    // fall through to the error below
  }
  throw new SetupError(
    `configmap kube-system/extension-apiserver-authentication: key ${key} is not a JSON list of strings`,
  );
}

/** The published configuration, or null when the ConfigMap does not exist. */
export async function lookupAuthenticationConfig(client: ClusterClient): Promise<ClusterAuthenticationConfig | null> {
  let cm: any;
  try {
    cm = await client.request("GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication");
  } catch (err) {
    if (isStatus(err, 404)) {
      log.warn("configmap kube-system/extension-apiserver-authentication not found; continuing with the flags only");
      return null;
    }
    if (isStatus(err, 403)) {
      throw new SetupError(
        "cannot read configmap kube-system/extension-apiserver-authentication (forbidden); bind the identity of " +
          "--authentication-kubeconfig to role kube-system/extension-apiserver-authentication-reader, or set " +
          "--authentication-skip-lookup",
      );
    }
    throw new SetupError(
      `cannot read configmap kube-system/extension-apiserver-authentication (${(err as Error).message}); ` +
        "check --authentication-kubeconfig or set --authentication-skip-lookup",
    );
  }
  const data: Record<string, unknown> = cm?.data ?? {};
  const text = (
    k: string,
  ) => (typeof data[k] === "string" && (data[k] as string).trim() !== "" ? data[k] as string : null);
  return {
    clientCA: text("client-ca-file"),
    requestHeaderCA: text("requestheader-client-ca-file"),
    allowedNames: jsonList(data["requestheader-allowed-names"], "requestheader-allowed-names"),
    usernameHeaders: jsonList(data["requestheader-username-headers"], "requestheader-username-headers"),
    groupHeaders: jsonList(data["requestheader-group-headers"], "requestheader-group-headers"),
    extraHeaderPrefixes: jsonList(data["requestheader-extra-headers-prefix"], "requestheader-extra-headers-prefix"),
  };
}
