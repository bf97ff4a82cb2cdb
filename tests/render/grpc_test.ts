/**
 * gRPC through a real haproxy: a unary call (HTTP/2, `content-type: application/grpc`, a
 * length-prefixed message, `grpc-status` in the trailers) reaches a gRPC server on loopback with
 * `backend-protocol: h2` (cleartext, prior knowledge) and `h2-tls` (TLS, ALPN h2), from a client
 * over TLS (h2 by ALPN) and over cleartext HTTP/2 (h2c); the reply's message and its
 * `grpc-status: 0` trailer come back to the client.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { ingress, loopbackServices, pemFile, realTlsSecret } from "./fixtures.ts";
import { withProxy } from "./live.ts";
import { call, startGrpcServer } from "./grpc.ts";

const A = "ingress-controller.io/";

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
