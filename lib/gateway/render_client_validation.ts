/**
 * @module gateway/render_client_validation
 * Frontend client-certificate validation (spec.tls.frontend) as HAProxy 2.6 does it: the HTTPS
 * port's `bind` asks every client for a certificate and checks it against the port's CA file
 * (`ca-file`, read under the proxy's `ca-base`, the cert directory). `AllowValidOnly` is
 * `verify required`: a client without a certificate the CA signed fails the TLS handshake.
 * `AllowInsecureFallback` is `verify optional` with every verification error ignored
 * (`ca-ignore-err all crt-ignore-err all`): the handshake succeeds with a certificate or without,
 * and the backends learn the outcome from `X-SSL-Client-Verify` (`SUCCESS`, `FAILED` or `NONE`),
 * with the certificate (base64 DER) in `X-SSL-Client-Cert` only when it verified. Both headers
 * are removed from every request a client sends to the Gateway, so a client never sets them itself.
 */
import { configMapCaFile } from "../render/configmap_ca.ts";
import type { ClientValidation } from "./model_types.ts";

/** The request headers the proxy sets for the backends; a client's own are always removed. */
export const VERIFY_HEADER = "X-SSL-Client-Verify";
export const CERT_HEADER = "X-SSL-Client-Cert";

/** What the HTTPS `bind` line gets after its crt-list (with a leading space), or "". */
export function clientValidationBind(v: ClientValidation | undefined): string {
  if (!v) return "";
  const file = configMapCaFile(v.ca.namespace, v.ca.name);
  if (file !== v.ca.file) throw new Error(`bug: CA file ${JSON.stringify(v.ca.file)} in the Gateway model`);
  if (v.mode === "AllowValidOnly") return ` ca-file ${file} verify required`;
  if (v.mode === "AllowInsecureFallback") {
    return ` ca-file ${file} verify optional ca-ignore-err all crt-ignore-err all`;
  }
  throw new Error(`bug: client validation mode ${JSON.stringify(v.mode)} in the Gateway model`);
}

/**
 * The frontend's lines about the client's certificate: `anyValidation` (some port of the Gateway
 * checks clients), the headers a client sent are removed; `v` (this port checks them), the
 * outcome is passed on.
 */
export function clientCertLines(v: ClientValidation | undefined, anyValidation: boolean): string[] {
  if (!anyValidation) return [];
  const lines = [`http-request del-header ${VERIFY_HEADER}`, `http-request del-header ${CERT_HEADER}`];
  if (!v) return lines;
  return [
    ...lines,
    `http-request set-header ${VERIFY_HEADER} SUCCESS if { ssl_c_used } { ssl_c_verify 0 }`,
    `http-request set-header ${VERIFY_HEADER} FAILED if { ssl_c_used } !{ ssl_c_verify 0 }`,
    `http-request set-header ${VERIFY_HEADER} NONE if !{ ssl_c_used }`,
    `http-request set-header ${CERT_HEADER} %[ssl_c_der,base64] if { ssl_c_used } { ssl_c_verify 0 }`,
  ];
}
