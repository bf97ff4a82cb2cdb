/**
 * @module controller/cloud
 * What the cloud options change at start-up: `--cloud-config` is read and checked (Azure's JSON
 * file is parsed and its load-balancer fields validated; other providers' files are only read,
 * their cloud controller manager is what uses them), and on managed clusters with
 * `--use-apiserver-fqdn-for-managed-cluster` the proxy pods get the API server's FQDN as
 * `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT` (AKS: the in-cluster service IP of the
 * API server drops long-lived watch connections; its public FQDN does not).
 */
import { readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { oneLine, SetupError } from "../common/errors.ts";
import { AZURE_PROVIDERS, type CloudProvider, isCloudProvider, MANAGED_FQDN_PROVIDERS } from "../cloud/providers.ts";

/** What `--cloud-config` held, as far as the controller understands it. */
export interface CloudConfigInfo {
  readonly provider: CloudProvider | null;
  readonly path: string;
  /** `azure-json`: parsed and validated; `opaque`: read, used by the provider's own components only. */
  readonly format: "azure-json" | "opaque";
  /** Validated fields of interest (Azure: resourceGroup, location, loadBalancerSku). */
  readonly fields: Readonly<Record<string, string>>;
}

export interface EnvVar {
  readonly name: string;
  readonly value: string;
}

const maxCloudConfigBytes = 1 << 20;

/** Azure's documented value shapes of the fields read (resource group names: 1–90 of `-_.()` and alphanumerics). */
const azureFields: Record<string, { pattern: RegExp; what: string }> = {
  resourceGroup: { pattern: /^[-\w.()]{0,89}[-\w()]$/, what: "a resource group name" },
  location: { pattern: /^[a-z0-9]{1,40}$/, what: "a region name like westeurope" },
  loadBalancerSku: { pattern: /^(basic|standard)$/i, what: "basic or standard" },
};

/**
 * Reads `--cloud-config` for `provider`; null when no file is given. Throws SetupError naming the
 * option when the file cannot be read or (Azure) is not a valid cloud configuration.
 */
export function readCloudConfig(provider: string | null, path: string | null): CloudConfigInfo | null {
  if (!path) return null;
  const flag = "--cloud-config";
  let text: string;
  try {
    if (statSync(path).size > maxCloudConfigBytes) {
      throw new Error(`larger than ${maxCloudConfigBytes} bytes`);
    }
    text = readFileSync(path, "utf-8");
  } catch (err) {
    throw new SetupError(`${flag} ${JSON.stringify(path)}: cannot read it (${oneLine(err)}); give a readable file`);
  }
  const known = provider && isCloudProvider(provider) ? provider : null;
  if (!known || !AZURE_PROVIDERS.includes(known)) return { provider: known, path, format: "opaque", fields: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SetupError(
      `${flag} ${JSON.stringify(path)}: not JSON (${oneLine(err)}); ${known} takes Azure's JSON cloud configuration`,
    );
  }
  if (!json || typeof json !== "object" || Array.isArray(json)) {
    throw new SetupError(
      `${flag} ${JSON.stringify(path)}: not a JSON object; ${known} takes Azure's JSON cloud configuration`,
    );
  }
  const fields: Record<string, string> = {};
  for (const [name, { pattern, what }] of Object.entries(azureFields)) {
    const v = (json as Record<string, unknown>)[name];
    if (v === undefined || v === "") continue;
    if (typeof v !== "string" || !pattern.test(v)) {
      throw new SetupError(
        `${flag} ${JSON.stringify(path)}: field ${name} is ${JSON.stringify(v)}, not ${what}; fix the file`,
      );
    }
    fields[name] = name === "loadBalancerSku" ? v.toLowerCase() : v;
  }
  return { provider: known, path, format: "azure-json", fields };
}

/**
 * The environment of the proxy containers' cluster client: on a managed cluster with the option on,
 * the host and port of the controller's own API server URL, when that host is a DNS name (an IP
 * address is no FQDN: it is left to the pod's own in-cluster address and `skipped` says why).
 */
export function apiServerEnv(
  provider: string | null,
  useFqdn: boolean,
  server: URL,
): { env: EnvVar[]; skipped?: string } {
  if (!useFqdn || !provider || !(MANAGED_FQDN_PROVIDERS as readonly string[]).includes(provider)) return { env: [] };
  const host = server.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) !== 0 || !host.includes(".")) {
    return { env: [], skipped: `the API server URL ${server.origin} names no FQDN` };
  }
  const port = server.port || (server.protocol === "http:" ? "80" : "443");
  return {
    env: [
      { name: "KUBERNETES_SERVICE_HOST", value: host },
      { name: "KUBERNETES_SERVICE_PORT", value: port },
    ],
  };
}
