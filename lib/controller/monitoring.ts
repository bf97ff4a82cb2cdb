/**
 * @module controller/monitoring
 * The metrics system's ServiceMonitor (prometheus-operator's custom resource, group
 * `--metrics-crd-apigroup`, kind and plural renamed by `--metrics-crd-kinds`): found once at
 * start-up through API discovery, and the one each handled ingress owns, scraping the exporter
 * sidecar's `metrics` port of its ClusterIP stats Service (never the public proxy Service).
 */
import { type ClusterClient, isStatus } from "../cluster/client.ts";
import { collectionPath, type ResourceType } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";

export const serviceMonitorVersion = "v1";

/** The ServiceMonitor's kind and plural, after `--metrics-crd-kinds` (`servicemonitor=Kind:plural`). */
export function serviceMonitorNames(crdKinds: string | null): { kind: string; plural: string } {
  let names = { kind: "ServiceMonitor", plural: "servicemonitors" };
  // The flags engine checked the syntax (lib/flags/kinds.ts); the last servicemonitor entry wins.
  for (const pair of (crdKinds ?? "").split(",")) {
    const m = /^servicemonitor=([A-Za-z][A-Za-z0-9]*):([a-z][a-z0-9-]*)$/.exec(pair.trim());
    if (m) names = { kind: m[1], plural: m[2] };
  }
  return names;
}

/**
 * The ServiceMonitor resource when the API server serves it (GET /apis/<group>/v1 lists the
 * plural with the kind) and we may list it in `namespace` (null: all), else null after logging
 * why, once. (A resource we may not list would hold the controller's informers from syncing.)
 */
export async function discoverServiceMonitor(
  client: ClusterClient,
  group: string,
  crdKinds: string | null,
  namespace: string | null = null,
): Promise<ResourceType | null> {
  const { kind, plural } = serviceMonitorNames(crdKinds);
  const what = `${plural}.${group}/${serviceMonitorVersion} (kind ${kind})`;
  if (!group) {
    log.info("no ServiceMonitors: --metrics-crd-apigroup is empty");
    return null;
  }
  let list: { resources?: { name: string; kind: string; namespaced?: boolean }[] };
  try {
    list = await client.request("GET", `/apis/${encodeURIComponent(group)}/${serviceMonitorVersion}`);
  } catch (err) {
    if (isStatus(err, 404)) {
      log.info(`no ServiceMonitors: the API server does not serve ${what}; install the CRD and restart to get them`);
    } else {
      log.warn(`no ServiceMonitors: cannot discover ${what}`, { error: (err as Error).message });
    }
    return null;
  }
  const found = list.resources?.find((r) => r.name === plural);
  if (!found || found.kind !== kind || found.namespaced === false) {
    log.warn(
      `no ServiceMonitors: ${group}/${serviceMonitorVersion} has no namespaced resource ${plural} of kind ${kind}` +
        (found ? ` (found kind ${found.kind})` : "") + "; check --metrics-crd-kinds",
    );
    return null;
  }
  const resource: ResourceType = { group, version: serviceMonitorVersion, plural, kind, namespaced: true };
  try {
    await client.request("GET", collectionPath(resource, namespace), { query: { limit: "1" } });
  } catch (err) {
    if (isStatus(err, 401, 403)) {
      log.warn(
        `no ServiceMonitors: not allowed to list ${what}; allow get, list, watch, create, patch and delete on it to get them`,
        { error: (err as Error).message },
      );
      return null;
    }
    // Anything else (a CRD still initializing, a timeout) passes: the informer retries it.
    log.warn(`listing ${what} failed; its informer retries`, { error: (err as Error).message });
  }
  log.info("ServiceMonitors enabled", { resource: what });
  return resource;
}

/** The ServiceMonitor `spec` that scrapes `port` of the Services matching `selector` in `namespace`. */
export function serviceMonitorSpec(
  selector: Record<string, string>,
  namespace: string,
  port: string,
  path = "/metrics",
): Record<string, unknown> {
  return {
    selector: { matchLabels: { ...selector } },
    namespaceSelector: { matchNames: [namespace] },
    endpoints: [{ port, path, scheme: "http" }],
  };
}
