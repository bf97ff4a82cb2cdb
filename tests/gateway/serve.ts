/**
 * @module tests/gateway/serve
 * What a proxy does with a port's route entries (lib/gateway/model_types.ts RouteEntry), written
 * as plainly as possible so model tests can ask "which rule answers this request": the listener
 * with the most specific hostname matching the Host (port ignored) is chosen, then the first of its
 * entries (in `routes` order) whose hostname, path, method, headers and query parameters match.
 */
import { compareHostnames, hostMatches } from "../../lib/gateway/hostnames.ts";
import type { ProxyPort, RouteEntry } from "../../lib/gateway/model_types.ts";

export interface Request {
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export function pathMatches(e: RouteEntry["path"], path: string): boolean {
  if (e.type === "Exact") return path === e.value;
  if (e.type === "PathPrefix") return e.value === "/" || path === e.value || path.startsWith(`${e.value}/`);
  return new RegExp(`^(?:${e.value})$`).test(path);
}

/** The entry that answers `req` on `port`, or null (404). */
export function serve(port: ProxyPort, req: Request): RouteEntry | null {
  const host = req.host.replace(/:\d+$/, "");
  const listeners = [...new Set(port.routes.map((e) => e.listenerHostname ?? ""))]
    .filter((l) => hostMatches(l, host))
    .sort(compareHostnames);
  const listener = listeners[0];
  if (listener === undefined) return null;
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return port.routes.find((e) =>
    (e.listenerHostname ?? "") === listener &&
    hostMatches(e.hostname, host) &&
    pathMatches(e.path, req.path) &&
    (e.method === null || e.method === (req.method ?? "GET")) &&
    e.headers.every((h) =>
      headers[h.name] !== undefined &&
      (h.type === "Exact" ? headers[h.name] === h.value : new RegExp(h.value).test(headers[h.name]))
    ) &&
    e.queryParams.every((q) =>
      req.query?.[q.name] !== undefined &&
      (q.type === "Exact" ? req.query[q.name] === q.value : new RegExp(q.value).test(req.query[q.name]))
    )
  ) ?? null;
}
