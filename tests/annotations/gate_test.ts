/**
 * One gate for every key (lib/annotations/resolve.ts): each annotation of the table, set on an
 * Ingress (and, for backend-scoped keys, on its Service), changes what is served without a risk
 * limit, and changes nothing once the global `annotation-risk-limit` reaches its risk, with a
 * Warning saying so. The test iterates the table: a new key that is read past the gate, or that
 * the test cannot show working, fails here.
 */
import assert from "node:assert/strict";
import type { V1Ingress, V1Service } from "@kubernetes/client-node";
import { ANNOTATIONS, type AnnotationSpec, PREFIX, type Risk, specOf } from "../../lib/annotations/table.ts";
import { buildModel, type ClusterLookup } from "../../lib/render/model.ts";
import { dedicatedFrontendData } from "../../lib/controller/global_settings.ts";
import { groupOf } from "../../lib/controller/groups.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { endpointSlice, ingress } from "../render/fixtures.ts";

/** Keys that show only beside others: these are set with them (gated alike, whatever their risk). */
const WITH: Record<string, Record<string, string>> = {
  "force-ssl-redirect": { "ssl-redirect": "false" },
  "rewrite-target": { "path-regex": "true" },
  "hsts-max-age": { hsts: "true" },
  "hsts-include-subdomains": { hsts: "true" },
  "hsts-preload": { hsts: "true" },
  "client-cert-verify": { "client-cert-ca-secret": "ca" },
  "client-cert-header": { "client-cert-ca-secret": "ca" },
  "backend-ca-secret": { "backend-protocol": "h1-tls" },
  "backend-sni": { "backend-protocol": "h1-tls" },
  "redirect-code": { "redirect-to": "https://www.example.com/" },
  "cors-allow-origin": { "cors-enable": "true" },
  "cors-allow-methods": { "cors-enable": "true" },
  "cors-allow-headers": { "cors-enable": "true" },
  "cors-expose-headers": { "cors-enable": "true" },
  "cors-allow-credentials": { "cors-enable": "true" },
  "cors-max-age": { "cors-enable": "true" },
  "auth-basic-realm": { "auth-basic-secret": "users" },
  "auth-signin": { "auth-url": "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth" },
  "auth-response-headers": { "auth-url": "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth" },
  "auth-request-headers": { "auth-url": "http://oauth2-proxy.auth.svc.cluster.local/oauth2/auth" },
  "rate-limit-allow-list": { "rate-limit-rps": "20" },
  "sticky-cookie-name": { "sticky-cookie": "true" },
  "sticky-cookie-max-age": { "sticky-cookie": "true" },
  "sticky-cookie-secure": { "sticky-cookie": "true" },
  "sticky-cookie-samesite": { "sticky-cookie": "true" },
  "canary-weight": { canary: "true" },
  "canary-header": { canary: "true" },
  "canary-header-value": { canary: "true", "canary-header": "X-Canary" },
  "canary-cookie": { canary: "true" },
  "error-codes": { "default-backend": "errors:80" },
};
/** Values other than the table's example, where the example does not show on this scenario. */
const VALUE: Record<string, string> = { "rewrite-target": "/x" };
/**
 * External authentication fails closed (lib/render/features/ext_auth.ts): past the limit its routes answer
 * 500, never an unauthenticated pass; what the key asked for is not served either.
 */
const FAILS_CLOSED = new Set(["auth-url", "auth-signin", "auth-response-headers", "auth-request-headers"]);
const RISK_ORDER: readonly (Risk | null)[] = ["low", "medium", "high", "critical", null];

const named = (pairs: Record<string, string>) =>
  Object.fromEntries(Object.entries(pairs).map(([k, v]) => [PREFIX + k, v]));

/** Any Service (port 80, a cluster IP, one endpoint), any Secret (a usable certificate, CA bundle and htpasswd file). */
function lookupWith(serviceAnnotations: Record<string, string>): ClusterLookup {
  return {
    service: (ns, name): V1Service => ({
      metadata: { namespace: ns, name, annotations: name === "web" ? serviceAnnotations : {} },
      spec: { clusterIP: "10.96.0.10", ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] },
    }),
    endpointSlices: (ns, name) => [
      endpointSlice(name, [{ name: "http", port: 8080 }], [{ address: "10.0.0.1" }], { namespace: ns }),
    ],
    secret: (ns, name) => ({
      metadata: { namespace: ns, name },
      type: "kubernetes.io/tls",
      tlsSummary: { valid: true, sha256: name, ca: true, htpasswd: { users: 1, refused: [] } },
    }),
  };
}

/**
 * A main Ingress of the namespace and the Ingress under test, with a TLS host; for the canary keys,
 * on the main Ingress's host and path (a canary joins it).
 */
function scenario(annotations: Record<string, string>, canary: boolean): V1Ingress[] {
  const rule = (host: string) => ({
    host,
    paths: [{ path: "/", pathType: "ImplementationSpecific", service: "web", port: 80 }],
  });
  const host = canary ? "main.example.test" : "app.example.test";
  return [
    ingress({ namespace: "team", name: "main", created: "2026-01-01T00:00:00Z", rules: [rule("main.example.test")] }),
    ingress({
      namespace: "team",
      name: "app",
      created: "2026-01-02T00:00:00Z",
      annotations,
      rules: [rule(host)],
      tls: [{ hosts: [host], secretName: "tls" }],
    }),
  ];
}

/** The model with the key's companions, and with the key itself when `withKey` (on the Service when `onService`). */
function model(spec: AnnotationSpec, onService: boolean, withKey: boolean, limit: Risk | null) {
  const companions = WITH[spec.key] ?? {};
  const value = VALUE[spec.key] ?? spec.example;
  const onIngress = withKey && !onService ? { ...companions, [spec.key]: value } : companions;
  return buildModel({
    ingresses: scenario(named(onIngress), spec.key.startsWith("canary")),
    lookup: lookupWith(withKey && onService ? named({ [spec.key]: value }) : {}),
    disableRiskAtOrAbove: limit,
  });
}

for (const spec of ANNOTATIONS.filter((a) => a.status === "served")) {
  const name = PREFIX + spec.key;
  Deno.test(`gate: ${name} (risk ${spec.risk}) works, and is turned off by annotation-risk-limit: ${spec.risk}`, () => {
    if (spec.key === "proxy") {
      const ing = { metadata: { namespace: "team", name: "app", annotations: { [name]: "dedicated" } } } as KubeObject;
      assert.equal(groupOf(ing, "", null), "team/app");
      assert.equal(groupOf(ing, "", spec.risk), "class:");
      return;
    }
    if (spec.scope === "frontend") {
      const on = dedicatedFrontendData({ [name]: spec.example }, null);
      assert.equal(on.data[spec.key], spec.example, "a dedicated proxy's Ingress sets it");
      const off = dedicatedFrontendData({ [name]: spec.example }, spec.risk);
      assert.deepEqual([off.data, off.problems.length], [{}, 1]);
      return;
    }
    const goesWith = [spec.key, ...Object.keys(WITH[spec.key] ?? {})];
    for (const onService of spec.scope === "backend" ? [false, true] : [false]) {
      const where = onService ? "on the Service" : "on the Ingress";
      const without = model(spec, onService, false, null).model;
      const withIt = model(spec, onService, true, null);
      assert.notDeepEqual(withIt.model, without, `${where}: the key changes nothing even without a limit`);
      const about = withIt.problems.filter((p) => p.message.includes(name));
      assert.deepEqual(about, [], `${where}: the example is refused`);
      const limited = model(spec, onService, true, spec.risk);
      if (FAILS_CLOSED.has(spec.key)) {
        const auth = limited.model.backends.filter((b) => b.settings?.extAuth);
        assert.ok(auth.length > 0 && auth.every((b) => b.settings!.extAuth!.target === null), `${where}: not closed`);
      } else {
        const off = model(spec, onService, false, spec.risk).model;
        assert.deepEqual(limited.model, off, `${where}: served past the limit`);
      }
      // The Warning names the key, or a key it goes with (then it is not read at all).
      assert.ok(
        limited.problems.some((p) => goesWith.some((k) => p.message.includes(`${PREFIX}${k} is disabled`))),
        `${where}: no Warning says the key is disabled: ${JSON.stringify(limited.problems)}`,
      );
      // Above the highest risk of the key and those it goes with, it is served again.
      const top = Math.max(...goesWith.map((k) => RISK_ORDER.indexOf(specOf(k)!.risk)));
      const higher = RISK_ORDER[top + 1];
      assert.deepEqual(model(spec, onService, true, higher).model, withIt.model, `${where}: limit ${higher}`);
    }
  });
}
