/**
 * @module render/features/cors
 * `cors-enable` and the `cors-*` keys: preflight requests from an allowed origin are answered by
 * the proxy (204 with the `Access-Control-*` headers), and the answers to the others get the
 * headers. Origins have passed the anchored parser (annotations/values.ts `origins`: exact,
 * one-label wildcard or a restricted regex) and are single-quoted.
 */
import type { Origin } from "../../annotations/values.ts";
import { literal, quoted, regexEscape } from "../quoting.ts";
import type { SettingsReader } from "../settings_reader.ts";

export interface Cors {
  origins: Origin[];
  methods: string[];
  headers: string[];
  expose: string[] | null;
  credentials: boolean;
  maxAge: number;
}

/** The CORS settings when `cors-enable` is on (the other keys are read only then); else null. */
export function readCors(r: SettingsReader): Cors | null {
  if (!r.get<boolean>("cors-enable")) return null;
  return {
    origins: r.get<Origin[]>("cors-allow-origin")!,
    methods: r.get<string[]>("cors-allow-methods")!,
    headers: r.get<string[]>("cors-allow-headers")!,
    expose: r.get<string[]>("cors-expose-headers"),
    credentials: r.get<boolean>("cors-allow-credentials")!,
    maxAge: r.get<number>("cors-max-age")!,
  };
}

function originAcl(origins: readonly Origin[]): string[] {
  const out: string[] = [];
  for (const o of origins) {
    if (o.kind === "exact") out.push(`acl ic_cors_origin req.hdr(origin) -m str ${quoted(o.origin)}`);
    else if (o.kind === "wildcard") {
      const [scheme, rest] = o.origin.split("*.");
      out.push(
        `acl ic_cors_origin req.hdr(origin) -m reg ${quoted(`^${regexEscape(scheme)}[^.]+\\.${regexEscape(rest)}$`)}`,
      );
    } else if (o.kind === "regex") out.push(`acl ic_cors_origin req.hdr(origin) -m reg ${quoted(o.pattern)}`);
  }
  return out;
}

export function corsLines(c: Cors): string[] {
  const any = c.origins.some((o) => o.kind === "any");
  const l: string[] = any ? ["acl ic_cors_origin req.hdr(origin) -m found"] : originAcl(c.origins);
  // `*` cannot be sent with credentials (the Fetch standard): then the request's origin is echoed.
  const allowOrigin = any && !c.credentials ? "'*'" : "'%[var(txn.ic_cors_origin)]'";
  l.push("http-request set-var(txn.ic_cors_origin) req.hdr(origin) if ic_cors_origin");
  const common = [`hdr Access-Control-Allow-Origin ${allowOrigin}`];
  if (c.credentials) common.push("hdr Access-Control-Allow-Credentials 'true'");
  if (!any || c.credentials) common.push("hdr Vary 'Origin'");
  l.push(
    "http-request return status 204 " + [
      ...common,
      `hdr Access-Control-Allow-Methods ${literal(c.methods.join(", "))}`,
      `hdr Access-Control-Allow-Headers ${literal(c.headers.join(", "))}`,
      `hdr Access-Control-Max-Age '${c.maxAge}'`,
    ].join(" ") + " if METH_OPTIONS ic_cors_origin { req.hdr(access-control-request-method) -m found }",
  );
  const when = " if { var(txn.ic_cors_origin) -m found }";
  for (const h of common) l.push(`http-response set-header ${h.slice(4)}${when}`);
  if (c.expose) l.push(`http-response set-header Access-Control-Expose-Headers ${literal(c.expose.join(", "))}${when}`);
  return l;
}
