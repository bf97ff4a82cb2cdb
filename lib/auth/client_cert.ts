/**
 * @module auth/client_cert
 * Verifies a presented client-certificate chain against one CA bundle, the way Go's
 * `x509.Certificate.Verify` does for Kubernetes: every certificate on the path within its validity
 * dates, each signed by the next, the path ending at a bundle CA, and the leaf allowed for client
 * authentication (extended key usage clientAuth or any; a CA on the path that names usages must
 * include it). Every signer must be allowed to sign certificates: a CA by basicConstraints, with
 * keyCertSign when it has a key usage (a root without any extension, an X.509 v1 certificate, is
 * accepted as Go accepts it); and a `pathLenConstraint` of N allows at most N intermediate CAs
 * below that CA. When several paths are possible, each is tried, as Go's chain builder does, within
 * Go's budget of signature checks (a client could send intermediates that all sign each other).
 *
 * The TLS layer only asks for the certificate (`requestCert: true, rejectUnauthorized: false`) so
 * that one listener can serve both the client CA and the front-proxy CA and still let anonymous
 * and token requests in; the decision is made here, per CA bundle.
 */
import { X509Certificate } from "node:crypto";
import { LRUCache } from "lru-cache";
import { x509 } from "../pki/x509.ts";
import type { UserInfo } from "./types.ts";

const clientAuthOid = "1.3.6.1.5.5.7.3.2";
const anyUsageOid = "2.5.29.37.0";
const maxDepth = 8;
/** Signature checks one verification may make (Go's maxChainSignatureChecks): the client picks the intermediates. */
const maxSignatureChecks = 100;

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
function allowsClientAuth(cert: x509.X509Certificate, requirePresent: boolean): boolean {
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  if (!eku) return !requirePresent;
  return eku.usages.some((u) => u === clientAuthOid || u === anyUsageOid);
}

/** node:crypto prints one RDN a line; reasons are logged and must stay one line. */
function oneLineSubject(cert: X509Certificate): string {
  return cert.subject.replaceAll("\n", ", ");
}

function withinDates(cert: X509Certificate, now: Date): boolean {
  return new Date(cert.validFrom) <= now && now <= new Date(cert.validTo);
}

/**
 * Issuer name equals the parent's subject and the parent's key verifies the signature (as Go
 * checks). Each signature check spends one unit of `budget`; none is made once it is spent.
 */
function signedBy(child: X509Certificate, parent: X509Certificate, budget: { left: number }): boolean {
  if (child.issuer !== parent.subject || budget.left <= 0) return false;
  budget.left--;
  try {
    return child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

/**
 * Why `signer` may not sign the certificate below it, or null. `intermediatesBelow` counts the
 * intermediate CAs between it and the leaf. As Go: a signer must be a CA (basicConstraints cA;
 * a root without extensions, X.509 v1, is exempt, as Go exempts version 1 roots); with a key
 * usage, it must include keyCertSign; a pathLenConstraint bounds the intermediates below it.
 */
function signerProblem(signer: X509Certificate, intermediatesBelow: number, isRoot: boolean): string | null {
  const parsed = new x509.X509Certificate(new Uint8Array(signer.raw));
  const bc = parsed.getExtension(x509.BasicConstraintsExtension);
  const v1Root = isRoot && parsed.extensions.length === 0;
  const name = parsed.subject;
  if (!v1Root && !bc?.ca) return `${name} is not a CA (basicConstraints), so it may not sign certificates`;
  const ku = parsed.getExtension(x509.KeyUsagesExtension);
  if (ku && (ku.usages & x509.KeyUsageFlags.keyCertSign) === 0) {
    return `${name} has a key usage without keyCertSign, so it may not sign certificates`;
  }
  if (bc?.pathLength !== undefined && intermediatesBelow > bc.pathLength) {
    return `${name} allows ${bc.pathLength} intermediate CAs below it (pathLenConstraint), the chain has ${intermediatesBelow}`;
  }
  if (!allowsClientAuth(parsed, false)) return `${name} does not allow client authentication`;
  return null;
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
      return { ok: false, reason: `certificate ${oneLineSubject(leaf)} is expired or not yet valid` };
    }
    if (!allowsClientAuth(new x509.X509Certificate(new Uint8Array(leaf.raw)), true)) {
      return { ok: false, reason: "certificate is not allowed for client authentication" };
    }
    const budget = { left: maxSignatureChecks };
    const problem = this.#findPath([leaf], chain.slice(1), now, budget);
    if (problem !== null && budget.left <= 0) {
      return { ok: false, reason: `the chain needs more than ${maxSignatureChecks} signature checks` };
    }
    if (problem !== null) return { ok: false, reason: problem };
    const { commonName, organizations } = subjectOf(leaf);
    return { ok: true, commonName, organizations };
  }

  /**
   * Depth-first search for a path from the top of `path` (leaf first) to a bundle CA through the
   * intermediates the client sent. Null when one is found, else why the last candidate failed
   * (or "unknown authority" when no certificate signed it).
   */
  #findPath(
    path: X509Certificate[],
    intermediates: readonly X509Certificate[],
    now: Date,
    budget: { left: number },
  ): string | null {
    const current = path[path.length - 1];
    const below = path.length - 1;
    let reason: string | null = null;
    for (const root of this.#roots) {
      if (!signedBy(current, root, budget)) continue;
      reason = withinDates(root, now) ? signerProblem(root, below, true) : "the signing CA is expired or not yet valid";
      if (reason === null) return null;
    }
    if (path.length >= maxDepth) return reason ?? "certificate signed by unknown authority";
    for (const next of intermediates) {
      if (path.includes(next) || !signedBy(current, next, budget)) continue;
      reason = withinDates(next, now)
        ? signerProblem(next, below, false) ?? this.#findPath([...path, next], intermediates, now, budget)
        : `the intermediate CA ${oneLineSubject(next)} is expired or not yet valid`;
      if (reason === null) return null;
    }
    return reason ?? "certificate signed by unknown authority";
  }
}

/** The identity of a verified client certificate: user = CN, groups = O. */
export function userFromCertificate(result: Extract<ChainResult, { ok: true }>): UserInfo {
  return { name: result.commonName, groups: [...result.organizations], extra: {} };
}
