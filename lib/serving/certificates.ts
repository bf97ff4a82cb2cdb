/**
 * @module serving/certificates
 * The certificates of the secure port: the default pair (`--tls-cert-file`/`--tls-private-key-file`,
 * else a self-signed pair in `--cert-dir`), C's `--tls-ca-file` appended to the served chain, and
 * the `--tls-sni-cert-key` pairs with their selection table, as node:tls secure contexts.
 */
import { readFileSync } from "node:fs";
import tls from "node:tls";
import { SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import { loadKeyPair, parsePemBundle } from "../pki/cert_files.ts";
import { ensureSelfSigned } from "./selfsigned.ts";
import type { ServingSettings } from "./settings.ts";
import { buildSniTable, selectSni, type SniTable } from "./sni.ts";

export interface ServingCertificates {
  /** PEM chain and key of the default certificate. */
  readonly cert: string;
  readonly key: string;
  readonly defaultContext: tls.SecureContext;
  readonly sniContexts: readonly tls.SecureContext[];
  readonly sniTable: SniTable;
  /** Where the default certificate came from (for logs and tests). */
  readonly source: "files" | "self-signed";
  readonly certFile: string;
}

export async function loadServingCertificates(s: ServingSettings): Promise<ServingCertificates> {
  const haveCert = !!s.tlsCertFile;
  const haveKey = !!s.tlsPrivateKeyFile;
  if (haveCert !== haveKey) {
    throw new SetupError(
      haveCert
        ? "--tls-cert-file is set without --tls-private-key-file; give both, or neither for a self-signed certificate"
        : "--tls-private-key-file is set without --tls-cert-file; give both, or neither for a self-signed certificate",
    );
  }
  let certFile: string, keyFile: string, source: ServingCertificates["source"];
  if (haveCert) {
    certFile = s.tlsCertFile!;
    keyFile = s.tlsPrivateKeyFile!;
    source = "files";
  } else {
    const generated = await ensureSelfSigned(s.certDir, s.bindAddress);
    certFile = generated.certFile;
    keyFile = generated.keyFile;
    source = "self-signed";
  }
  const pair = loadKeyPair(certFile, keyFile, haveCert ? "--tls-cert-file" : "--cert-dir");
  let cert = pair.cert.endsWith("\n") ? pair.cert : pair.cert + "\n";
  if (s.release === "C" && s.tlsCaFile) {
    let ca: string;
    try {
      ca = readFileSync(s.tlsCaFile, "utf8");
    } catch (err) {
      throw new SetupError(`--tls-ca-file: cannot read ${s.tlsCaFile} (${(err as Error).message})`);
    }
    parsePemBundle(ca, `--tls-ca-file ${s.tlsCaFile}`);
    cert += ca;
  }
  const sniPairs = s.tlsSniCertKey.map((n, i) => {
    const p = loadKeyPair(n.certFile, n.keyFile, `--tls-sni-cert-key[${i}]`);
    if (n.names.length === 0 && p.names.length === 0) {
      log.warn("--tls-sni-cert-key: certificate has no names and no patterns were given; it is never selected", {
        certFile: n.certFile,
      });
    }
    return { pair: p, names: n.names };
  });
  const sniTable = buildSniTable(sniPairs.map((e) => ({ explicit: e.names, extracted: e.pair.names })));
  return {
    cert,
    key: pair.key,
    defaultContext: tls.createSecureContext({ cert, key: pair.key }),
    sniContexts: sniPairs.map((e) => tls.createSecureContext({ cert: e.pair.cert, key: e.pair.key })),
    sniTable,
    source,
    certFile,
  };
}

/** The SNICallback of the server. */
export function sniCallback(certs: ServingCertificates) {
  return (servername: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void): void => {
    const i = selectSni(certs.sniTable, servername);
    cb(null, i === null ? certs.defaultContext : certs.sniContexts[i]);
  };
}
