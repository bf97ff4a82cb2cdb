/**
 * @module render/canary
 * Canary Ingresses (docs/annotations-rendering.md): an Ingress with `ingress-controller.io/canary:
 * "true"` creates no route of its own; each of its paths joins the route of another Ingress with the
 * same host, path and path type, which then points to a copy of its backend reserved for that route
 * (`<backend>_c<hash>`), so the canary rules below, keyed by that name, apply to that route only.
 * The frontends pick the canary backend with these rules before the route's own `use_backend`, in
 * ingress-nginx's order: the header (`never`, then `always` or `canary-header-value`), then the
 * cookie (`never`, then `always`), then the weight.
 */
import { createHash } from "node:crypto";
import { quoted } from "./quoting.ts";

export interface CanaryRule {
  /** The backend the main route points to (its reserved copy). */
  main: string;
  /** The canary's backend. */
  canary: string;
  /** 0–100. */
  weight: number;
  header: string | null;
  /** The header value that selects the canary (besides `never`, which never does); default `always`. */
  headerValue: string;
  cookie: string | null;
}

export type CanarySettings = Omit<CanaryRule, "main" | "canary">;

/** The name of the main route's reserved copy of its backend: stable per route key. */
export function reservedName(backend: string, routeKey: string): string {
  return `${backend}_c${createHash("sha256").update(routeKey).digest("hex").slice(0, 8)}`;
}

/** The frontend lines (without indentation) of the canary rules, in order. */
export function canaryLines(rules: readonly CanaryRule[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    const on = `{ var(txn.route) -m str ${r.main} }`;
    if (r.header) {
      out.push(`use_backend ${r.main} if ${on} { req.hdr(${r.header}) -m str never }`);
      // HAProxy ends an inline condition at a word `}`, quoted or not: that value is matched as a regex.
      const match = r.headerValue === "}" ? "-m reg '^\\}$'" : `-m str ${quoted(r.headerValue)}`;
      out.push(`use_backend ${r.canary} if ${on} { req.hdr(${r.header}) ${match} }`);
    }
    if (r.cookie) {
      out.push(`use_backend ${r.main} if ${on} { req.cook(${r.cookie}) -m str never }`);
      out.push(`use_backend ${r.canary} if ${on} { req.cook(${r.cookie}) -m str always }`);
    }
    if (r.weight > 0) out.push(`use_backend ${r.canary} if ${on} { rand(100) lt ${r.weight} }`);
  }
  return out;
}
