/**
 * @module render/patterns
 * Anchored patterns that every cluster value must pass before it may reach the HAProxy
 * configuration or its map files.
 * A value that fails is rejected (the caller reports a problem); nothing is ever "cleaned up".
 * This module imports nothing, so the proxy and audit use its name patterns without loading the
 * renderer: it is the one definition of a DNS-1123 label and subdomain in the program.
 */

/** One DNS-1123 label: 1 to 63 lower-case letters, digits and inner `-`. */
const LABEL = "[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?";
/** One dot-separated part of a DNS-1123 subdomain: Kubernetes bounds only the whole name (253). */
const SUBDOMAIN_PART = "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN = `${SUBDOMAIN_PART}(?:\\.${SUBDOMAIN_PART})*`;
/** DNS-1123 label (namespaces, Service names must also be DNS-1035 but 1123 is the superset we accept). */
const DNS1123_LABEL = new RegExp(`^${LABEL}$`);
/** DNS-1123 subdomain (object names such as Ingress and Secret names, API groups). */
const DNS1123_SUBDOMAIN = new RegExp(`^${SUBDOMAIN}$`);
/** RFC-1123 host as Kubernetes accepts it in `rules[].host`, optionally with a leading `*.` label. */
const HOST = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*$`);
/**
 * The file of a TLS Secret in the proxy's certificate directory: `<namespace>_<name>.pem`
 * (a label, `_`, a subdomain; neither can contain `_`, so the split is unambiguous).
 */
export const PEM_FILE = new RegExp(`^${LABEL}_${SUBDOMAIN}\\.pem$`);
/**
 * The file of a CA bundle in the proxy's certificate directory: a CA Secret's (`ca.crt`),
 * `<namespace>_<name>_ca.pem`, or a CA ConfigMap's ({@link CONFIGMAP_CA_FILE}). `_` cannot occur in
 * a name, so neither ever meets a TLS Secret's file nor the other, whatever the object's name.
 */
export const CA_FILE = new RegExp(`^${LABEL}_${SUBDOMAIN}(?:_configmap)?_ca\\.pem$`);
/** The file of a CA ConfigMap's `ca.crt` in the proxy's certificate directory: `<namespace>_<name>_configmap_ca.pem`. */
export const CONFIGMAP_CA_FILE = new RegExp(`^${LABEL}_${SUBDOMAIN}_configmap_ca\\.pem$`);
/** IANA service name (named Service and EndpointSlice ports). */
const PORT_NAME = /^[a-z0-9](?:[-a-z0-9]{0,13}[a-z0-9])?$/;
/**
 * HTTP path: absolute, a conservative subset of RFC 3986 `pchar` plus `/`, percent escapes only as
 * `%XX`. Excludes quotes, backslash, `#`, `?`, spaces, `$`, `[`, `{` and every control character.
 */
const PATH = /^\/(?:[A-Za-z0-9._~!*+,;=:@/-]|%[0-9A-Fa-f]{2})*$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6_CHARS = /^[0-9a-fA-F:.]{2,45}$/;

export const MAX_PATH_LENGTH = 1024;

export function isDns1123Label(s: unknown): s is string {
  return typeof s === "string" && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: unknown): s is string {
  return typeof s === "string" && s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** An Ingress host: lower-case RFC-1123 name, at most 253 characters, optionally `*.` + name. */
export function isHost(s: unknown): s is string {
  return typeof s === "string" && s.length <= 253 && HOST.test(s);
}

export function isPortName(s: unknown): s is string {
  return typeof s === "string" && PORT_NAME.test(s) && /[a-z]/.test(s) && !s.includes("--");
}

export function isPortNumber(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= 65535;
}

/**
 * A request path as HAProxy routes it after the `normalize-uri` steps of the frontends
 * (templates/request_path.eta): escapes of unreserved characters decoded
 * (`percent-decode-unreserved`), the hex digits of the other escapes upper-cased
 * (`percent-to-uppercase`). Route paths are compared in this form, so `/%61pi` routes `/api`.
 */
export function canonicalPath(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /^[A-Za-z0-9._~-]$/.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/**
 * An Ingress path. Also refuses the segments Kubernetes refuses for Exact and Prefix paths
 * (`//`, `/./`, `/../`, a trailing `/.` or `/..`, `%2F`), here also when written with escaped
 * dots (`/%2e%2e/`), and `%5C`: the proxy normalizes such request paths away or refuses them,
 * so a route containing them could never match.
 */
export function isPath(s: unknown): s is string {
  if (typeof s !== "string" || s.length > MAX_PATH_LENGTH || !PATH.test(s)) return false;
  if (/%2f|%5c/i.test(s)) return false;
  const c = canonicalPath(s);
  if (c.includes("//") || c.includes("/./") || c.includes("/../")) return false;
  return !c.endsWith("/.") && !c.endsWith("/..");
}

export function isIPv4(s: unknown): s is string {
  return typeof s === "string" && IPV4.test(s);
}

/** A strict IPv6 literal check: at most 8 groups, at most one `::`, optional embedded IPv4 tail. */
export function isIPv6(s: unknown): s is string {
  return typeof s === "string" && ipv6Words(s) !== null;
}

/** The eight 16-bit words of a strict IPv6 literal (see isIPv6), or null. */
function ipv6Words(s: string): number[] | null {
  if (!IPV6_CHARS.test(s)) return null;
  let head = s;
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(":");
  const v4 = s.slice(lastColon + 1);
  if (v4.includes(".")) {
    if (!isIPv4(v4)) return null;
    const [a, b, c, d] = v4.split(".").map(Number);
    tail = [(a << 8) | b, (c << 8) | d];
    head = s.slice(0, lastColon + 1) + "0:0";
  }
  const dbl = head.split("::");
  if (dbl.length > 2) return null;
  const part = (p: string) => p === "" ? [] : p.split(":");
  const left = part(dbl[0]);
  const right = dbl.length === 2 ? part(dbl[1]) : [];
  const groups = [...left, ...right];
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  if (dbl.length === 2 ? groups.length > 7 : groups.length !== 8) return null;
  const words = [...left, ...Array(8 - groups.length).fill("0"), ...right].map((g) => parseInt(g, 16));
  if (tail.length === 2) words.splice(6, 2, ...tail);
  return words;
}

/** The ranges Kubernetes refuses in endpoint addresses (ValidateEndpointIP), with their message. */
export const REFUSED_ENDPOINT_RANGES = {
  unspecified: "may not be unspecified (0.0.0.0, ::)",
  loopback: "may not be in the loopback range (127.0.0.0/8, ::1/128)",
  "link-local": "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
  "link-local multicast": "may not be in the link-local multicast range (224.0.0.0/24, ffX2::/16)",
} as const;
export type RefusedEndpointRange = keyof typeof REFUSED_ENDPOINT_RANGES;

/**
 * The range that makes a valid IPv4 or IPv6 literal unusable as an endpoint address, as
 * Kubernetes' ValidateEndpointIP decides with Go's net.IP methods (an IPv4-mapped IPv6 address
 * counts as its IPv4 address); null for an address in none of them or not an IP literal.
 */
export function refusedEndpointRange(address: string): RefusedEndpointRange | null {
  let v4: number[] | null = isIPv4(address) ? address.split(".").map(Number) : null;
  if (v4 === null) {
    const w = ipv6Words(address);
    if (w === null) return null;
    if (w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff) {
      v4 = [w[6] >> 8, w[6] & 0xff, w[7] >> 8, w[7] & 0xff];
    } else {
      if (w.every((x) => x === 0)) return "unspecified";
      if (w.slice(0, 7).every((x) => x === 0) && w[7] === 1) return "loopback";
      if ((w[0] & 0xffc0) === 0xfe80) return "link-local";
      if ((w[0] & 0xff0f) === 0xff02) return "link-local multicast";
      return null;
    }
  }
  const [a, b, c] = v4;
  if (v4.every((x) => x === 0)) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local";
  if (a === 224 && b === 0 && c === 0) return "link-local multicast";
  return null;
}

/** A name usable as HAProxy proxy (backend) name: letters, digits, `-`, `_`, `.`, `:`. */
export function isProxyName(s: string): boolean {
  return /^[A-Za-z0-9_.:-]{1,200}$/.test(s);
}
