/**
 * gRPC through a real haproxy: a unary call (HTTP/2, `content-type: application/grpc`, a
 * length-prefixed message, `grpc-status` in the trailers) reaches a gRPC server on loopback with
 * `backend-protocol: h2` (cleartext, prior knowledge) and `h2-tls` (TLS, ALPN h2), from a client
 * over TLS (h2 by ALPN) and over cleartext HTTP/2 (h2c); the reply's message and its
 * `grpc-status: 0` trailer come back to the client.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { ingress, loopbackServices, pemFile, realTlsSecret } from "./fixtures.ts";
import { withProxy } from "./live.ts";

const A = "ingress-controller.io/";

/** A gRPC message frame: not compressed, 4-byte big-endian length, the bytes. */
function grpcFrame(message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message);
  const frame = new Uint8Array(5 + bytes.length);
  new DataView(frame.buffer).setUint32(1, bytes.length);
  frame.set(bytes, 5);
  return frame;
}

function grpcMessage(frame: Uint8Array): string {
  assert.ok(frame.length >= 5, `a gRPC frame, got ${frame.length} bytes`);
  const length = new DataView(frame.buffer, frame.byteOffset).getUint32(1);
  return new TextDecoder().decode(frame.subarray(5, 5 + length));
}

/**
 * A unary gRPC server (HTTP/2, cleartext or TLS): answers `<name> greets <request message> over
 * <scheme>` with `grpc-status: 0` in the trailers.
 */
async function startGrpcServer(name: string, tls?: { certPem: string; keyPem: string }) {
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

interface GrpcAnswer {
  httpVersion: string;
  status: number;
  contentType: string;
  /** The trailers (after the headers block in curl's header output). */
  trailers: Record<string, string>;
  message: string;
}

/** One unary call with curl (HTTP/2 over TLS by ALPN, or h2c with prior knowledge). */
async function call(url: string, message: string, extra: string[], dir: string): Promise<GrpcAnswer> {
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

Deno.test("gRPC: unary calls through haproxy to h2c and TLS gRPC servers, from TLS (ALPN h2) and h2c clients", async () => {
  const ca = await createCA({ commonName: "grpc-test-ca" });
  const proxyLeaf = await issueCertificate(ca, {
    commonName: "grpc.example.com",
    dnsNames: ["grpc.example.com", "grpcs.example.com"],
    usages: ["serverAuth"],
  });
  // the backend's own certificate: h2-tls does not verify it (as ingress-nginx's GRPCS)
  const backendLeaf = await issueCertificate(await createCA({ commonName: "backend-ca" }), {
    commonName: "greeter.internal",
    dnsNames: ["greeter.internal"],
    usages: ["serverAuth"],
  });
  await using plain = await startGrpcServer("plain");
  await using secure = await startGrpcServer("secure", backendLeaf);
  const objs = {
    ingresses: [
      ingress({
        name: "grpc",
        annotations: { [`${A}backend-protocol`]: "h2", [`${A}ssl-redirect`]: "false" },
        tls: [{ hosts: ["grpc.example.com"], secretName: "tls" }],
        rules: [{ host: "grpc.example.com", paths: [{ path: "/", service: "greeter", port: 50051 }] }],
      }),
      ingress({
        name: "grpcs",
        annotations: { [`${A}backend-protocol`]: "h2-tls" },
        tls: [{ hosts: ["grpcs.example.com"], secretName: "tls" }],
        rules: [{ host: "grpcs.example.com", paths: [{ path: "/", service: "greeter-tls", port: 50052 }] }],
      }),
    ],
    lookup: lookupFromLists({
      ...loopbackServices([
        { name: "greeter", servicePort: 50051, port: plain.port },
        { name: "greeter-tls", servicePort: 50052, port: secure.port },
      ]),
      secrets: [realTlsSecret("tls", proxyLeaf)],
    }),
  };
  const pem = pemFile(proxyLeaf);
  const dir = await Deno.makeTempDir({ prefix: "ic-grpc-test-" });
  try {
    await Deno.writeTextFile(join(dir, "ca.pem"), ca.certPem);
    await withProxy(objs, { "default_tls.pem": pem }, async ({ http, https }) => {
      const overTls = (host: string, message: string) =>
        call(`https://${host}:${https}/helloworld.Greeter/SayHello`, message, [
          "--http2",
          "--resolve",
          `${host}:${https}:127.0.0.1`,
          "--cacert",
          join(dir, "ca.pem"),
        ], dir);
      const tls = await overTls("grpc.example.com", "alice");
      assert.deepEqual(
        [tls.httpVersion, tls.status, tls.contentType, tls.trailers["grpc-status"], tls.message],
        ["2", 200, "application/grpc", "0", "plain greets alice at /helloworld.Greeter/SayHello over h2c"],
      );
      const h2c = await call(`http://127.0.0.1:${http}/helloworld.Greeter/SayHello`, "bob", [
        "--http2-prior-knowledge",
        "-H",
        "Host: grpc.example.com",
      ], dir);
      assert.deepEqual(
        [h2c.httpVersion, h2c.trailers["grpc-status"], h2c.message],
        ["2", "0", "plain greets bob at /helloworld.Greeter/SayHello over h2c"],
      );
      const secureCall = await overTls("grpcs.example.com", "carol");
      assert.deepEqual(
        [secureCall.httpVersion, secureCall.trailers["grpc-status"], secureCall.message],
        ["2", "0", "secure greets carol at /helloworld.Greeter/SayHello over tls"],
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
