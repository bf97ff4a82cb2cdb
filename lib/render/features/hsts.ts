/**
 * @module render/features/hsts
 * `hsts`, `hsts-max-age`, `hsts-include-subdomains`, `hsts-preload`: a `Strict-Transport-Security`
 * header on the HTTPS answers of the Ingress's routes. The key is host-scoped but written in the
 * backend (`if { ssl_fc }`), so it reaches only the routes of the Ingress that asked for it.
 */
import { literal } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface Hsts {
  maxAge: number;
  subdomains: boolean;
  preload: boolean;
}

/** The header's fields when `hsts` is on (the other keys are read only then); else null. */
export function readHsts(r: SettingsReader): Hsts | null {
  if (!r.get<boolean>("hsts")) return null;
  return {
    maxAge: r.get<number>("hsts-max-age")!,
    subdomains: r.get<boolean>("hsts-include-subdomains")!,
    preload: r.get<boolean>("hsts-preload")!,
  };
}

export function hstsLines(h: Hsts): string[] {
  const v = `max-age=${h.maxAge}${h.subdomains ? "; includeSubDomains" : ""}${h.preload ? "; preload" : ""}`;
  return [`http-response set-header Strict-Transport-Security ${literal(v)} if { ssl_fc }`];
}
