/**
 * @module cloud/providers
 * The cloud providers `--cloud-provider` knows and how each exposes the proxy Service: its type
 * and the provider's Service annotations an HTTP/HTTPS proxy needs. Plain data with no imports
 * beyond the error class, so the option table (lib/flags/table.ts) can check names with it.
 */
import { UsageError } from "../common/errors.ts";

/** How the proxy Service is exposed on one provider. */
export interface Exposure {
  readonly serviceType: "LoadBalancer" | "NodePort";
  /** Service annotations the provider's load balancer reads (only those that matter to a TCP proxy). */
  readonly annotations: Readonly<Record<string, string>>;
}

const loadBalancer = (annotations: Record<string, string> = {}): Exposure =>
  Object.freeze({ serviceType: "LoadBalancer", annotations: Object.freeze(annotations) });
const nodePort: Exposure = Object.freeze({ serviceType: "NodePort", annotations: Object.freeze({}) });

/**
 * Every provider name accepted by `--cloud-provider` (the names Kubernetes' cloud providers and
 * the classic ingress controllers use) and its exposure.
 */
export const PROVIDERS = Object.freeze(
  {
    // An ELB/NLB listener passes TCP through: TLS reaches HAProxy, which terminates it (SNI, crt-list).
    aws: loadBalancer({ "service.beta.kubernetes.io/aws-load-balancer-backend-protocol": "tcp" }),
    gce: loadBalancer(),
    gke: loadBalancer(),
    azure: loadBalancer(),
    aks: loadBalancer(),
    acs: loadBalancer(),
    digitalocean: loadBalancer(),
    linode: loadBalancer(),
    openstack: loadBalancer(),
    // MetalLB gives bare-metal clusters LoadBalancer Services.
    metallb: loadBalancer(),
    // No load balancer implementation: a LoadBalancer Service would wait for an address forever.
    baremetal: nodePort,
    minikube: nodePort,
  } satisfies Record<string, Exposure>,
);

export type CloudProvider = keyof typeof PROVIDERS;
export const CLOUD_PROVIDERS = Object.freeze(Object.keys(PROVIDERS) as CloudProvider[]);

/** Managed clusters whose API server is reached by its FQDN (`--use-apiserver-fqdn-for-managed-cluster`). */
export const MANAGED_FQDN_PROVIDERS: readonly CloudProvider[] = Object.freeze(["aks", "acs"]);

/** Providers whose `--cloud-config` is Azure's JSON file. */
export const AZURE_PROVIDERS: readonly CloudProvider[] = Object.freeze(["azure", "aks", "acs"]);

/**
 * Without `--cloud-provider` the Service stays a LoadBalancer: clusters with an external cloud
 * controller manager (every managed cluster today) run without the option, and a LoadBalancer
 * Service also gets node ports and a cluster IP, so it still works where no load balancer comes.
 */
export const defaultExposure: Exposure = loadBalancer();

export function isCloudProvider(name: string): name is CloudProvider {
  return Object.hasOwn(PROVIDERS, name);
}

/** The option table's check of `--cloud-provider` (empty = unset). */
export function checkCloudProvider(value: string, flag = "--cloud-provider"): void {
  if (value === "" || isCloudProvider(value)) return;
  throw new UsageError(
    `invalid value ${JSON.stringify(value)} for ${flag}: unknown cloud provider; use one of ${
      CLOUD_PROVIDERS.join(", ")
    } (or leave it unset)`,
  );
}

/** The exposure of `provider` (null or empty: the default). */
export function exposureOf(provider: string | null): Exposure {
  return provider && isCloudProvider(provider) ? PROVIDERS[provider] : defaultExposure;
}
