/**
 * @module analytics/event
 * The analytics event: what is sent, and nothing else. Every field is listed here and in the
 * README; no field ever carries a name, host, address or object name from the cluster.
 */
import { createHash } from "node:crypto";
import type { FeatureFlags } from "./settings.ts";

/** Bumped when a field changes meaning or is removed. */
export const schemaVersion = 1;

export type EventName = "controller_started" | "heartbeat" | "controller_stopped";

/** Counts over the ingresses this controller handles. */
export interface Counts {
  /** Ingresses this controller handles (class rule and namespace restriction applied). */
  ingresses: number;
  /** Proxies it runs: one proxy (ConfigMap, Deployment, Service) per handled ingress. */
  proxies: number;
  /** Distinct host names listed under `spec.tls[].hosts` of the handled ingresses (the number only). */
  tlsHosts: number;
}

/** What the cluster tells us; a field is null when it could not be read. */
export interface ClusterFacts {
  installationId: string | null;
  kubernetesVersion: string | null;
  counts: Counts | null;
}

export interface AnalyticsEvent {
  schema: typeof schemaVersion;
  event: EventName;
  /** RFC 3339 time the event was built (UTC). */
  time: string;
  release: "A" | "B" | "C";
  version: string;
  installationId: string | null;
  kubernetesVersion: string | null;
  counts: Counts | null;
  features: FeatureFlags;
}

/**
 * Fixed salt so the id cannot be matched against a plain SHA-256 of a namespace UID seen elsewhere
 * (another tool hashing the same UID yields a different value).
 */
export const installationSalt = "ingress-controller/analytics/installation-id/v1";

/** Hex SHA-256 of the `kube-system` Namespace UID plus the salt: stable per cluster, not reversible. */
export function installationId(kubeSystemUid: string): string {
  return createHash("sha256").update(`${installationSalt}\n${kubeSystemUid}`).digest("hex");
}

// A release version like v1.34.4 or v1.30.2-eks-1234abcd; anything else is not sent.
const gitVersionPattern = /^v?\d{1,4}\.\d{1,4}\.\d{1,4}(?:[-+][0-9A-Za-z.+-]{1,48})?$/;

/** The server's gitVersion when it looks like a version, else null (never free text). */
export function sanitizeGitVersion(v: unknown): string | null {
  return typeof v === "string" && gitVersionPattern.test(v) ? v : null;
}

export function buildEvent(
  event: EventName,
  base: { release: "A" | "B" | "C"; version: string; features: FeatureFlags },
  facts: ClusterFacts,
  now: Date = new Date(),
): AnalyticsEvent {
  return {
    schema: schemaVersion,
    event,
    time: now.toISOString(),
    release: base.release,
    version: base.version,
    installationId: facts.installationId,
    kubernetesVersion: facts.kubernetesVersion,
    counts: facts.counts,
    features: { ...base.features },
  };
}
