/**
 * @module gateway/filters
 * The filters of one HTTPRoute rule as the proxy applies them: RequestHeaderModifier,
 * ResponseHeaderModifier, RequestRedirect (scheme, hostname, port, path, 301/302/303/307/308) and
 * URLRewrite (hostname, path), CORS; on a backendRef, the header modifiers only. Any other filter
 * type (RequestMirror, ExtensionRef, …) is not served; the spec forbids skipping a filter, so the
 * rule is then answered 500 and the route says why (UnsupportedValue). Values are checked with
 * anchored patterns (validate.ts).
 */
import { show } from "../render/show.ts";
import type { HTTPCORSFilter, HTTPHeaderFilter, HTTPPathModifier, HTTPRouteFilter } from "./api.ts";
import { Reason } from "./conditions.ts";
import type { CorsPolicy, HeaderEdits, PathModifier, RuleBackend } from "./model_types.ts";
import {
  CORS_METHODS,
  isCorsOrigin,
  isHeaderName,
  isHeaderValue,
  isMatchPath,
  isPortNumber,
  isPreciseHostname,
  REDIRECT_CODES,
} from "./validate.ts";

export type RuleFilters = Pick<RuleBackend, "requestHeaders" | "responseHeaders" | "redirect" | "rewrite" | "cors">;

/** The filter types a backendRef may have here (the header modifiers; the API lets implementations refuse others). */
const BACKEND_FILTERS: ReadonlySet<string> = new Set(["RequestHeaderModifier", "ResponseHeaderModifier"]);

export type FiltersRead = { ok: true; filters: RuleFilters } | { ok: false; reason: string; message: string };

/**
 * The filters of a rule (`where`: e.g. `spec.rules[0]`), or of a backendRef (`backendRef`: then
 * only the header modifiers). `prefixOnly`: every match of the rule is a PathPrefix one.
 */
export function readFilters(
  list: readonly HTTPRouteFilter[] | undefined,
  where: string,
  prefixOnly: boolean,
  backendRef = false,
): FiltersRead {
  const out: RuleFilters = { requestHeaders: null, responseHeaders: null, redirect: null, rewrite: null, cors: null };
  const seen = new Set<string>();
  for (const [i, f] of (list ?? []).entries()) {
    const at = `${where}.filters[${i}]`;
    const bad = (reason: string, message: string): FiltersRead => ({ ok: false, reason, message: `${at}${message}` });
    if (seen.has(f.type)) return bad(Reason.IncompatibleFilters, `: a second ${show(f.type)} filter; one is allowed`);
    seen.add(f.type);
    if (backendRef && !BACKEND_FILTERS.has(f.type)) {
      return bad(
        Reason.UnsupportedValue,
        `.type ${show(f.type)} is not supported on a backendRef (RequestHeaderModifier, ResponseHeaderModifier); ` +
          `requests this rule matches get 500`,
      );
    }
    if (f.type === "RequestHeaderModifier" || f.type === "ResponseHeaderModifier") {
      const field = f.type === "RequestHeaderModifier" ? "requestHeaderModifier" : "responseHeaderModifier";
      const edits = headerEdits(f[field], `.${field}`);
      if (typeof edits === "string") return bad(Reason.UnsupportedValue, edits);
      if (field === "requestHeaderModifier") out.requestHeaders = edits;
      else out.responseHeaders = edits;
    } else if (f.type === "RequestRedirect") {
      const r = f.requestRedirect ?? {};
      const scheme = r.scheme ?? null;
      if (scheme !== null && scheme !== "http" && scheme !== "https") {
        return bad(Reason.UnsupportedValue, `.requestRedirect.scheme ${show(scheme)} is not http or https`);
      }
      if (r.hostname !== undefined && !isPreciseHostname(r.hostname)) {
        return bad(Reason.UnsupportedValue, `.requestRedirect.hostname ${show(r.hostname)} is not a hostname`);
      }
      if (r.port !== undefined && !isPortNumber(r.port)) {
        return bad(Reason.UnsupportedValue, `.requestRedirect.port ${show(r.port)} is not a port number`);
      }
      const statusCode = r.statusCode ?? 302;
      if (!(REDIRECT_CODES as readonly number[]).includes(statusCode)) {
        return bad(
          Reason.UnsupportedValue,
          `.requestRedirect.statusCode ${show(r.statusCode)} is not 301, 302, 303, 307 or 308`,
        );
      }
      const path = r.path === undefined ? null : pathModifier(r.path, ".requestRedirect.path", prefixOnly);
      if (typeof path === "string") return bad(Reason.UnsupportedValue, path);
      out.redirect = { scheme, hostname: r.hostname ?? null, port: r.port ?? null, path, statusCode };
    } else if (f.type === "URLRewrite") {
      const r = f.urlRewrite ?? {};
      if (r.hostname !== undefined && !isPreciseHostname(r.hostname)) {
        return bad(Reason.UnsupportedValue, `.urlRewrite.hostname ${show(r.hostname)} is not a hostname`);
      }
      const path = r.path === undefined ? null : pathModifier(r.path, ".urlRewrite.path", prefixOnly);
      if (typeof path === "string") return bad(Reason.UnsupportedValue, path);
      out.rewrite = { hostname: r.hostname ?? null, path };
    } else if (f.type === "CORS") {
      const cors = corsPolicy(f.cors ?? {}, ".cors");
      if (typeof cors === "string") return bad(Reason.UnsupportedValue, cors);
      out.cors = cors;
    } else {
      return bad(Reason.UnsupportedValue, `.type ${show(f.type)} is not supported; requests this rule matches get 500`);
    }
  }
  if (out.redirect && out.rewrite) {
    return {
      ok: false,
      reason: Reason.IncompatibleFilters,
      message: `${where}.filters: RequestRedirect and URLRewrite cannot be combined`,
    };
  }
  return { ok: true, filters: out };
}

/** Header edits, or why not: names are tokens, each name in one action only, values printable. */
function headerEdits(h: HTTPHeaderFilter | undefined, at: string): HeaderEdits | string {
  const edits: HeaderEdits = { set: [], add: [], remove: [] };
  const names = new Set<string>();
  const claim = (name: unknown, field: string): string | null => {
    if (!isHeaderName(name)) return `${at}.${field}: ${show(name)} is not a header name (RFC 7230 token)`;
    const lower = name.toLowerCase();
    if (names.has(lower)) return `${at}.${field}: header ${show(name)} appears in more than one action`;
    names.add(lower);
    return null;
  };
  for (const field of ["set", "add"] as const) {
    for (const [j, e] of (h?.[field] ?? []).entries()) {
      const problem = claim(e.name, `${field}[${j}].name`);
      if (problem) return problem;
      if (!isHeaderValue(e.value)) {
        return `${at}.${field}[${j}].value ${
          show(e.value)
        } is not printable ASCII without quotes, line breaks or edge blanks`;
      }
      edits[field].push({ name: e.name, value: e.value });
    }
  }
  for (const [j, name] of (h?.remove ?? []).entries()) {
    const problem = claim(name, `remove[${j}]`);
    if (problem) return problem;
    edits.remove.push(name);
  }
  return edits;
}

function pathModifier(p: HTTPPathModifier, at: string, prefixOnly: boolean): PathModifier | null | string {
  if (p.type === "ReplaceFullPath") {
    const v = p.replaceFullPath ?? "";
    if (!isMatchPath(v)) return `${at}.replaceFullPath ${show(v)} is not a path this proxy writes`;
    return { type: p.type, value: v };
  }
  if (p.type === "ReplacePrefixMatch") {
    if (!prefixOnly) return `${at}: ReplacePrefixMatch needs PathPrefix matches only`;
    const v = p.replacePrefixMatch ?? "";
    if (v !== "" && !isMatchPath(v)) return `${at}.replacePrefixMatch ${show(v)} is not a path this proxy writes`;
    return { type: p.type, value: v };
  }
  return `${at}.type ${show((p as { type: unknown }).type)} is not ReplaceFullPath or ReplacePrefixMatch`;
}

/** The API's bounds: at most 64 origins and headers, 9 methods. */
const MAX_CORS_LIST = 64;

/** A CORS filter, or why not: origins by the API's pattern (isCorsOrigin), methods from its enum, header names tokens. */
function corsPolicy(c: HTTPCORSFilter, at: string): CorsPolicy | string {
  const origins = c.allowOrigins ?? [];
  if (origins.length > MAX_CORS_LIST) return `${at}.allowOrigins: more than ${MAX_CORS_LIST}`;
  for (const [j, o] of origins.entries()) {
    if (!isCorsOrigin(o)) return `${at}.allowOrigins[${j}] ${show(o)} is not *, or scheme://host[:port]`;
  }
  const methods = c.allowMethods ?? [];
  for (const [j, m] of methods.entries()) {
    if (!CORS_METHODS.has(m)) return `${at}.allowMethods[${j}] ${show(m)} is not an HTTP method or *`;
  }
  if (methods.length > CORS_METHODS.size) return `${at}.allowMethods: more than ${CORS_METHODS.size}`;
  const names = (field: "allowHeaders" | "exposeHeaders"): string[] | string => {
    const list = c[field] ?? [];
    if (list.length > MAX_CORS_LIST) return `${at}.${field}: more than ${MAX_CORS_LIST}`;
    for (const [j, h] of list.entries()) {
      if (h !== "*" && !isHeaderName(h)) return `${at}.${field}[${j}] ${show(h)} is not a header name or *`;
    }
    return [...list];
  };
  const allowHeaders = names("allowHeaders");
  if (typeof allowHeaders === "string") return allowHeaders;
  const exposeHeaders = names("exposeHeaders");
  if (typeof exposeHeaders === "string") return exposeHeaders;
  const maxAge = c.maxAge ?? 5;
  if (!Number.isInteger(maxAge) || maxAge < 1 || maxAge > 2147483647) {
    return `${at}.maxAge ${show(c.maxAge)} is not a number of seconds (1 or more)`;
  }
  if (c.allowCredentials !== undefined && typeof c.allowCredentials !== "boolean") {
    return `${at}.allowCredentials ${show(c.allowCredentials)} is not true or false`;
  }
  return {
    allowOrigins: origins.map((o) => o.toLowerCase()),
    allowCredentials: c.allowCredentials === true,
    allowMethods: [...methods],
    allowHeaders,
    exposeHeaders,
    maxAge,
  };
}
