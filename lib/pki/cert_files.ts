/**
 * @module pki/cert_files
 * Reads a certificate chain and its private key from PEM files, checks that they belong
 * together, and reads the names in the leaf (CN and DNS SANs) for SNI.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { SetupError } from "../common/errors.ts";
import { x509 } from "./x509.ts";

export interface KeyPair {
  /** PEM of the chain: leaf first, then any CA certificates. */
  readonly cert: string;
  readonly key: string;
  readonly leaf: X509Certificate;
  /** CN and DNS SANs of the leaf. */
  readonly names: readonly string[];
}

const pemBlock = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate in a PEM bundle, in order; a SetupError names `source` when there is none. */
export function parsePemBundle(pem: string, source: string): X509Certificate[] {
  const blocks = pem.match(pemBlock) ?? [];
  if (blocks.length === 0) throw new SetupError(`${source}: no PEM certificate found; give a PEM-encoded file`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b);
    } catch (err) {
      throw new SetupError(`${source}: certificate ${i + 1} cannot be parsed (${(err as Error).message})`);
    }
  });
}

/** CN and DNS SANs of a certificate. */
export function certificateNames(cert: X509Certificate): string[] {
  const parsed = new x509.X509Certificate(new Uint8Array(cert.raw));
  const names: string[] = [];
  for (const cn of parsed.subjectName.getField("CN")) names.push(cn);
  const san = parsed.getExtension(x509.SubjectAlternativeNameExtension);
  for (const n of san?.names.items ?? []) if (n.type === "dns") names.push(n.value);
  return names;
}

function readText(file: string, option: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new SetupError(`${option}: cannot read ${file} (${(err as Error).message})`);
  }
}

/** Loads and cross-checks one certificate/key pair; `option` names the flag in errors. */
export function loadKeyPair(certFile: string, keyFile: string, option: string): KeyPair {
  const cert = readText(certFile, option);
  const key = readText(keyFile, option);
  const chain = parsePemBundle(cert, `${option} ${certFile}`);
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new SetupError(`${option}: ${keyFile} holds no usable private key (${(err as Error).message})`);
  }
  if (!chain[0].checkPrivateKey(privateKey)) {
    throw new SetupError(`${option}: the key in ${keyFile} does not match the first certificate in ${certFile}`);
  }
  return { cert, key, leaf: chain[0], names: certificateNames(chain[0]) };
}
