/**
 * @module render/features/backend_protocol
 * How the proxy talks to the backend's servers: `backend-protocol` (HTTP/1.1, HTTP/2 cleartext, or
 * either over TLS), `backend-ca-secret` and `backend-sni` (TLS verification and name), and
 * `backend-proxy-protocol` (a PROXY protocol header on each connection). They are written as the
 * parameters of the backend's `default-server` line, so the server slot lines keep their fixed
 * shape. As ingress-nginx, a TLS backend is not verified unless a CA Secret is named; a named CA
 * Secret that cannot be used fails closed: the backend answers 503 instead of being reached unverified.
 */
import { CA_FILE } from "../patterns.ts";
import { type SecretId, type SettingsReader, usableSecret } from "../settings_reader.ts";

export type BackendProtocol = "h1" | "h2" | "h1-tls" | "h2-tls";

export interface BackendTls {
  /** The SNI sent and, with `verify`, checked. */
  sni: string | null;
  /** The backend certificate is checked, against the CA bundle of the Secret `ca` (written by the proxy). */
  verify: boolean;
  /** Absent with `verify`: the CA Secret is unusable, and the backend is not reached at all (503). */
  ca?: SecretId | null;
}

export interface BackendConnection {
  proxyProtocol: "v1" | "v2" | null;
  protocol: BackendProtocol;
  /** null: not a TLS protocol. */
  backendTls: BackendTls | null;
}

export function readBackendConnection(r: SettingsReader): BackendConnection {
  const pp = r.get<string>("backend-proxy-protocol");
  const protocol = r.get<BackendProtocol>("backend-protocol") ?? "h1";
  const out: BackendConnection = { proxyProtocol: pp === "v1" || pp === "v2" ? pp : null, protocol, backendTls: null };
  const ca = r.set<string>("backend-ca-secret");
  if (protocol === "h1-tls" || protocol === "h2-tls") {
    // ingress-nginx does not verify TLS backends by default either; a CA Secret asks for verification,
    // which fails closed (503) while that Secret is unusable
    out.backendTls = { sni: r.set<string>("backend-sni"), verify: ca !== null };
    if (ca !== null) {
      const usable = usableSecret(
        r,
        "backend-ca-secret",
        ca,
        "ca",
        "every request gets 503 (the backend is never reached unverified)",
      );
      if (usable) out.backendTls.ca = usable;
    }
  }
  return out;
}

/** Verification was asked for and its CA Secret is unusable: the backend must not be reached. */
export function unverifiable(tls: BackendTls | null): boolean {
  return tls?.verify === true && !tls.ca;
}

/** The request line of an unverifiable backend (else none). */
export function unverifiableLines(tls: BackendTls | null): string[] {
  return unverifiable(tls) ? ["http-request deny deny_status 503"] : [];
}

/** The `default-server` parameters (none of an unverifiable backend's TLS: it is never reached). */
export function serverParams(c: BackendConnection): string[] {
  const params: string[] = [];
  if (c.proxyProtocol) params.push(c.proxyProtocol === "v2" ? "send-proxy-v2" : "send-proxy");
  if (c.protocol === "h2") params.push("proto h2");
  const tls = c.backendTls;
  if (tls && !unverifiable(tls)) {
    params.push("ssl", tls.ca ? `verify required ca-file ${caFile(tls.ca)}` : "verify none");
    if (tls.sni) params.push(`sni str(${tls.sni})`);
    if (tls.sni && tls.verify) params.push(`verifyhost ${tls.sni}`);
    params.push(c.protocol === "h2-tls" ? "alpn h2" : "alpn http/1.1");
  }
  return params;
}

/** The proxy's file of a CA Secret (contracts.md §4), relative to `ca-base` (the cert dir); client certificates use it too. */
export function caFile(id: SecretId): string {
  const file = `${id.namespace}_${id.name}_ca.pem`;
  if (!CA_FILE.test(file)) throw new Error(`bug: unsafe CA file ${file}`);
  return file;
}
