/**
 * @module render/features/sticky_cookie
 * `sticky-cookie` and the `sticky-cookie-*` keys: each client is pinned to one server by a cookie
 * the proxy sets. The cookie is `dynamic` (its value follows the server's address and port, keyed
 * by the backend's name), so the server slot lines need nothing per server and endpoint changes
 * stay Runtime API changes.
 */
import { quoted } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface StickyCookie {
  name: string;
  maxAge: string | null;
  secure: boolean;
  sameSite: string | null;
}

/** The cookie when `sticky-cookie` is on (the other keys are read only then); else null. */
export function readStickyCookie(r: SettingsReader): StickyCookie | null {
  if (!r.get<boolean>("sticky-cookie")) return null;
  return {
    name: r.get<string>("sticky-cookie-name")!,
    maxAge: r.get<string>("sticky-cookie-max-age"),
    secure: r.get<boolean>("sticky-cookie-secure")!,
    sameSite: r.get<string>("sticky-cookie-samesite"),
  };
}

/** Seconds of an HAProxy time (at least 1), for the cookie's Max-Age. */
function seconds(d: string): number {
  const m = /^([0-9]+)(ms|s|m|h|d)$/.exec(d);
  if (!m) throw new Error(`bug: unvalidated duration ${d}`);
  return Math.max(1, Math.floor(Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[m[2]]!));
}

/** The lines of backend `backend` (its name is the cookie's key). */
export function stickyCookieLines(c: StickyCookie, backend: string): string[] {
  return [
    `dynamic-cookie-key ${quoted(backend)}`,
    `cookie ${c.name} insert indirect nocache dynamic httponly` + (c.secure ? " secure" : "") +
    (c.sameSite ? ` attr SameSite=${c.sameSite}` : "") +
    // maxlife bounds the cookie on the proxy's side, Max-Age in the browser (as ingress-nginx)
    (c.maxAge ? ` maxlife ${c.maxAge} attr Max-Age=${seconds(c.maxAge)}` : ""),
  ];
}
