/**
 * @module tests/render/grpc
 * gRPC on the wire for traffic tests: message frames, a unary gRPC server on loopback (h2c or TLS)
 * and one unary call with curl.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import { join } from "node:path";

/** A gRPC message frame: not compressed, 4-byte big-endian length, the bytes. */
export function grpcFrame(message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message);
  const frame = new Uint8Array(5 + bytes.length);
  new DataView(frame.buffer).setUint32(1, bytes.length);
  frame.set(bytes, 5);
  return frame;
}

export function grpcMessage(frame: Uint8Array): string {
  assert.ok(frame.length >= 5, `a gRPC frame, got ${frame.length} bytes`);
  const length = new DataView(frame.buffer, frame.byteOffset).getUint32(1);
  return new TextDecoder().decode(frame.subarray(5, 5 + length));
}

/**
 * A unary gRPC server (HTTP/2, cleartext or TLS): answers `<name> greets <request message> over
 * <scheme>` with `grpc-status: 0` in the trailers.
 */
export async function startGrpcServer(name: string, tls?: { certPem: string; keyPem: string }) {
  const server = tls
    ? http2.createSecureServer({ cert: tls.certPem, key: tls.keyPem, ALPNProtocols: ["h2"] })
    : http2.createServer();
  const onStream = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const chunks: Uint8Array[] = [];
    stream.on("data", (c: Uint8Array) => chunks.push(c));
    stream.on("end", () => {
      const ok = headers["content-type"] === "application/grpc" && headers[":method"] === "POST";
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": ok ? "0" : "3" }));
      const request = grpcMessage(new Uint8Array(chunks.flatMap((c) => [...c])));
      stream.end(grpcFrame(`${name} greets ${request} at ${headers[":path"]} over ${tls ? "tls" : "h2c"}`));
    });
  };
  server.on("stream", onStream);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    async [Symbol.asyncDispose]() {
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface GrpcAnswer {
  httpVersion: string;
  status: number;
  contentType: string;
  /** The trailers (after the headers block in curl's header output). */
  trailers: Record<string, string>;
  message: string;
}

/** One unary call with curl (HTTP/2 over TLS by ALPN, or h2c with prior knowledge). */
export async function call(url: string, message: string, extra: string[], dir: string): Promise<GrpcAnswer> {
  const body = join(dir, "request.bin"), reply = join(dir, "reply.bin");
  await Deno.writeFile(body, grpcFrame(message));
  const out = await new Deno.Command("curl", {
    args: [
      "-sS",
      "--max-time",
      "10",
      "-D",
      "-",
      "-o",
      reply,
      "-w",
      "%{http_version}",
      "-H",
      "content-type: application/grpc",
      "-H",
      "te: trailers",
      "--data-binary",
      `@${body}`,
      ...extra,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `curl ${url}: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout);
  const [head, ...rest] = text.split("\r\n\r\n");
  const fields = (block: string) =>
    Object.fromEntries(
      block.split("\r\n").filter((l) => l.includes(":")).map((l) => {
        const i = l.indexOf(":");
        return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
      }),
    );
  const headers = fields(head.split("\r\n").slice(1).join("\r\n"));
  // curl writes the trailers as a second header block, then the -w output
  const tail = rest.join("\r\n\r\n");
  const httpVersion = tail.slice(tail.lastIndexOf("\n") + 1).trim() || tail.trim();
  return {
    httpVersion,
    status: Number(head.split(" ")[1]),
    contentType: headers["content-type"],
    trailers: fields(tail),
    message: grpcMessage(await Deno.readFile(reply)),
  };
}
