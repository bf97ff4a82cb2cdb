/**
 * @module auth/request_header
 * Identity supplied by an authenticating front proxy in request headers (X-Remote-User,
 * X-Remote-Group, X-Remote-Extra-*), as Kubernetes' requestheader authenticator reads it:
 * header names compare case-insensitively, the first non-empty username header wins, groups are
 * every value of every group header, and extra keys are the lower-cased, URL-unescaped rest of the
 * header name. Whether the caller may supply these headers at all is decided by the caller
 * (front-proxy client certificate); this module only reads and strips them.
 */
import type { UserInfo } from "./types.ts";

export interface RequestHeaderNames {
  readonly usernameHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

/** Header name/value pairs as they arrived (Node's `rawHeaders` paired up), keeping repeats. */
export type RawHeaderList = readonly (readonly [string, string])[];

export function pairRawHeaders(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i], raw[i + 1]]);
  return out;
}

function lower(list: readonly string[]): string[] {
  return list.map((h) => h.trim().toLowerCase()).filter((h) => h !== "");
}

function unescapeKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key; // Kubernetes keeps the raw key when it cannot be unescaped
  }
}

/** Reads the identity, or null when no username header has a non-empty value. */
export function userFromHeaders(headers: RawHeaderList, names: RequestHeaderNames): UserInfo | null {
  const userHeaders = lower(names.usernameHeaders);
  const prefixes = lower(names.extraHeaderPrefixes);
  let name = "";
  // Like Go's Header.Get: the first value of each header name, header names in configured order.
  for (const h of userHeaders) {
    const first = headers.find(([k]) => k.toLowerCase() === h)?.[1].trim() ?? "";
    if (first !== "") {
      name = first;
      break;
    }
  }
  if (name === "") return null;
  const groups: string[] = [];
  // Groups in the order of the configured header names, then arrival order within one.
  for (const h of lower(names.groupHeaders)) {
    for (const [k, v] of headers) if (k.toLowerCase() === h && v !== "") groups.push(v);
  }
  const extra: Record<string, string[]> = {};
  for (const [k, v] of headers) {
    const lk = k.toLowerCase();
    const prefix = prefixes.find((p) => lk.startsWith(p) && lk.length > p.length);
    if (!prefix) continue;
    // Lower-cased before unescaping, as Kubernetes does: escaped upper-case letters survive.
    const key = unescapeKey(lk.slice(prefix.length));
    (extra[key] ??= []).push(v);
  }
  return { name, groups, extra };
}

/** Whether a header is one of the identity headers (they are removed before handling). */
export function isIdentityHeader(header: string, names: RequestHeaderNames): boolean {
  return identityHeaderMatcher(names)(header);
}

/** `isIdentityHeader` with the name lists prepared once. */
export function identityHeaderMatcher(names: RequestHeaderNames): (header: string) => boolean {
  const exact = new Set([...lower(names.usernameHeaders), ...lower(names.groupHeaders)]);
  const prefixes = lower(names.extraHeaderPrefixes);
  return (header) => {
    const h = header.toLowerCase();
    return exact.has(h) || prefixes.some((p) => h.startsWith(p));
  };
}
