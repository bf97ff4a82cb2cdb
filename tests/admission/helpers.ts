/**
 * @module tests/admission/helpers
 * A real HTTPS client for the webhook path: one POST with a bearer token or a client
 * certificate, either whole (`postReview`) or with the body written by the caller (`openPost`,
 * for bodies sent slowly or never finished). The server's self-signed CA is not checked.
 */
import https from "node:https";
import { WEBHOOK_PATH } from "../../lib/admission/handler.ts";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface PostOptions {
  token?: string;
  cert?: string;
  key?: string;
  headers?: Record<string, string>;
  /** Default: the webhook path with the API server's `?timeout=10s`. */
  path?: string;
}

/** A POST whose body the caller writes on `req`; `answer` settles once the response has been read. */
export function openPost(port: number, o: PostOptions = {}) {
  let req!: ReturnType<typeof https.request>;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = https.request({
      host: "127.0.0.1",
      port,
      path: o.path ?? `${WEBHOOK_PATH}?timeout=10s`,
      method: "POST",
      rejectUnauthorized: false,
      agent: false,
      ...(o.cert ? { cert: o.cert, key: o.key } : {}),
      headers: {
        "Content-Type": "application/json",
        ...(o.token ? { Authorization: `Bearer ${o.token}` } : {}),
        ...o.headers,
      },
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  return { req, answer };
}

export function postReview(port: number, body: string, o: PostOptions = {}): Promise<Answer> {
  const r = openPost(port, o);
  r.req.end(body);
  return r.answer;
}
