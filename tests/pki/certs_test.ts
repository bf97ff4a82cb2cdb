import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { createCA, generateKeyPair, issueCertificate, privateKeyPem, publicKeyPem } from "../../lib/pki/certs.ts";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { x509 } from "../../lib/pki/x509.ts";

Deno.test("a leaf carries CN, O groups, SANs and usages and verifies against its CA", async () => {
  const ca = await createCA({ commonName: "test-ca" });
  const leaf = await issueCertificate(ca, {
    commonName: "alice",
    organizations: ["devs", "system:authenticated"],
    usages: ["clientAuth", "serverAuth"],
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1", "::1"],
  });
  const cert = new X509Certificate(leaf.certPem);
  const caCert = new X509Certificate(ca.certPem);
  assert.ok(cert.verify(caCert.publicKey));
  assert.ok(cert.checkIssued(caCert));
  assert.equal(caCert.ca, true);
  assert.equal(cert.ca, false);
  assert.match(cert.subject, /^O=devs\nO=system:authenticated\nCN=alice$/);
  assert.equal(cert.subjectAltName, "DNS:localhost, IP Address:127.0.0.1, IP Address:::1");
  const parsed = new x509.X509Certificate(leaf.certPem);
  assert.deepEqual([...parsed.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? []], [
    x509.ExtendedKeyUsage.clientAuth,
    x509.ExtendedKeyUsage.serverAuth,
  ]);
  assert.equal(parsed.getExtension(x509.BasicConstraintsExtension)?.ca, false);
  // The key PEM belongs to the certificate.
  assert.ok(leaf.keyPem.startsWith("-----BEGIN PRIVATE KEY-----\n"));
  assert.equal(
    createPublicKey(createPrivateKey(leaf.keyPem)).export({ type: "spki", format: "pem" }),
    cert.publicKey.export({ type: "spki", format: "pem" }),
  );
  assert.ok(cert.checkPrivateKey(createPrivateKey(leaf.keyPem)));
});

Deno.test("RSA CA signs RSA leaves; key PEMs round-trip through node:crypto", async () => {
  const ca = await createCA({ commonName: "rsa-ca", algorithm: "RSA-2048" });
  const leaf = await issueCertificate(ca, { commonName: "server", usages: ["serverAuth"], algorithm: "RSA-2048" });
  const cert = new X509Certificate(leaf.certPem);
  assert.ok(cert.verify(new X509Certificate(ca.certPem).publicKey));
  assert.equal(createPrivateKey(leaf.keyPem).asymmetricKeyType, "rsa");
  const keys = await generateKeyPair("RSA-2048");
  assert.equal(createPublicKey(await publicKeyPem(keys.publicKey)).asymmetricKeyType, "rsa");
  assert.equal(createPrivateKey(await privateKeyPem(keys.privateKey)).asymmetricKeyType, "rsa");
});

Deno.test("a leaf without usages is refused", async () => {
  const ca = await createCA({ commonName: "ca" });
  await assert.rejects(issueCertificate(ca, { commonName: "x", usages: [] }), /at least one usage/);
});
