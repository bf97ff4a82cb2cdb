/**
 * @module auth/token
 * Bearer tokens checked by the cluster's TokenReview API, with answers (authenticated or not)
 * cached for `--authentication-token-webhook-cache-ttl` in a bounded LRU keyed by the token's
 * SHA-256, so no raw token is kept. Errors are never cached, and concurrent look-ups of one token
 * share a single review.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { ClusterClient } from "../cluster/client.ts";
import { prom, registry } from "../metrics/registry.ts";
import type { UserInfo } from "./types.ts";

export interface TokenReviewResult {
  readonly authenticated: boolean;
  readonly user?: UserInfo;
  readonly error?: string;
}

/** Sends one TokenReview; rejects when the review itself fails. */
export type TokenReviewer = (token: string) => Promise<TokenReviewResult>;

const reviews = new prom.Counter({
  name: "serving_token_reviews_total",
  help: "TokenReview requests sent to the cluster, by outcome (authenticated, unauthenticated, error).",
  labelNames: ["result"] as const,
  registers: [registry],
});
const cacheHits = new prom.Counter({
  name: "serving_token_cache_hits_total",
  help: "Bearer-token authentications answered from the cache.",
  registers: [registry],
});

/** A TokenReviewer over the cluster API (authentication.k8s.io/v1). */
export function clusterTokenReviewer(client: ClusterClient): TokenReviewer {
  return async (token) => {
    const review = await client.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
    });
    const status = review?.status ?? {};
    if (!status.authenticated) return { authenticated: false, error: status.error };
    const u = status.user ?? {};
    return {
      authenticated: true,
      user: {
        name: String(u.username ?? ""),
        ...(u.uid ? { uid: String(u.uid) } : {}),
        groups: Array.isArray(u.groups) ? u.groups.map(String) : [],
        extra: u.extra && typeof u.extra === "object" ? u.extra : {},
      },
    };
  };
}

export class TokenAuthenticator {
  readonly #review: TokenReviewer;
  readonly #ttlMs: number;
  readonly #cache: LRUCache<string, TokenReviewResult>;
  readonly #pending = new Map<string, Promise<TokenReviewResult>>();
  /** Reviews sent (for tests and the benchmark). */
  reviewsSent = 0;

  /** `clock` measures the TTL (tests pass their own, so expiry needs no waiting). */
  constructor(review: TokenReviewer, ttlMs: number, clock: { now(): number } = performance) {
    this.#review = review;
    this.#ttlMs = ttlMs;
    this.#cache = new LRUCache<string, TokenReviewResult>({ max: 10_000, ttlResolution: 0, perf: clock });
  }

  /** The user, or null when the token is not valid; rejects when the review could not be made. */
  async authenticate(token: string): Promise<UserInfo | null> {
    const key = createHash("sha256").update(token).digest("hex");
    const cached = this.#cache.get(key);
    if (cached) {
      cacheHits.inc();
      return cached.authenticated ? cached.user! : null;
    }
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#lookup(key, token);
      this.#pending.set(key, pending);
    }
    const result = await pending;
    return result.authenticated && result.user ? result.user : null;
  }

  async #lookup(key: string, token: string): Promise<TokenReviewResult> {
    try {
      this.reviewsSent++;
      const result = await this.#review(token);
      reviews.inc({ result: result.authenticated ? "authenticated" : "unauthenticated" });
      if (this.#ttlMs > 0) this.#cache.set(key, result, { ttl: this.#ttlMs });
      return result;
    } catch (err) {
      reviews.inc({ result: "error" });
      throw err;
    } finally {
      this.#pending.delete(key);
    }
  }
}
