/**
 * @module admission/review
 * The decision of the validating webhook for one `admission.k8s.io/v1` AdmissionReview of a
 * `networking.k8s.io/v1` Ingress (CREATE/UPDATE): the renderer's own checks (render/model.ts
 * `buildModel`) run on the Ingress alone, and the problems that mean "the controller could not
 * serve this as written" deny it, and so does every problem the annotation table finds in its
 * `ingress-controller.io/` annotations (annotations/resolve.ts: also keys not rendered yet); then, unless bypassed, the "xray" renders the configuration the
 * Ingress produces and runs `haproxy -c` on it (render/validate.ts).
 *
 * The Ingress is judged on its own: referenced Services and Secrets are assumed to exist (they may
 * well be created after the Ingress; the controller reports them as Events when they are missing),
 * and conflicts with other ingresses are not checked (the oldest ingress wins at render time).
 * Conflicts inside the Ingress itself are returned as warnings, not denials.
 *
 * What cannot be checked is refused, never let through with a warning: an xray that does not
 * finish before the review's deadline (an Ingress too large to check in time, or a controller too
 * busy) and an xray that cannot run at all (no haproxy binary) deny the Ingress with a message
 * saying so. `reviewBody` is the whole decision from the request body; it runs in the review
 * worker (admission/review_worker.ts), off the secure port's event loop.
 */
import type { V1Ingress } from "@kubernetes/client-node";
import type { KubeObject } from "../cluster/resources.ts";
import { handlesIngress } from "../controller/class.ts";
import { validateAnnotations } from "../annotations/resolve.ts";
import type { Risk } from "../annotations/table.ts";
import { translatedRiskProblems } from "../nginx/translate.ts";
import {
  buildModel,
  type ClusterLookup,
  type Problem,
  render,
  type SecretLike,
  type Templates,
  validateConfig,
} from "../render/mod.ts";

/** The part of an AdmissionReview request the webhook reads. */
export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; version?: string; kind?: string };
  resource?: { group?: string; version?: string; resource?: string };
  operation?: string;
  namespace?: string;
  name?: string;
  object?: unknown;
  dryRun?: boolean;
}

export interface AdmissionReview {
  apiVersion: string;
  kind: string;
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason?: string; message: string };
  warnings?: string[];
}

export const REVIEW_API_VERSION = "admission.k8s.io/v1";

/** What the review needs; plain data so tests build it directly. */
export interface ReviewOptions {
  /** `--ingress-class`: null handles every ingress (like the controller). */
  ingressClass: string | null;
  /** The cluster's default IngressClass name; asked only when `ingressClass` is set and the ingress names none. */
  defaultClass?: () => Promise<string | null>;
  /** Annotations of this risk and above are refused (the global ConfigMap's `annotation-risk-limit`). */
  riskLimit?: Risk | null;
  /**
   * The global `nginx-compat` setting: `nginx.ingress.kubernetes.io/*` annotations become ours, and
   * the keys they become are judged by the risk limit like ours.
   */
  nginxCompat?: boolean;
  /** With `--restrict-to-operator-namespace`: ingresses of other namespaces are not ours (allowed). */
  restrictToNamespace: string | null;
  /**
   * The xray (`haproxy -c` of the rendered configuration); null with `--bypass-validating-webhook-xray`.
   * `timeoutMs` caps the check (render/validate.ts's CHECK_TIME_LIMIT_MS, as the controller's);
   * the review's deadline may cut it shorter.
   */
  xray: { templates: Templates; haproxy: string; timeoutMs: number } | null;
}

/** The global settings a review follows (the main thread reads them: lib/admission/webhook.ts). */
export interface ReviewPolicy {
  readonly riskLimit: Risk | null;
  readonly nginxCompat: boolean;
}

/** The outcome of one request body: a decision, or why the body is not an AdmissionReview (400). */
export type ReviewResult =
  | { readonly invalid: string }
  | { readonly response: AdmissionResponse; readonly ingress: string; readonly operation?: string };

/** Problems that depend on other objects (not judged here: see the module header) or are notes. */
const NOT_JUDGED = new Set([
  "ServiceNotFound",
  "PortNotFound",
  "UnsupportedService",
  "SecretNotFound",
  "InvalidSecret",
  "InvalidEndpoints",
  "DefaultBackendConflict",
]);
/** Problems inside the Ingress that the controller resolves deterministically: warnings. */
const WARN = new Set(["RouteConflict", "TLSHostConflict"]);

/**
 * Every referenced Secret exists as a usable kubernetes.io/tls Secret: only its verdict is read
 * (the xray uses throwaway certificates anyway).
 */
const assumeSecretsExist: ClusterLookup = {
  service: () => undefined,
  endpointSlices: () => [],
  secret: (namespace, name): SecretLike => ({
    metadata: { namespace, name },
    type: "kubernetes.io/tls",
    tlsSummary: { valid: true, sha256: "", ca: false, caReason: "there is no ca.crt", htpasswd: null },
  }),
};

/** A problem message as a denial reason: the "what the controller does instead" tail is dropped. */
function reasonOf(p: Problem): string {
  return p.message.replace(/;\s*(?:[\w ]+ignored|using \w+)$/, "");
}

function allow(uid: string, warnings: string[] = []): AdmissionResponse {
  return warnings.length > 0 ? { uid, allowed: true, warnings } : { uid, allowed: true };
}

const REASONS: Record<number, string> = { 400: "BadRequest", 422: "Invalid", 503: "ServiceUnavailable" };

/**
 * 422 Invalid (what the API server answers for a field error); 400 for a request that is not an
 * Ingress; 503 when the Ingress could not be checked (the user may retry).
 */
function deny(uid: string, message: string, code: 400 | 422 | 503 = 422): AdmissionResponse {
  return { uid, allowed: false, status: { code, reason: REASONS[code], message } };
}

/** One line, bounded: the API server shows it to the user as is. */
function denialMessage(parts: string[], max = 1000): string {
  const s = parts.join("; ").replace(/[\r\n\t]+/g, " ");
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/**
 * Decides one AdmissionReview request. Anything that is not an Ingress CREATE/UPDATE is allowed.
 * `deadline` (epoch ms) bounds the xray.
 */
export async function reviewIngress(
  req: AdmissionRequest,
  o: ReviewOptions,
  deadline = Infinity,
): Promise<AdmissionResponse> {
  const uid = req.uid;
  const isIngress = req.kind?.group === "networking.k8s.io" && req.kind?.kind === "Ingress";
  if (!isIngress || (req.operation !== "CREATE" && req.operation !== "UPDATE")) return allow(uid);
  const obj = req.object as V1Ingress | undefined;
  if (!obj || typeof obj !== "object") return deny(uid, "request.object: the Ingress is missing", 400);

  // The name may still be empty on CREATE with generateName; the namespace comes with the request.
  const metadata = { ...(obj.metadata ?? {}) };
  metadata.namespace ||= req.namespace;
  if (!metadata.name && metadata.generateName) metadata.name = `${metadata.generateName.replace(/-*$/, "")}-x`;
  const ingress: V1Ingress = { ...obj, metadata };

  if (o.restrictToNamespace && metadata.namespace !== o.restrictToNamespace) return allow(uid);
  if (o.ingressClass) {
    const named = ingress.metadata?.annotations?.["kubernetes.io/ingress.class"] || ingress.spec?.ingressClassName;
    const defaultClass = named ? null : await (o.defaultClass?.() ?? Promise.resolve(null));
    if (!handlesIngress(ingress as unknown as KubeObject, o.ingressClass, defaultClass)) return allow(uid);
  }

  const built = buildModel({ ingresses: [ingress], lookup: assumeSecretsExist });
  let denied = built.problems.filter((p) => !NOT_JUDGED.has(p.reason) && !WARN.has(p.reason));
  // "nothing to serve" only follows from the field errors already named.
  if (denied.some((p) => p.reason !== "NothingToServe")) denied = denied.filter((p) => p.reason !== "NothingToServe");
  const warnings = built.problems.filter((p) => WARN.has(p.reason)).map((p) => denialMessage([p.message], 300));
  // The model reports the keys it reads with the same message: each is named once.
  const reasons = [
    ...new Set([
      ...denied.map(reasonOf),
      ...validateAnnotations(ingress.metadata?.annotations, { disableRiskAtOrAbove: o.riskLimit ?? null })
        .map((p) => p.message),
      ...(o.nginxCompat ? translatedRiskProblems(ingress, o.riskLimit ?? null) : []),
    ]),
  ];
  // Field errors first, then one line per annotation in key order (whichever check found it).
  const keyOf = (r: string) => /^annotation "?([^\s":]+)/.exec(r)?.[1] ?? null;
  reasons.sort((a, b) => {
    const [ka, kb] = [keyOf(a), keyOf(b)];
    if (ka === null || kb === null) return (ka === null ? 0 : 1) - (kb === null ? 0 : 1);
    return ka.localeCompare(kb);
  });
  if (reasons.length > 0) return deny(uid, denialMessage(reasons));
  if (!o.xray) return allow(uid, warnings);

  const rendered = render(built.model, o.xray.templates);
  const x = o.xray;
  const timeoutMs = Math.min(x.timeoutMs, deadline - Date.now());
  const tooLate = `the xray (haproxy -c) could not finish before the webhook's deadline; an Ingress that cannot ` +
    `be checked in time is refused: retry, or split it into smaller Ingresses`;
  if (timeoutMs <= 0) return deny(uid, tooLate, 503);
  // every review runs haproxy itself: its deadline and its answer do not depend on earlier reviews
  const check = await validateConfig(rendered, { haproxy: x.haproxy, timeoutMs, reuse: false });
  if (check.ok) return allow(uid, warnings);
  // The check itself could not run: not proven wrong, but not checked either, so refused.
  if (check.timedOut) {
    const why = timeoutMs < x.timeoutMs ? tooLate : `that is the time limit of every haproxy -c (the controller's ` +
      `too, which would leave this Ingress out); an Ingress whose configuration cannot be checked in time is ` +
      `refused: split it into smaller Ingresses, or look for a value that makes the check costly`;
    return deny(uid, denialMessage([`${check.errors[0]}: ${why}`]), 503);
  }
  if (check.errors.length === 1 && /^haproxy binary .* not found/.test(check.errors[0])) {
    return deny(
      uid,
      denialMessage([
        `the xray cannot run: ${check.errors[0]} (install it or start with --bypass-validating-webhook-xray)`,
      ]),
      503,
    );
  }
  const alerts = check.errors.map((e) => e.replace(/^\[ALERT\]\s*\(\d+\)\s*:\s*/, "")).filter((e) =>
    !/Error\(s\) found in configuration file|Fatal errors found in configuration/.test(e)
  );
  return deny(
    uid,
    denialMessage([`haproxy refuses the configuration this Ingress produces: ${alerts.slice(0, 3).join(" / ")}`]),
  );
}

/** The request body as an AdmissionReview, decided; a body that is not one gets `invalid`. */
export async function reviewBody(body: Uint8Array, o: ReviewOptions, deadline = Infinity): Promise<ReviewResult> {
  let review: AdmissionReview;
  try {
    review = JSON.parse(new TextDecoder().decode(body));
  } catch (err) {
    return { invalid: `body is not JSON (${(err as Error).message})` };
  }
  if (review?.apiVersion !== REVIEW_API_VERSION || review.kind !== "AdmissionReview") {
    return { invalid: `body is not an ${REVIEW_API_VERSION} AdmissionReview` };
  }
  const req = review.request;
  if (!req || typeof req.uid !== "string" || req.uid === "") return { invalid: "request.uid is missing" };
  const response = await reviewIngress(req, o, deadline);
  return { response, ingress: `${req.namespace ?? ""}/${req.name ?? ""}`, operation: req.operation };
}
