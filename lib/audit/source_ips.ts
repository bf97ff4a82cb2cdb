/**
 * @module audit/source_ips
 * The `sourceIPs` of an audit event, computed as Kubernetes does: every valid X-Forwarded-For entry,
 * then X-Real-Ip unless already listed, then the peer address unless it equals the last entry;
 * addresses are written in Go's canonical form (IPv4-mapped IPv6 as dotted IPv4, compressed IPv6).
 */
import { isIPv4, isIPv6 } from "node:net";
import { formatIP } from "../common/gosyntax.ts";

/** The request's source addresses, most distant client first. */
export function sourceIPs(headers: Headers, remoteAddress: string): string[] {
  const forwarded = headers.get("x-forwarded-for");
  const realIp = headers.get("x-real-ip");
  // The common case, a direct client with a canonical IPv4 address, needs no parsing.
  if (!forwarded && !realIp) {
    const v4 = canonicalV4.exec(remoteAddress);
    if (v4) return [v4[1]];
  }
  const ips: Uint8Array[] = [];
  if (forwarded) {
    for (const part of forwarded.split(",")) {
      const ip = parseIP(part.trim());
      if (ip) ips.push(ip);
    }
  }
  if (realIp) {
    const ip = parseIP(realIp.trim());
    if (ip && !ips.some((x) => sameIP(x, ip))) ips.push(ip);
  }
  const remote = parseIP(stripPort(remoteAddress));
  if (remote && (ips.length === 0 || !sameIP(ips[ips.length - 1], remote))) ips.push(remote);
  return ips.map((ip) => formatIP(ip));
}

const octet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const canonicalV4 = new RegExp(`^(?:::ffff:)?(${octet}\\.${octet}\\.${octet}\\.${octet})(?::\\d+)?$`);

/** `host:port`, `[v6]:port` or a bare address → the address. */
function stripPort(addr: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(addr);
  if (bracketed) return bracketed[1];
  const v4port = /^([0-9.]+):\d+$/.exec(addr);
  return v4port ? v4port[1] : addr;
}

/** Parses an address into 16 bytes (IPv4 as IPv4-mapped); IPv4 octets may carry leading zeros, as Go's sloppy parser allows. */
export function parseIP(text: string): Uint8Array | null {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const octets = v4.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return null;
    return new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...octets]);
  }
  if (!isIPv6(text) || text.includes("%")) return null;
  let tail: number[] = [];
  let head = text;
  const lastColon = text.lastIndexOf(":");
  const maybeV4 = text.slice(lastColon + 1);
  if (isIPv4(maybeV4)) {
    tail = maybeV4.split(".").map(Number);
    head = text.slice(0, lastColon + 1) + "0:0";
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, null];
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right === null ? [] : groups(right);
  const words = right === null ? l : [...l, ...new Array(8 - l.length - r.length).fill(0), ...r];
  if (words.length !== 8) return null;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

function sameIP(a: Uint8Array, b: Uint8Array): boolean {
  return a.every((v, i) => v === b[i]);
}
