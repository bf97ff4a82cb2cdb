/**
 * @module render/settings_lines
 * The lines of a backend variant (docs/annotations-rendering.md "What each key renders"): each
 * feature's lines come from its own module (lib/render/features/), in the order HAProxy should
 * evaluate them, which is decided here. Every value placed in a line has passed its anchored parser
 * and is quoted for its place by render/quoting.ts; nothing of a user's is written verbatim.
 */
import { accessListLines, bodySizeLines, rateLimitLines } from "./features/access_limits.ts";
import { serverParams, unverifiableLines } from "./features/backend_protocol.ts";
import { basicAuthLines } from "./features/basic_auth.ts";
import { clientCertLines } from "./features/client_cert.ts";
import { corsLines } from "./features/cors.ts";
import { extAuthLines } from "./features/ext_auth.ts";
import { headerLines } from "./features/headers.ts";
import { hstsLines } from "./features/hsts.ts";
import { redirectLines } from "./features/redirects.ts";
import { rewriteLines } from "./features/rewrite.ts";
import { stickyCookieLines } from "./features/sticky_cookie.ts";
import { timeoutLines } from "./features/timeouts.ts";
import type { BackendSettings } from "./settings.ts";

/**
 * The configuration lines of backend `backend` with settings `s` (without indentation) and its
 * `default-server` parameters. (Error pages' lines come first: render.ts adds them, as they need
 * the backend's fallback.)
 */
export function settingsLines(s: BackendSettings, backend: string): { lines: string[]; serverParams: string } {
  const l: string[] = timeoutLines(s.timeouts);
  // Refusals first (addresses, rates, client certificates, credentials, an unverifiable backend, the
  // body's size), then the answers that need no server (redirects, CORS preflights).
  l.push(...accessListLines(s));
  if (s.rate) l.push(...rateLimitLines(s.rate));
  if (s.clientCert) l.push(...clientCertLines(s.clientCert));
  if (s.basicAuth) l.push(...basicAuthLines(s.basicAuth));
  l.push(...unverifiableLines(s.backendTls));
  if (s.maxBody !== null) l.push(...bodySizeLines(s.maxBody));
  l.push(...redirectLines(s));
  if (s.cors) l.push(...corsLines(s.cors));
  // After the answers that need no authentication (redirects, CORS preflights: as ingress-nginx's
  // rewrite phase comes before its access phase), before the request's own header edits.
  if (s.extAuth) l.push(...extAuthLines(s.extAuth));
  l.push(...headerLines("request", s.request));
  if (s.rewrite) l.push(...rewriteLines(s.rewrite));
  l.push(...headerLines("response", s.response));
  if (s.hsts) l.push(...hstsLines(s.hsts));
  if (s.sticky) l.push(...stickyCookieLines(s.sticky, backend));
  return { lines: l, serverParams: serverParams(s).join(" ") };
}
