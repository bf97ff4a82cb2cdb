/**
 * @module controller/backend_tls_watch
 * The Gateway source's BackendTLSPolicies (gateway.networking.k8s.io/v1, watched only when served
 * and listable) and the CA ConfigMaps they name: the policies' verdicts for the Gateways' models
 * (lib/gateway/backend_tls.ts, made again only after one of them changed), and their status. A
 * Gateway whose routes reach a Service port a policy names is an ancestor of that policy: the
 * Gateway's build writes the policy's `Accepted` and `ResolvedRefs` for that Gateway (only this
 * controller's entry for it; other controllers' and other Gateways' entries are kept), removes its
 * entry from the policies it no longer reaches, and sends a Warning Event on a policy it reaches
 * that cannot be used. Policies no Gateway of ours reaches are left alone: they may be another
 * implementation's.
 */
import type { Informer } from "../cluster/informer.ts";
import { keyOf, type KubeObject } from "../cluster/resources.ts";
import { BackendTlsPolicies, type BackendTLSPolicy } from "../gateway/backend_tls.ts";
import { GATEWAY_CONTROLLER_NAME } from "../gateway/model_types.ts";
import type { EventRecorder } from "./events.ts";
import type { GatewayStatusWriter } from "./gateway_status.ts";
import type { GroupKey } from "./groups.ts";

/** The largest `ca.crt` kept of a ConfigMap (the proxy refuses larger bundles too). */
const MAX_CA = 1 << 20;

/**
 * What the controller keeps of a ConfigMap for BackendTLSPolicies: its `ca.crt` only (every
 * namespace's `kube-root-ca.crt` has one; other keys are never read).
 */
export function caConfigMapShape(cm: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = cm.metadata;
  const ca = cm.data?.["ca.crt"];
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, uid, resourceVersion },
    data: typeof ca === "string" && ca.length <= MAX_CA ? { "ca.crt": ca } : {},
  };
}

/** The ConfigMaps (`namespace/name`) a policy's CA references name. */
function namedConfigMaps(p: BackendTLSPolicy): string[] {
  return (p.spec?.validation?.caCertificateRefs ?? [])
    .filter((r) => (r.group ?? "") === "" && r.kind === "ConfigMap" && typeof r.name === "string")
    .map((r) => `${p.metadata.namespace}/${r.name}`);
}

export class BackendTlsWatch {
  #version = 0;
  #cache: { version: number; value: BackendTlsPolicies } | null = null;
  /** Per Gateway group: the policies whose status names that Gateway (written by this term's builds). */
  readonly #written = new Map<GroupKey, Set<string>>();

  /** `changed`: a policy or a CA ConfigMap one names changed (the Gateways are looked at again). */
  constructor(readonly policies: Informer, readonly caConfigMaps: Informer, changed: () => void) {
    const bump = () => {
      this.#version++;
      changed();
    };
    policies.on({
      onAdd: bump,
      // our own status writes change only the status: not a change of the policy
      onUpdate: (old, p) => old.metadata.generation === p.metadata.generation ? undefined : bump(),
      onDelete: bump,
    });
    const named = (cm: KubeObject) => {
      const key = keyOf(cm);
      if (this.policies.store.list().some((p) => namedConfigMaps(p as BackendTLSPolicy).includes(key))) bump();
    };
    caConfigMaps.on({ onAdd: named, onUpdate: (_, cm) => named(cm), onDelete: named });
  }

  /** The verdicts on every policy as the caches hold them now (no system CA bundle in the proxy image). */
  current(): BackendTlsPolicies {
    if (this.#cache?.version === this.#version) return this.#cache.value;
    const cms = this.caConfigMaps.store;
    const value = new BackendTlsPolicies(
      this.policies.store.list() as BackendTLSPolicy[],
      (ns, name) => cms.get(`${ns}/${name}`) as { data?: Record<string, unknown> } | undefined,
      false,
    );
    this.#cache = { version: this.#version, value };
    return value;
  }

  /** A Warning Event on each policy `reached` (`namespace/name`) that cannot be used as written. */
  warn(reached: readonly string[], events: EventRecorder): void {
    const verdicts = this.current().verdicts;
    for (const key of reached) {
      const v = verdicts.get(key);
      const policy = this.policies.store.get(key);
      if (!v || !policy || v.accepted.status === "True") continue;
      events.record(policy, "Warning", v.accepted.reason, v.accepted.message);
    }
  }

  /**
   * The policies' ancestor status for the Gateway `gatewayKey` of `group`: those `reached` get
   * this Gateway's entry, those reached before and not now lose it.
   */
  writeStatus(
    group: GroupKey,
    gatewayKey: string,
    reached: readonly string[],
    writer: GatewayStatusWriter,
  ): Promise<void>[] {
    const slash = gatewayKey.indexOf("/");
    const ancestorRef = {
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: gatewayKey.slice(0, slash),
      name: gatewayKey.slice(slash + 1),
    };
    const verdicts = this.current().verdicts;
    const tasks: Promise<void>[] = [];
    const now = new Set<string>();
    for (const key of reached) {
      const policy = this.policies.store.get(key) as BackendTLSPolicy | undefined;
      const v = verdicts.get(key);
      if (!policy || !v) continue;
      now.add(key);
      tasks.push(writer.writePolicy(policy, gatewayKey, {
        ancestorRef,
        controllerName: GATEWAY_CONTROLLER_NAME,
        conditions: [v.accepted, v.resolvedRefs],
      }));
    }
    for (const key of this.#written.get(group) ?? []) {
      const policy = this.policies.store.get(key) as BackendTLSPolicy | undefined;
      if (policy && !now.has(key)) tasks.push(writer.writePolicy(policy, gatewayKey, null));
    }
    this.#written.set(group, now);
    return tasks;
  }

  /** The Gateway of `group` is gone: its entries leave the policies' status. */
  retire(group: GroupKey, gatewayKey: string, writer: GatewayStatusWriter): Promise<void>[] {
    const tasks = [...this.#written.get(group) ?? []].map((key) => {
      const policy = this.policies.store.get(key) as BackendTLSPolicy | undefined;
      return policy ? writer.writePolicy(policy, gatewayKey, null) : Promise.resolve();
    });
    this.#written.delete(group);
    return tasks;
  }
}
