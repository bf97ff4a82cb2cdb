import assert from "node:assert/strict";
import { summarizedSecret, summarizeTlsSecret, tlsSummaryOf } from "../../lib/render/tls_secret.ts";
import { tlsSecret } from "./fixtures.ts";

Deno.test("tls secret: a kubernetes.io/tls Secret with PEM certificate and key is valid", () => {
  assert.equal(summarizeTlsSecret(tlsSecret("a")).valid, true);
  assert.equal(summarizeTlsSecret(tlsSecret("a", "default", "Opaque")).valid, false);
  const s = tlsSecret("a");
  s.data!["tls.key"] = btoa("not a key");
  assert.equal(summarizeTlsSecret(s).valid, false);
  s.data!["tls.key"] = "%%% not base64";
  assert.equal(summarizeTlsSecret(s).valid, false);
  delete s.data!["tls.crt"];
  assert.equal(summarizeTlsSecret(s).valid, false);
});

Deno.test("tls secret: the hash follows the content and only the content", () => {
  const a = tlsSecret("a");
  const b = tlsSecret("b", "other");
  assert.equal(summarizeTlsSecret(a).sha256, summarizeTlsSecret(b).sha256, "name and namespace are not content");
  b.data!["tls.key"] = btoa("-----BEGIN PRIVATE KEY-----\nMIIC\n-----END PRIVATE KEY-----\n");
  assert.notEqual(summarizeTlsSecret(a).sha256, summarizeTlsSecret(b).sha256);
  assert.match(summarizeTlsSecret(a).sha256, /^[0-9a-f]{64}$/);
});

Deno.test("tls secret: the cached form keeps identity, type and summary, nothing else", () => {
  const s = tlsSecret("a");
  const full = {
    ...s,
    metadata: {
      name: "a",
      namespace: "default",
      uid: "u",
      resourceVersion: "7",
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify(s) },
      managedFields: [{ manager: "kubectl" }],
    },
  };
  const cached = summarizedSecret(full);
  assert.deepEqual(cached, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "a", namespace: "default", uid: "u", resourceVersion: "7" },
    type: "kubernetes.io/tls",
    tlsSummary: summarizeTlsSecret(s),
  });
  assert.ok(!JSON.stringify(cached).includes(s.data!["tls.key"]));
  assert.deepEqual(tlsSummaryOf(cached), summarizeTlsSecret(s), "a cached Secret is judged by its summary");
  assert.deepEqual(tlsSummaryOf(s), summarizeTlsSecret(s), "a full Secret is judged by its data");
});

Deno.test("secret summary: a CA bundle and an htpasswd file give verdicts, never a hash or a certificate", () => {
  const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  const bcrypt = "$2y$05$" + "h".repeat(53);
  const s = tlsSecret("a", "default", "Opaque");
  s.data = { "ca.crt": btoa(pem + pem), auth: btoa(`alice:${bcrypt}\nbob:$apr1$xyz$${"q".repeat(22)}\n`) };
  const summary = summarizeTlsSecret(s);
  assert.deepEqual([summary.valid, summary.ca, summary.htpasswd?.users], [false, true, 1]);
  assert.deepEqual(summary.htpasswd?.refused.map((r) => r.slice(0, 16)), ["user bob: $apr1$"]);
  const cached = JSON.stringify(summarizedSecret(s as any));
  assert.ok(!cached.includes("hhhh") && !cached.includes("qqqq") && !cached.includes("MIIB"), cached);
  s.data = { "ca.crt": btoa(pem + "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n") };
  assert.deepEqual([summarizeTlsSecret(s).ca, summarizeTlsSecret(s).htpasswd], [false, null], "a key is no CA bundle");
});
