/**
 * @module admission/registration
 * The `ValidatingWebhookConfiguration` that makes the API server call the webhook: named
 * `ingress-controller-<operator-service>`, one webhook for networking.k8s.io/v1 ingresses
 * CREATE/UPDATE, pointing at the `--operator-service` Service in the operator's namespace on the
 * secure port (or at a URL for tests and local runs), trusting the CA of the serving certificate.
 *
 * failurePolicy Fail: an Ingress the webhook could not check (unreachable, body above 3 MiB, queue
 * full, deadline passed) is refused, never admitted unchecked. So that a stopped controller blocks
 * only its own ingresses, a `matchConditions` expression sends only the ingresses of its class (or
 * naming none, for the default class) when `--ingress-class` is set. timeoutSeconds 10: the webhook
 * answers within it by itself (admission/handler.ts). Applied with server-side apply (one idempotent
 * call); left in place on stop, like ingress-nginx, so a restart leaves no gap.
 */
import type { ClusterClient } from "../cluster/client.ts";
import { WEBHOOK_PATH } from "./handler.ts";

export const CONFIGURATION_PREFIX = "ingress-controller-";
export const WEBHOOK_NAME = "ingresses.validate.ingress-controller.io";
const FIELD_MANAGER = "ingress-controller";

export interface RegistrationSettings {
  /** The ValidatingWebhookConfiguration's name: `ingress-controller-<operator-service>`. */
  readonly name: string;
  /** Where the API server sends reviews: the operator Service (port = --secure-port) or a URL. */
  readonly target:
    | { readonly service: { readonly namespace: string; readonly name: string; readonly port: number } }
    | { readonly url: string };
  /** PEM certificates the API server trusts for the webhook (see `caBundleOf`). */
  readonly caBundle: string;
  /** With --restrict-to-operator-namespace: only ingresses of this namespace are sent. */
  readonly restrictToNamespace: string | null;
  /** `--ingress-class`: only ingresses of this class, or naming none, are sent; null: all. */
  readonly ingressClass: string | null;
  /** 1..30; the xray runs `haproxy -c`, so more than the default 10 s is never needed. */
  readonly timeoutSeconds: number;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/**
 * The CA bundle of a serving chain (leaf first): the certificates that follow the leaf (the
 * self-signed CA from --cert-dir, or the CA certificates after the leaf in --tls-cert-file); the
 * leaf itself when it comes alone (then it must be self-signed, or the API server cannot verify it).
 */
export function caBundleOf(chainPem: string): string {
  const blocks = chainPem.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error("the serving certificate chain holds no PEM certificate");
  const cas = blocks.length > 1 ? blocks.slice(1) : blocks;
  return cas.map((b) => `${b}\n`).join("");
}

/** A CEL string literal (JSON's escapes are CEL's). */
const celString = (s: string) => JSON.stringify(s);

/**
 * CEL: the Ingress names `ingressClass` (the kubernetes.io/ingress.class annotation, else
 * spec.ingressClassName, as controller/class.ts) or names no class (the default class may be ours:
 * the webhook asks the cluster).
 */
export function classCondition(ingressClass: string): string {
  const a = "object.metadata.annotations['kubernetes.io/ingress.class']";
  const annotated =
    `has(object.metadata.annotations) && 'kubernetes.io/ingress.class' in object.metadata.annotations && ${a} != ''`;
  const named = "has(object.spec) && has(object.spec.ingressClassName) && object.spec.ingressClassName != ''";
  const c = celString(ingressClass);
  return `(${annotated}) ? ${a} == ${c} : (!(${named}) || object.spec.ingressClassName == ${c})`;
}

/** The object applied to the cluster. */
export function webhookConfiguration(s: RegistrationSettings): Record<string, unknown> {
  const clientConfig = "url" in s.target
    ? { url: s.target.url, caBundle: btoa(s.caBundle) }
    : { service: { ...s.target.service, path: WEBHOOK_PATH }, caBundle: btoa(s.caBundle) };
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: s.name, labels: { "app.kubernetes.io/managed-by": "ingress-controller" } },
    webhooks: [{
      name: WEBHOOK_NAME,
      clientConfig,
      rules: [{
        apiGroups: ["networking.k8s.io"],
        apiVersions: ["v1"],
        operations: ["CREATE", "UPDATE"],
        resources: ["ingresses"],
        scope: "Namespaced",
      }],
      failurePolicy: "Fail",
      ...(s.ingressClass
        ? { matchConditions: [{ name: "ingress-class", expression: classCondition(s.ingressClass) }] }
        : {}),
      matchPolicy: "Equivalent",
      sideEffects: "None",
      admissionReviewVersions: ["v1"],
      timeoutSeconds: s.timeoutSeconds,
      ...(s.restrictToNamespace
        ? {
          namespaceSelector: {
            matchLabels: { "kubernetes.io/metadata.name": s.restrictToNamespace },
          },
        }
        : {}),
    }],
  };
}

/** Creates or updates the configuration (server-side apply, field manager `ingress-controller`). */
export async function applyWebhookConfiguration(client: ClusterClient, s: RegistrationSettings): Promise<void> {
  await client.request(
    "PATCH",
    `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${encodeURIComponent(s.name)}`,
    {
      query: { fieldManager: FIELD_MANAGER, force: true },
      contentType: "application/apply-patch+yaml",
      body: JSON.stringify(webhookConfiguration(s)),
    },
  );
}
