import assert from "node:assert/strict";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { settingsFromConfig } from "../../lib/controller/settings.ts";

Deno.test("settings from the parsed command line of each release", () => {
  const a = settingsFromConfig(
    parseRunFlags("A", ["--ingress-class=internal", "--qps=5", "--burst=2", "--resync-period=1m"]),
  );
  assert.equal(a.ingressClass, "internal");
  assert.equal(a.controllerId, "internal");
  assert.equal(a.qps, 5);
  assert.equal(a.burst, 2);
  assert.equal(a.resyncPeriodMs, 60_000);
  assert.equal(a.validateProxyConfig, true);
  assert.equal(a.proxyImageTag, "1.9.2-9.0.0-alpine");
  assert.equal(a.proxyTimeoutMs, 5000);
  const b = settingsFromConfig(parseRunFlags("B", ["--validate-proxy-config=false", "--rbac"]));
  assert.equal(b.validateProxyConfig, false);
  assert.equal(b.rbac, true);
  assert.equal(b.ingressClass, null);
  assert.equal(b.proxyImageTag, "1.8.8-7.0.0-rc.2-alpine");
  const c = settingsFromConfig(parseRunFlags("C", []));
  assert.equal(c.validateProxyConfig, false, "release C never validates");
  assert.equal(c.exporterImageTag, "6.0.0-rc.0");
  assert.equal(c.resyncPeriodMs, 600_000);
});
