/**
 * @module annotations/auth_target
 * The address policy of external authentication: where `auth-url` may make the proxy send requests
 * and `auth-signin` may send browsers. Refused: loopback, unspecified, link-local, multicast and
 * reserved addresses, the cloud metadata services' names and addresses, any IPv6 form embedding a
 * refused IPv4 address (mapped, compatible, NAT64, 6to4), IPv4 written other than as `a.b.c.d`
 * (decimal, octal, hex, short forms), single-label names (the proxy resolves names without search
 * domains) and the proxy pod's own ports. A host name passes here; the proxy checks the address it
 * resolves to against the same ranges at request time (render/features/ext_auth.ts) and connects to
 * exactly that address. The admin's per-class host allow-list (`auth-url-allowed-hosts`) is matched here too.
 * Imports no module of lib/ (annotations/values.ts builds its value kinds on it).
 */
import ipaddr from "ipaddr.js";

/**
 * The setting (global ConfigMap, IngressClass parameters) listing the hosts auth-url may name; it
 * travels in the settings layers' values under this key (controller/global_settings.ts).
 */
export const AUTH_URL_ALLOWED_HOSTS = "auth-url-allowed-hosts";

const LABEL = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

/** A refused range and why, for messages. */
export interface Refusal {
  readonly cidr: string;
  readonly why: string;
}

const METADATA = "a cloud metadata service";

/**
 * IPv4 ranges the proxy never contacts. 169.254.0.0/16 holds the metadata services of AWS, GCP,
 * Azure, OCI, DigitalOcean, OpenStack, Hetzner (169.254.169.254), ECS task metadata (169.254.170.2),
 * the EKS Pod Identity agent (169.254.170.23) and Tencent Cloud's (169.254.0.23).
 */
export const REFUSED_IPV4: readonly Refusal[] = [
  { cidr: "0.0.0.0/8", why: "an unspecified address" },
  { cidr: "127.0.0.0/8", why: "a loopback address" },
  { cidr: "169.254.0.0/16", why: `a link-local address (${METADATA} lives there)` },
  { cidr: "100.100.100.200/32", why: `${METADATA} (Alibaba Cloud)` },
  { cidr: "168.63.129.16/32", why: "Azure's platform address (WireServer)" },
  { cidr: "224.0.0.0/3", why: "a multicast or reserved address" },
];

/** IPv6 ranges the proxy never contacts (IPv6 forms of refused IPv4 addresses are refused too). */
export const REFUSED_IPV6: readonly Refusal[] = [
  { cidr: "::/128", why: "the unspecified address" },
  { cidr: "::1/128", why: "the loopback address" },
  { cidr: "fe80::/10", why: `a link-local address (${METADATA} lives there)` },
  { cidr: "ff00::/8", why: "a multicast address" },
  { cidr: "fd00:ec2::254/128", why: `${METADATA} (AWS)` },
  { cidr: "fd00:ec2::23/128", why: "the EKS Pod Identity agent" },
  { cidr: "fd20:ce::254/128", why: `${METADATA} (Google Cloud)` },
  { cidr: "fd00:100::100:200/128", why: `${METADATA} (Alibaba Cloud)` },
];

/**
 * IPv6 prefixes whose addresses carry an IPv4 address in their last 32 bits: IPv4-mapped,
 * IPv4-compatible (deprecated), NAT64's well-known prefix.
 */
const EMBEDDING_V4 = ["::ffff:0:0/96", "::/96", "64:ff9b::/96"] as const;

/** Names of metadata services (and of the machine itself) that resolve to refused addresses. */
const REFUSED_NAMES: Readonly<Record<string, string>> = {
  "metadata.google.internal": `${METADATA} (Google Cloud)`,
  "metadata.goog": `${METADATA} (Google Cloud)`,
  "instance-data.ec2.internal": `${METADATA} (AWS)`,
  "metadata.tencentyun.com": `${METADATA} (Tencent Cloud)`,
  "localhost": "the machine itself",
};

/**
 * The proxy pod's own listeners besides its HTTP(S) ports: stats (controller/proxy_pod.ts
 * `statsPort`), the exporter's metrics (`exporterPort`), the probe endpoint (`healthPort`).
 * tests/annotations/auth_target_test.ts keeps these equal to proxy_pod.ts's constants.
 */
export const PROXY_PORTS: Readonly<Record<number, string>> = {
  56789: "the proxy's stats port",
  56790: "the proxy's metrics port",
  56791: "the proxy's health port",
};

const v4Ranges = REFUSED_IPV4.map((r) => ({ ...r, range: ipaddr.IPv4.parseCIDR(r.cidr) }));
const v6Ranges = REFUSED_IPV6.map((r) => ({ ...r, range: ipaddr.IPv6.parseCIDR(r.cidr) }));
const embedding = EMBEDDING_V4.map((c) => ipaddr.IPv6.parseCIDR(c));
const sixToFour = ipaddr.IPv6.parseCIDR("2002::/16");

/** Why the proxy never contacts `address` (IPv4 dotted or any IPv6 text), or null when it may. */
export function refusedAddress(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return "is not an IP address";
  }
  if (ip.kind() === "ipv4") return refusedV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  for (const r of v6Ranges) if (v6.match(r.range)) return r.why;
  const bytes = v6.toByteArray();
  if (embedding.some((p) => v6.match(p))) {
    const inner = refusedV4(new ipaddr.IPv4(bytes.slice(12, 16)));
    if (inner) return `${inner}, written as IPv6`;
  }
  if (v6.match(sixToFour)) {
    const inner = refusedV4(new ipaddr.IPv4(bytes.slice(2, 6)));
    if (inner) return `${inner}, written as a 6to4 address`;
  }
  return null;
}

function refusedV4(ip: ipaddr.IPv4): string | null {
  for (const r of v4Ranges) if (ip.match(r.range)) return r.why;
  return null;
}

/** Where external authentication sends requests: the URL and what the proxy needs to reach it. */
export interface AuthTarget {
  /** The URL as written: the proxy requests it, its host is the Host header and the TLS SNI. */
  readonly url: string;
  /** The host, lower case, IPv6 without brackets (canonical form). */
  readonly host: string;
  readonly port: number;
  /** `name`: resolved by the proxy at request time and checked again; otherwise the literal address. */
  readonly address: "name" | "ipv4" | "ipv6";
}

/** The parts of an `http(s)://host[:port]` URL the policy reads, or why it has none. */
function authority(url: string): { host: string; port: number; tls: boolean } | string {
  const m = /^(https?):\/\/(\[[^\]/?#]*\]|[^:/?#]*)(?::([0-9]{1,5}))?(?:[/?#]|$)/.exec(url);
  if (!m) return "is not an http:// or https:// URL";
  const tls = m[1] === "https";
  const port = m[3] === undefined ? (tls ? 443 : 80) : Number(m[3]);
  return { host: m[2], port, tls };
}

/**
 * The address policy for a URL whose path and query the caller checked (its host may be in any
 * case and end in a dot, which are refused here with a clear reason): the target, or why it is
 * refused (the end of `annotation KEY: "url" <reason>`). `browser`: the URL is where a browser is
 * sent (auth-signin), which may name a single-label host.
 */
export function authTarget(url: string, opts: { browser?: boolean } = {}): AuthTarget | { refused: string } {
  const a = authority(url);
  if (typeof a === "string") return { refused: a };
  const { host, port } = a;
  const refuse = (why: string) => ({ refused: `${why}; the proxy never sends authentication requests there` });
  if (port < 1 || port > 65535) return { refused: "has a port outside 1–65535" };
  if (PROXY_PORTS[port]) return refuse(`names port ${port}, ${PROXY_PORTS[port]}`);
  if (host.startsWith("[")) {
    const literal = host.slice(1, -1);
    if (!ipaddr.IPv6.isValid(literal)) return { refused: "has an invalid IPv6 address" };
    const why = refusedAddress(literal);
    if (why) return refuse(`names ${why}`);
    return { url, host: ipaddr.IPv6.parse(literal).toString(), port, address: "ipv6" };
  }
  if (host !== host.toLowerCase()) return { refused: "has upper case in its host: write the host in lower case" };
  if (host.endsWith(".")) return { refused: "has a host ending in a dot: write the name without it" };
  const labels = host.split(".");
  // As the WHATWG URL parser: a host whose last label is a number is an IPv4 address.
  if (/^(?:[0-9]+|0x[0-9a-f]*)$/.test(labels.at(-1)!)) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(host)) {
      return { refused: "writes an IPv4 address other than as a.b.c.d (decimal, octal or hex forms are refused)" };
    }
    const why = refusedAddress(host);
    if (why) return refuse(`names ${why}`);
    return { url, host, port, address: "ipv4" };
  }
  if (!labels.every((l) => LABEL.test(l)) || host.length > 253) return { refused: "has a host that is not a DNS name" };
  const named = REFUSED_NAMES[host] ?? (host.endsWith(".localhost") ? REFUSED_NAMES.localhost : undefined);
  if (named) return refuse(`names ${named}`);
  // A browser (auth-signin) resolves with its own search domains; the proxy resolves without any.
  if (labels.length < 2 && !opts.browser) {
    return {
      refused: "has a single-label host: the proxy resolves names without search domains; write the full name, " +
        "e.g. oauth2-proxy.auth.svc.cluster.local",
    };
  }
  return { url, host, port, address: "name" };
}

/** A host pattern of `auth-url-allowed-hosts`: a DNS name, or `*.` and a name (exactly one more label). */
const HOST_PATTERN = /^(?:\*\.)?[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** The patterns of a comma-separated allow-list, or null when one is not a host pattern. */
export function parseHostPatterns(raw: string): string[] | null {
  const list = raw.split(",").map((s) => s.replace(/^[ \t]+|[ \t]+$/g, ""));
  return list.length > 0 && list.every((p) => p.length <= 253 && HOST_PATTERN.test(p)) ? list : null;
}

/** Whether `host` (lower case) matches one of `patterns`; `*.example.com` matches `a.example.com` only. */
export function hostAllowed(patterns: readonly string[], host: string): boolean {
  return patterns.some((p) => {
    if (!p.startsWith("*.")) return p === host;
    const dot = host.indexOf(".");
    return dot > 0 && host.slice(dot + 1) === p.slice(2);
  });
}
