import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { type ChainResult, ClientCertVerifier } from "../../lib/auth/client_cert.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { x509 } from "../../lib/pki/x509.ts";

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
  const inter = await createCA({ commonName: "intermediate", issuer: root });
  const leaf = await issueCertificate(inter, { commonName: "bob", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node(root.certPem)]);
  assert.equal(v.verify([node(leaf.certPem)]).ok, false, "without the intermediate the path is incomplete");
  assert.equal(v.verify([node(leaf.certPem), node(inter.certPem)]).ok, true);
});

const reasonOf = (r: ChainResult) => (r.ok ? "verified" : r.reason);

Deno.test("client_cert: a certificate that is not a CA may not sign, neither as intermediate nor in the bundle", async () => {
  const root = await createCA({ commonName: "root" });
  // A leaf (basicConstraints cA false) used as a signer.
  const notCa = await issueCertificate(root, { commonName: "not-a-ca", usages: ["clientAuth"] });
  const leaf = await issueCertificate(notCa, { commonName: "eve", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node(root.certPem)]);
  assert.match(
    reasonOf(v.verify([node(leaf.certPem), node(notCa.certPem)])),
    /^CN=not-a-ca is not a CA \(basicConstraints\), so it may not sign certificates$/,
  );
  // The same certificate placed in the CA bundle does not make it a CA either (Go: NotAuthorizedToSign).
  const bundle = new ClientCertVerifier([node(notCa.certPem)]);
  assert.match(reasonOf(bundle.verify([node(leaf.certPem)])), /^CN=not-a-ca is not a CA/);
});

Deno.test("client_cert: a CA whose key usage lacks keyCertSign may not sign", async () => {
  const root = await createCA({ commonName: "root" });
  const inter = await createCA({ commonName: "no-cert-sign", issuer: root, keyCertSign: false });
  const leaf = await issueCertificate(inter, { commonName: "eve", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node(root.certPem)]);
  assert.match(
    reasonOf(v.verify([node(leaf.certPem), node(inter.certPem)])),
    /^CN=no-cert-sign has a key usage without keyCertSign, so it may not sign certificates$/,
  );
  const badRoot = await createCA({ commonName: "root-no-cert-sign", keyCertSign: false });
  const leaf2 = await issueCertificate(badRoot, { commonName: "eve", usages: ["clientAuth"] });
  assert.match(
    reasonOf(new ClientCertVerifier([node(badRoot.certPem)]).verify([node(leaf2.certPem)])),
    /^CN=root-no-cert-sign has a key usage without keyCertSign/,
  );
});

Deno.test("client_cert: pathLenConstraint limits the intermediate CAs below a CA", async () => {
  // root (pathLen 1) → a (pathLen 0) → b → leaf: b is one intermediate below a, which allows none.
  const root = await createCA({ commonName: "root", pathLength: 1 });
  const a = await createCA({ commonName: "a", issuer: root, pathLength: 0 });
  const b = await createCA({ commonName: "b", issuer: a });
  const viaB = await issueCertificate(b, { commonName: "deep", usages: ["clientAuth"] });
  const viaA = await issueCertificate(a, { commonName: "shallow", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node(root.certPem)]);
  assert.equal(reasonOf(v.verify([node(viaA.certPem), node(a.certPem)])), "verified", "one intermediate: allowed");
  assert.match(
    reasonOf(v.verify([node(viaB.certPem), node(b.certPem), node(a.certPem)])),
    /^CN=a allows 0 intermediate CAs below it \(pathLenConstraint\), the chain has 1$/,
  );
  // The root's own constraint counts every intermediate below it: pathLen 1, two intermediates.
  const a2 = await createCA({ commonName: "a2", issuer: root });
  const b2 = await createCA({ commonName: "b2", issuer: a2 });
  const leaf2 = await issueCertificate(b2, { commonName: "deep2", usages: ["clientAuth"] });
  assert.match(
    reasonOf(v.verify([node(leaf2.certPem), node(b2.certPem), node(a2.certPem)])),
    /^CN=root allows 1 intermediate CAs below it \(pathLenConstraint\), the chain has 2$/,
  );
  // Without constraints the same shape verifies.
  const free = await createCA({ commonName: "free-root" });
  const fa = await createCA({ commonName: "fa", issuer: free });
  const fb = await createCA({ commonName: "fb", issuer: fa });
  const fleaf = await issueCertificate(fb, { commonName: "ok", usages: ["clientAuth"] });
  assert.equal(
    reasonOf(
      new ClientCertVerifier([node(free.certPem)]).verify([node(fleaf.certPem), node(fb.certPem), node(fa.certPem)]),
    ),
    "verified",
  );
});

Deno.test("client_cert: intermediates that all sign each other cost at most Go's budget of signature checks", async () => {
  // Twelve CA certificates with one subject and one key: each verifies as the issuer of every
  // other, so the paths from the leaf number in the millions; the search stops at 100 checks.
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const loop = [];
  for (let i = 0; i < 12; i++) {
    loop.push(
      await x509.X509CertificateGenerator.create({
        serialNumber: `0${i + 1}`,
        subject: "CN=loop",
        issuer: "CN=loop",
        publicKey: keys.publicKey,
        signingKey: keys.privateKey,
        signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 86_400_000),
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
      }),
    );
  }
  const loopCa = { ...(await createCA({ commonName: "unused" })), cert: loop[0], keys };
  const leaf = await issueCertificate(loopCa, { commonName: "mallory", usages: ["clientAuth"] });
  const v = new ClientCertVerifier([node((await createCA({ commonName: "root" })).certPem)]);
  assert.equal(
    reasonOf(v.verify([node(leaf.certPem), ...loop.map((c) => node(c.toString("pem")))])),
    "the chain needs more than 100 signature checks",
  );
});
