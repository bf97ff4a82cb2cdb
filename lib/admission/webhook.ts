/**
 * @module admission/webhook
 * The validating webhook as one object: the route the secure port mounts (with its review
 * workers), and the registration with the cluster once the secure port serves (retried with backoff while it fails, e.g. while
 * the operator's RBAC is not there yet; a failure is logged, never fatal: the controller still
 * refuses invalid ingresses at render time).
 */
import { X509Certificate } from "node:crypto";
import { type ClusterClient, isStatus } from "../cluster/client.ts";
import { Backoff } from "../cluster/backoff.ts";
import { defaultIngressClass } from "../controller/class.ts";
import { type KubeObject, objectPath, resources } from "../cluster/resources.ts";
import type { ReviewPolicy } from "./review.ts";
import { defaultGlobalSettings, GLOBAL_CONFIGMAP, parseGlobalSettings } from "../controller/global_settings.ts";
import { log } from "../log/logger.ts";
import { pause } from "../runtime/timers.ts";
import { CHECK_TIME_LIMIT_MS } from "../render/validate.ts";
import { type AdmissionRoute, admissionRoute, type QueueLimits } from "./handler.ts";
import { registrations } from "./metrics.ts";
import {
  applyWebhookConfiguration,
  caBundleOf,
  CONFIGURATION_PREFIX,
  type RegistrationSettings,
} from "./registration.ts";
import type { AdmissionSettings } from "./settings.ts";

export interface AdmissionWebhook {
  readonly route: AdmissionRoute;
  /** Applies the ValidatingWebhookConfiguration; retries until it succeeds or `signal` aborts. */
  register(certificateChain: string, signal: AbortSignal): Promise<void>;
  /** Stops the review workers. */
  close(): void;
}

export interface AdmissionDeps {
  readonly client: ClusterClient;
  /** Tests: smaller review queues. */
  readonly limits?: Partial<QueueLimits>;
}

/** The registration for `s` with the serving chain `certificateChain`. */
export function registrationSettings(s: AdmissionSettings, certificateChain: string): RegistrationSettings {
  return {
    name: `${CONFIGURATION_PREFIX}${s.operatorService}`,
    target: s.url !== null
      ? { url: s.url }
      : { service: { namespace: s.operatorNamespace, name: s.operatorService, port: s.securePort } },
    caBundle: caBundleOf(certificateChain),
    restrictToNamespace: s.restrictToOperatorNamespace ? s.operatorNamespace : null,
    ingressClass: s.ingressClass,
    timeoutSeconds: s.timeoutSeconds,
  };
}

export async function createAdmissionWebhook(s: AdmissionSettings, deps: AdmissionDeps): Promise<AdmissionWebhook> {
  if (s.url !== null && !s.url.startsWith("https://")) {
    throw new Error(`INGRESS_CONTROLLER_WEBHOOK_URL: ${JSON.stringify(s.url)} is not an https:// URL`);
  }
  const client = deps.client;
  const defaultClass = async (): Promise<string | null> => {
    try {
      const list = await client.request<{ items: KubeObject[] }>("GET", "/apis/networking.k8s.io/v1/ingressclasses");
      return defaultIngressClass(list.items ?? []);
    } catch (err) {
      log.warn("admission: cannot list IngressClasses; an ingress without a class is treated as not ours", {
        error: (err as Error).message,
      });
      return null;
    }
  };
  const policy = new GlobalPolicy(client, s.operatorNamespace);
  await policy.refresh();
  const route = await admissionRoute({
    policy: () => policy.value(),
    review: {
      ingressClass: s.ingressClass,
      restrictToNamespace: s.restrictToOperatorNamespace ? s.operatorNamespace : null,
      xray: s.bypassXray ? null : {
        customTemplates: s.customTemplates,
        haproxy: s.haproxy,
        timeoutMs: CHECK_TIME_LIMIT_MS,
      },
    },
    ...(s.ingressClass ? { defaultClass } : {}),
    timeoutSeconds: s.timeoutSeconds,
    ...(deps.limits ? { limits: deps.limits } : {}),
  });
  log.info("validating webhook enabled", { path: route.path, xray: !s.bypassXray });

  return {
    route,
    close: () => route.close(),
    async register(certificateChain, signal) {
      const reg = registrationSettings(s, certificateChain);
      if ((certificateChain.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length === 1) {
        const leaf = new X509Certificate(certificateChain);
        if (!leaf.checkIssued(leaf)) {
          log.warn(
            "the serving certificate comes without its CA and is not self-signed: the API server cannot verify " +
              "the webhook (failurePolicy Fail then refuses the ingresses it covers); append the CA to --tls-cert-file",
            { subject: leaf.subject, issuer: leaf.issuer },
          );
        }
      }
      const backoff = new Backoff(1_000, 60_000);
      while (!signal.aborted) {
        try {
          await applyWebhookConfiguration(client, reg);
          registrations.inc({ result: "ok" });
          log.info("registered the validating webhook", {
            configuration: reg.name,
            target: "url" in reg.target ? reg.target.url : `${reg.target.service.namespace}/${reg.target.service.name}`,
          });
          return;
        } catch (err) {
          registrations.inc({ result: "failed" });
          const delay = backoff.next();
          log.error("cannot register the validating webhook; retrying", {
            configuration: reg.name,
            error: (err as Error).message,
            retryInMs: Math.round(delay),
          });
          await pause(delay, signal);
        }
      }
    },
  };
}

/**
 * `annotation-risk-limit` and `nginx-compat` of the controller's global ConfigMap
 * (lib/controller/global_settings.ts) for the reviews: read at start and again in the background
 * when a review finds them older than 5 s, so a review never waits for them. Unreadable: no limit,
 * no translation (the controller still ignores the keys it disables; a bad value is reported there).
 */
class GlobalPolicy {
  #value: ReviewPolicy = { riskLimit: null, nginxCompat: false };
  #at = 0;
  #reading: Promise<void> | null = null;

  constructor(readonly client: ClusterClient, readonly namespace: string) {}

  value(): ReviewPolicy {
    if (Date.now() - this.#at > 5_000) void this.refresh();
    return this.#value;
  }

  refresh(): Promise<void> {
    this.#reading ??= this.#read().finally(() => {
      this.#at = Date.now();
      this.#reading = null;
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    try {
      const cm = await this.client.request<KubeObject>(
        "GET",
        objectPath(resources.configMaps, this.namespace, GLOBAL_CONFIGMAP),
      );
      const { settings } = parseGlobalSettings(cm.data, defaultGlobalSettings, "global", this.namespace);
      this.#value = { riskLimit: settings.annotationRiskLimit, nginxCompat: settings.nginxCompat };
    } catch (err) {
      if (isStatus(err, 404)) this.#value = { riskLimit: null, nginxCompat: false };
      else {
        log.warn("admission: cannot read the global ConfigMap; the annotation risk limit stays as last read", {
          error: (err as Error).message,
        });
      }
    }
  }
}
