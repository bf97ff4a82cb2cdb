import assert from "node:assert/strict";
import { keyTypeMismatch, policyViolation, runtimeTls12Suites, tlsPolicy } from "../../lib/serving/tls_policy.ts";

Deno.test("tls_policy: Go names map to the runtime's OpenSSL names", () => {
  const p = tlsPolicy("A", "VersionTLS12", [
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
  ]);
  assert.deepEqual([...p.allowedTls12!].sort(), ["ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-AES128-GCM-SHA256"]);
  assert.equal(p.minRank, 12);
  for (const s of p.allowedTls12!) assert.ok(runtimeTls12Suites().has(s));
});

Deno.test("tls_policy: min version below TLS 1.2 is raised to what the runtime speaks; B accepts TLS 1.3 names", () => {
  assert.equal(tlsPolicy("A", "VersionTLS10", []).minRank, 12);
  assert.equal(tlsPolicy("B", "VersionSSL30", []).minRank, 12);
  assert.equal(tlsPolicy("B", "VersionTLS13", []).minRank, 13);
  assert.equal(tlsPolicy("A", null, []).minRank, 12, "default TLS 1.2");
  const b = tlsPolicy("B", null, ["TLS_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"]);
  assert.deepEqual([...b.allowedTls12!], ["ECDHE-RSA-CHACHA20-POLY1305"]);
});

Deno.test("tls_policy: violations", () => {
  const p = tlsPolicy("A", null, ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]);
  assert.equal(policyViolation(p, "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), null);
  assert.match(policyViolation(p, "TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384")!, /not in --tls-cipher-suites/);
  assert.equal(policyViolation(p, "TLSv1.3", "TLS_AES_256_GCM_SHA384"), null, "TLS 1.3 suites are not configurable");
  assert.match(policyViolation(tlsPolicy("B", "VersionTLS13", []), "TLSv1.2", "X")!, /below the minimum/);
  assert.match(policyViolation(p, "TLSv1.1", "X")!, /below the minimum/);
});

Deno.test("tls_policy: a suite list without the certificate's key type is reported", () => {
  const rsaOnly = tlsPolicy("A", null, ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]);
  assert.match(keyTypeMismatch(rsaOnly, "ec")!, /no ECDHE-ECDSA suite/);
  assert.equal(keyTypeMismatch(rsaOnly, "rsa"), null);
  assert.equal(keyTypeMismatch(tlsPolicy("A", null, []), "ec"), null);
});
