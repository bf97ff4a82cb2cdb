/**
 * @module render/ext_auth
 * External authentication (`auth-url`, `auth-signin`, `auth-response-headers`, the oauth2-proxy
 * pattern): the backend lines that run our Lua action `lua.ic_auth_request`
 * (templates/ic_ext_auth.lua, loaded by `global` when a backend uses it). HAProxy 2.6 has no native
 * auth subrequest; the action sends it with HAProxy's own httpclient. The URLs and header names
 * passed as the action's arguments have passed their anchored parsers and are single-quoted (no
 * expansion, no escapes in HAProxy); `-` stands for "none", which no valid value can be. The line
 * after the action denies with 500 every request the action did not mark as authenticated, so a
 * failing action fails closed. A response action adds the auth answer's Set-Cookie headers.
 */
import { quoted } from "./settings.ts";

export interface ExtAuth {
  url: string;
  /** Where a 401 is redirected to (with `rd`), or null: the 401 is returned. */
  signin: string | null;
  /** Headers of the auth answer copied into the request. */
  responseHeaders: string[];
}

/** The three keys of one route, as read by `get` (null: unset); reports keys that have no effect alone. */
export function resolveExtAuth(
  get: <T>(key: string) => T | null,
  report: (reason: string, message: string) => void,
): ExtAuth | null {
  const url = get<string>("auth-url");
  const signin = get<string>("auth-signin");
  const responseHeaders = get<string[]>("auth-response-headers");
  if (url === null) {
    for (const [key, value] of [["auth-signin", signin], ["auth-response-headers", responseHeaders]] as const) {
      if (value !== null) {
        report("InvalidAnnotation", `annotation ingress-controller.io/${key} has no effect without auth-url; ignored`);
      }
    }
    return null;
  }
  return { url, signin, responseHeaders: responseHeaders ?? [] };
}

const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The backend lines of external authentication. */
export function extAuthLines(a: ExtAuth): string[] {
  for (const h of a.responseHeaders) if (!HEADER_NAME.test(h)) throw new Error(`bug: unvalidated header ${h}`);
  const names = a.responseHeaders.length > 0 ? a.responseHeaders.join(",") : "-";
  return [
    `http-request lua.ic_auth_request ${quoted(a.url)} ${quoted(a.signin ?? "-")} ${quoted(names)}`,
    "http-request deny deny_status 500 if !{ var(txn.ic_auth) -m str ok }",
    // the auth answer's Set-Cookie headers (session refreshes), as ingress-nginx adds them
    "http-response lua.ic_auth_cookies",
  ];
}
