/**
 * @module controller/transport
 * How a proxy gets its rendered configuration (docs/config-transport.md): the proxy's ConfigMap
 * (the head, named like the proxy, which the proxy command watches) holds the configuration as
 * contracts §4 describes while it is small; a large one is split into part ConfigMaps
 * `<proxy>-part-<slot>` that the head lists (lib/transport/parts.ts). Everything the rest of the
 * controller knows about the transport is here: the objects that carry the configuration, their
 * write order (parts before the head) and the read access a proxy needs to them.
 */
import { resources, type ResourceType } from "../cluster/resources.ts";
import { PART_DEFLATE_KEY, storedPartText } from "../transport/part_encoding.ts";
import {
  CONFIG_SHA_ANNOTATION,
  configDigest,
  DEFAULT_LIMITS,
  type Part,
  PART_DATA_KEY,
  PART_SHA_ANNOTATION,
  sha256Hex,
  slotOf,
  splitConfig,
  type SplitLimits,
} from "../transport/parts.ts";

/** The rendered configuration as published (contracts §4): file name → content. */
export type ProxyConfigData = Readonly<Record<string, string>>;

/** Label on a part ConfigMap naming the proxy whose configuration it carries. */
export const partOfLabel = "ingress-controller.io/part-of";

/** One object carrying (part of) a configuration: its resource, name and body without metadata. */
export interface TransportObject {
  resource: ResourceType;
  name: string;
  body: Record<string, unknown>;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

/**
 * The objects that carry the configuration of the proxy `name`, in write order: the parts, the
 * head, then the parts whose content the head carries (lib/transport/parts.ts). `previous` maps
 * the part ConfigMaps that exist now to their sha256, so unchanged content keeps its part (and is
 * not written again).
 */
export function configObjects(
  name: string,
  data: ProxyConfigData,
  previous: ReadonlyMap<string, string> = new Map(),
  limits: SplitLimits = DEFAULT_LIMITS,
  namespace = "",
): TransportObject[] {
  const { head, headBinary, parts } = splitConfig(name, data, previous, limits, namespace);
  const part = (p: Part): TransportObject => ({
    resource: resources.configMaps,
    name: p.name,
    body: p.deflated !== null
      ? { binaryData: { [PART_DEFLATE_KEY]: p.deflated } }
      : { data: { [PART_DATA_KEY]: p.content } },
    annotations: { [PART_SHA_ANNOTATION]: p.sha256 },
    labels: { [partOfLabel]: name },
  });
  return [
    ...parts.filter((p) => !p.carried).map(part),
    // The digest the proxy checks before it applies anything (docs/config-transport.md).
    {
      resource: resources.configMaps,
      name,
      body: Object.keys(headBinary).length > 0 ? { data: head, binaryData: headBinary } : { data: head },
      annotations: { [CONFIG_SHA_ANNOTATION]: configDigest(head, headBinary) },
    },
    ...parts.filter((p) => p.carried).map(part),
  ];
}

/** The part ConfigMaps of proxy `name` among `configMaps` (the owned cache), by name → sha256. */
export function existingParts(
  name: string,
  configMaps: readonly { metadata: { name: string; annotations?: Record<string, string> } }[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const cm of configMaps) {
    const sha = cm.metadata.annotations?.[PART_SHA_ANNOTATION];
    if (sha && slotOf(name, cm.metadata.name) !== null) out.set(cm.metadata.name, sha);
  }
  return out;
}

/**
 * The RBAC rules a proxy needs to read its configuration: the head, and the part slots in use
 * rounded up to a power of two, so that the Role rarely changes as a configuration grows.
 */
export function configReadRules(name: string, objects: readonly TransportObject[] = []): Record<string, unknown>[] {
  const slots = objects.map((o) => slotOf(name, o.name)).filter((s): s is number => s !== null);
  const used = slots.length === 0 ? 0 : Math.max(...slots) + 1;
  const granted = used === 0 ? 0 : 2 ** Math.ceil(Math.log2(Math.max(used, 8)));
  const names = [name, ...Array.from({ length: granted }, (_, i) => `${name}-part-${i}`)];
  return [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: [name], verbs: ["get", "list", "watch"] },
    ...(granted > 0
      ? [{ apiGroups: [""], resources: ["configmaps"], resourceNames: names.slice(1), verbs: ["get"] }]
      : []),
  ];
}

/**
 * The digests of a ConfigMap's `data` and `binaryData` as they are in the cluster: of the whole (a
 * head), and of the text of a part (`part` in `data` or `part.deflate` in `binaryData` as its only
 * key). The owned ConfigMaps' cache keeps these instead of the data (lib/controller/cached_shapes.ts).
 */
export interface CarriedDigests {
  config: string;
  part: string | null;
}

export function carriedDigests(
  data: Readonly<Record<string, unknown>> | null | undefined,
  binaryData?: Readonly<Record<string, unknown>> | null,
): CarriedDigests {
  const text = storedPartText(data, binaryData);
  return { config: configDigest(data, binaryData), part: text === null ? null : sha256Hex(text) };
}

/**
 * Whether a ConfigMap whose data has `digests` carries exactly what the desired carrier (with its
 * digest annotation, as configObjects makes it) says: a part its content, a head its whole data.
 */
export function carriesDesired(
  desiredAnnotations: Readonly<Record<string, string>> | undefined,
  digests: CarriedDigests,
): boolean {
  const part = desiredAnnotations?.[PART_SHA_ANNOTATION];
  if (part !== undefined) return digests.part === part;
  return digests.config === desiredAnnotations?.[CONFIG_SHA_ANNOTATION];
}
