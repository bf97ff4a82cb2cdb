/**
 * @module controller/group_settings
 * What a group is built and published with: the controller's global ConfigMap
 * (lib/controller/global_settings.ts) with its route source's layer over it (an Ingress group's:
 * its class's parameters, or a dedicated Ingress's own frontend annotations:
 * lib/controller/class_layer.ts), the proxy pod settings, and the default certificate, served only
 * from the proxy's own namespace. Problems become Warning Events on the object that holds the
 * value (the global ConfigMap, the class, the Ingress). The Secrets the settings name are kept per
 * group, so that a change to one of them re-renders the groups that name it.
 */
import type { Informer } from "../cluster/informer.ts";
import type { KubeObject } from "../cluster/resources.ts";
import { log } from "../log/logger.ts";
import type { OwnershipPolicy } from "../render/host_ownership.ts";
import { type ProxyOptions, threadsForCpuLimit } from "../render/proxy_options.ts";
import { type ClusterLookup, tlsSummaryOf } from "../render/mod.ts";
import type { ClassParams } from "./class_params.ts";
import type { EventRecorder } from "./events.ts";
import {
  defaultGlobalSettings,
  GLOBAL_CONFIGMAP,
  type GlobalSettings,
  parseGlobalSettings,
  type SettingsProblem,
} from "./global_settings.ts";
import { type GroupKey, sharedClassOf } from "./groups.ts";
import { proxyOf } from "./objects.ts";
import { anySecretRef, layerSecretNames, ReverseIndex, secretRef } from "./refs.ts";
import type { RouteSource } from "./route_source.ts";
import type { ControllerSettings } from "./settings.ts";

/** What a group is rendered and published with. */
export interface GroupSettings {
  params: ClassParams;
  proxy: ProxyOptions;
  nginxCompat: boolean;
  /** Who may serve which host of the group's proxy (the class's, else the global setting). */
  ownership: OwnershipPolicy;
  global: GlobalSettings;
  /** Our annotation keys set in the class's parameters (the `class` layer). */
  classValues: Readonly<Record<string, string>>;
}

interface ParsedGlobal {
  cm: KubeObject | null;
  settings: GlobalSettings;
  problems: SettingsProblem[];
}

export class GroupSettingsReader {
  #parsed: ParsedGlobal | null = null;
  /**
   * Per group, the Secrets its settings name, as last computed (a change to one re-renders every
   * group): the default certificate (`namespace/name`), and the names the global or a class's
   * settings give Secret-valued annotations (e.g. a global `auth-basic-secret`), which name a Secret
   * in the namespace of each Ingress. Replaced at each computation, so a setting removed stops
   * counting.
   */
  readonly #secrets = new ReverseIndex();

  constructor(
    readonly global: Informer,
    readonly settings: ControllerSettings,
    readonly events: EventRecorder,
    readonly lookup: ClusterLookup,
  ) {}

  /** The global ConfigMap's settings, parsed once per object (no Events: see `of`). */
  globalSettings(): GlobalSettings {
    return this.#parsedGlobal().settings;
  }

  #parsedGlobal(): ParsedGlobal {
    const ns = this.settings.operatorNamespace;
    const cm = this.global.store.get(`${ns}/${GLOBAL_CONFIGMAP}`) ?? null;
    if (this.#parsed?.cm !== cm) {
      this.#parsed = cm
        ? { cm, ...parseGlobalSettings(cm.data, defaultGlobalSettings, "global", ns) }
        : { cm, settings: defaultGlobalSettings, problems: [] };
    }
    return this.#parsed;
  }

  /** Whether the settings of some group name the Secret `namespace/name`. */
  namesSecret(namespace: string, name: string): boolean {
    return this.#secrets.used(secretRef(namespace, name)) || this.#secrets.used(anySecretRef(name));
  }

  /**
   * The settings of `group`: the global ones (their problems: Events on the global ConfigMap) under
   * its source's layer. Null: the layer is not known yet (its source queues the group again).
   */
  of(group: GroupKey, source: RouteSource): GroupSettings | null {
    const global = this.#globalSettings();
    const layer = source.settingsLayer(group, global.settings);
    if (layer === null) return null;
    const { params, settings, classValues, owner } = layer;
    const proxy: ProxyOptions = {
      ...settings.proxy,
      threads: threadsForCpuLimit(params.resources.limits.cpu),
      defaultCertificate: this.#defaultCertificate(
        settings.defaultCertificateRef,
        proxyOf(group, this.settings).namespace,
        sharedClassOf(group) === null
          ? null
          : settings.defaultCertificateRef === global.settings.defaultCertificateRef
          ? global.object
          : owner,
      ),
    };
    const cert = settings.defaultCertificateRef?.split("/");
    this.#secrets.set(group, [
      ...(cert ? [secretRef(cert[0], cert[1])] : []),
      ...[global.settings.annotations, classValues].flatMap(layerSecretNames).map(anySecretRef),
    ]);
    return {
      params,
      proxy,
      nginxCompat: settings.nginxCompat,
      ownership: settings.ownership,
      global: global.settings,
      classValues,
    };
  }

  /** The group is gone: its settings name no Secret any more. */
  forget(group: GroupKey): void {
    this.#secrets.delete(group);
  }

  /** The global ConfigMap's settings; its problems become Warning Events on it. */
  #globalSettings(): { settings: GlobalSettings; object: KubeObject | null } {
    const ns = this.settings.operatorNamespace;
    const { cm, settings, problems } = this.#parsedGlobal();
    if (!cm) return { settings: defaultGlobalSettings, object: null };
    for (const p of problems) {
      this.events.record(cm, "Warning", "InvalidSetting", `ConfigMap ${ns}/${GLOBAL_CONFIGMAP}: ${p.message}`);
    }
    return { settings, object: cm };
  }

  /**
   * The default certificate's file entry, when its Secret is a valid TLS Secret in the proxy's
   * namespace (the platform's default key is never opened to a proxy in another namespace, e.g. a
   * tenant's dedicated one; Ingress TLS Secrets are read where they live); else an Event on `reportTo`
   * (null: a dedicated proxy in another namespace, which simply has no default certificate).
   */
  #defaultCertificate(
    ref: string | null,
    proxyNamespace: string,
    reportTo: KubeObject | null,
  ): ProxyOptions["defaultCertificate"] {
    if (ref === null) return null;
    const [ns, name] = ref.split("/");
    if (ns !== proxyNamespace) {
      if (reportTo) {
        this.events.record(
          reportTo,
          "Warning",
          "InvalidSetting",
          `default-certificate: Secret ${ref} is not in the proxy's namespace ${proxyNamespace}; a default ` +
            `certificate is read only from the proxy's own namespace, so none is served`,
        );
      }
      return null;
    }
    const secret = this.lookup.secret(ns, name);
    if (secret && tlsSummaryOf(secret).valid) return { file: `${ns}_${name}.pem`, namespace: ns, name };
    const message = `default-certificate: Secret ${ref} ${
      secret ? `is unusable: ${tlsSummaryOf(secret).reason}` : "not found"
    }; no default certificate is served`;
    if (reportTo) this.events.record(reportTo, "Warning", "InvalidSetting", message);
    else log.warn("invalid setting", { message });
    return null;
  }
}
