/**
 * @module render/features/ext_auth
 * External authentication (`auth-url`, `auth-signin`, `auth-response-headers`, `auth-request-headers`,
 * the oauth2-proxy pattern): the backend lines that run our Lua action `lua.ic_auth_request`
 * (templates/ic_ext_auth.lua, loaded by `global` when a backend uses it). HAProxy 2.6 has no native
 * auth subrequest; the action sends it with HAProxy's own httpclient.
 *
 * Where it goes (docs/ext-auth-addresses.md): the URL passed the address policy of
 * annotations/auth_target.ts and the class's `auth-url-allowed-hosts`. The proxy finds the address
 * itself before each request — a literal address is set as is, a name is resolved by `do-resolve`
 * through the `ic_auth` resolvers section (the pod's resolv.conf) — and an address in a refused
 * range is dropped by an ACL of the same ranges, so the action has none and answers 500. The
 * httpclient then connects to exactly that address (its `dst`), never resolving the name again.
 *
 * The URLs and header names passed as the action's arguments have passed their anchored parsers
 * and are single-quoted (no expansion, no escapes in HAProxy); `-` stands for "none", which no valid
 * value can be. The line after the action denies with 500 every request the action did not mark as
 * authenticated, so a failing action fails closed; a configured but unusable key (invalid, refused,
 * disabled) renders a plain 500 for the route, never an unauthenticated pass. A response action adds
 * the auth answer's Set-Cookie headers.
 */
import { resolveSetting } from "../../annotations/resolve.ts";
import { PREFIX } from "../../annotations/table.ts";
import {
  AUTH_URL_ALLOWED_HOSTS,
  type AuthTarget,
  hostAllowed,
  parseHostPatterns,
  REFUSED_IPV4,
  REFUSED_IPV6,
} from "../../annotations/auth_target.ts";
import { quoted } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface ExtAuth {
  /** Where auth requests go; null: the configuration is unusable and every request gets 500. */
  target: AuthTarget | null;
  /** Where a 401 is redirected to (with `rd`), or null: the 401 is returned. */
  signin: string | null;
  /** Headers of the auth answer copied into the request. */
  responseHeaders: string[];
  /** Client request headers sent to the auth service besides Cookie and Authorization. */
  requestHeaders: string[];
}

const KEYS = ["auth-url", "auth-signin", "auth-response-headers", "auth-request-headers"] as const;
const FAIL_CLOSED = "every request of the route gets 500 (never passed unauthenticated)";

/**
 * The external authentication of one route from the settings layers (null: none). As ingress-nginx
 * denies a location whose auth annotations do not parse, any of the keys set but unusable (invalid,
 * refused by the address policy, outside the class's allowed hosts, disabled by the risk limit)
 * makes the route answer 500; the other keys without `auth-url` are reported and have no effect.
 */
export function readExtAuth(reader: SettingsReader): ExtAuth | null {
  const { layers, risk, report } = reader;
  const r = Object.fromEntries(KEYS.map((k) => [k, resolveSetting(k, layers, risk)])) as Record<
    typeof KEYS[number],
    ReturnType<typeof resolveSetting>
  >;
  const set = (k: typeof KEYS[number]) => r[k].source !== "default" || r[k].problems.length > 0;
  if (!set("auth-url")) {
    for (const key of KEYS.slice(1)) {
      if (r[key].source !== "default") {
        report("InvalidAnnotation", `annotation ${PREFIX}${key} has no effect without auth-url; ignored`);
      }
    }
    return null;
  }
  let usable = true;
  for (const key of KEYS) {
    for (const p of r[key].problems) {
      report("InvalidAnnotation", `${p.message}; ${FAIL_CLOSED}`);
      usable = false;
    }
  }
  const target = r["auth-url"].value as AuthTarget | null;
  if (target) {
    const raw = layers.class?.[AUTH_URL_ALLOWED_HOSTS] ?? layers.global?.[AUTH_URL_ALLOWED_HOSTS];
    const allowed = raw === undefined ? null : parseHostPatterns(raw);
    if (allowed && !(target.address === "name" && hostAllowed(allowed, target.host))) {
      report(
        "InvalidAnnotation",
        `annotation ${PREFIX}auth-url: host ${target.host} is not in the class's ${AUTH_URL_ALLOWED_HOSTS} ` +
          `(${allowed.join(", ")}); ${FAIL_CLOSED}`,
      );
      usable = false;
    }
  }
  return {
    target: usable ? target : null,
    signin: r["auth-signin"].value as string | null,
    responseHeaders: (r["auth-response-headers"].value as string[] | null) ?? [],
    requestHeaders: (r["auth-request-headers"].value as string[] | null) ?? [],
  };
}

const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const HOST_NAME = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)+$/;
const ADDRESS = /^[0-9a-f:.]{2,45}$/;

/** The resolvers section `do-resolve` uses for auth hosts. */
export const AUTH_RESOLVERS = "ic_auth";

/**
 * The `resolvers` section auth host names are resolved with: the pod's name servers (no search
 * domains, as HAProxy's resolvers never apply them); answers are kept 10 s and each is checked
 * before use; a name that does not resolve within about 3 s leaves the request without an address (500).
 */
export function extAuthResolverLines(): string[] {
  return [
    `resolvers ${AUTH_RESOLVERS}`,
    "    parse-resolv-conf",
    "    hold valid 10s",
    "    timeout resolve 1s",
    "    timeout retry 1s",
    "    resolve_retries 2",
  ];
}

/**
 * The addresses the proxy never contacts, as HAProxy `-m ip` patterns. HAProxy matches IPv4
 * patterns against IPv4-mapped, IPv4-compatible and 6to4 IPv6 addresses itself; NAT64's
 * well-known prefix is spelled out.
 */
export const REFUSED_PATTERNS: readonly string[] = [
  ...REFUSED_IPV4.map((r) => r.cidr),
  ...REFUSED_IPV6.map((r) => r.cidr),
  ...REFUSED_IPV4.map((r) => {
    const [address, bits] = r.cidr.split("/");
    return `64:ff9b::${address}/${96 + Number(bits)}`;
  }),
];

/** The backend lines of external authentication. */
export function extAuthLines(a: ExtAuth): string[] {
  const t = a.target;
  if (t === null) return ["http-request deny deny_status 500"];
  const names = (list: string[]) => {
    for (const h of list) if (!HEADER_NAME.test(h)) throw new Error(`bug: unvalidated header ${h}`);
    return list.length > 0 ? list.join(",") : "-";
  };
  if (t.address === "name" ? !HOST_NAME.test(t.host) : !ADDRESS.test(t.host)) {
    throw new Error(`bug: unvalidated auth host ${t.host}`);
  }
  if (!Number.isInteger(t.port) || t.port < 1 || t.port > 65535) throw new Error(`bug: auth port ${t.port}`);
  const refused = "ic_auth_refused";
  return [
    t.address === "name"
      ? `http-request do-resolve(txn.ic_auth_dst,${AUTH_RESOLVERS},ipv4) str(${t.host})`
      : `http-request set-var(txn.ic_auth_dst) ${t.address}(${t.host})`,
    `acl ${refused} var(txn.ic_auth_dst) -m ip ${REFUSED_PATTERNS.join(" ")}`,
    // kept for the action's log line, then dropped: the action has no address and answers 500
    `http-request set-var(txn.ic_auth_refused) var(txn.ic_auth_dst) if ${refused}`,
    `http-request unset-var(txn.ic_auth_dst) if ${refused}`,
    `http-request lua.ic_auth_request ${quoted(t.url)} '${t.port}' ${quoted(a.signin ?? "-")} ` +
    `${quoted(names(a.responseHeaders))} ${quoted(names(a.requestHeaders))}`,
    "http-request deny deny_status 500 if !{ var(txn.ic_auth) -m str ok }",
    // the auth answer's Set-Cookie headers (session refreshes), as ingress-nginx adds them
    "http-response lua.ic_auth_cookies",
  ];
}
