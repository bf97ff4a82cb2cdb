/**
 * @module auth/authorizer
 * Authorization by SubjectAccessReview: the request's attributes go to the cluster; allowed and
 * denied answers are cached for their own TTLs (`--authorization-webhook-cache-authorized-ttl`,
 * `…-unauthorized-ttl`) in a bounded LRU; a failed review rejects (the caller answers 500).
 * `system:masters` is allowed without a review, as Kubernetes' privileged-group authorizer does.
 */
import { LRUCache } from "lru-cache";
import type { ClusterClient } from "../cluster/client.ts";
import { prom, registry } from "../metrics/registry.ts";
import type { RequestAttributes } from "./types.ts";

export interface Decision {
  readonly allowed: boolean;
  readonly reason: string;
}

/** Sends one SubjectAccessReview; rejects when the review itself fails. */
export type AccessReviewer = (attrs: RequestAttributes) => Promise<Decision>;

const reviews = new prom.Counter({
  name: "serving_access_reviews_total",
  help: "SubjectAccessReview requests sent to the cluster, by outcome (allowed, denied, error).",
  labelNames: ["result"] as const,
  registers: [registry],
});

/** The SubjectAccessReview spec for a request (authorization.k8s.io/v1). */
export function accessReviewSpec(attrs: RequestAttributes): Record<string, unknown> {
  const u = attrs.user;
  const spec: Record<string, unknown> = {
    user: u.name,
    groups: [...u.groups],
    ...(u.uid ? { uid: u.uid } : {}),
    ...(Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}),
  };
  if (attrs.resource) {
    const r = attrs.resource;
    spec.resourceAttributes = {
      verb: attrs.verb,
      group: r.apiGroup,
      version: r.apiVersion,
      resource: r.resource,
      ...(r.subresource ? { subresource: r.subresource } : {}),
      ...(r.namespace ? { namespace: r.namespace } : {}),
      ...(r.name ? { name: r.name } : {}),
    };
  } else {
    spec.nonResourceAttributes = { path: attrs.path, verb: attrs.verb };
  }
  return spec;
}

/** An AccessReviewer over the cluster API. */
export function clusterAccessReviewer(client: ClusterClient): AccessReviewer {
  return async (attrs) => {
    const review = await client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      body: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: accessReviewSpec(attrs) },
    });
    const status = review?.status ?? {};
    return {
      allowed: status.allowed === true && status.denied !== true,
      reason: String(status.reason ?? status.evaluationError ?? ""),
    };
  };
}

export class WebhookAuthorizer {
  readonly #review: AccessReviewer;
  readonly #allowedTtl: number;
  readonly #deniedTtl: number;
  readonly #cache = new LRUCache<string, Decision>({ max: 10_000, ttlResolution: 0 });
  readonly #pending = new Map<string, Promise<Decision>>();
  /** Reviews sent (for tests and the benchmark). */
  reviewsSent = 0;

  constructor(review: AccessReviewer, allowedTtlMs: number, deniedTtlMs: number) {
    this.#review = review;
    this.#allowedTtl = allowedTtlMs;
    this.#deniedTtl = deniedTtlMs;
  }

  async authorize(attrs: RequestAttributes): Promise<Decision> {
    if (attrs.user.groups.includes("system:masters")) return { allowed: true, reason: "system:masters" };
    const key = JSON.stringify(accessReviewSpec(attrs));
    const cached = this.#cache.get(key);
    if (cached) return cached;
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#lookup(key, attrs);
      this.#pending.set(key, pending);
    }
    return await pending;
  }

  async #lookup(key: string, attrs: RequestAttributes): Promise<Decision> {
    try {
      this.reviewsSent++;
      const decision = await this.#review(attrs);
      reviews.inc({ result: decision.allowed ? "allowed" : "denied" });
      const ttl = decision.allowed ? this.#allowedTtl : this.#deniedTtl;
      if (ttl > 0) this.#cache.set(key, decision, { ttl });
      return decision;
    } catch (err) {
      reviews.inc({ result: "error" });
      throw err;
    } finally {
      this.#pending.delete(key);
    }
  }
}
