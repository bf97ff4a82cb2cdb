import assert from "node:assert/strict";
import { buildEvent, installationId, sanitizeGitVersion, schemaVersion } from "../../lib/analytics/event.ts";

Deno.test("installation id: salted hex SHA-256, stable, not the plain hash", async () => {
  const id = installationId("6f1c0e4a-0000-4000-8000-000000000001");
  assert.match(id, /^[0-9a-f]{64}$/);
  assert.equal(id, installationId("6f1c0e4a-0000-4000-8000-000000000001"));
  assert.notEqual(id, installationId("6f1c0e4a-0000-4000-8000-000000000002"));
  const plain = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode("6f1c0e4a-0000-4000-8000-000000000001")),
  );
  assert.notEqual(id, [...plain].map((b) => b.toString(16).padStart(2, "0")).join(""));
});

Deno.test("server version: only version-shaped text is sent", () => {
  assert.equal(sanitizeGitVersion("v1.34.4"), "v1.34.4");
  assert.equal(sanitizeGitVersion("v1.30.2-eks-1234abcd"), "v1.30.2-eks-1234abcd");
  assert.equal(sanitizeGitVersion("v1.29.0+k3s1"), "v1.29.0+k3s1");
  assert.equal(sanitizeGitVersion("v1.29.0 built on host-a.corp"), null);
  assert.equal(sanitizeGitVersion("v1.29.0-" + "x".repeat(60)), null);
  assert.equal(sanitizeGitVersion(42), null);
  assert.equal(sanitizeGitVersion(undefined), null);
});

Deno.test("event: exactly the documented fields; features copied", () => {
  const features = { audit: false, rbac: true, validateProxyConfig: true, customTemplates: false };
  const e = buildEvent(
    "heartbeat",
    { release: "B", version: "7.0.0-rc.2", features },
    { installationId: null, kubernetesVersion: "v1.34.4", counts: { ingresses: 2, proxies: 2, tlsHosts: 1 } },
    new Date("2026-11-22T01:02:03.456Z"),
  );
  assert.deepEqual(e, {
    schema: schemaVersion,
    event: "heartbeat",
    time: "2026-11-22T01:02:03.456Z",
    release: "B",
    version: "7.0.0-rc.2",
    installationId: null,
    kubernetesVersion: "v1.34.4",
    counts: { ingresses: 2, proxies: 2, tlsHosts: 1 },
    features,
  });
  assert.notEqual(e.features, features);
});
