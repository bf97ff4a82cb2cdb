/**
 * @module lib/dev/localnode/inside
 * Requests from inside the cluster's network namespace: plain HTTP with a Host header, HTTPS with
 * an SNI name (reporting the served certificate's names), each on a new connection (so a Service
 * may pick another pod each time). One Deno process per batch, entered with nsenter.
 */
import type { Cluster } from "./mod.ts";

export interface InsideRequest {
  url: string;
  /** Host header (HTTP) and SNI server name (HTTPS). */
  host?: string;
}

export interface InsideResult {
  /** 0 when the request failed (body holds the error). */
  status: number;
  body: string;
  /** HTTPS: the served certificate's subjectAltName, e.g. "DNS:a.example". */
  altNames?: string;
}

const script = `
import http from "node:http";
import https from "node:https";
const reqs = JSON.parse(Deno.args[0]);
const one = (r) => new Promise((resolve) => {
  const tls = r.url.startsWith("https:");
  const opts = { agent: false, timeout: 5000, headers: r.host ? { host: r.host } : {} };
  if (tls) Object.assign(opts, { servername: r.host, rejectUnauthorized: false });
  const req = (tls ? https : http).get(r.url, opts, (res) => {
    const altNames = tls ? res.socket.getPeerCertificate()?.subjectaltname : undefined;
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (c) => body += c);
    res.on("end", () => resolve({ status: res.statusCode, body, altNames }));
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", (e) => resolve({ status: 0, body: String(e) }));
});
const out = [];
for (const r of reqs) out.push(await one(r));
console.log(JSON.stringify(out));
`;

export async function inside(cluster: Pick<Cluster, "enter">, reqs: InsideRequest[]): Promise<InsideResult[]> {
  const [cmd, ...args] = cluster.enter;
  const out = await new Deno.Command(cmd, {
    args: [...args, Deno.execPath(), "eval", "--ext=js", script, JSON.stringify(reqs)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`requests inside the cluster failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** The echo pod that answered (the echo backend's JSON), or null for anything else. */
export function echoPod(r: InsideResult): string | null {
  if (r.status !== 200) return null;
  try {
    return JSON.parse(r.body).pod ?? null;
  } catch {
    return null;
  }
}
