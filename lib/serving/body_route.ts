/**
 * @module serving/body_route
 * Answers a POST endpoint mounted on the secure port (lib/parts/secure_port.ts `BodyRoute`): reads the
 * request body within the route's limit and hands it to the route. The limit holds before
 * anything is buffered: a Content-Length above it gets 413 at once, and a body that grows past it
 * (chunked, or longer than announced) gets 413 as soon as it does, without reading the rest. The
 * route may also refuse before the body is read (`refuseEarly`, e.g. 429 when its queue is full);
 * that body, at most the limit by its Content-Length, is then discarded as it arrives, so the
 * client reads the answer and keeps its connection. After a 413 an HTTP/1.1 connection is closed
 * instead, so a body of unknown size is never read on or parsed as a next request.
 */
import type http from "node:http";
import type http2 from "node:http2";
import type { AuditHandle } from "../audit/types.ts";
import { type BodyRoute, type Reply, statusReply } from "../parts/secure_port.ts";

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** 413, sent before the whole body was read. */
function tooLarge(route: BodyRoute, req: AnyRequest): Reply {
  const reply = statusReply(413, "RequestEntityTooLarge", `request body larger than ${route.maxBodyBytes} bytes`);
  // HTTP/2 ends the stream on its own; "Connection" is forbidden there.
  return req.httpVersionMajor < 2 ? { ...reply, headers: { Connection: "close" } } : reply;
}

function contentLength(req: AnyRequest): number | null {
  const v = req.headers["content-length"];
  return typeof v === "string" && /^\d+$/.test(v) ? Number(v) : null;
}

/** Reads the body into one exact buffer, at most `max` bytes; null when it is larger. */
async function readBounded(req: AnyRequest, max: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const announced = contentLength(req);
  // Sized from Content-Length when given: one allocation, and the buffer can be transferred whole.
  let body = new Uint8Array(announced ?? Math.min(max, 64 * 1024));
  let size = 0;
  const complete = await new Promise<boolean>((resolve, reject) => {
    const stop = (result: boolean) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", reject);
      resolve(result);
    };
    const onData = (chunk: Uint8Array | string) => {
      // A plain view of a node Buffer: TypedArray#set copies from it ten times faster.
      const bytes = typeof chunk === "string"
        ? new TextEncoder().encode(chunk)
        : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const end = size + bytes.length;
      if (end > max) {
        // Stop reading; the stream is paused, not destroyed, so the 413 can still be sent.
        req.pause();
        return stop(false);
      }
      if (end > body.length) {
        const grown = new Uint8Array(Math.min(max, Math.max(end, body.length * 2)));
        grown.set(body.subarray(0, size));
        body = grown;
      }
      body.set(bytes, size);
      size = end;
    };
    const onEnd = () => stop(true);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", reject);
  });
  if (!complete) return null;
  return size === body.length ? body : body.slice(0, size);
}

/** POST only; the body goes to `route` (and to the audit record at level Request and above). */
export async function answerBodyRoute(
  route: BodyRoute,
  req: AnyRequest,
  method: string,
  url: URL,
  audit: AuditHandle | null,
): Promise<Reply> {
  if (method !== "POST") {
    return { ...statusReply(405, "MethodNotAllowed", `${route.path} accepts POST only`), headers: { Allow: "POST" } };
  }
  const length = contentLength(req);
  if (length !== null && length > route.maxBodyBytes) return tooLarge(route, req);
  const refused = length === null ? null : route.refuseEarly?.(length);
  if (refused) {
    req.resume(); // discarded as it arrives (bounded: the length was checked)
    return refused;
  }
  const body = await readBounded(req, route.maxBodyBytes);
  if (body === null) return tooLarge(route, req);
  if (audit && audit.level !== "Metadata") {
    const text = new TextDecoder().decode(body);
    try {
      audit.requestBody(JSON.parse(text));
    } catch {
      audit.requestBody(text);
    }
  }
  const ct = req.headers["content-type"];
  return await route.handle(body, { contentType: Array.isArray(ct) ? ct[0] : ct, query: url.searchParams });
}
