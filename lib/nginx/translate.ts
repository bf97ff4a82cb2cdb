/**
 * @module nginx/translate
 * The migration report of one Ingress: per `nginx.ingress.kubernetes.io/*` annotation, its verdict
 * and note from the translation table (nginx/table.ts), downgraded to `unsupported` while a key of
 * ours it becomes is only validated, not rendered yet (annotations/table.ts `status`), or while the
 * compatibility mode cannot write its value as ours (nginx/convert.ts). Other annotations are not
 * reported. `translateIngress` is the compatibility mode itself: the report and our annotations.
 */
import { riskDisabled, showValue } from "../annotations/resolve.ts";
import { annotationName, PREFIX, type Risk, specOf } from "../annotations/table.ts";
import { type IngressContext, NGINX_PREFIX, NGINX_RULES, type Verdict, withWhy } from "./table.ts";
import { compatDefaults, convertedAnnotations, CONVERTERS } from "./convert.ts";

export interface ReportRow {
  readonly namespace: string;
  readonly ingress: string;
  readonly annotation: string;
  readonly verdict: Verdict;
  readonly note: string;
}

/** The part of an Ingress the report reads. */
export interface IngressLike {
  readonly metadata?: {
    readonly namespace?: string;
    readonly name?: string;
    readonly annotations?: Readonly<Record<string, string>> | null;
  };
}

/** What happens to a fail-closed key (nginx/table.ts `failClosed`) that cannot be applied. */
const FAILS_CLOSED = "the Ingress's paths answer 500 instead of passing unauthenticated";

/** The verdict and note of one annotation (`key` without the prefix). */
export function translateAnnotation(key: string, raw: string, ctx: IngressContext): { verdict: Verdict; note: string } {
  const rule = NGINX_RULES[key];
  if (!rule) return { verdict: "unsupported", note: "not translated: this annotation is ignored" };
  const out = rule.check?.(raw, ctx) ?? {};
  const closed = rule.failClosed ? `; ${FAILS_CLOSED}` : "";
  if (out.bad !== undefined) {
    return {
      verdict: "refused",
      note: `invalid value ${showValue(raw)}: it ${out.bad}; ${
        rule.failClosed ? FAILS_CLOSED : "the annotation is ignored"
      }`,
    };
  }
  const verdict = out.verdict ?? rule.verdict;
  // a check's own note carries its own reason (or none); the rule's reason goes with the rule's note
  const why = out.note !== undefined ? out.why : rule.why;
  const note = verdict === "supported" ? out.note ?? rule.note : withWhy(out.note ?? rule.note, why);
  const to = out.to ?? rule.to;
  if (verdict !== "supported" && verdict !== "translated") return { verdict, note: note + closed };
  const pending = to.filter((k) => specOf(k)?.status !== "served");
  if (pending.length === 0) {
    if (CONVERTERS[key]) return { verdict, note };
    return {
      verdict: "unsupported",
      note: `the compatibility mode does not apply this annotation yet; once it does: ${verdict}` +
        (note ? ` (${note})` : ""),
    };
  }
  const keys = pending.map((k) => PREFIX + k).join(", ");
  return {
    verdict: "unsupported",
    note: `becomes ${keys}, ${pending.length > 1 ? "which are" : "which is"} validated but not rendered yet; ` +
      `once rendered: ${verdict}` +
      (note ? ` (${note})` : ""),
  };
}

/** One row per `nginx.ingress.kubernetes.io/*` annotation of the Ingress, sorted by annotation. */
export function checkIngress(ingress: IngressLike): ReportRow[] {
  const namespace = ingress.metadata?.namespace ?? "";
  const name = ingress.metadata?.name ?? "";
  const annotations = ingress.metadata?.annotations ?? {};
  const ctx: IngressContext = { namespace, annotations };
  const rows: ReportRow[] = [];
  for (const annotation of Object.keys(annotations).sort()) {
    if (!annotation.startsWith(NGINX_PREFIX)) continue;
    const raw = annotations[annotation];
    const { verdict, note } = typeof raw === "string"
      ? translateAnnotation(annotation.slice(NGINX_PREFIX.length), raw, ctx)
      : { verdict: "refused" as const, note: "the value is not a string" };
    rows.push({ namespace, ingress: name, annotation, verdict, note });
  }
  return rows;
}

/**
 * The migration report of one Ingress and the annotations of ours its `supported` and `translated`
 * nginx annotations become (full names; the Ingress's own keys win). The compatibility mode adds
 * ingress-nginx's defaults to them: `compatIngress`.
 */
export function translateIngress(ingress: IngressLike): { rows: ReportRow[]; annotations: Record<string, string> } {
  const rows = checkIngress(ingress);
  const ctx: IngressContext = {
    namespace: ingress.metadata?.namespace ?? "",
    annotations: ingress.metadata?.annotations ?? {},
  };
  const applied = rows
    .filter((r) => r.verdict === "supported" || r.verdict === "translated")
    .map((r) => r.annotation.slice(NGINX_PREFIX.length));
  // Fail-closed keys not applied (nginx/table.ts `failClosed`) are written as they are: our parser refuses them.
  const closed = rows
    .map((r) => r.annotation.slice(NGINX_PREFIX.length))
    .filter((k) => NGINX_RULES[k]?.failClosed && !applied.includes(k));
  return { rows, annotations: convertedAnnotations([...applied, ...closed], ctx, closed) };
}

/**
 * The compatibility mode for one Ingress: `translateIngress`, and ingress-nginx's defaults where they
 * differ from ours (nginx/convert.ts `COMPAT_DEFAULTS`), for every Ingress the mode serves, whether
 * it has nginx annotations or not (the Ingress's own keys and the translated ones win).
 */
export function compatIngress(ingress: IngressLike): { rows: ReportRow[]; annotations: Record<string, string> } {
  const { rows, annotations } = translateIngress(ingress);
  const ctx: IngressContext = {
    namespace: ingress.metadata?.namespace ?? "",
    annotations: ingress.metadata?.annotations ?? {},
  };
  return { rows, annotations: { ...annotations, ...compatDefaults(ctx, annotations) } };
}

/**
 * One line per `nginx.ingress.kubernetes.io/*` annotation of `ingress` that compatibility mode
 * would apply as a key of ours the risk limit turns off: the webhook refuses it as it refuses our
 * key written directly, so a translation is no way around `annotation-risk-limit`.
 */
export function translatedRiskProblems(ingress: IngressLike, riskLimit: Risk | null): string[] {
  if (riskLimit === null) return [];
  const annotations = ingress.metadata?.annotations ?? {};
  const ctx: IngressContext = { namespace: ingress.metadata?.namespace ?? "", annotations };
  const out: string[] = [];
  for (const row of checkIngress(ingress)) {
    if (row.verdict !== "supported" && row.verdict !== "translated") continue;
    const key = row.annotation.slice(NGINX_PREFIX.length);
    const disabled = Object.keys(convertedAnnotations([key], ctx))
      .map((name) => specOf(name.slice(PREFIX.length))!)
      .filter((spec) => riskDisabled(spec.risk, riskLimit));
    for (const spec of disabled) {
      out.push(
        `annotation ${row.annotation} is disabled: it becomes ${annotationName(spec)}, whose risk is ${spec.risk}, ` +
          `and annotations of risk ${riskLimit} and above are turned off in this controller's settings`,
      );
    }
  }
  return out;
}
