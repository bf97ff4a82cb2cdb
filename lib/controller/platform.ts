/**
 * @module controller/platform
 * What the cluster's platform adds to the proxy objects, worked out once at start-up from the
 * cloud and metrics options: how the proxy Service is exposed (`--cloud-provider`,
 * `--cloud-config`), the API server address the proxy pods use
 * (`--use-apiserver-fqdn-for-managed-cluster`) and the ServiceMonitor resource, if the cluster
 * serves one (`--metrics-crd-apigroup`, `--metrics-crd-kinds`).
 */
import type { ClusterClient } from "../cluster/client.ts";
import type { ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import { apiServerEnv, type EnvVar, readCloudConfig } from "./cloud.ts";
import { discoverServiceMonitor } from "./monitoring.ts";
import { defaultExposure, type Exposure, exposureOf } from "../cloud/providers.ts";
import type { ControllerSettings } from "./settings.ts";

export interface Platform {
  readonly exposure: Exposure;
  /** Set in every container of the proxy Deployment. */
  readonly proxyEnv: readonly EnvVar[];
  /** The ServiceMonitor resource each handled ingress gets, or null (no CRD). */
  readonly serviceMonitor: ResourceType | null;
}

/** Nothing platform-specific: a LoadBalancer Service, no extra env, no ServiceMonitor. */
export const defaultPlatform: Platform = Object.freeze({
  exposure: defaultExposure,
  proxyEnv: Object.freeze([]),
  serviceMonitor: null,
});

/** The platform without the cluster: exposure and proxy env (unit-testable with plain objects). */
export function staticPlatform(settings: ControllerSettings, server: URL): Platform {
  const provider = settings.cloudProvider || null;
  const cloudConfig = readCloudConfig(provider, settings.cloudConfig);
  if (cloudConfig) {
    if (!provider) {
      log.warn("--cloud-config is ignored: no --cloud-provider is given", { file: cloudConfig.path });
    } else {
      log.info("read the cloud configuration", {
        provider,
        file: cloudConfig.path,
        ...cloudConfig.fields,
        used: cloudConfig.format === "azure-json"
          ? "checked and logged; the load balancer itself is set up by the cloud controller manager"
          : "read only; its format belongs to the provider's cloud controller manager",
      });
    }
  }
  const { env, skipped } = apiServerEnv(provider, settings.useApiserverFqdnForManagedCluster, server);
  if (skipped) log.warn(`--use-apiserver-fqdn-for-managed-cluster has no effect: ${skipped}`);
  if (env.length > 0) log.info("proxy pods reach the API server by its FQDN", { host: env[0].value });
  const exposure = exposureOf(provider);
  log.info("proxy Service exposure", {
    provider: provider ?? "(unset)",
    type: exposure.serviceType,
    annotations: Object.keys(exposure.annotations).join(",") || "(none)",
  });
  return Object.freeze({ exposure, proxyEnv: Object.freeze(env), serviceMonitor: null });
}

/** The whole platform at start-up: the static part and the ServiceMonitor discovery. */
export async function preparePlatform(settings: ControllerSettings, client: ClusterClient): Promise<Platform> {
  const base = staticPlatform(settings, client.server);
  const serviceMonitor = await discoverServiceMonitor(
    client,
    settings.metricsCrdApiGroup,
    settings.metricsCrdKinds,
    settings.restrictToOperatorNamespace ? settings.operatorNamespace : null,
  );
  return Object.freeze({ ...base, serviceMonitor });
}
