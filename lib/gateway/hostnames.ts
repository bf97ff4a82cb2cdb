/**
 * @module gateway/hostnames
 * Gateway API hostname semantics: a wildcard `*.example.com` matches ONE OR MORE labels in front of
 * `.example.com` (`a.example.com`, `a.b.example.com`, never `example.com`), unlike an Ingress
 * wildcard; a route's hostnames intersect a listener's (the more specific of two matching names
 * is what is served); and the order in which hostnames are tried (exact before wildcard, longer
 * before shorter, any host last). "" stands for "no hostname": any host.
 */
import { isGatewayHostname } from "./validate.ts";

/** Whether `host` (a precise hostname) is matched by `pattern` (precise or wildcard). */
export function hostMatches(pattern: string, host: string): boolean {
  if (pattern === "") return true;
  if (!pattern.startsWith("*.")) return pattern === host;
  const suffix = pattern.slice(1); // ".example.com"
  return host.length > suffix.length && host.endsWith(suffix) && !host.startsWith("*");
}

/**
 * The names both `a` and `b` match, as one hostname: the more specific of the two when one
 * contains the other (`*.example.com` ∩ `a.example.com` = `a.example.com`, `*.example.com` ∩
 * `*.a.example.com` = `*.a.example.com`), else null. "" (any host) intersects everything.
 */
export function intersect(a: string, b: string): string | null {
  if (a === "") return b;
  if (b === "" || a === b) return a;
  const aWild = a.startsWith("*.");
  const bWild = b.startsWith("*.");
  if (aWild && !bWild) return hostMatches(a, b) ? b : null;
  if (bWild && !aWild) return hostMatches(b, a) ? a : null;
  if (aWild && bWild) {
    // *.x.example.com is inside *.example.com: ".x.example.com" ends with ".example.com"
    if (a.slice(1).endsWith(b.slice(1))) return a;
    if (b.slice(1).endsWith(a.slice(1))) return b;
  }
  return null;
}

/**
 * The hostnames a route serves on a listener: its hostnames intersected with the listener's, once
 * each, in the route's order; `[""]` when neither names one; empty when none intersects (the route
 * is then not accepted there: NoMatchingListenerHostname).
 */
export function effectiveHostnames(listener: string, route: readonly string[]): string[] {
  if (route.length === 0) return [listener];
  const out: string[] = [];
  for (const h of route) {
    const e = intersect(listener, h);
    if (e !== null && !out.includes(e)) out.push(e);
  }
  return out;
}

/**
 * Hostname precedence (Gateway listener and HTTPRoute hostname rules): exact names before
 * wildcards, longer (more characters) before shorter, any host ("") last; equal ones by name,
 * which only keeps the order stable (two different names of the same kind and length never match
 * the same request).
 */
export function compareHostnames(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "" || b === "") return a === "" ? 1 : -1;
  const aWild = a.startsWith("*.");
  const bWild = b.startsWith("*.");
  if (aWild !== bWild) return aWild ? 1 : -1;
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : 1;
}

/**
 * A route's `spec.hostnames` as read: the valid Gateway API hostnames once each, in the route's
 * order, and the others named by their field (`spec.hostnames[1] "a b"`) for its conditions.
 */
export function routeHostnames(written: readonly unknown[]): { hostnames: string[]; bad: string[] } {
  const hostnames: string[] = [];
  const bad: string[] = [];
  for (const [i, h] of written.entries()) {
    if (isGatewayHostname(h)) {
      if (!hostnames.includes(h)) hostnames.push(h);
    } else bad.push(`spec.hostnames[${i}] ${JSON.stringify(h)}`);
  }
  return { hostnames, bad };
}
