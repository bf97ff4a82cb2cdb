/**
 * @module controller/proxy_pod
 * The proxy Deployment's spec: the haproxy container running `proxy` (it reads its ConfigMap and
 * Secrets through the API and drives HAProxy) and the exporter sidecar that turns the stats page
 * into Prometheus metrics. Only the pod is described here; which objects exist, their names,
 * labels and owners are lib/controller/objects.ts's job.
 */
import { PROXY_HEAP_LIMIT_MB, PROXY_SEMI_SPACE_MB, v8Flags } from "./v8_flags.ts";
import type { EnvVar } from "./cloud.ts";
import type { ControllerSettings } from "./settings.ts";
import type { KubeObject } from "../cluster/resources.ts";

// The pod's ports live in a leaf module, which the Gateway's port mapping (lib/gateway/ports.ts) reads too.
export {
  containerHttpPort,
  containerHttpsPort,
  exporterPort,
  healthPort,
  httpPort,
  httpsPort,
  statsPort,
} from "../common/proxy_ports.ts";
import { containerHttpPort, containerHttpsPort, exporterPort, healthPort, statsPort } from "../common/proxy_ports.ts";
/** The numeric user and group of both containers (the images have no user database; non-root needs a number). */
export const proxyUid = 65532;
/** `proxy --shutdown-drain`: how long a terminating pod serves after leaving the endpoints. */
export const shutdownDrainSeconds = 10;
/** `proxy --shutdown-timeout`: how long requests in flight may take after HAProxy's soft stop. */
export const shutdownTimeoutSeconds = 30;

/** `5s`, `1500ms`: Go duration text for the exporter's flag. */
export function goDuration(ms: number): string {
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m0s`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A container's `resources` (Kubernetes quantities). */
export interface ContainerResources {
  requests: Readonly<Record<string, string>>;
  limits?: Readonly<Record<string, string>>;
}

/**
 * Requests from resident memory measured in the single-node cluster (tests/dev/localnode/proxy_pod_test.ts,
 * idle with one ingress): `proxy` (Deno) 138 MiB plus HAProxy's master and worker 21 MiB; the
 * exporter (Deno) 71 MiB; each with about 20% headroom. No CPU limit (throttling shows up as latency) and no
 * memory limit by default: an OOM kill of a proxy drops every connection it carries.
 */
export const defaultProxyResources: ContainerResources = { requests: { cpu: "100m", memory: "192Mi" } };
export const defaultExporterResources: ContainerResources = { requests: { cpu: "10m", memory: "96Mi" } };

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
  /** Proxy pods; default 1. */
  replicas?: number;
  /** Default {@link defaultProxyResources}. */
  proxyResources?: ContainerResources;
  /** Default {@link defaultExporterResources}. */
  exporterResources?: ContainerResources;
  /** The pods' node selector; default none. */
  nodeSelector?: Readonly<Record<string, string>>;
}

/** Both containers: nothing but their own files, no privilege, no writable image. */
const containerSecurity = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};

const probe = (path: string, port: string, o: Record<string, number>) => ({
  httpGet: { path, port, scheme: "HTTP" },
  ...o,
});

/**
 * The `spec` of the proxy Deployment.
 *
 * Probes (lib/proxy/command.ts): readiness `/readyz` passes while HAProxy runs the configuration
 * the proxy last accepted and the proxy is not shutting down; a refused configuration keeps the
 * last good one serving and ready, so one bad revision never empties the endpoints. Liveness
 * `/livez`: the process and HAProxy's master answer (never the API server). The startup probe
 * gives the first start time without a long liveness delay.
 *
 * Rollouts add a pod before removing one (`maxSurge: 1, maxUnavailable: 0`); a removed pod fails
 * readiness, serves for the drain, then soft-stops HAProxy, all within
 * `terminationGracePeriodSeconds`.
 */
export function proxyDeploymentSpec(p: ProxyPodInput): Record<string, unknown> {
  const { settings } = p;
  const env = p.env.map((e) => ({ name: e.name, value: e.value }));
  const registry = settings.imageRegistry.replace(/\/+$/, "");
  const workDir = "/var/run/ingress-controller";
  return {
    replicas: p.replicas ?? 1,
    selector: { matchLabels: { ...p.selector } },
    strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
    template: {
      metadata: { labels: { ...p.labels } },
      spec: {
        ...(p.serviceAccount ? { serviceAccountName: p.serviceAccount } : {}),
        securityContext: {
          runAsNonRoot: true,
          runAsUser: proxyUid,
          runAsGroup: proxyUid,
          fsGroup: proxyUid,
          seccompProfile: { type: "RuntimeDefault" },
        },
        // Drain, then the soft stop's bound, then a margin for the process to exit.
        terminationGracePeriodSeconds: shutdownDrainSeconds + shutdownTimeoutSeconds + 5,
        ...(p.nodeSelector && Object.keys(p.nodeSelector).length > 0 ? { nodeSelector: { ...p.nodeSelector } } : {}),
        topologySpreadConstraints: [{
          maxSkew: 1,
          topologyKey: "kubernetes.io/hostname",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: { ...p.selector } },
          // Spread each revision on its own (a rollout's new pods are not counted against the old).
          matchLabelKeys: ["pod-template-hash"],
        }],
        containers: [
          {
            name: "haproxy",
            image: `${registry}/haproxy:${settings.proxyImageTag}`,
            args: [
              "proxy",
              `--namespace=${p.namespace}`,
              `--configmap=${p.name}`,
              `--work-dir=${workDir}`,
              `--http-port=${containerHttpPort}`,
              `--https-port=${containerHttpsPort}`,
              `--stats-port=${statsPort}`,
              `--health-port=${healthPort}`,
              `--shutdown-drain=${shutdownDrainSeconds}s`,
              `--shutdown-timeout=${shutdownTimeoutSeconds}s`,
            ],
            env: [
              { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
              { name: "DENO_V8_FLAGS", value: v8Flags(PROXY_HEAP_LIMIT_MB, PROXY_SEMI_SPACE_MB) },
              ...env,
            ],
            ports: [
              { name: "http", containerPort: containerHttpPort, protocol: "TCP" },
              { name: "https", containerPort: containerHttpsPort, protocol: "TCP" },
              { name: "health", containerPort: healthPort, protocol: "TCP" },
            ],
            startupProbe: probe("/livez", "health", { periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 60 }),
            readinessProbe: probe("/readyz", "health", {
              periodSeconds: 2,
              timeoutSeconds: 2,
              successThreshold: 1,
              failureThreshold: 2,
            }),
            livenessProbe: probe("/livez", "health", { periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 }),
            resources: resources(p.proxyResources ?? defaultProxyResources),
            securityContext: { ...containerSecurity },
            volumeMounts: [{ name: "work", mountPath: workDir }, { name: "tmp", mountPath: "/tmp" }],
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
            // No readiness probe: metrics must never take the pod out of the proxy Service.
            livenessProbe: {
              tcpSocket: { port: "metrics" },
              periodSeconds: 10,
              timeoutSeconds: 5,
              failureThreshold: 3,
            },
            resources: resources(p.exporterResources ?? defaultExporterResources),
            securityContext: { ...containerSecurity },
            volumeMounts: [{ name: "exporter-tmp", mountPath: "/tmp" }],
          },
        ],
        volumes: [
          { name: "work", emptyDir: {} },
          { name: "tmp", emptyDir: {} },
          { name: "exporter-tmp", emptyDir: {} },
        ],
      },
    },
  };
}

/**
 * The proxy pods' PodDisruptionBudget: a voluntary disruption (node drain) takes at most one proxy
 * pod at a time; with one replica that still lets the node drain (the alternative is a drain that
 * never ends). Pods that are not Ready may always be evicted, so a crash-looping proxy never
 * blocks a drain.
 */
export function proxyDisruptionBudgetSpec(selector: Readonly<Record<string, string>>): Record<string, unknown> {
  return {
    maxUnavailable: 1,
    selector: { matchLabels: { ...selector } },
    unhealthyPodEvictionPolicy: "AlwaysAllow",
  };
}

function resources(r: ContainerResources): Record<string, unknown> {
  return { requests: { ...r.requests }, ...(r.limits ? { limits: { ...r.limits } } : {}) };
}

/** Whether a (cached) proxy Deployment has an available replica. */
export function deploymentAvailable(d: KubeObject | null | undefined): boolean {
  return (d?.status?.availableReplicas ?? 0) >= 1;
}
