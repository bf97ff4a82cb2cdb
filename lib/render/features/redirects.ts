/**
 * @module render/features/redirects
 * Answers that send the client elsewhere instead of proxying: `redirect-to` (+ `redirect-code`),
 * `app-root`, and the `www-redirect` twin's backend (the key is Ingress-wide: read by
 * render/ingress_settings.ts; the model gives each twin a server-less backend whose settings hold
 * the host to send to). The URL and path have passed their anchored parsers and are written as
 * log-format literals; the twin's host is checked again here. `app-root`'s Location is absolute, the
 * request's own scheme and Host before the path, as ingress-nginx's `$scheme://$http_host<root>`.
 */
import { literal, quoted } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface Redirects {
  redirectTo: { url: string; code: string } | null;
  appRoot: string | null;
}

export function readRedirects(r: SettingsReader): Redirects {
  const to = r.set<string>("redirect-to");
  return {
    // the code is read only with a URL to redirect to
    redirectTo: to ? { url: to, code: r.get<string>("redirect-code")! } : null,
    appRoot: r.set<string>("app-root"),
  };
}

/**
 * The redirect lines: the `www` twin's (every request to `wwwRedirectTo`, same scheme, path and
 * query: 308), `redirect-to`, then `app-root` (`/` only, 302).
 */
export function redirectLines(s: Redirects & { wwwRedirectTo: string | null }): string[] {
  const l: string[] = [];
  if (s.wwwRedirectTo) {
    if (!/^[a-z0-9.-]+$/.test(s.wwwRedirectTo)) throw new Error(`bug: unvalidated host ${s.wwwRedirectTo}`);
    l.push(`http-request redirect prefix https://${s.wwwRedirectTo} code 308 if { ssl_fc }`);
    l.push(`http-request redirect prefix http://${s.wwwRedirectTo} code 308`);
  }
  if (s.redirectTo) l.push(`http-request redirect location ${literal(s.redirectTo.url)} code ${s.redirectTo.code}`);
  if (s.appRoot) {
    // a path's %XX escapes are log-format text: %% writes one %
    const root = quoted(`%[ssl_fc,iif(https,http)]://%[req.hdr(host)]${s.appRoot.replaceAll("%", "%%")}`);
    l.push(`http-request redirect location ${root} code 302 if { path / }`);
  }
  return l;
}
