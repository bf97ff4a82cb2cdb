/**
 * @module tests/serving/helpers
 * Small helpers for the serving tests: temporary directories, certificate files, and a real TLS
 * client (node:https / node:tls / node:http2) that reports status, body, the peer certificate,
 * the protocol and the ALPN protocol it negotiated.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { type CertifiedKey, createCA, issueCertificate, type LeafOptions } from "../../lib/pki/certs.ts";

export function tempDir(prefix = "serving-"): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface PairFiles {
  certFile: string;
  keyFile: string;
  pair: CertifiedKey;
}

export async function writePair(
  dir: string,
  name: string,
  issuer: CertifiedKey,
  opts: LeafOptions,
): Promise<PairFiles> {
  const pair = await issueCertificate(issuer, opts);
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  writeFileSync(certFile, pair.certPem);
  writeFileSync(keyFile, pair.keyPem, { mode: 0o600 });
  return { certFile, keyFile, pair };
}

export async function writeCA(dir: string, name: string): Promise<{ ca: CertifiedKey; file: string }> {
  const ca = await createCA({ commonName: name });
  const file = join(dir, `${name}.crt`);
  writeFileSync(file, ca.certPem);
  return { ca, file };
}

export interface ClientOptions {
  port: number;
  host?: string;
  path?: string;
  method?: string;
  servername?: string;
  ca?: string | string[];
  cert?: string;
  key?: string;
  headers?: Record<string, string | string[]>;
}

export interface ClientResult {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP/1.1 request over TLS (no connection reuse). Unknown CAs are accepted unless `ca` is given. */
export function request(o: ClientOptions): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: o.host ?? "127.0.0.1",
      port: o.port,
      path: o.path ?? "/",
      method: o.method ?? "GET",
      servername: o.servername,
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      headers: o.headers,
      rejectUnauthorized: o.ca !== undefined,
      agent: false,
    }, (res) => {
      const chunks: Uint8Array[] = [];
      res.on("data", (c: Uint8Array) => chunks.push(c));
      res.on("end", () => {
        const buf = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) {
          buf.set(c, at);
          at += c.length;
        }
        resolve({ status: res.statusCode ?? 0, body: new TextDecoder().decode(buf), headers: res.headers });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

export interface Handshake {
  subject: string;
  protocol: string | null;
  alpn: string | false | null;
}

/**
 * A bare TLS handshake (offering only TLS `version` when given); returns the peer certificate's
 * subject CN, protocol and ALPN.
 */
export function handshake(
  port: number,
  servername?: string,
  alpn?: string[],
  version?: tls.SecureVersion,
): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({
      host: "127.0.0.1",
      port,
      servername,
      rejectUnauthorized: false,
      ALPNProtocols: alpn,
      ...(version ? { minVersion: version, maxVersion: version } : {}),
    }, () => {
      const cert = sock.getPeerCertificate();
      const result = {
        subject: String(cert?.subject?.CN ?? ""),
        protocol: sock.getProtocol(),
        alpn: sock.alpnProtocol,
      };
      sock.once("close", () => resolve(result));
      sock.destroy();
    });
    sock.on("error", reject);
  });
}

/** One HTTP/2 GET (prior knowledge over ALPN h2); resolves with status and body. */
export function h2get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    client.on("error", reject);
    const req = client.request({ ":path": path });
    let status = 0;
    let body = "";
    req.on("response", (h) => (status = Number(h[":status"])));
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      client.close(() => resolve({ status, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The SETTINGS_MAX_CONCURRENT_STREAMS the server advertises, read after one request on the session. */
export function h2MaxStreams(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const client = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false });
    client.on("error", reject);
    const req = client.request({ ":path": "/healthz" });
    req.on("data", () => {});
    req.on("end", () => {
      const max = client.remoteSettings.maxConcurrentStreams;
      client.close(() => resolve(max));
    });
    req.on("error", reject);
    req.end();
  });
}

/** Runs a command and returns its exit code and output (stdout+stderr). */
export async function run(cmd: string, args: string[], stdin = ""): Promise<{ code: number; out: string }> {
  const child = new Deno.Command(cmd, { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const r = await child.output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout) + dec.decode(r.stderr) };
}
