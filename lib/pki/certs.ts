/**
 * @module pki/certs
 * Certificate authorities and leaf certificates minted in memory with @peculiar/x509 and WebCrypto,
 * as PEM that node:tls, openssl, Go (kube-apiserver, etcd) and HAProxy accept: certificates as
 * "CERTIFICATE", private keys as PKCS#8 "PRIVATE KEY", public keys as SPKI "PUBLIC KEY".
 *
 * ```ts
 * const ca = await createCA({ commonName: "my-ca" });
 * const leaf = await issueCertificate(ca, { commonName: "alice", organizations: ["devs"], usages: ["clientAuth"] });
 * leaf.certPem; leaf.keyPem; ca.certPem;
 * ```
 */
import { x509 } from "./x509.ts";

/** ECDSA P-256 is small and fast; RSA 2048 where a consumer insists on RSA (service-account signing). */
export type KeyAlgorithm = "ECDSA-P256" | "RSA-2048";
export type ExtendedUsage = "serverAuth" | "clientAuth";

/** A certificate with the key pair it certifies. */
export interface CertifiedKey {
  readonly cert: x509.X509Certificate;
  readonly keys: CryptoKeyPair;
  readonly algorithm: KeyAlgorithm;
  /** The certificate as one PEM block. */
  readonly certPem: string;
  /** The private key as PKCS#8 PEM ("PRIVATE KEY"). */
  readonly keyPem: string;
}

export interface NameOptions {
  commonName: string;
  /** O attributes, one RDN each (Kubernetes reads them as the user's groups). */
  organizations?: readonly string[];
}

export interface CAOptions extends NameOptions {
  algorithm?: KeyAlgorithm;
  /** Default 365 days. */
  validityDays?: number;
  /** Signs the CA certificate (an intermediate CA); default: self-signed (a root). */
  issuer?: CertifiedKey;
  /** basicConstraints pathLenConstraint; default none. */
  pathLength?: number;
  /** false leaves keyCertSign out of the key usage (only for testing verifiers); default true. */
  keyCertSign?: boolean;
}

export interface LeafOptions extends NameOptions {
  /** Extended key usages; at least one. */
  usages: readonly ExtendedUsage[];
  dnsNames?: readonly string[];
  /** IPv4 or IPv6 literals for the subjectAltName. */
  ipAddresses?: readonly string[];
  algorithm?: KeyAlgorithm;
  /** Default 365 days. */
  validityDays?: number;
  /** Start of validity; default one minute ago (tolerates small clock differences). */
  notBefore?: Date;
}

const dayMs = 86_400_000;

function keyParams(algorithm: KeyAlgorithm): RsaHashedKeyGenParams | EcKeyGenParams {
  return algorithm === "RSA-2048"
    ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) }
    : { name: "ECDSA", namedCurve: "P-256" };
}

function signingAlgorithm(algorithm: KeyAlgorithm): Algorithm | EcdsaParams {
  return algorithm === "RSA-2048" ? { name: "RSASSA-PKCS1-v1_5" } : { name: "ECDSA", hash: "SHA-256" };
}

/** A new extractable key pair for signing certificates or tokens. */
export async function generateKeyPair(algorithm: KeyAlgorithm = "ECDSA-P256"): Promise<CryptoKeyPair> {
  return await crypto.subtle.generateKey(keyParams(algorithm), true, ["sign", "verify"]) as CryptoKeyPair;
}

/** PKCS#8 PEM ("PRIVATE KEY") of an extractable private key. */
export async function privateKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey("pkcs8", key), "PRIVATE KEY");
}

/** SPKI PEM ("PUBLIC KEY") of a public key. */
export async function publicKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey("spki", key), "PUBLIC KEY");
}

/** The subject as a JSON name: O attributes first, then CN, as Go's pkix and openssl print it. */
function subjectOf(opts: NameOptions): x509.Name {
  if (!opts.commonName) throw new Error("certificate subject: commonName must not be empty");
  const rdns: Record<string, string[]>[] = (opts.organizations ?? []).map((o) => ({ O: [o] }));
  rdns.push({ CN: [opts.commonName] });
  return new x509.Name(rdns);
}

function randomSerial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] &= 0x7f; // positive INTEGER
  bytes[0] |= 0x01; // and no leading zero byte to trim
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function certified(
  cert: x509.X509Certificate,
  keys: CryptoKeyPair,
  algorithm: KeyAlgorithm,
): Promise<CertifiedKey> {
  return { cert, keys, algorithm, certPem: cert.toString("pem") + "\n", keyPem: await privateKeyPem(keys.privateKey) };
}

/** A certificate authority (basicConstraints CA, keyCertSign + cRLSign): self-signed, or signed by `opts.issuer`. */
export async function createCA(opts: CAOptions): Promise<CertifiedKey> {
  const algorithm = opts.algorithm ?? "ECDSA-P256";
  const keys = await generateKeyPair(algorithm);
  const now = Date.now();
  const certSign = opts.keyCertSign === false ? 0 : x509.KeyUsageFlags.keyCertSign;
  const extensions = [
    new x509.BasicConstraintsExtension(true, opts.pathLength, true),
    new x509.KeyUsagesExtension(certSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  const dates = { notBefore: new Date(now - 60_000), notAfter: new Date(now + (opts.validityDays ?? 365) * dayMs) };
  const cert = opts.issuer
    ? await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject: subjectOf(opts),
      issuer: opts.issuer.cert.subjectName,
      ...dates,
      signingAlgorithm: signingAlgorithm(opts.issuer.algorithm),
      publicKey: keys.publicKey,
      signingKey: opts.issuer.keys.privateKey,
      extensions,
    })
    : await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: subjectOf(opts),
      ...dates,
      signingAlgorithm: signingAlgorithm(algorithm),
      keys,
      extensions,
    });
  return await certified(cert, keys, algorithm);
}

/** A leaf certificate signed by `issuer`, for a new key pair. */
export async function issueCertificate(issuer: CertifiedKey, opts: LeafOptions): Promise<CertifiedKey> {
  if (opts.usages.length === 0) throw new Error(`certificate ${opts.commonName}: give at least one usage`);
  const algorithm = opts.algorithm ?? "ECDSA-P256";
  const keys = await generateKeyPair(algorithm);
  const notBefore = opts.notBefore ?? new Date(Date.now() - 60_000);
  // RSA keys may also encrypt the TLS pre-master secret (RSA key exchange); ECDSA keys only sign.
  const keyUsage = x509.KeyUsageFlags.digitalSignature |
    (algorithm === "RSA-2048" ? x509.KeyUsageFlags.keyEncipherment : 0);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(keyUsage, true),
    new x509.ExtendedKeyUsageExtension(opts.usages.map((u) => x509.ExtendedKeyUsage[u])),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(issuer.keys.publicKey),
  ];
  const names = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: "dns" as const, value })),
    ...(opts.ipAddresses ?? []).map((value) => ({ type: "ip" as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: subjectOf(opts),
    issuer: issuer.cert.subjectName,
    notBefore,
    notAfter: new Date(notBefore.getTime() + (opts.validityDays ?? 365) * dayMs),
    signingAlgorithm: signingAlgorithm(issuer.algorithm),
    publicKey: keys.publicKey,
    signingKey: issuer.keys.privateKey,
    extensions,
  });
  return await certified(cert, keys, algorithm);
}
