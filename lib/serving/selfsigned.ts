/**
 * @module serving/selfsigned
 * Without `--tls-cert-file`/`--tls-private-key-file`, the secure port uses a self-signed CA and a
 * serving certificate for localhost, 127.0.0.1 and the bind address, kept in `--cert-dir` as
 * `apiserver.crt` (leaf, then CA) and `apiserver.key` (mode 0600) and reused on the next start.
 * Minting goes through lib/pki/certs.ts (@peculiar/x509 over WebCrypto).
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import { createCA, issueCertificate } from "../pki/certs.ts";

export interface SelfSignedFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** True when the files were written now, false when reused. */
  readonly generated: boolean;
}

/** The names the serving certificate covers. */
export function selfSignedNames(bindAddress: string): { dns: string[]; ips: string[] } {
  const dns = ["localhost"];
  const ips = ["127.0.0.1"];
  const bind = bindAddress.trim();
  const unspecified = bind === "" || bind === "0.0.0.0" || bind === "::";
  if (!unspecified) {
    if (isIP(bind)) {
      if (!ips.includes(bind)) ips.push(bind);
    } else if (!dns.includes(bind)) dns.push(bind);
  }
  return { dns, ips };
}

/** Generates the pair into `certDir`, or reuses it when both files are there. */
export async function ensureSelfSigned(certDir: string, bindAddress: string): Promise<SelfSignedFiles> {
  const certFile = join(certDir, "apiserver.crt");
  const keyFile = join(certDir, "apiserver.key");
  const haveCert = existsSync(certFile);
  const haveKey = existsSync(keyFile);
  if (haveCert && haveKey) {
    log.info("using the self-signed serving certificate from --cert-dir", { certFile });
    return { certFile, keyFile, generated: false };
  }
  if (haveCert !== haveKey) {
    throw new SetupError(
      `--cert-dir: ${haveCert ? keyFile : certFile} is missing while ${haveCert ? certFile : keyFile} exists; ` +
        "remove the other file to regenerate both",
    );
  }
  const { dns, ips } = selfSignedNames(bindAddress);
  const host = dns.at(-1) ?? "localhost";
  const stamp = Math.floor(Date.now() / 1000);
  const ca = await createCA({ commonName: `${host}-ca@${stamp}` });
  const leaf = await issueCertificate(ca, {
    commonName: `${host}@${stamp}`,
    usages: ["serverAuth"],
    dnsNames: dns,
    ipAddresses: ips,
  });
  try {
    mkdirSync(certDir, { recursive: true, mode: 0o755 });
    writeFileSync(certFile, leaf.certPem + ca.certPem, { mode: 0o644 });
    writeFileSync(keyFile, leaf.keyPem, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
  } catch (err) {
    throw new SetupError(
      `--cert-dir: cannot write the self-signed certificate into ${certDir} (${(err as Error).message})`,
    );
  }
  log.info("generated a self-signed serving certificate", { certFile, dns: dns.join(","), ips: ips.join(",") });
  return { certFile, keyFile, generated: true };
}
