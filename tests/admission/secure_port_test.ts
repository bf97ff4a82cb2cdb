/**
 * The webhook route on the secure port (without a cluster: review functions are plain functions):
 * behind authentication and authorization (401 anonymous, 403 unless the SubjectAccessReview
 * allows the caller), POST only (405), an AdmissionReview in and out through the review workers,
 * the body in a Request-level audit record, and the serving chain exposed for the registration's
 * CA bundle. The attacks (always-allow, oversized bodies, full queues) are in tests/adversarial.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { admissionRoute, WEBHOOK_PATH } from "../../lib/admission/handler.ts";
import { caBundleOf } from "../../lib/admission/registration.ts";
import type { AuditHandle, Auditor } from "../../lib/audit/types.ts";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import { registry } from "../../lib/metrics/registry.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings } from "../../lib/serving/settings.ts";
import { request, tempDir } from "../serving/helpers.ts";
import { postReview } from "./helpers.ts";

const CALLER = "kube-apiserver-webhook-caller";
const callerToken: TokenReviewer = (t) =>
  Promise.resolve(
    t === "caller-token"
      ? { authenticated: true, user: { name: CALLER, groups: [], extra: {} } }
      : { authenticated: false },
  );
const denyAll: AccessReviewer = () => Promise.resolve({ allowed: false, reason: "test denies all" });
const allowCaller: AccessReviewer = (a) =>
  Promise.resolve({ allowed: a.user.name === CALLER, reason: "test allows the caller" });

const review = (uid: string) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "networking.k8s.io", version: "v1", kind: "Ingress" },
      operation: "CREATE",
      namespace: "default",
      name: "w",
      object: {
        metadata: { namespace: "default", name: "w", annotations: { "ingress.kubernetes.io/ssl-redirect": "yes" } },
        spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
      },
    },
  });

/** Records the request bodies a Request-level policy would log. */
function bodyAuditor(bodies: unknown[]): Auditor {
  return {
    enabled: true,
    begin: (): AuditHandle => ({
      auditID: crypto.randomUUID(),
      level: "Request",
      annotate: () => {},
      requestBody: (b) => void bodies.push(b),
      responseStarted: () => {},
      complete: () => Promise.resolve(),
      panic: () => Promise.resolve(),
    }),
    shutdown: () => Promise.resolve(),
  };
}

async function deniedCount(): Promise<number> {
  const text = await registry.getSingleMetricAsString("ingress_controller_admission_review_seconds");
  return Number(/_count\{outcome="denied"\} (\d+)/.exec(text)?.[1] ?? 0);
}

Deno.test("webhook route on the secure port", async () => {
  using tmp = tempDir("admission-port-");
  const base = {
    ...defaultSettings,
    bindAddress: "127.0.0.1",
    certDir: join(tmp.dir, "certs"),
    authenticationSkipLookup: true,
  };
  const route = await admissionRoute({
    review: { ingressClass: null, restrictToNamespace: null, xray: null },
    timeoutSeconds: 10,
  });
  try {
    const deps = { tokenReviewer: callerToken, accessReviewer: denyAll, ephemeralPorts: true, bodyRoutes: [route] };
    const closed = await startServing(base, deps);
    try {
      const anonymous = await postReview(closed.secure!.port, review("u-0"));
      assert.equal(anonymous.status, 401, "no credentials");
      const r = await postReview(closed.secure!.port, review("u-0"), { token: "caller-token" });
      assert.equal(r.status, 403, "the reviewer denies");
    } finally {
      await closed.stop();
    }

    const bodies: unknown[] = [];
    const h = await startServing(base, { ...deps, accessReviewer: allowCaller, auditor: bodyAuditor(bodies) });
    try {
      assert.match(caBundleOf(h.certificateChain!), /BEGIN CERTIFICATE/);
      const port = h.secure!.port;
      const before = await deniedCount();
      const ok = await postReview(port, review("u-1"), { token: "caller-token" });
      assert.equal(ok.status, 200, ok.body);
      const out = JSON.parse(ok.body);
      assert.equal(out.response.uid, "u-1");
      assert.equal(out.response.allowed, false);
      assert.match(out.response.status.message, /^annotation ingress\.kubernetes\.io\/ssl-redirect: "yes"/);
      assert.equal(await deniedCount(), before + 1);
      assert.equal((bodies[0] as { request: { uid: string } }).request.uid, "u-1", "Request-level audit gets the body");

      const get = await request({ port, path: WEBHOOK_PATH, headers: { Authorization: "Bearer caller-token" } });
      assert.equal(get.status, 405);
      assert.equal(get.headers["allow"], "POST");
    } finally {
      await h.stop();
    }
  } finally {
    route.close();
  }
});
