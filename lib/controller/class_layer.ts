/**
 * @module controller/class_layer
 * What the Ingress source layers over the global settings for one of its groups
 * (lib/controller/group_settings.ts). A class's shared proxy: the ConfigMap its IngressClass's
 * `spec.parameters` names, for the proxy pod (lib/controller/class_params.ts) and for the proxy
 * settings it shares with the global ConfigMap (lib/controller/global_settings.ts); the class of
 * ingress-nginx's controller is served in compatibility mode unless its parameters say otherwise.
 * A dedicated proxy: its Ingress's own frontend annotations, since its listeners are that
 * Ingress's alone (docs/ssl-passthrough.md). Problems become Warning Events on the IngressClass or
 * the Ingress; a bad value keeps the value below it.
 */
import type { KubeObject } from "../cluster/resources.ts";
import { PREFIX } from "../annotations/table.ts";
import { NGINX_CONTROLLER } from "./class.ts";
import { defaultClassParams, parametersRef, parseClassParams } from "./class_params.ts";
import type { EventRecorder } from "./events.ts";
import { dedicatedFrontendData, type GlobalSettings, parseGlobalSettings } from "./global_settings.ts";
import { type GroupKey, sharedClassOf } from "./groups.ts";
import type { SettingsLayer } from "./route_source.ts";

/** Where the layer of a group is read from. */
export interface ClassLayerSources {
  /** The IngressClass of that name, if it exists (and IngressClasses are watched). */
  ingressClass(name: string): KubeObject | undefined;
  /** The Ingress of that key (a dedicated group's key is its Ingress's). */
  ingress(key: string): KubeObject | undefined;
  /** The classes' parameter ConfigMaps by `namespace/name`; null until they are listed. */
  parameters(): { get(ref: string): KubeObject | undefined } | null;
}

/**
 * The layer of `group` over `global`; null while the parameters its class names are not listed
 * yet (publishing the defaults first would roll the proxy out twice).
 */
export function classLayer(
  group: GroupKey,
  global: GlobalSettings,
  from: ClassLayerSources,
  operatorNamespace: string,
  events: EventRecorder,
): SettingsLayer | null {
  const cls = sharedClassOf(group);
  const ic = cls ? from.ingressClass(cls) : undefined;
  // The class of ingress-nginx's controller: its Ingresses are translated unless its parameters say otherwise.
  const base = ic?.spec?.controller === NGINX_CONTROLLER ? { ...global, nginxCompat: true } : global;
  const layer = (params = defaultClassParams, settings = base, classValues: Record<string, string> = {}) => ({
    params,
    settings,
    classValues,
    owner: ic ?? null,
  });
  if (cls === null) {
    const ing = from.ingress(group);
    const own = dedicatedFrontendData(ing?.metadata?.annotations, base.annotationRiskLimit);
    const parsed = parseGlobalSettings(own.data, base, "class", operatorNamespace);
    for (const p of [...own.problems, ...parsed.problems]) {
      if (ing) events.record(ing, "Warning", "InvalidAnnotation", `annotation ${PREFIX}${p.message}`);
    }
    return layer(defaultClassParams, parsed.settings);
  }
  if (!ic) return layer();
  const { ref, problem } = parametersRef(ic, operatorNamespace);
  if (problem) events.record(ic, "Warning", "InvalidParameters", problem);
  if (!ref) return layer();
  const parameters = from.parameters();
  if (parameters === null) return null;
  const cm = parameters.get(ref);
  if (!cm) {
    events.record(ic, "Warning", "ParametersNotFound", `ConfigMap ${ref} not found; the defaults apply`);
    return layer();
  }
  const { params, problems } = parseClassParams(cm.data);
  const parsed = parseGlobalSettings(cm.data, base, "class", operatorNamespace);
  for (const p of [...problems, ...parsed.problems]) {
    events.record(ic, "Warning", "InvalidParameters", `ConfigMap ${ref}: ${p.message}`);
  }
  return layer(params, parsed.settings, parsed.settings.annotations as Record<string, string>);
}
