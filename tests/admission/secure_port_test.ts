/**
 * The webhook route on the secure port (without a cluster: review functions are plain functions):
 * behind authorization like every path (403 unless allowed), POST only (405), bounded body (413),
 * an AdmissionReview in and out, and the serving chain exposed for the registration's CA bundle.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { join } from "node:path";
import { admissionRoute, WEBHOOK_PATH } from "../../lib/admission/handler.ts";
import { caBundleOf } from "../../lib/admission/registration.ts";
import type { AuditHandle, Auditor } from "../../lib/audit/types.ts";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import { registry } from "../../lib/metrics.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings } from "../../lib/serving/settings.ts";
import { request, tempDir } from "../serving/helpers.ts";

const noTokens: TokenReviewer = () => Promise.resolve({ authenticated: false });
const denyAll: AccessReviewer = () => Promise.resolve({ allowed: false, reason: "test denies all" });

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

/** One HTTP/1.1 POST over TLS (the server's self-signed CA is not checked here). */
function postTo(port: number, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1",
      port,
      path: WEBHOOK_PATH,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      rejectUnauthorized: false,
      agent: false,
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

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
  const route = {
    ...admissionRoute({ ingressClass: null, restrictToNamespace: null, xray: null }),
    maxBodyBytes: 4096,
  };
  const deps = { tokenReviewer: noTokens, accessReviewer: denyAll, ephemeralPorts: true, bodyRoutes: [route] };

  const closed = await startServing(base, deps);
  try {
    const r = await postTo(closed.secure!.port, review("u-0"));
    assert.equal(r.status, 403, "not on the always-allow list and the reviewer denies");
  } finally {
    await closed.stop();
  }

  const bodies: unknown[] = [];
  const h = await startServing({ ...base, authorizationAlwaysAllowPaths: [WEBHOOK_PATH] }, {
    ...deps,
    auditor: bodyAuditor(bodies),
  });
  try {
    assert.match(caBundleOf(h.certificateChain!), /BEGIN CERTIFICATE/);
    const port = h.secure!.port;
    const post = (body: string) => postTo(port, body);
    const before = await deniedCount();
    const ok = await post(review("u-1"));
    assert.equal(ok.status, 200, ok.body);
    const out = JSON.parse(ok.body);
    assert.equal(out.response.uid, "u-1");
    assert.equal(out.response.allowed, false);
    assert.match(out.response.status.message, /^annotation ingress\.kubernetes\.io\/ssl-redirect: "yes"/);
    assert.equal(await deniedCount(), before + 1);
    assert.equal((bodies[0] as { request: { uid: string } }).request.uid, "u-1", "Request-level audit gets the body");

    const get = await request({ port, path: WEBHOOK_PATH });
    assert.equal(get.status, 405);
    assert.equal(get.headers["allow"], "POST");

    const big = await post(JSON.stringify({ pad: "x".repeat(8192) }));
    assert.equal(big.status, 413);
  } finally {
    await h.stop();
  }
});
