/**
 * @module proxy/left_out
 * What takes the place of a certificate or CA file the proxy leaves out (its Secret is missing or
 * unusable, lib/proxy/files.ts, or HAProxy refuses the file, lib/proxy/file_check.ts), so that the
 * rest of the configuration applies unchanged and only what needed the file loses it, failing
 * closed:
 * - a certificate: its crt-list lines are dropped, and its hosts get the default certificate (the
 *   crt-list's first line). When that first line is the one dropped, or no line is left (HAProxy
 *   refuses an empty crt-list), a stand-in certificate the proxy made for itself
 *   ({@link STAND_IN_FILE}, for the name `no-certificate.invalid`) becomes the default: another
 *   tenant's certificate is never promoted to the default.
 * - a CA bundle: its file holds a CA certificate whose key was thrown away when it was made, so
 *   nothing verifies against it: a client certificate checked against it is refused in the
 *   handshake, and a backend verified against it is never reached (503).
 */
import { createCA, issueCertificate } from "../pki/certs.ts";
import type { DesiredState } from "./plan.ts";
import { CA_FILE, STAND_IN_FILE } from "./files.ts";

/** The stand-ins of this proxy process, made once when first needed. */
export interface StandIns {
  /** A certificate chain and key for `no-certificate.invalid` (PEM). */
  readonly certificate: string;
  /** A CA certificate (PEM) that signs nothing: its key is gone. */
  readonly ca: string;
}

export async function makeStandIns(): Promise<StandIns> {
  const issuer = await createCA({ commonName: "ingress-controller stand-in certificate" });
  const leaf = await issueCertificate(issuer, {
    commonName: "no-certificate.invalid",
    dnsNames: ["no-certificate.invalid"],
    usages: ["serverAuth"],
  });
  const nothing = await createCA({ commonName: "ingress-controller stand-in CA: verifies nothing" });
  return { certificate: leaf.certPem + leaf.keyPem, ca: nothing.certPem };
}

/** `state` without the certificate and CA files named in `files` (module header: what replaces them). */
export function leaveOut(state: DesiredState, files: ReadonlySet<string>, standIns: StandIns): DesiredState {
  if (files.size === 0) return state;
  const pems = new Map(state.pems);
  for (const file of files) {
    if (CA_FILE.test(file)) pems.set(file, standIns.ca);
    else pems.delete(file);
  }
  const lines = state.crtList.split("\n");
  const kept = lines.filter((l) => !isEntry(l) || !files.has(fileOf(l)));
  if (kept.length === lines.length) return { ...state, pems };
  const first = lines.find(isEntry);
  if (files.has(fileOf(first!)) || !kept.some(isEntry)) {
    kept.unshift(`${STAND_IN_FILE} !*`);
    pems.set(STAND_IN_FILE, standIns.certificate);
  }
  return { ...state, pems, crtList: kept.join("\n") };
}

function isEntry(line: string): boolean {
  const t = line.trim();
  return t !== "" && !t.startsWith("#");
}

/** The file of a crt-list line: its first word. */
function fileOf(line: string): string {
  return line.trim().split(/\s+/)[0];
}
