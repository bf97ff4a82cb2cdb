/**
 * @module lib/dev/localenv/http
 * Plain HTTP requests with a chosen Host header (fetch() refuses to set Host), for traffic
 * tests through a proxy: connect to `address:port`, ask for `host` and `path`.
 */
import http from "node:http";

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface HostRequest {
  address: string;
  port: number;
  /** Host header; default `address:port`. */
  host?: string;
  path?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Default 10 s. */
  timeoutMs?: number;
}

/** One request on a fresh connection (no keep-alive, so nothing stays open after the test). */
export function requestWithHost(req: HostRequest): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const r = http.request({
      host: req.address,
      port: req.port,
      path: req.path ?? "/",
      method: req.method ?? "GET",
      agent: false,
      headers: { ...req.headers, host: req.host ?? `${req.address}:${req.port}`, connection: "close" },
      timeout: req.timeoutMs ?? 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on(
        "end",
        () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    r.on("timeout", () => r.destroy(new Error(`${req.method ?? "GET"} ${req.address}:${req.port} timed out`)));
    r.on("error", reject);
    r.end(req.body);
  });
}
