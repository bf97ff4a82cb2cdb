/**
 * @module tests/pki/materials
 * Certificate material, good and bad, as tenants put it into Secrets: a valid chain, a key of
 * another certificate, an encrypted key, keys of types the proxy does not serve, a weak key, a
 * SHA-1 signature, armoured garbage. Shared by the verdict tests (tests/pki, tests/render), the
 * proxy's file checks against a real HAProxy (tests/proxy) and the tenancy suite.
 */
import { generateKeyPairSync } from "node:crypto";
import { x509 } from "../../lib/pki/x509.ts";
import { type CertifiedKey, createCA, issueCertificate, privateKeyPem } from "../../lib/pki/certs.ts";

/** A certificate chain and a key as PEM text (`tls.crt`, `tls.key`). */
export interface Pair {
  readonly crt: string;
  readonly key: string;
}

/** A certificate block whose base64 decodes to bytes that are no certificate. */
export const GARBAGE_CERT =
  "-----BEGIN CERTIFICATE-----\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n-----END CERTIFICATE-----\n";

/** A kubernetes.io/tls Secret of `pair`. */
export function tlsSecretOf(namespace: string, name: string, pair: Pair) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace, name },
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa(pair.crt), "tls.key": btoa(pair.key) },
  };
}

/** A Secret holding `ca.crt`. */
export function caSecretOf(namespace: string, name: string, ca: string) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace, name },
    type: "Opaque",
    data: { "ca.crt": btoa(ca) },
  };
}

/** A leaf for `host` (and the CA that signed it) as a Pair whose chain is leaf then CA. */
export async function goodPair(host: string, algorithm: "ECDSA-P256" | "RSA-2048" = "ECDSA-P256"): Promise<
  Pair & { ca: CertifiedKey }
> {
  const ca = await createCA({ commonName: `CA of ${host}`, algorithm });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"], algorithm });
  return { crt: leaf.certPem + ca.certPem, key: leaf.keyPem, ca };
}

/** `host`'s certificate with the key of another certificate for the same name. */
export async function mismatchedPair(host: string): Promise<Pair> {
  const [one, two] = [await goodPair(host), await goodPair(host)];
  return { crt: one.crt, key: two.key };
}

/** `host`'s certificate with its key encrypted under a passphrase (PKCS#8 or the traditional RSA form). */
export function encryptedKey(form: "pkcs8" | "pkcs1"): string {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return String(privateKey.export({ format: "pem", type: form, cipher: "aes-256-cbc", passphrase: "secret" }));
}

/** A private key of a type or curve the proxy does not serve, as PKCS#8 PEM. */
export function unservedKey(type: "dsa" | "x25519" | "secp256k1"): string {
  const pair = type === "dsa"
    ? generateKeyPairSync("dsa", { modulusLength: 1024, divisorLength: 160 })
    : type === "x25519"
    ? generateKeyPairSync("x25519")
    : generateKeyPairSync("ec", { namedCurve: "secp256k1" });
  return String(pair.privateKey.export({ format: "pem", type: "pkcs8" }));
}

/** A leaf signed by `ca` for keys made here (key algorithms lib/pki/certs.ts does not offer). */
async function leafFor(
  ca: CertifiedKey,
  keys: CryptoKeyPair,
  host: string,
  signingAlgorithm: Algorithm | EcdsaParams = { name: "ECDSA", hash: "SHA-256" },
): Promise<string> {
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "0102",
    subject: `CN=${host}`,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "dns", value: host }])],
  });
  return cert.toString("pem") + "\n";
}

/** A leaf with a 1024-bit RSA key: below OpenSSL's security level 2. */
export async function weakRsaPair(host: string): Promise<Pair> {
  const ca = await createCA({ commonName: `CA of ${host}` });
  const keys = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]) },
    true,
    ["sign", "verify"],
  ) as CryptoKeyPair;
  return { crt: await leafFor(ca, keys, host) + ca.certPem, key: await privateKeyPem(keys.privateKey) };
}

/** A leaf its CA signed with ECDSA over SHA-1, which OpenSSL 3's security level 2 refuses. */
export async function sha1SignedPair(host: string): Promise<Pair> {
  const ca = await createCA({ commonName: `CA of ${host}` });
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const crt = await leafFor(ca, keys, host, { name: "ECDSA", hash: "SHA-1" } as EcdsaParams);
  return { crt: crt + ca.certPem, key: await privateKeyPem(keys.privateKey) };
}

/** A self-signed Ed25519 certificate for `host` and its key. */
export async function ed25519Pair(host: string): Promise<Pair> {
  const keys = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${host}`,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingAlgorithm: { name: "Ed25519" },
    keys,
  });
  return { crt: cert.toString("pem") + "\n", key: await privateKeyPem(keys.privateKey) };
}

/**
 * A P-256 leaf whose chain holds its issuing CA on the 192-bit curve prime192v1: the controller's
 * check passes it (node:crypto cannot read that curve, so only HAProxy can judge it), HAProxy
 * refuses the chain (96 bits of security). Made with the openssl command (WebCrypto has no P-192).
 */
export async function weakChainPair(host: string): Promise<Pair> {
  const dir = await Deno.makeTempDir({ prefix: "ic-weak-chain-" });
  const openssl = async (...args: string[]) => {
    const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "piped", stderr: "piped" }).output();
    if (!out.success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  };
  try {
    await openssl("ecparam", "-name", "prime192v1", "-genkey", "-noout", "-out", "ca.key");
    await openssl("req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=weak CA", "-days", "2", "-out", "ca.crt");
    await openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "leaf.key");
    await openssl("req", "-new", "-key", "leaf.key", "-subj", `/CN=${host}`, "-out", "leaf.csr");
    await openssl(
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-set_serial",
      "7",
      "-sha256",
      "-days",
      "2",
      "-out",
      "leaf.crt",
    );
    const read = (f: string) => Deno.readTextFile(`${dir}/${f}`);
    return { crt: (await read("leaf.crt")) + (await read("ca.crt")), key: await read("leaf.key") };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
