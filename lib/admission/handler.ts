/**
 * @module admission/handler
 * The webhook endpoint on the secure port: `POST /apis/admission.ingress-controller.io/v1/ingressvalidators`
 * takes an `admission.k8s.io/v1` AdmissionReview and answers it with the decision of
 * admission/review.ts. A body that is not an AdmissionReview gets 400 with a one-line reason.
 */
import { log } from "../log/logger.ts";
import type { BodyRoute, Reply } from "../serving/routes.ts";
import { admissionReviews } from "./metrics.ts";
import { type AdmissionReview, REVIEW_API_VERSION, reviewIngress, type ReviewOptions } from "./review.ts";

export const WEBHOOK_PATH = "/apis/admission.ingress-controller.io/v1/ingressvalidators";

/** AdmissionReview requests carry the object and the old object (each ≤ ~1.5 MiB in etcd). */
const MAX_BODY = 8 * 1024 * 1024;

function badRequest(message: string): Reply {
  return {
    status: 400,
    contentType: "application/json",
    body: JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "BadRequest",
      code: 400,
      message,
    }),
  };
}

/** The route to mount on the secure port (ServingDeps.bodyRoutes). */
export function admissionRoute(options: ReviewOptions): BodyRoute {
  return {
    path: WEBHOOK_PATH,
    maxBodyBytes: MAX_BODY,
    async handle(body, contentType) {
      if (contentType !== undefined && !/^application\/json\b/i.test(contentType)) {
        return badRequest(`content type ${JSON.stringify(contentType)} is not application/json`);
      }
      let review: AdmissionReview;
      try {
        review = JSON.parse(new TextDecoder().decode(body));
      } catch (err) {
        return badRequest(`body is not JSON (${(err as Error).message})`);
      }
      if (review?.apiVersion !== REVIEW_API_VERSION || review.kind !== "AdmissionReview") {
        return badRequest(`body is not an ${REVIEW_API_VERSION} AdmissionReview`);
      }
      const req = review.request;
      if (!req || typeof req.uid !== "string" || req.uid === "") {
        return badRequest("request.uid is missing");
      }
      const started = performance.now();
      const response = await reviewIngress(req, options);
      const outcome = response.allowed ? "allowed" : "denied";
      admissionReviews.observe({ outcome }, (performance.now() - started) / 1000);
      if (!response.allowed) {
        log.info("admission: ingress denied", {
          ingress: `${req.namespace ?? ""}/${req.name ?? ""}`,
          operation: req.operation,
          reason: response.status?.message,
        });
      }
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify({ apiVersion: REVIEW_API_VERSION, kind: "AdmissionReview", response }),
      };
    },
  };
}
