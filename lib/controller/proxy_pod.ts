/**
 * @module controller/proxy_pod
 * The proxy Deployment's spec: the haproxy container running `proxy` (it reads its ConfigMap and
 * Secrets through the API and drives HAProxy) and the exporter sidecar that turns the stats page
 * into Prometheus metrics. Only the pod is described here; which objects exist, their names,
 * labels and owners are lib/controller/objects.ts's job.
 */
import type { EnvVar } from "./cloud.ts";
import type { ControllerSettings } from "./settings.ts";

export const httpPort = 80;
export const httpsPort = 443;
export const statsPort = 56789;
export const exporterPort = 56790;

/** `5s`, `1500ms`: Go duration text for the exporter's flag. */
export function goDuration(ms: number): string {
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m0s`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

export interface ProxyPodInput {
  /** Name of the proxy objects (ConfigMap, Deployment, ServiceAccount). */
  name: string;
  namespace: string;
  /** Labels of the pods (they include `selector`). */
  labels: Readonly<Record<string, string>>;
  selector: Readonly<Record<string, string>>;
  /** The pods' ServiceAccount; null: the namespace's default one. */
  serviceAccount: string | null;
  /** Set in every container (the platform's API server address). */
  env: readonly EnvVar[];
  settings: ControllerSettings;
}

/** The `spec` of the proxy Deployment. */
export function proxyDeploymentSpec(p: ProxyPodInput): Record<string, unknown> {
  const { settings } = p;
  const env = p.env.map((e) => ({ name: e.name, value: e.value }));
  const registry = settings.imageRegistry.replace(/\/+$/, "");
  const workDir = "/var/run/ingress-controller";
  return {
    replicas: 1,
    selector: { matchLabels: { ...p.selector } },
    template: {
      metadata: { labels: { ...p.labels } },
      spec: {
        ...(p.serviceAccount ? { serviceAccountName: p.serviceAccount } : {}),
        containers: [
          {
            name: "haproxy",
            image: `${registry}/haproxy:${settings.proxyImageTag}`,
            args: [
              "proxy",
              `--namespace=${p.namespace}`,
              `--configmap=${p.name}`,
              `--work-dir=${workDir}`,
              `--http-port=${httpPort}`,
              `--https-port=${httpsPort}`,
              `--stats-port=${statsPort}`,
            ],
            env: [{ name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }, ...env],
            ports: [
              { name: "http", containerPort: httpPort, protocol: "TCP" },
              { name: "https", containerPort: httpsPort, protocol: "TCP" },
              { name: "stats", containerPort: statsPort, protocol: "TCP" },
            ],
            volumeMounts: [{ name: "work", mountPath: workDir }],
          },
          {
            name: "exporter",
            image: `${registry}/ingress-controller:${settings.exporterImageTag}`,
            args: [
              "exporter",
              `--proxy.server-metric-fields=${settings.proxyServerMetricFields}`,
              `--proxy.timeout=${goDuration(settings.proxyTimeoutMs)}`,
              `--proxy.scrape-uri=http://127.0.0.1:${statsPort}/;csv`,
            ],
            ...(env.length > 0 ? { env: [...env] } : {}),
            ports: [{ name: "metrics", containerPort: exporterPort, protocol: "TCP" }],
          },
        ],
        volumes: [{ name: "work", emptyDir: {} }],
      },
    },
  };
}
