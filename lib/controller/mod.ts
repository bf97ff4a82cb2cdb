/**
 * @module controller
 * The ingress controller: `startController(config)` watches the cluster and publishes, per proxy
 * group (a class's shared proxy, or an ingress's dedicated one), its configuration and proxy objects.
 */
export {
  type ControllerDeps,
  type ControllerHandle,
  type ControllerStats,
  startController,
  type Validator,
} from "./controller.ts";
export { type ConfigLike, type ControllerSettings, defaultSettings, settingsFromConfig } from "./settings.ts";
export { handlesIngress, ingressClassOf } from "./class.ts";
export { proxyName, statsServiceName } from "./objects.ts";
export { dedicatedValue, proxyModeAnnotation, sharedProxyName } from "./groups.ts";
