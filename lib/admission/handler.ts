/**
 * @module admission/handler
 * The webhook endpoint on the secure port: `POST /apis/admission.ingress-controller.io/v1/ingressvalidators`
 * takes an `admission.k8s.io/v1` AdmissionReview and answers it with the decision of
 * admission/review.ts, made in a review worker (admission/queue.ts) so that the secure port's
 * event loop only moves bytes.
 *
 * Bounded everywhere, and answered before the API server gives up:
 * - bodies above 3 MiB (the API server's own request limit) get 413 without being read whole;
 * - reviews are split by size into two queues with their own worker, so a few maximum-size
 *   reviews cannot hold up the ordinary small ones; a full queue answers 429 at once, with
 *   `Retry-After` (the API server's client retries within its timeout);
 * - each review has a deadline: the API server's `?timeout=` (else the registration's
 *   timeoutSeconds) minus a margin; not decided by then, it gets 504.
 * A non-200 answer is a failed webhook call for the API server: with `failurePolicy: Fail`
 * (admission/registration.ts) the Ingress write is refused with this answer's message.
 * A body that is not an AdmissionReview gets 400 with a one-line reason.
 */
import { parseDurationNs } from "../common/gosyntax.ts";
import { log } from "../log/logger.ts";
import { type BodyRequest, type BodyRoute, type Reply, statusReply } from "../parts/secure_port.ts";
import { admissionReviews, queueRefusals } from "./metrics.ts";
import { type QueueOutcome, ReviewQueue, type WorkerInit } from "./queue.ts";
import { REVIEW_API_VERSION, type ReviewPolicy } from "./review.ts";

export const WEBHOOK_PATH = "/apis/admission.ingress-controller.io/v1/ingressvalidators";

/**
 * kube-apiserver's own request-body limit. A review carries the Ingress and, on UPDATE, the old
 * one (each stored within etcd's 1.5 MiB), so only an extreme Ingress makes a larger review; it
 * gets 413, and with failurePolicy Fail its write is refused.
 */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Kept back from the API server's timeout for the answer's way back (its `?timeout=` is rounded up). */
const DEADLINE_MARGIN_MS = 1_500;

export interface QueueLimits {
  /** Bodies of at least this many bytes go to the large queue. */
  readonly largeFrom: number;
  /** Reviews waiting or running per queue before the next one gets 429. */
  readonly smallCapacity: number;
  readonly largeCapacity: number;
}

/**
 * A maximum-size review takes ~0.5 s of CPU plus up to a few seconds of `haproxy -c`, so three fit
 * in the deadline; ordinary reviews (a few KiB) take ~0.1 s, mostly haproxy's start.
 */
export const defaultQueueLimits: QueueLimits = Object.freeze({
  largeFrom: 256 * 1024,
  smallCapacity: 32,
  largeCapacity: 3,
});

export interface AdmissionRouteOptions {
  readonly review: Omit<WorkerInit, "askDefaultClass">;
  /** The cluster's default IngressClass name (asked by the worker when `ingressClass` is set). */
  readonly defaultClass?: () => Promise<string | null>;
  /** The global `annotation-risk-limit` and `nginx-compat` (cached; lib/admission/webhook.ts). */
  readonly policy?: () => ReviewPolicy;
  /** The registration's timeoutSeconds: the deadline when a call carries no `?timeout=`. */
  readonly timeoutSeconds: number;
  readonly limits?: Partial<QueueLimits>;
}

/** The route; `close` stops its workers. */
export interface AdmissionRoute extends BodyRoute {
  close(): void;
}

/** The review's time budget in ms: the API server's `?timeout=` (a Go duration) or `timeoutSeconds`. */
export function budgetMs(query: URLSearchParams, timeoutSeconds: number): number {
  let ms = timeoutSeconds * 1000;
  const asked = query.get("timeout");
  if (asked) {
    try {
      ms = Math.min(ms, Number(parseDurationNs(asked) / 1_000_000n));
    } catch {
      // not a duration: the registration's timeout stands
    }
  }
  return Math.max(ms - DEADLINE_MARGIN_MS, 0);
}

/** 429 with Retry-After: the API server's client retries it within its timeout. */
function busyReply(why: string): Reply {
  queueRefusals.inc({ reason: "busy" });
  const reply = statusReply(429, "TooManyRequests", `ingress-controller webhook busy: ${why}; retry`);
  return { ...reply, headers: { "Retry-After": "1" } };
}

/** The HTTP answer for a queue outcome, observed in the metrics and logged when it denies. */
function answer(outcome: QueueOutcome, seconds: number): Reply {
  if ("busy" in outcome) return busyReply(outcome.busy);
  if ("late" in outcome) {
    queueRefusals.inc({ reason: "late" });
    return statusReply(504, "Timeout", `ingress-controller webhook: ${outcome.late}; retry`);
  }
  if ("failed" in outcome) {
    log.error("admission: review failed", { error: outcome.failed });
    return statusReply(500, "InternalError", `ingress-controller webhook: review failed: ${outcome.failed}`);
  }
  const r = outcome.result;
  if ("invalid" in r) return statusReply(400, "BadRequest", r.invalid);
  admissionReviews.observe({ outcome: r.response.allowed ? "allowed" : "denied" }, seconds);
  if (!r.response.allowed) {
    log.info("admission: ingress denied", {
      ingress: r.ingress,
      operation: r.operation,
      reason: r.response.status?.message,
    });
  }
  return {
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({ apiVersion: REVIEW_API_VERSION, kind: "AdmissionReview", response: r.response }),
  };
}

/** The route to mount on the secure port; starts its two review workers. */
export async function admissionRoute(o: AdmissionRouteOptions): Promise<AdmissionRoute> {
  const limits = { ...defaultQueueLimits, ...o.limits };
  const init: WorkerInit = { ...o.review, askDefaultClass: o.defaultClass !== undefined };
  const queue = (name: string, capacity: number, concurrency: number) =>
    ReviewQueue.start({ name, init, capacity, concurrency, defaultClass: o.defaultClass, policy: o.policy });
  const started = await Promise.allSettled([
    queue("small", limits.smallCapacity, 2),
    queue("large", limits.largeCapacity, 1),
  ]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    for (const r of started) if (r.status === "fulfilled") r.value.close();
    throw failed.reason;
  }
  const [small, large] = started.map((r) => (r as PromiseFulfilledResult<ReviewQueue>).value);
  const queueFor = (bytes: number) => bytes >= limits.largeFrom ? large : small;
  return {
    path: WEBHOOK_PATH,
    maxBodyBytes: MAX_BODY_BYTES,
    refuseEarly(contentLength) {
      // A full queue refuses before the body is read (the API server always sends Content-Length).
      const busy = queueFor(contentLength).busy;
      return busy === null ? null : busyReply(busy);
    },
    async handle(body: Uint8Array<ArrayBuffer>, request: BodyRequest) {
      const ct = request.contentType;
      if (ct !== undefined && !/^application\/json\b/i.test(ct)) {
        return statusReply(400, "BadRequest", `content type ${JSON.stringify(ct)} is not application/json`);
      }
      const started = performance.now();
      const deadline = Date.now() + budgetMs(request.query, o.timeoutSeconds);
      const outcome = await queueFor(body.length).submit(body, deadline);
      return answer(outcome, (performance.now() - started) / 1000);
    },
    close() {
      small.close();
      large.close();
    },
  };
}
