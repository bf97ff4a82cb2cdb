/**
 * @module render/features/client_cert
 * The route's side of client certificates: `client-cert-verify` and `client-cert-header`. The
 * certificate is asked for and checked in the TLS handshake by the crt-list line of the Ingress's
 * TLS hosts (`client-cert-ca-secret`, Ingress-wide: render/ingress_settings.ts and render.ts); the
 * route checks that the connection was made for its own host and passes the certificate on.
 */
import type { SettingsReader } from "../settings_reader.ts";

export interface ClientCert {
  verify: "required" | "optional";
  /** The request header that carries the verified certificate (base64 DER) to the backend. */
  header: string | null;
}

/** The route's check when `client-cert-ca-secret` is set; `client-cert-header` alone is reported and ignored. */
export function readClientCert(r: SettingsReader): ClientCert | null {
  const clientCa = r.set<string>("client-cert-ca-secret");
  const header = r.set<string>("client-cert-header");
  if (clientCa !== null) return { verify: r.get<"required" | "optional">("client-cert-verify") ?? "required", header };
  if (header !== null) {
    r.report(
      "InvalidAnnotation",
      "annotation ingress-controller.io/client-cert-header needs client-cert-ca-secret; ignored",
    );
  }
  return null;
}

/**
 * The client certificate was checked by the crt-list line of the SNI name the connection asked
 * for: it vouches for this host only if that name is the request's host (a client could send
 * another SNI, one without a check or with another CA, then this Host). The incoming header is
 * always removed, so a client can never set it itself.
 */
export function clientCertLines(c: ClientCert): string[] {
  const l = [
    "acl ic_cert_sni ssl_fc_sni,lower,strcmp(txn.host) eq 0",
    "acl ic_cert_used ssl_c_used",
    "acl ic_cert_valid ssl_c_verify 0",
  ];
  if (c.verify === "required") {
    // 421: the connection was made for another host; a browser retries on a new connection
    l.push("http-request deny deny_status 421 if { ssl_fc } !ic_cert_sni");
    l.push("http-request deny deny_status 403 unless ic_cert_sni ic_cert_used ic_cert_valid");
  }
  if (c.header) {
    l.push(`http-request del-header ${c.header}`);
    l.push(`http-request set-header ${c.header} %[ssl_c_der,base64] if ic_cert_sni ic_cert_used ic_cert_valid`);
  }
  return l;
}
