import assert from "node:assert/strict";
import { summarizedSecret, summarizeTlsSecret, tlsSummaryOf } from "../../lib/render/tls_secret.ts";
import { FIXTURE_CERT, tlsSecret } from "./fixtures.ts";
import { GARBAGE_CERT, mismatchedPair, tlsSecretOf } from "../pki/materials.ts";

Deno.test("tls secret: valid only when the proxy can serve it; otherwise the summary says why", async () => {
  assert.deepEqual(
    [summarizeTlsSecret(tlsSecret("a")).valid, summarizeTlsSecret(tlsSecret("a")).reason],
    [true, undefined],
  );
  assert.deepEqual(
    summarizeTlsSecret(tlsSecret("a", "default", "Opaque")).reason,
    'its type is "Opaque", not kubernetes.io/tls',
  );
  const mismatched = tlsSecretOf("default", "m", await mismatchedPair("m.test"));
  assert.deepEqual(
    [summarizeTlsSecret(mismatched).valid, summarizeTlsSecret(mismatched).reason],
    [false, "tls.key does not match the certificate (the first one in tls.crt)"],
  );
  const s = tlsSecret("a");
  s.data!["tls.key"] = btoa("not a key");
  assert.equal(summarizeTlsSecret(s).reason, "tls.key holds no PEM private key");
  s.data!["tls.key"] = "%%% not base64";
  assert.equal(summarizeTlsSecret(s).reason, "tls.key is not base64 of UTF-8 text");
  delete s.data!["tls.crt"];
  assert.equal(summarizeTlsSecret(s).reason, "there is no tls.crt");
  // the reason is all that is kept: no key material in the cached object
  const cached = JSON.stringify(summarizedSecret(mismatched as any));
  assert.ok(!cached.includes(mismatched.data["tls.key"].slice(0, 40)) && !cached.includes("PRIVATE"), cached);
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
  const pem = FIXTURE_CERT.certPem;
  const body = pem.split("\n")[1];
  const bcrypt = "$2y$05$" + "h".repeat(53);
  const s = tlsSecret("a", "default", "Opaque");
  s.data = { "ca.crt": btoa(pem + pem), auth: btoa(`alice:${bcrypt}\nbob:$apr1$xyz$${"q".repeat(22)}\n`) };
  const summary = summarizeTlsSecret(s);
  assert.deepEqual([summary.valid, summary.ca, summary.caReason, summary.htpasswd?.users], [false, true, undefined, 1]);
  assert.deepEqual(summary.htpasswd?.refused.map((r) => r.slice(0, 16)), ["user bob: $apr1$"]);
  const cached = JSON.stringify(summarizedSecret(s as any));
  assert.ok(!cached.includes("hhhh") && !cached.includes("qqqq") && !cached.includes(body), cached);
  s.data = { "ca.crt": btoa(pem + FIXTURE_CERT.keyPem) };
  assert.deepEqual(
    [summarizeTlsSecret(s).ca, summarizeTlsSecret(s).caReason, summarizeTlsSecret(s).htpasswd],
    [false, "ca.crt holds something else than PEM certificates", null],
    "a key is no CA bundle",
  );
  s.data = { "ca.crt": btoa(pem + GARBAGE_CERT) };
  assert.deepEqual(summarizeTlsSecret(s).ca, false);
  assert.match(summarizeTlsSecret(s).caReason!, /^certificate 2 of ca\.crt cannot be parsed/);
  s.data = {};
  assert.equal(summarizeTlsSecret(s).caReason, "there is no ca.crt");
});
