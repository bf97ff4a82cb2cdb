/**
 * @module controller/settings
 * The controller's settings as plain data (so tests start it programmatically) and the adapter
 * from the parsed command line (`Config`, contracts §1).
 */
import { operatorNamespace } from "../cluster/access.ts";
import { DEFAULT_LIMITS, type SplitLimits } from "../transport/parts.ts";
import { CHECK_TIME_LIMIT_MS } from "../render/validate.ts";
import { leaderElectionDefaults } from "./leader_timing.ts";

export interface ControllerSettings {
  kubeconfig: string | null;
  ingressClass: string | null;
  restrictToOperatorNamespace: boolean;
  /** The operator's namespace (POD_NAMESPACE, the service-account file, else `default`). */
  operatorNamespace: string;
  rbac: boolean;
  /**
   * Each Gateway's proxy objects in the Gateway's own namespace, named after it
   * (`--gateway-proxies-in-gateway-namespace`); false: in the operator's namespace, `gw-<ns>-<name>` (gatewayProxyName).
   */
  gatewayProxiesInGatewayNamespace: boolean;
  /** 0: relist only when a watch cannot resume. */
  resyncPeriodMs: number;
  qps: number;
  burst: number;
  customTemplates: string | null;
  imageRegistry: string;
  proxyImageTag: string;
  exporterImageTag: string;
  proxyServerMetricFields: string;
  proxyTimeoutMs: number;
  /** `--validate-proxy-config` (A, B); release C never validates. */
  validateProxyConfig: boolean;
  operatorService: string;
  /** haproxy binary used by validation. */
  haproxyBinary: string;
  /**
   * The time limit of one `haproxy -c` (lib/render/validate.ts's CHECK_TIME_LIMIT_MS, shared with
   * the webhook); a configuration that exceeds it is refused. No option sets it (tests shorten it).
   */
  validateTimeoutMs: number;
  /** Concurrent reconciles. */
  workers: number;
  /** Coalescing window of the work queue. */
  coalesceMs: number;
  /**
   * How long an ingress moving to another proxy group stays in its old group's configuration after
   * its status shows the new address (clients may still resolve the old one).
   */
  handoverGraceMs: number;
  /**
   * When a configuration is split into part ConfigMaps (docs/config-transport.md). Only tests set
   * other sizes than lib/transport/parts.ts's defaults, to see parts without 10,000 ingresses.
   */
  configSplit: SplitLimits;
  /**
   * A group is built once more when the controller is idle after at least this many of its members'
   * status writes came back since its last build (lib/controller/controller.ts, `#adopted`): below
   * it, the next change compares those few objects on its way (about a microsecond each). No option
   * sets it (tests lower it).
   */
  catchUpMinimum: number;
  /** Label value that marks the objects of this controller (several controllers may share a cluster). */
  controllerId: string;
  /** `--cloud-provider` (lib/cloud/providers.ts); null: unset. */
  cloudProvider: string | null;
  /** `--cloud-config` path; null: none. */
  cloudConfig: string | null;
  /** `--use-apiserver-fqdn-for-managed-cluster` (A); releases without it never rewrite the address. */
  useApiserverFqdnForManagedCluster: boolean;
  /** `--metrics-crd-apigroup`. */
  metricsCrdApiGroup: string;
  /** `--metrics-crd-kinds` (CrdKinds text); null: the built-in names. */
  metricsCrdKinds: string | null;
  /**
   * Leader election (lib/controller/leader.ts, lib/controller/leader_timing.ts), on the Lease named after `controllerId` in
   * `operatorNamespace`. client-go's defaults; no option sets them (tests shorten them).
   */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export const defaultSettings: ControllerSettings = {
  kubeconfig: null,
  ingressClass: null,
  restrictToOperatorNamespace: false,
  operatorNamespace: "default",
  rbac: false,
  gatewayProxiesInGatewayNamespace: false,
  resyncPeriodMs: 600_000,
  qps: 1e6,
  burst: 1_000_000,
  customTemplates: null,
  imageRegistry: "docker.io/ingresscontroller",
  proxyImageTag: "1.9.2-9.0.0-alpine",
  exporterImageTag: "9.0.0",
  proxyServerMetricFields: "2,3,4,5,6,7,8,9,13,14,15,16,17,18,21,24,33,35,38,39,40,41,42,43,44",
  proxyTimeoutMs: 5000,
  validateProxyConfig: true,
  operatorService: "ingress-controller-operator",
  haproxyBinary: "haproxy",
  validateTimeoutMs: CHECK_TIME_LIMIT_MS,
  workers: 4,
  coalesceMs: 10,
  handoverGraceMs: 10_000,
  configSplit: DEFAULT_LIMITS,
  catchUpMinimum: 1_000,
  controllerId: "default",
  cloudProvider: null,
  cloudConfig: null,
  useApiserverFqdnForManagedCluster: true,
  metricsCrdApiGroup: "monitoring.coreos.com",
  metricsCrdKinds: null,
  ...leaderElectionDefaults,
};

/** What the adapter needs from `Config` (lib/flags/config.ts). */
export interface ConfigLike {
  readonly release: "A" | "B" | "C";
  has(name: string): boolean;
  get(name: string): unknown;
}

/** Settings from the parsed command line; options a release lacks keep their defaults. */
export function settingsFromConfig(
  config: ConfigLike,
  overrides: Partial<ControllerSettings> = {},
): ControllerSettings {
  const s = (name: string): string | null => (config.has(name) ? (config.get(name) as string | null) : null);
  const n = (name: string, d: number): number => (config.has(name) ? Number(config.get(name) ?? d) : d);
  const b = (name: string, d: boolean): boolean => (config.has(name) ? Boolean(config.get(name) ?? d) : d);
  const ingressClass = s("ingress-class") || null;
  return {
    ...defaultSettings,
    kubeconfig: s("kubeconfig") || null,
    ingressClass,
    restrictToOperatorNamespace: b("restrict-to-operator-namespace", false),
    operatorNamespace: operatorNamespace(),
    rbac: b("rbac", false),
    gatewayProxiesInGatewayNamespace: b("gateway-proxies-in-gateway-namespace", false),
    resyncPeriodMs: n("resync-period", defaultSettings.resyncPeriodMs),
    qps: n("qps", defaultSettings.qps),
    burst: n("burst", defaultSettings.burst),
    customTemplates: s("custom-templates") || null,
    imageRegistry: s("image-registry") || defaultSettings.imageRegistry,
    proxyImageTag: s("proxy-image-tag") || defaultSettings.proxyImageTag,
    exporterImageTag: s("exporter-image-tag") || defaultSettings.exporterImageTag,
    proxyServerMetricFields: s("proxy.server-metric-fields") ?? defaultSettings.proxyServerMetricFields,
    proxyTimeoutMs: n("proxy.timeout", defaultSettings.proxyTimeoutMs),
    // Release C has no --validate-proxy-config and never validates.
    validateProxyConfig: config.release !== "C" && b("validate-proxy-config", true),
    operatorService: s("operator-service") || defaultSettings.operatorService,
    controllerId: ingressClass ?? "default",
    cloudProvider: s("cloud-provider") || null,
    cloudConfig: s("cloud-config") || null,
    useApiserverFqdnForManagedCluster: b("use-apiserver-fqdn-for-managed-cluster", false),
    metricsCrdApiGroup: s("metrics-crd-apigroup") ?? defaultSettings.metricsCrdApiGroup,
    metricsCrdKinds: s("metrics-crd-kinds") || null,
    ...overrides,
  };
}
