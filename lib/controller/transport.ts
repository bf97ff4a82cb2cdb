/**
 * @module controller/transport
 * How a proxy gets its rendered configuration: today one ConfigMap per proxy (contracts §4),
 * named like the proxy, which the proxy command watches. Everything the rest of the controller
 * knows about the transport is here (the objects that carry the configuration and the read
 * access a proxy needs to them), so another transport (sharded objects, the secure port)
 * replaces this module only.
 */
import { resources, type ResourceType } from "../cluster/resources.ts";

/** The rendered configuration as published (contracts §4). */
export interface ProxyConfigData {
  "haproxy.cfg": string;
  "crt-list": string;
  "secrets.json": string;
}

/** One object carrying (part of) a configuration: its resource, name and body without metadata. */
export interface TransportObject {
  resource: ResourceType;
  name: string;
  body: Record<string, unknown>;
}

/** The objects that carry the configuration of the proxy `name`. */
export function configObjects(name: string, data: ProxyConfigData): TransportObject[] {
  return [{ resource: resources.configMaps, name, body: { data: { ...data } } }];
}

/** The RBAC rules a proxy needs to read its configuration. */
export function configReadRules(name: string): Record<string, unknown>[] {
  return [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [name], verbs: ["get", "list", "watch"] }];
}
