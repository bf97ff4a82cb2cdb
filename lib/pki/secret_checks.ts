/**
 * @module pki/secret_checks
 * Whether the certificate material of a Secret is what the proxy's HAProxy 2.6 loads and serves:
 * a `kubernetes.io/tls` Secret's chain (`tls.crt`) and key (`tls.key`), or a CA bundle (`ca.crt`).
 * Each verdict is null (usable) or one sentence saying why not, never any of the key material.
 * Shared by the controller (lib/render/tls_secret.ts keeps only the verdict of each Secret) and
 * the proxy (lib/proxy/files.ts writes the files), so both refuse the same Secrets for the same
 * reason. PEM blocks are split as @peculiar/x509's PemConverter splits them (lib/pki/pem.ts); certificates and keys are parsed
 * by node:crypto (a Rust DER parser, about 13 times faster than @peculiar/x509's: the controller
 * judges every Secret when it starts).
 *
 * What Debian 12's haproxy 2.6.12 (OpenSSL 3.0, default security level 2) does with a `crt` file,
 * tried one file at a time: it loads RSA and DSA keys of 2048 bits or more, RSA-PSS, EC keys on
 * any curve OpenSSL knows, Ed25519 and Ed448; it refuses an encrypted key, a key that does not match
 * the certificate, an RSA or DSA key under 2048 bits in any certificate of the chain (112 bits of
 * security), an MD5 or SHA-1 signature on any certificate that is not self-signed, and a chain with
 * a block it cannot parse. Of what it loads, only some keys can serve a TLS client: none of
 * OpenSSL's default TLS 1.2 ciphers and no TLS 1.3 scheme signs with DSA, and OpenSSL 3.0 (like the
 * browsers) signs a TLS 1.3 handshake only on P-256, P-384 and P-521. So the verdict accepts RSA
 * (2048+), ECDSA on those three curves, Ed25519 and Ed448 keys. The proxy also loads each new file
 * with its own HAProxy before using it (lib/proxy/file_check.ts; at its first start only if the
 * whole configuration is refused): that is the final word, this the early, explained one.
 */
import { Buffer } from "node:buffer";
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from "node:crypto";
import { pemDecode, pemEncode } from "./pem.ts";

/** The fields of a Secret read here (a V1Secret, plain JSON). */
export interface SecretData {
  type?: string;
  data?: Record<string, string>;
}

export const TLS_SECRET_TYPE = "kubernetes.io/tls";

/** A PEM block as lib/pki/pem.ts reads it. */
interface Block {
  readonly label: string;
  readonly headers: readonly { key: string; value: string }[];
  readonly der: Uint8Array;
}

/** What a CA bundle may hold: PEM certificates and the white space between them, nothing else. */
const CA_BUNDLE =
  /^(?:[ \t\r\n]*-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----)+[ \t\r\n]*$/;
const MAX_PEM = 1024 * 1024;
/** Standard base64 (what the API server returns in `data`). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Signature algorithms OpenSSL 3.0 rates below 112 bits (security level 2) on a certificate not self-signed. */
const WEAK_SIGNATURES: Readonly<Record<string, string>> = {
  "1.2.840.113549.1.1.2": "MD2",
  "1.2.840.113549.1.1.3": "MD4",
  "1.2.840.113549.1.1.4": "MD5",
  "1.2.840.113549.1.1.5": "SHA-1",
  "1.3.14.3.2.29": "SHA-1",
  "1.2.840.10045.4.1": "SHA-1",
  "1.2.840.10040.4.3": "SHA-1",
};
/** The EC curves (node:crypto's names) a TLS 1.3 handshake signs on, with their usual names. */
const CURVES: Readonly<Record<string, string>> = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" };
const SERVED_KEYS = "RSA (2048 bits or more), ECDSA (P-256, P-384, P-521), Ed25519 or Ed448";

/**
 * The text of a Secret's data field (base64 of ASCII text, as PEM and htpasswd files are), or why
 * it cannot be one. `problem` is a clause such as "there is no tls.crt".
 */
export function asciiField(secret: SecretData, field: string): { text: string } | { problem: string } {
  const b64 = secret.data?.[field];
  if (typeof b64 !== "string" || b64 === "") return { problem: `there is no ${field}` };
  let text: string;
  try {
    // Buffer decodes about 25 times faster than atob and a byte copy; it skips what is not base64, so that is checked first
    if (!BASE64.test(b64)) throw new Error("not base64");
    text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(b64, "base64"));
  } catch {
    return { problem: `${field} is not base64 of UTF-8 text` };
  }
  if (text.length > MAX_PEM) return { problem: `${field} is larger than 1 MiB` };
  // A PEM file is ASCII; anything else (NUL, control characters) has no business in it.
  if (/[^\x20-\x7e\r\n\t]/.test(text)) return { problem: `${field} holds bytes other than printable ASCII` };
  return { text };
}

/** The chain and key of a `kubernetes.io/tls` Secret the proxy can serve, or why not. */
export function tlsPair(secret: SecretData): { crt: string; key: string } | { problem: string } {
  if (secret.type !== TLS_SECRET_TYPE) {
    return { problem: `its type is ${quotedType(secret.type ?? "")}, not ${TLS_SECRET_TYPE}` };
  }
  const crt = asciiField(secret, "tls.crt");
  if ("problem" in crt) return crt;
  const key = asciiField(secret, "tls.key");
  if ("problem" in key) return key;
  const problem = tlsPairProblem(crt.text, key.text);
  return problem === null ? { crt: crt.text, key: key.text } : { problem };
}

/** The CA bundle (`ca.crt`) of a Secret of any type, or why the proxy may not use it. */
export function caBundle(secret: SecretData): { text: string } | { problem: string } {
  const ca = asciiField(secret, "ca.crt");
  if ("problem" in ca) return ca;
  const problem = caBundleProblem(ca.text);
  return problem === null ? ca : { problem };
}

/** Why `text` is not a CA bundle (one or more PEM certificates that all parse, and nothing else), or null. */
export function caBundleProblem(text: string): string | null {
  return unthrown("ca.crt", () => caBundleCheck(text));
}

function caBundleCheck(text: string): string | null {
  if (text.length > MAX_PEM) return "ca.crt is larger than 1 MiB";
  if (!CA_BUNDLE.test(text)) return "ca.crt holds something else than PEM certificates";
  const blocks = pemBlocks(text, "ca.crt");
  if (typeof blocks === "string") return blocks;
  for (const [i, b] of blocks.entries()) {
    const cert = certificate(b, `certificate ${i + 1} of ca.crt`);
    if (typeof cert === "string") return cert;
  }
  return null;
}

/**
 * Why the certificate chain `crt` (PEM, leaf first) and the private key `key` (PEM) cannot be
 * served by the proxy, or null: every certificate parses and is strong enough for OpenSSL's
 * security level 2, the key is unencrypted, of a type TLS clients accept, and the leaf's.
 */
export function tlsPairProblem(crt: string, key: string): string | null {
  return unthrown("tls.crt or tls.key", () => tlsPairCheck(crt, key));
}

/**
 * `check`'s verdict, or, should reading a certificate throw where no check expected it (Deno's
 * X509Certificate throws on some names OpenSSL reads, e.g. a T61String with a Latin-1 byte), a
 * problem: one Secret is then left out, never the reason a whole configuration or cache fails.
 */
function unthrown(what: string, check: () => string | null): string | null {
  try {
    return check();
  } catch (err) {
    return `${what} holds a certificate this check cannot read (${detail(err)})`;
  }
}

function tlsPairCheck(crt: string, key: string): string | null {
  const certBlocks = pemBlocks(crt, "tls.crt");
  if (typeof certBlocks === "string") return certBlocks;
  if (certBlocks.length === 0) return "tls.crt holds no PEM certificate";
  const other = certBlocks.find((b) => b.label !== "CERTIFICATE");
  // The proxy writes tls.crt then tls.key into one file, where HAProxy takes the first key it finds.
  if (other) return `tls.crt holds a ${other.label} block; only certificates belong there`;
  const chain: X509Certificate[] = [];
  for (const [i, b] of certBlocks.entries()) {
    const cert = certificate(b, `certificate ${i + 1} of tls.crt`);
    if (typeof cert === "string") return cert;
    chain.push(cert);
  }
  const keyBlocks = pemBlocks(key, "tls.key");
  if (typeof keyBlocks === "string") return keyBlocks;
  if (keyBlocks.some((b) => b.label.endsWith("CERTIFICATE"))) {
    return "tls.key holds a certificate; certificates belong in tls.crt";
  }
  const keyBlock = keyBlocks.find((b) => b.label.endsWith("PRIVATE KEY"));
  if (!keyBlock) return "tls.key holds no PEM private key";
  const encrypted = keyBlock.label === "ENCRYPTED PRIVATE KEY" ||
    keyBlock.headers.some((h) => h.key === "Proc-Type" && h.value.includes("ENCRYPTED"));
  if (encrypted) {
    return "tls.key is encrypted with a passphrase, which the proxy does not have; store it unencrypted " +
      "(openssl pkey -in key.pem -out tls.key)";
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pemEncode(keyBlock.der, keyBlock.label));
  } catch (err) {
    return `tls.key cannot be read (${detail(err)}); the proxy serves ${SERVED_KEYS} keys`;
  }
  const unserved = keyProblem(privateKey);
  if (unserved) return unserved;
  let matches: boolean;
  try {
    matches = createPublicKey(privateKey).equals(chain[0].publicKey);
  } catch (err) {
    return `the public key of the certificate in tls.crt cannot be read (${detail(err)}); ` +
      `the proxy serves ${SERVED_KEYS} certificates`;
  }
  if (!matches) return "tls.key does not match the certificate (the first one in tls.crt)";
  for (const [i, cert] of chain.entries()) {
    const weak = weakness(cert, `certificate ${i + 1} of tls.crt`);
    if (weak) return weak;
  }
  return null;
}

/**
 * The PEM blocks of `text`, or why one cannot be read: PemConverter skips a block whose body is
 * not base64, so the BEGIN lines are counted too.
 */
function pemBlocks(text: string, field: string): Block[] | string {
  let decoded: ReturnType<typeof pemDecode>;
  try {
    decoded = pemDecode(text);
  } catch (err) {
    return `${field} holds a PEM block that cannot be read (${detail(err)})`;
  }
  const begins = text.match(/-----BEGIN [^\r\n]*-----/g)?.length ?? 0;
  if (decoded.length !== begins) return `${field} holds a PEM block that cannot be read`;
  return decoded.map((b) => ({ label: b.type, headers: b.headers, der: b.der }));
}

function certificate(block: Block, what: string): X509Certificate | string {
  if (block.label !== "CERTIFICATE") return `${what} is a ${block.label} block, not a certificate`;
  try {
    return new X509Certificate(Buffer.from(block.der));
  } catch (err) {
    return `${what} cannot be parsed (${detail(err)})`;
  }
}

/** Why the proxy cannot serve TLS with this private key, or null. */
function keyProblem(key: KeyObject): string | null {
  const type = key.asymmetricKeyType ?? "unknown";
  const details = key.asymmetricKeyDetails ?? {};
  if (type === "rsa" || type === "rsa-pss") {
    const bits = details.modulusLength ?? 0;
    if (bits < 2048) {
      return `tls.key is a ${bits}-bit RSA key; the proxy's OpenSSL (security level 2) needs 2048 bits or more`;
    }
    return null;
  }
  if (type === "ec") {
    const curve = details.namedCurve ?? "unknown";
    return curve in CURVES ? null : `tls.key is an EC key on curve ${curve}; the proxy serves ${SERVED_KEYS} keys`;
  }
  if (type === "ed25519" || type === "ed448") return null;
  if (type === "dsa") {
    return `tls.key is a DSA key, which TLS clients no longer negotiate; the proxy serves ${SERVED_KEYS} keys`;
  }
  return `tls.key is a ${type} key, which cannot sign a TLS handshake; the proxy serves ${SERVED_KEYS} keys`;
}

/**
 * Why OpenSSL's security level 2 refuses `cert` in a chain, or null: a signature weaker than 112
 * bits (not checked on a self-signed certificate, as OpenSSL does) or an RSA/DSA key under 2048
 * bits. A public key node:crypto cannot read is left to the proxy's own load (module header).
 */
function weakness(cert: X509Certificate, what: string): string | null {
  // Deno's node:crypto has it (as Node 24 does); @types/node of this Deno does not list it yet
  const oid = (cert as X509Certificate & { signatureAlgorithmOid?: string }).signatureAlgorithmOid;
  const hash = WEAK_SIGNATURES[oid ?? ""];
  if (hash && cert.subject !== cert.issuer) {
    return `${what} is signed with ${hash}, which the proxy's OpenSSL refuses (security level 2); reissue it with SHA-256`;
  }
  let key: KeyObject;
  try {
    key = cert.publicKey;
  } catch {
    return null;
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if ((key.asymmetricKeyType === "rsa" || key.asymmetricKeyType === "dsa") && bits !== undefined && bits < 2048) {
    return `${what} has a ${bits}-bit ${key.asymmetricKeyType.toUpperCase()} key; the proxy's OpenSSL ` +
      `(security level 2) needs 2048 bits or more`;
  }
  return null;
}

/** An error's message on one short line. */
function detail(err: unknown): string {
  const text = String((err as Error)?.message ?? err).replace(/\s+/g, " ").trim();
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** A Secret's type as a message shows it: quoted, on one line (every non-ASCII character escaped), at most 60 characters. */
function quotedType(type: string): string {
  const s = JSON.stringify(type.length > 60 ? `${type.slice(0, 57)}...` : type);
  return s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
