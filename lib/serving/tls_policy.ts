/**
 * @module serving/tls_policy
 * `--tls-min-version` and `--tls-cipher-suites`: Go names mapped to the OpenSSL names node:tls
 * uses, checked against what this runtime can negotiate, and enforced on each handshake.
 *
 * Deno's node:tls is built on rustls. rustls speaks only TLS 1.2 and 1.3 and only AEAD suites with
 * ECDHE key exchange, and Deno ignores the `ciphers` and `minVersion` server options. So the policy
 * is checked when the handshake completes: a connection below the minimum version or on a TLS 1.2
 * suite outside the list is closed before any HTTP byte is read (the client sees the connection
 * end right after the handshake). TLS 1.3 suites are not configurable, exactly as in Go's
 * crypto/tls; naming one is accepted with a warning.
 */
import tls from "node:tls";
import { SetupError, UsageError } from "../common/errors.ts";
import { log } from "../log/logger.ts";

/** Go crypto/tls constant → OpenSSL name (TLS 1.2 and below). */
const goToOpenSSL: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_RC4_128_SHA: "RC4-SHA",
  TLS_RSA_WITH_3DES_EDE_CBC_SHA: "DES-CBC3-SHA",
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_CBC_SHA256: "AES128-SHA256",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_RC4_128_SHA: "ECDHE-ECDSA-RC4-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_RC4_128_SHA: "ECDHE-RSA-RC4-SHA",
  TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA: "ECDHE-RSA-DES-CBC3-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256: "ECDHE-ECDSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: "ECDHE-RSA-AES128-SHA256",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: "ECDHE-ECDSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
};

/** TLS 1.3 suites: always on, never configurable (as in Go). */
const tls13Suites = new Set(["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]);

/** The option values release A accepts (spec 2.3); B accepts every Go constant. */
const releaseASuites = new Set(
  Object.keys(goToOpenSSL).filter((n) => !n.endsWith("_POLY1305_SHA256")),
);

const versionRank: Readonly<Record<string, number>> = {
  VersionSSL30: 3,
  VersionTLS10: 10,
  VersionTLS11: 11,
  VersionTLS12: 12,
  VersionTLS13: 13,
};
const protocolRank: Readonly<Record<string, number>> = { "TLSv1": 10, "TLSv1.1": 11, "TLSv1.2": 12, "TLSv1.3": 13 };

/** The lowest version this runtime negotiates at all. */
const runtimeFloor = 12;

export interface TlsPolicy {
  /** Minimum accepted protocol, as a rank (12 = TLS 1.2). */
  readonly minRank: number;
  /** Upper-case OpenSSL names of the TLS 1.2 suites allowed; null = the runtime's defaults. */
  readonly allowedTls12: ReadonlySet<string> | null;
  /** For node:tls options (honoured by runtimes that read them; enforced here regardless). */
  readonly nodeOptions: { minVersion: "TLSv1.2" | "TLSv1.3"; ciphers?: string };
}

/** TLS 1.2 suites the runtime can negotiate: ECDHE + AEAD (rustls); other listed names are aliases. */
export function runtimeTls12Suites(): Set<string> {
  return new Set(tls.getCiphers().map((c) => c.toUpperCase()).filter((c) => c.startsWith("ECDHE-")));
}

/**
 * Builds the policy. Unknown names are usage errors; names the runtime cannot negotiate
 * (RC4, 3DES, CBC, static RSA key exchange) are start-up errors.
 */
export function tlsPolicy(release: "A" | "B" | "C", minVersion: string | null, suites: readonly string[]): TlsPolicy {
  let minRank = 12;
  if (minVersion !== null && minVersion !== "") {
    const rank = versionRank[minVersion];
    if (rank === undefined || (release === "A" && rank > 12)) {
      const allowed = release === "A"
        ? "VersionTLS10, VersionTLS11, VersionTLS12"
        : Object.keys(versionRank).join(", ");
      throw new UsageError(`--tls-min-version: unknown value "${minVersion}"; use one of ${allowed}`);
    }
    if (rank < runtimeFloor) {
      log.warn("--tls-min-version is below what this runtime speaks; TLS 1.2 is the effective minimum", {
        value: minVersion,
      });
    }
    minRank = Math.max(rank, runtimeFloor);
  }
  if (suites.length === 0) {
    return { minRank, allowedTls12: null, nodeOptions: { minVersion: minRank >= 13 ? "TLSv1.3" : "TLSv1.2" } };
  }
  const runtime = runtimeTls12Suites();
  const allowed = new Set<string>();
  const unavailable: string[] = [];
  for (const name of suites) {
    if (tls13Suites.has(name) && release !== "A") {
      log.warn("--tls-cipher-suites: TLS 1.3 suites are always enabled and cannot be configured", { suite: name });
      continue;
    }
    const openssl = goToOpenSSL[name];
    if (openssl === undefined || (release === "A" && !releaseASuites.has(name))) {
      throw new UsageError(
        `--tls-cipher-suites: unknown cipher suite "${name}"; use Go crypto/tls names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`,
      );
    }
    if (!runtime.has(openssl)) unavailable.push(name);
    else allowed.add(openssl);
  }
  if (unavailable.length > 0) {
    throw new SetupError(
      `--tls-cipher-suites: this runtime cannot provide ${unavailable.join(", ")} (it negotiates only ECDHE with ` +
        `AES-GCM or ChaCha20-Poly1305 in TLS 1.2); remove them from the list`,
    );
  }
  if (allowed.size === 0 && minRank < 13) {
    throw new SetupError("--tls-cipher-suites: no TLS 1.2 suite is left; name at least one ECDHE AEAD suite");
  }
  return {
    minRank,
    allowedTls12: allowed,
    nodeOptions: { minVersion: minRank >= 13 ? "TLSv1.3" : "TLSv1.2", ciphers: [...allowed].join(":") },
  };
}

/** Why a finished handshake breaks the policy, or null when it is acceptable. */
export function policyViolation(policy: TlsPolicy, protocol: string | null, cipher: string | undefined): string | null {
  const rank = protocol === null ? 0 : protocolRank[protocol] ?? 0;
  if (rank < policy.minRank) return `protocol ${protocol} is below the minimum`;
  if (rank === 12 && policy.allowedTls12 !== null && !policy.allowedTls12.has((cipher ?? "").toUpperCase())) {
    return `cipher suite ${cipher} is not in --tls-cipher-suites`;
  }
  return null;
}

/**
 * A warning when the policy leaves no TLS 1.2 suite for the certificate's key type (e.g. only
 * ECDHE_RSA suites with an ECDSA key): TLS 1.2 clients could then never connect. Null when fine.
 */
export function keyTypeMismatch(policy: TlsPolicy, keyType: string | undefined): string | null {
  if (policy.allowedTls12 === null || policy.minRank >= 13) return null;
  const family = keyType === "rsa" || keyType === "rsa-pss" ? "ECDHE-RSA-" : keyType === "ec" ? "ECDHE-ECDSA-" : null;
  if (family === null) return null;
  if ([...policy.allowedTls12].some((c) => c.startsWith(family))) return null;
  return `--tls-cipher-suites has no ${family.slice(0, -1)} suite for the ${keyType} key of the serving certificate; ` +
    "TLS 1.2 clients cannot connect (TLS 1.3 still works)";
}
