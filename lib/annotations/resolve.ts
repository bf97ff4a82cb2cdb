/**
 * @module annotations/resolve
 * Reading the table's keys: one annotation (with its legacy aliases), the validation of all the
 * annotations of an object (the webhook refuses what it reports; the controller turns it into
 * Warning Events), and the precedence of the layers a setting can come from:
 * global ConfigMap < per-class ConfigMap (IngressClass parameters) < Ingress annotation < Service
 * annotation (backend-scoped keys only). A global setting can disable every key at or above a risk
 * level in annotations (ConfigMaps are the administrators' and are never disabled).
 */
import { annotationName, type AnnotationSpec, PREFIX, type Risk, RISKS, specOf, specOfAnnotation } from "./table.ts";
import type { Parsed } from "./values.ts";

/** Where a value came from, lowest precedence first. */
export const LAYERS = ["global", "class", "ingress", "service"] as const;
export type Layer = typeof LAYERS[number];

/** JSON for messages with non-ASCII escaped too: a hostile value stays on one line, visibly quoted. */
export function showValue(v: unknown): string {
  const s = (JSON.stringify(v) ?? String(v)).replace(/[^\x20-\x7e]/g, escapeChar);
  return s.length > 80 ? `${s.slice(0, 77)}..."` : s;
}

/** The one-line message of a refused value: `annotation KEY: "raw" <reason>`. */
export function valueMessage(name: string, raw: string, reason: string): string {
  // a reason may quote part of the value: keep it on one line (U+2028 survives JSON.stringify)
  // deno-lint-ignore no-control-regex -- control characters are what this escapes
  return `annotation ${name}: ${showValue(raw)} ${reason.replace(/[\0-\x1f\x7f-\x9f\u2028\u2029]/g, escapeChar)}`;
}

function escapeChar(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

export interface Read<T = unknown> {
  /** The annotation the value was read from (ours, or a legacy alias when ours is absent). */
  readonly name: string;
  readonly raw: string;
  readonly parsed: Parsed<T>;
}

/** The value of `key` in `annotations` (our name first, then its aliases), parsed; undefined when absent. */
export function readAnnotation<T = unknown>(
  annotations: Readonly<Record<string, string>> | undefined,
  key: string,
): Read<T> | undefined {
  const spec = specOf(key);
  if (!spec) throw new Error(`bug: no annotation ${key} in the table`);
  for (const name of [annotationName(spec), ...(spec.aliases ?? [])]) {
    const raw = annotations?.[name];
    if (raw !== undefined) return { name, raw, parsed: spec.value.parse(raw) as Parsed<T> };
  }
  return undefined;
}

export interface AnnotationProblem {
  /** The full annotation name. */
  readonly annotation: string;
  /** One line, naming the annotation. */
  readonly message: string;
}

export interface ValidateOptions {
  /** Keys at or above this risk are disabled in annotations (a global setting); null: none. */
  readonly disableRiskAtOrAbove?: Risk | null;
  /** The object is a Service (only backend-scoped keys apply there). */
  readonly onService?: boolean;
}

/** Whether a risk level is disabled by the `disableRiskAtOrAbove` setting. */
export function riskDisabled(risk: Risk, disableAtOrAbove: Risk | null | undefined): boolean {
  return disableAtOrAbove != null && RISKS.indexOf(risk) >= RISKS.indexOf(disableAtOrAbove);
}

/**
 * The layers a key may be set in. Global keys only in the controller's ConfigMap; frontend keys
 * also per class, and on an Ingress only when it has a proxy of its own (`proxy: dedicated`);
 * backend keys also on the Service; keys that say what an Ingress is (`proxy`, `canary*`) only on
 * the Ingress.
 */
export function layersOf(spec: AnnotationSpec, dedicated: boolean): readonly Layer[] {
  if (spec.ingressOnly) return ["ingress"];
  switch (spec.scope) {
    case "global":
      return ["global"];
    case "frontend":
      return dedicated ? ["global", "class", "ingress"] : ["global", "class"];
    case "backend":
      return LAYERS;
    default:
      return ["global", "class", "ingress"];
  }
}

/** Whether an Ingress has a proxy of its own: `proxy: dedicated`, unless the risk limit turns `proxy` off. */
export function isDedicated(
  annotations: Readonly<Record<string, string>>,
  disableRiskAtOrAbove: Risk | null | undefined,
): boolean {
  return annotations[PREFIX + "proxy"] === "dedicated" && !riskDisabled(specOf("proxy")!.risk, disableRiskAtOrAbove);
}

/**
 * Every problem with the table's keys in an object's annotations: a value its parser refuses, an
 * unknown `ingress-controller.io/` key, a key disabled by risk, a key that cannot be set on this
 * kind of object. Other annotations are not ours and are ignored. Sorted by annotation.
 */
export function validateAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  o: ValidateOptions = {},
): AnnotationProblem[] {
  const out: AnnotationProblem[] = [];
  const all = annotations ?? {};
  const layer: Layer = o.onService ? "service" : "ingress";
  for (const name of Object.keys(all).sort()) {
    const spec = specOfAnnotation(name);
    if (!spec) {
      if (name.startsWith(PREFIX)) {
        out.push({
          annotation: name,
          message: `annotation ${showValue(name)} is not an annotation of this controller (see the README's reference)`,
        });
      }
      continue;
    }
    const raw = all[name];
    const parsed = spec.value.parse(raw);
    if (!parsed.ok) {
      out.push({ annotation: name, message: valueMessage(name, raw, parsed.reason) });
    } else if (!layersOf(spec, isDedicated(all, o.disableRiskAtOrAbove)).includes(layer)) {
      out.push({ annotation: name, message: `annotation ${name} cannot be set on ${wherePlaced(spec, layer)}` });
    } else if (riskDisabled(spec.risk, o.disableRiskAtOrAbove)) {
      out.push({
        annotation: name,
        message: `annotation ${name} is disabled: its risk is ${spec.risk} and annotations of risk ` +
          `${o.disableRiskAtOrAbove} and above are turned off in this controller's settings`,
      });
    }
  }
  return out;
}

function wherePlaced(spec: AnnotationSpec, layer: Layer): string {
  if (layer === "service") return `a Service (it is a ${spec.scope} setting; set it on the Ingress)`;
  if (spec.ingressOnly) return `the ${layer} ConfigMap: only an Ingress sets it`;
  if (spec.scope === "global") return "an Ingress: it is a global setting of the controller's ConfigMap";
  return "an Ingress sharing its class's proxy: it is a frontend setting; set it in the IngressClass's ConfigMap, " +
    `or give the Ingress its own proxy (${PREFIX}proxy: dedicated)`;
}

/** The values a setting may come from: ConfigMaps use the bare key, objects the full annotation name. */
export interface LayerValues {
  readonly global?: Readonly<Record<string, string>>;
  readonly class?: Readonly<Record<string, string>>;
  readonly ingress?: Readonly<Record<string, string>>;
  readonly service?: Readonly<Record<string, string>>;
}

export interface Resolved<T = unknown> {
  readonly value: T | null;
  /** Where the value came from; `default` when no layer set a valid one. */
  readonly source: Layer | "default";
  /** Values that were set but not used (invalid, not allowed in that layer, disabled by risk). */
  readonly problems: AnnotationProblem[];
}

/**
 * The effective value of `key`: the highest-precedence layer that sets a valid, allowed value wins;
 * an invalid or disallowed value in a layer is reported and that layer is skipped (the lower ones
 * still apply), so one bad value never breaks more than itself.
 */
export function resolveSetting<T = unknown>(
  key: string,
  layers: LayerValues,
  o: { disableRiskAtOrAbove?: Risk | null } = {},
): Resolved<T> {
  const spec = specOf(key);
  if (!spec) throw new Error(`bug: no annotation ${key} in the table`);
  const allowed = layersOf(spec, isDedicated(layers.ingress ?? {}, o.disableRiskAtOrAbove));
  const problems: AnnotationProblem[] = [];
  for (const layer of [...LAYERS].reverse()) {
    const values = layers[layer];
    if (!values) continue;
    const fromObject = layer === "ingress" || layer === "service";
    const read = fromObject
      ? readAnnotation<T>(values, key)
      : values[key] === undefined
      ? undefined
      : { name: key, raw: values[key], parsed: spec.value.parse(values[key]) as Parsed<T> };
    if (!read) continue;
    const where = fromObject ? read.name : `${layer} ConfigMap key ${key}`;
    if (!read.parsed.ok) {
      problems.push({ annotation: read.name, message: valueMessage(where, read.raw, read.parsed.reason) });
    } else if (!allowed.includes(layer)) {
      problems.push({
        annotation: read.name,
        message: `annotation ${read.name} cannot be set on ${wherePlaced(spec, layer)}`,
      });
    } else if (fromObject && riskDisabled(spec.risk, o.disableRiskAtOrAbove)) {
      problems.push({ annotation: read.name, message: `annotation ${read.name} is disabled (risk ${spec.risk})` });
    } else return { value: read.parsed.value, source: layer, problems };
  }
  if (spec.default === null) return { value: null, source: "default", problems };
  const d = spec.value.parse(spec.default);
  if (!d.ok) throw new Error(`bug: default of ${key} does not parse: ${d.reason}`);
  return { value: d.value as T, source: "default", problems };
}
