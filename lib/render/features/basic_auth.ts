/**
 * @module render/features/basic_auth
 * `auth-basic-secret` and `auth-basic-realm`: HTTP basic authentication against the htpasswd
 * Secret's userlist, which the proxy writes into `userlists.cfg` (contracts.md §4; neither hashes
 * nor user names enter the configuration). A missing or unusable Secret still renders the check:
 * its userlist is empty and denies everyone (401), so the route is never open. As ingress-nginx,
 * the Authorization header is passed on to the backend.
 */
import { quoted } from "../quoting.ts";
import { userlistName } from "../secret_content.ts";
import { type SecretId, type SettingsReader, usableSecret } from "../settings_reader.ts";

export interface BasicAuth {
  secret: SecretId;
  realm: string;
}

/** The check when `auth-basic-secret` is set and the Ingress's Secrets are known; else null. */
export function readBasicAuth(r: SettingsReader): BasicAuth | null {
  const htpasswd = r.set<string>("auth-basic-secret");
  if (htpasswd === null || !r.secrets) return null;
  // a missing or bad Secret still renders the check: its userlist is empty and denies everyone
  usableSecret(r, "auth-basic-secret", htpasswd, "htpasswd", "every request gets 401");
  return { secret: { namespace: r.secrets.namespace, name: htpasswd }, realm: r.get<string>("auth-basic-realm")! };
}

export function basicAuthLines(a: BasicAuth): string[] {
  const ul = userlistName(a.secret.namespace, a.secret.name);
  return [`http-request auth realm ${quoted(a.realm)} unless { http_auth(${ul}) }`];
}
