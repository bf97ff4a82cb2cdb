import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { ClientCertVerifier } from "../../lib/auth/client_cert.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { x509 } from "../../lib/pki.ts";

const node = (pem: string) => new X509Certificate(pem);

Deno.test("client_cert: CN and O of a certificate signed by the bundle", async () => {
  const ca = await createCA({ commonName: "client-ca" });
  const alice = await issueCertificate(ca, {
    commonName: "alice",
    organizations: ["devs", "ops"],
    usages: ["clientAuth"],
  });
  const v = new ClientCertVerifier([node(ca.certPem)]);
  assert.deepEqual(v.verify([node(alice.certPem)]), { ok: true, commonName: "alice", organizations: ["devs", "ops"] });
});

Deno.test("client_cert: unknown authority, serverAuth only, and expired certificates are refused", async () => {
  const ca = await createCA({ commonName: "client-ca" });
  const other = await createCA({ commonName: "other-ca" });
  const v = new ClientCertVerifier([node(ca.certPem)]);
  const stranger = await issueCertificate(other, { commonName: "mallory", usages: ["clientAuth"] });
  assert.match(String((v.verify([node(stranger.certPem)]) as { reason: string }).reason), /unknown authority/);
  const server = await issueCertificate(ca, { commonName: "srv", usages: ["serverAuth"] });
  assert.match(String((v.verify([node(server.certPem)]) as { reason: string }).reason), /client authentication/);
  const old = await issueCertificate(ca, {
    commonName: "old",
    usages: ["clientAuth"],
    notBefore: new Date(Date.now() - 10 * 86_400_000),
    validityDays: 1,
  });
  assert.match(String((v.verify([node(old.certPem)]) as { reason: string }).reason), /expired/);
  // A self-signed certificate claiming the CA's subject does not verify either.
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const forged = await x509.X509CertificateGenerator.createSelfSigned({
    name: ca.cert.subject,
    keys,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])],
  });
  assert.equal(v.verify([node(forged.toString("pem"))]).ok, false);
});

Deno.test("client_cert: a chain through an intermediate CA the client sends", async () => {
  const root = await createCA({ commonName: "root" });
  // An intermediate: a CA certificate signed by the root.
  const interKeys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const interCert = await x509.X509CertificateGenerator.create({
    subject: "CN=intermediate",
    issuer: root.cert.subject,
    publicKey: interKeys.publicKey,
    signingKey: root.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  const inter = { ...root, cert: interCert, keys: interKeys, certPem: interCert.toString("pem") };
  const leaf = await issueCertificate(inter, { commonName: "bob", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node(root.certPem)]);
  assert.equal(v.verify([node(leaf.certPem)]).ok, false, "without the intermediate the path is incomplete");
  assert.equal(v.verify([node(leaf.certPem), node(inter.certPem)]).ok, true);
});
