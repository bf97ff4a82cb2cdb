import assert from "node:assert/strict";
import { settingsFromConfig } from "../../lib/analytics/settings.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";

const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });

Deno.test("analytics settings: on by default in every release, off with the release's own option", () => {
  for (const release of ["A", "B", "C"] as const) {
    assert.equal(settingsFromConfig(parseRunFlags(release, []), env({})).enabled, true, release);
  }
  assert.equal(settingsFromConfig(parseRunFlags("A", ["--enable-analytics=false"]), env({})).enabled, false);
  assert.equal(settingsFromConfig(parseRunFlags("B", ["--enable-analytics=false"]), env({})).enabled, false);
  assert.equal(settingsFromConfig(parseRunFlags("C", ["--analytics=false"]), env({})).enabled, false);
});

Deno.test("analytics settings: the endpoint comes only from INGRESS_CONTROLLER_ANALYTICS_URL", () => {
  const config = parseRunFlags("A", []);
  assert.equal(settingsFromConfig(config, env({})).endpoint, null);
  assert.equal(settingsFromConfig(config, env({ INGRESS_CONTROLLER_ANALYTICS_URL: "  " })).endpoint, null);
  assert.equal(
    settingsFromConfig(config, env({ INGRESS_CONTROLLER_ANALYTICS_URL: " https://a.example/e " })).endpoint,
    "https://a.example/e",
  );
});

Deno.test("analytics settings: features and scope from the command line", () => {
  const s = settingsFromConfig(
    parseRunFlags("A", [
      "--rbac",
      "--validate-proxy-config=false",
      "--ingress-class=internal",
      "--restrict-to-operator-namespace",
    ]),
    env({}),
  );
  assert.deepEqual(s.features, { audit: false, rbac: true, validateProxyConfig: false, customTemplates: false });
  assert.equal(s.ingressClass, "internal");
  assert.equal(s.restrictToOperatorNamespace, true);
  assert.equal(s.release, "A");
  assert.equal(s.version, "9.0.0");
  assert.equal(s.heartbeatMs, 3_600_000);
  assert.equal(s.sendTimeoutMs, 5_000);
  // Release C has no --validate-proxy-config and never validates.
  const c = settingsFromConfig(parseRunFlags("C", []), env({}));
  assert.equal(c.features.validateProxyConfig, false);
  assert.equal(c.version, "6.0.0-rc.0");
});
