/**
 * @module auth/client_cert
 * Verifies a presented client-certificate chain against one CA bundle, the way Go's
 * `x509.Certificate.Verify` does for Kubernetes: every certificate on the path within its validity
 * dates, each signed by the next, intermediates marked as CAs, the path ending at a bundle CA, and
 * the leaf allowed for client authentication (extended key usage clientAuth or any).
 *
 * The TLS layer only asks for the certificate (`requestCert: true, rejectUnauthorized: false`) so
 * that one listener can serve both the client CA and the front-proxy CA and still let anonymous
 * and token requests in; the decision is made here, per CA bundle.
 */
import { X509Certificate } from "node:crypto";
import { LRUCache } from "lru-cache";
import { x509 } from "../pki.ts";
import type { UserInfo } from "./types.ts";

const clientAuthOid = "1.3.6.1.5.5.7.3.2";
const anyUsageOid = "2.5.29.37.0";
const maxDepth = 8;

export type ChainResult =
  | { readonly ok: true; readonly commonName: string; readonly organizations: readonly string[] }
  | { readonly ok: false; readonly reason: string };

/** The subject CN and O values of a certificate (parsed with @peculiar/x509, not by splitting strings). */
export function subjectOf(cert: X509Certificate): { commonName: string; organizations: string[] } {
  const parsed = new x509.X509Certificate(new Uint8Array(cert.raw));
  return {
    commonName: parsed.subjectName.getField("CN")[0] ?? "",
    organizations: parsed.subjectName.getField("O"),
  };
}

/**
 * Whether the certificate's extended key usage allows client authentication. The leaf must name
 * clientAuth (or any usage); a CA on the path without the extension is unconstrained, one with it
 * must include clientAuth, as Go checks usage nesting.
 */
function allowsClientAuth(cert: X509Certificate, requirePresent: boolean): boolean {
  const parsed = new x509.X509Certificate(new Uint8Array(cert.raw));
  const eku = parsed.getExtension(x509.ExtendedKeyUsageExtension);
  if (!eku) return !requirePresent;
  return eku.usages.some((u) => u === clientAuthOid || u === anyUsageOid);
}

function withinDates(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);
}

/** Issuer name equals the parent's subject and the parent's key verifies the signature (as Go checks). */
function signedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.issuer === parent.subject && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/** One CA bundle's verifier with a bounded cache of results keyed by the presented chain. */
export class ClientCertVerifier {
  readonly #roots: readonly X509Certificate[];
  readonly #cache = new LRUCache<string, ChainResult>({ max: 4096 });

  constructor(roots: readonly X509Certificate[]) {
    this.#roots = roots;
  }

  get roots(): readonly X509Certificate[] {
    return this.#roots;
  }

  /** `chain` is leaf first, then any intermediates the client sent. */
  verify(chain: readonly X509Certificate[], now = new Date()): ChainResult {
    if (chain.length === 0) return { ok: false, reason: "no client certificate" };
    const key = chain.map((c) => c.fingerprint256).join("/");
    const cached = this.#cache.get(key);
    if (cached) {
      // Cached results are re-checked only for dates, which change with time.
      if (!cached.ok || chain.every((c) => withinDates(c, now))) return cached;
    }
    const result = this.#verifyUncached(chain, now);
    this.#cache.set(key, result);
    return result;
  }

  #verifyUncached(chain: readonly X509Certificate[], now: Date): ChainResult {
    const leaf = chain[0];
    if (!withinDates(leaf, now)) {
      return { ok: false, reason: `certificate ${leaf.subject} is expired or not yet valid` };
    }
    if (!allowsClientAuth(leaf, true)) {
      return { ok: false, reason: "certificate is not allowed for client authentication" };
    }
    let current = leaf;
    const intermediates = chain.slice(1);
    for (let depth = 0; depth < maxDepth; depth++) {
      const root = this.#roots.find((r) => signedBy(current, r));
      if (root) {
        if (!withinDates(root, now)) return { ok: false, reason: "the signing CA is expired or not yet valid" };
        const { commonName, organizations } = subjectOf(leaf);
        return { ok: true, commonName, organizations };
      }
      const next = intermediates.find((i) => i !== current && i.ca && withinDates(i, now) && signedBy(current, i));
      if (!next) break;
      if (!allowsClientAuth(next, false)) {
        return { ok: false, reason: "an intermediate CA does not allow client authentication" };
      }
      current = next;
    }
    return { ok: false, reason: "certificate signed by unknown authority" };
  }
}

/** The identity of a verified client certificate: user = CN, groups = O. */
export function userFromCertificate(result: Extract<ChainResult, { ok: true }>): UserInfo {
  return { name: result.commonName, groups: [...result.organizations], extra: {} };
}
