import assert from "node:assert/strict";
import { caBundle, caBundleProblem, tlsPair, tlsPairProblem } from "../../lib/pki/secret_checks.ts";
import {
  ed25519Pair,
  encryptedKey,
  GARBAGE_CERT,
  goodPair,
  mismatchedPair,
  sha1SignedPair,
  tlsSecretOf,
  unservedKey,
  weakRsaPair,
} from "./materials.ts";

Deno.test("tls verdict: valid chains of the key types the proxy serves pass", async () => {
  for (const pair of [await goodPair("a.test"), await goodPair("b.test", "RSA-2048"), await ed25519Pair("c.test")]) {
    assert.equal(tlsPairProblem(pair.crt, pair.key), null);
  }
  // text around the blocks (openssl's "Bag Attributes", "subject=" lines) is no problem for OpenSSL either
  const pair = await goodPair("d.test");
  assert.equal(tlsPairProblem(`subject=CN = d.test\n${pair.crt}`, `Bag Attributes\n${pair.key}`), null);
});

Deno.test("tls verdict: a key of another certificate does not match", async () => {
  const pair = await mismatchedPair("a.test");
  assert.equal(tlsPairProblem(pair.crt, pair.key), "tls.key does not match the certificate (the first one in tls.crt)");
  // the key of the CA in the chain is not the leaf's either
  const good = await goodPair("b.test");
  assert.match(tlsPairProblem(good.crt, good.ca.keyPem)!, /does not match/);
});

Deno.test("tls verdict: an encrypted key is refused, PKCS#8 or traditional", async () => {
  const { crt } = await goodPair("a.test", "RSA-2048");
  for (const form of ["pkcs8", "pkcs1"] as const) {
    const key = encryptedKey(form);
    assert.match(key, form === "pkcs8" ? /ENCRYPTED PRIVATE KEY/ : /Proc-Type: 4,ENCRYPTED/);
    assert.match(tlsPairProblem(crt, key)!, /^tls\.key is encrypted with a passphrase/);
  }
});

Deno.test("tls verdict: DSA, X25519 and other curves are not served; a 1024-bit RSA key is too weak", async () => {
  const { crt } = await goodPair("a.test");
  assert.match(tlsPairProblem(crt, unservedKey("dsa"))!, /^tls\.key is a DSA key, which TLS clients no longer/);
  assert.match(tlsPairProblem(crt, unservedKey("x25519"))!, /^tls\.key is a x25519 key, which cannot sign/);
  assert.match(tlsPairProblem(crt, unservedKey("secp256k1"))!, /^tls\.key is an EC key on curve secp256k1/);
  const weak = await weakRsaPair("b.test");
  assert.match(tlsPairProblem(weak.crt, weak.key)!, /^tls\.key is a 1024-bit RSA key; .* 2048 bits or more/);
  // the reason names what is served
  assert.match(tlsPairProblem(crt, unservedKey("dsa"))!, /RSA \(2048 bits or more\), ECDSA \(P-256, P-384, P-521\)/);
});

Deno.test("tls verdict: a certificate signed with SHA-1 is refused as OpenSSL does", async () => {
  const pair = await sha1SignedPair("a.test");
  assert.equal(
    tlsPairProblem(pair.crt, pair.key),
    "certificate 1 of tls.crt is signed with SHA-1, which the proxy's OpenSSL refuses (security level 2); " +
      "reissue it with SHA-256",
  );
});

Deno.test("tls verdict: every certificate of the chain must parse; blocks other than certificates are refused", async () => {
  const pair = await goodPair("a.test");
  assert.match(tlsPairProblem(pair.crt + GARBAGE_CERT, pair.key)!, /^certificate 3 of tls\.crt cannot be parsed \(/);
  assert.equal(
    tlsPairProblem(pair.crt + "-----BEGIN CERTIFICATE-----\n!!not base64!!\n-----END CERTIFICATE-----\n", pair.key),
    "tls.crt holds a PEM block that cannot be read",
  );
  assert.equal(tlsPairProblem("not a certificate", pair.key), "tls.crt holds no PEM certificate");
  assert.equal(
    tlsPairProblem(pair.crt + pair.key, pair.key),
    "tls.crt holds a PRIVATE KEY block; only certificates belong there",
  );
  assert.equal(tlsPairProblem(pair.crt, "not a key"), "tls.key holds no PEM private key");
  assert.equal(tlsPairProblem(pair.crt, pair.crt), "tls.key holds a certificate; certificates belong in tls.crt");
  assert.match(
    tlsPairProblem(pair.crt, "-----BEGIN PRIVATE KEY-----\nAAAAAAAA\n-----END PRIVATE KEY-----\n")!,
    /^tls\.key cannot be read \(/,
  );
});

Deno.test("tls verdict on a Secret: its type and fields, and the reason never quotes the material", async () => {
  const pair = await goodPair("a.test");
  assert.deepEqual(tlsPair(tlsSecretOf("ns", "s", pair)), { crt: pair.crt, key: pair.key });
  assert.deepEqual(tlsPair({ ...tlsSecretOf("ns", "s", pair), type: "Opaque" }), {
    problem: 'its type is "Opaque", not kubernetes.io/tls',
  });
  assert.deepEqual(tlsPair({ type: "kubernetes.io/tls", data: { "tls.crt": btoa(pair.crt) } }), {
    problem: "there is no tls.key",
  });
  assert.deepEqual(tlsPair({ type: "kubernetes.io/tls", data: { "tls.crt": "%%%", "tls.key": btoa(pair.key) } }), {
    problem: "tls.crt is not base64 of UTF-8 text",
  });
  assert.deepEqual(
    tlsPair({ type: "kubernetes.io/tls", data: { "tls.crt": btoa(pair.crt + "\x00"), "tls.key": btoa(pair.key) } }),
    { problem: "tls.crt holds bytes other than printable ASCII" },
  );
  const mismatched = await mismatchedPair("b.test");
  const verdict = JSON.stringify(tlsPair({ ...tlsSecretOf("ns", "s", mismatched) }));
  for (const line of mismatched.key.split("\n").filter((l) => l.length > 20)) assert.ok(!verdict.includes(line));
});

Deno.test("CA verdict: every certificate parses, nothing but certificates", async () => {
  const { ca } = await goodPair("a.test");
  const other = (await goodPair("b.test")).ca;
  assert.equal(caBundleProblem(ca.certPem + other.certPem), null);
  assert.match(caBundleProblem(ca.certPem + GARBAGE_CERT)!, /^certificate 2 of ca\.crt cannot be parsed \(/);
  assert.match(caBundleProblem(GARBAGE_CERT)!, /^certificate 1 of ca\.crt cannot be parsed/);
  assert.equal(caBundleProblem("hello"), "ca.crt holds something else than PEM certificates");
  assert.equal(caBundleProblem(ca.certPem + ca.keyPem), "ca.crt holds something else than PEM certificates");
  assert.deepEqual(caBundle({ data: {} }), { problem: "there is no ca.crt" });
  assert.deepEqual(caBundle({ data: { "ca.crt": btoa(ca.certPem) } }), { text: ca.certPem });
});

Deno.test("a certificate whose subject node:crypto cannot read is a problem, never a throw", () => {
  // SHA-1 signed (so the weak-signature check reads its names), its subject a T61String with a Latin-1 byte
  // (valid DER: OpenSSL prints "café.example.com"); Deno's X509Certificate#subject throws on it.
  const read = (f: string) => Deno.readTextFileSync(new URL(`./data/${f}`, import.meta.url));
  const crt = read("t61_subject.crt.pem");
  const key = read("t61_subject.key.pem");
  const problem = tlsPairProblem(crt, key);
  assert.ok(problem !== null);
  assert.match(problem, /cannot read/);
  const secret = {
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa(crt), "tls.key": btoa(key), "ca.crt": btoa(crt) },
  };
  assert.ok("problem" in tlsPair(secret));
});
