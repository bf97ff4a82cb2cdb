/**
 * @module controller/ownership
 * Which existing objects the controller may change or delete: only those it created for the
 * proxy group (an ingress's dedicated proxy, or a class's shared proxy). Anything else with the same name (a user's ConfigMap `app-haproxy`, another
 * controller's proxy) is a conflict: it is left untouched, reported, and the ingress is not
 * served through it. Without this rule an Ingress author could make the controller modify or
 * delete objects with the controller's own rights (a confused deputy).
 */
import { apiVersionOf, type KubeObject, resources } from "../cluster/resources.ts";
import { classGroup, gatewayGroup, gatewayOf, type GroupKey, sharedClassOf } from "./groups.ts";
import {
  classOwnerAnnotation,
  controllerLabel,
  controllerLabelValue,
  gatewayOwnerAnnotation,
  ingressAnnotation,
  managedByLabel,
  managedByValue,
} from "./objects.ts";

const ingressApiVersion = apiVersionOf(resources.ingresses);

/**
 * Whether `o` is an object this controller (`controllerId`) made for the ingress `ingressKey`
 * (`namespace/name`): our managed-by and controller labels, our ingress annotation, and a
 * controlling ownerReference to that Ingress. The ownerReference is matched by name, not uid:
 * owner references are namespace-local and two Ingresses cannot share a name at once, so
 * another uid is an earlier Ingress of that name (deleted; with no garbage collector its
 * objects remain) whose objects the controller made and may take over. Forging these marks
 * takes write access to the object itself, which needs no deputy.
 */
export function ownedBy(o: KubeObject, ingressKey: string, controllerId: string): boolean {
  const gateway = gatewayOf(ingressKey);
  if (gateway !== null) return ownedByGateway(o, gateway, controllerId);
  const cls = sharedClassOf(ingressKey);
  if (cls !== null) return ownedByClass(o, cls, controllerId);
  const slash = ingressKey.indexOf("/");
  const [ns, name] = [ingressKey.slice(0, slash), ingressKey.slice(slash + 1)];
  const m = o.metadata;
  return m.namespace === ns &&
    m.labels?.[managedByLabel] === managedByValue &&
    m.labels?.[controllerLabel] === controllerLabelValue(controllerId) &&
    m.annotations?.[ingressAnnotation] === ingressKey &&
    (m.ownerReferences ?? []).some((r) =>
      r.controller === true && r.kind === "Ingress" && r.apiVersion === ingressApiVersion && r.name === name
    );
}

/**
 * Whether `o` is an object this controller made for the shared proxy of the class `className`:
 * our labels, our class annotation, no ingress annotation, and no controlling owner but that
 * IngressClass (none while the class object does not exist). These objects live in the
 * controller's namespace (the Roles and RoleBindings for Secrets also in the Secrets'
 * namespaces), where Ingress authors do not write.
 */
function ownedByClass(o: KubeObject, className: string, controllerId: string): boolean {
  const m = o.metadata;
  return m.labels?.[managedByLabel] === managedByValue &&
    m.labels?.[controllerLabel] === controllerLabelValue(controllerId) &&
    m.annotations?.[classOwnerAnnotation] === className &&
    m.annotations?.[ingressAnnotation] === undefined &&
    m.annotations?.[gatewayOwnerAnnotation] === undefined &&
    (m.ownerReferences ?? []).every((r) =>
      r.controller !== true || (r.kind === "IngressClass" && r.name === className)
    );
}

/**
 * Whether `o` is an object this controller made for the proxy of the Gateway `gatewayKey`
 * (`namespace/name`): our labels and the Gateway's annotation, nothing else's. These objects live in
 * the controller's namespace, or with --gateway-proxies-in-gateway-namespace in the Gateway's
 * (Roles and RoleBindings for certificate Secrets also in theirs).
 */
function ownedByGateway(o: KubeObject, gatewayKey: string, controllerId: string): boolean {
  const m = o.metadata;
  return m.labels?.[managedByLabel] === managedByValue &&
    m.labels?.[controllerLabel] === controllerLabelValue(controllerId) &&
    m.annotations?.[gatewayOwnerAnnotation] === gatewayKey &&
    m.annotations?.[ingressAnnotation] === undefined &&
    m.annotations?.[classOwnerAnnotation] === undefined &&
    (m.ownerReferences ?? []).every((r) => r.controller !== true);
}

/**
 * The Event message for a same-named object that is not ours, made for `group` (an ingress key or
 * a class's shared group) by the controller `controllerId`. `leftOut`: the object is one the
 * shared proxy needs in that namespace only (its Role and RoleBinding for the Secrets there), so
 * only that namespace's ingresses are left out; otherwise the whole group waits.
 */
export function conflictMessage(
  kind: string,
  o: KubeObject,
  group: string,
  controllerId: string,
  leftOut: string | null = null,
): string {
  const where =
    `${kind} ${o.metadata.namespace}/${o.metadata.name} already exists and was not created by this controller`;
  const gateway = gatewayOf(group);
  if (gateway !== null) {
    return `${where} for the proxy of Gateway ${gateway} (it lacks the ${controllerLabel}=` +
      `${
        controllerLabelValue(controllerId)
      } label or the ${gatewayOwnerAnnotation} annotation); it is left untouched ` +
      `and the Gateway is not programmed until it is removed or renamed`;
  }
  const cls = sharedClassOf(group);
  if (cls === null) {
    return `${where} for this ingress (it lacks the ${managedByLabel}=${managedByValue} label or the ownerReference ` +
      `to this Ingress); it is left untouched and the ingress is not served until it is removed or renamed`;
  }
  const proxy = cls === "" ? "the shared proxy of ingresses without a class" : `the shared proxy of class "${cls}"`;
  const outcome = leftOut === null
    ? "the ingresses of that proxy are not served"
    : `the ingresses of namespace ${leftOut} are left out of that proxy`;
  return `${where} for ${proxy} (it lacks the ${controllerLabel}=${controllerLabelValue(controllerId)} label or the ` +
    `${classOwnerAnnotation} annotation: another controller, or another --ingress-class, made it); it is left ` +
    `untouched and ${outcome} until it is removed or renamed`;
}

/** The group an object of this controller's kind was made for (its ingress or class annotation), or null. */
export function ownerGroupOf(o: KubeObject): GroupKey | null {
  if (o.metadata.labels?.[managedByLabel] !== managedByValue) return null;
  const a = o.metadata.annotations ?? {};
  if (a[ingressAnnotation] !== undefined) return a[ingressAnnotation];
  if (a[classOwnerAnnotation] !== undefined) return classGroup(a[classOwnerAnnotation]);
  const gateway = a[gatewayOwnerAnnotation];
  const slash = gateway?.indexOf("/") ?? -1;
  if (slash > 0) return gatewayGroup(gateway!.slice(0, slash), gateway!.slice(slash + 1));
  return null;
}
