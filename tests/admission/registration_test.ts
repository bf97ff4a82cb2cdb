/**
 * The ValidatingWebhookConfiguration object and the CA bundle taken from the serving chain, and
 * the settings adapter (release A options; B and C never enable the webhook).
 */
import assert from "node:assert/strict";
import { WEBHOOK_PATH } from "../../lib/admission/handler.ts";
import { caBundleOf, classCondition, webhookConfiguration } from "../../lib/admission/registration.ts";
import { settingsFromConfig, WEBHOOK_URL_ENV } from "../../lib/admission/settings.ts";
import { registrationSettings } from "../../lib/admission/webhook.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

const ca = await createCA({ commonName: "test-ca" });
const leaf = await issueCertificate(ca, { commonName: "leaf", usages: ["serverAuth"], dnsNames: ["localhost"] });

Deno.test("CA bundle: the certificates after the leaf; the leaf alone when it comes alone", () => {
  assert.equal(caBundleOf(leaf.certPem + ca.certPem).trim(), ca.certPem.trim());
  assert.equal(caBundleOf(ca.certPem).trim(), ca.certPem.trim());
  assert.throws(() => caBundleOf("no pem here"), /no PEM certificate/);
});

Deno.test("registration points at the operator Service on the secure port, in the operator namespace", () => {
  const config = parseRunFlags("A", [
    "--enable-validating-webhook",
    "--operator-service=my-operator",
    "--secure-port=8443",
    "--restrict-to-operator-namespace",
  ]);
  const s = { ...settingsFromConfig(config, () => undefined), operatorNamespace: "ops" };
  assert.equal(s.enabled, true);
  assert.equal(s.bypassXray, false);
  const reg = registrationSettings(s, leaf.certPem + ca.certPem);
  const obj = webhookConfiguration(reg) as any;
  assert.equal(obj.metadata.name, "ingress-controller-my-operator");
  const hook = obj.webhooks[0];
  assert.deepEqual(hook.clientConfig.service, {
    namespace: "ops",
    name: "my-operator",
    port: 8443,
    path: WEBHOOK_PATH,
  });
  assert.equal(atob(hook.clientConfig.caBundle).trim(), ca.certPem.trim());
  assert.equal(hook.failurePolicy, "Fail", "what could not be checked is refused");
  assert.equal(hook.sideEffects, "None");
  assert.equal(hook.timeoutSeconds, 10);
  assert.deepEqual(hook.admissionReviewVersions, ["v1"]);
  assert.deepEqual(hook.rules, [{
    apiGroups: ["networking.k8s.io"],
    apiVersions: ["v1"],
    operations: ["CREATE", "UPDATE"],
    resources: ["ingresses"],
    scope: "Namespaced",
  }]);
  assert.deepEqual(hook.namespaceSelector, { matchLabels: { "kubernetes.io/metadata.name": "ops" } });
  assert.equal(hook.matchConditions, undefined, "without --ingress-class every ingress is ours");
});

Deno.test("with --ingress-class only that class's ingresses (or classless ones) are sent: a CEL matchCondition", () => {
  const config = parseRunFlags("A", ["--enable-validating-webhook", '--ingress-class=ha"proxy']);
  const s = settingsFromConfig(config, () => undefined);
  const hook = (webhookConfiguration(registrationSettings(s, ca.certPem)) as any).webhooks[0];
  assert.deepEqual(hook.matchConditions, [{ name: "ingress-class", expression: classCondition('ha"proxy') }]);
  // The class is a CEL string literal, escaped; the real API server evaluates it in cluster_test.ts.
  assert.match(hook.matchConditions[0].expression, /== "ha\\"proxy"/);
});

Deno.test("URL override from the environment replaces the Service reference", () => {
  const config = parseRunFlags("A", ["--enable-validating-webhook", "--bypass-validating-webhook-xray"]);
  const url = "https://127.0.0.1:9443/x";
  const s = settingsFromConfig(config, (n) => (n === WEBHOOK_URL_ENV ? url : undefined));
  assert.equal(s.bypassXray, true);
  assert.equal(s.operatorService, "ingress-controller-operator");
  const hook = (webhookConfiguration(registrationSettings(s, ca.certPem)) as any).webhooks[0];
  assert.deepEqual(Object.keys(hook.clientConfig).sort(), ["caBundle", "url"]);
  assert.equal(hook.clientConfig.url, url);
  assert.equal(hook.namespaceSelector, undefined);
});

Deno.test("B and C have no webhook: never enabled", () => {
  for (const release of ["B", "C"] as const) {
    const s = settingsFromConfig(parseRunFlags(release, ["--operator-service=x"]), () => undefined);
    assert.equal(s.enabled, false);
    assert.equal(s.operatorService, "x");
  }
});
