/**
 * @module tests/audit/helpers
 * Shared pieces of the audit tests: requests, settings, metric readings and a real HTTPS audit
 * webhook receiver on 127.0.0.1 that demands a client certificate (or a bearer token) and can be
 * told to fail its next requests.
 */
import assert from "node:assert/strict";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { UserInfo } from "../../lib/auth/types.ts";
import type { AuditRequest } from "../../lib/audit/types.ts";
import {
  type AuditSettings,
  type BatchSettings,
  defaultBatch,
  type LogSettings,
  noTruncate,
} from "../../lib/audit/settings.ts";
import type { prom } from "../../lib/metrics/registry.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

export const alice: UserInfo = { name: "alice", uid: "u-1", groups: ["devs", "system:authenticated"], extra: {} };

export function request(over: Partial<AuditRequest> = {}): AuditRequest {
  return {
    method: "GET",
    requestURI: "/healthz?verbose=1",
    verb: "get",
    headers: new Headers({ "user-agent": "kubectl/v1.30" }),
    remoteAddress: "127.0.0.1",
    user: alice,
    longRunning: false,
    ...over,
  };
}

export function logSettings(path: string, over: Partial<LogSettings> = {}): LogSettings {
  return {
    path,
    format: "json",
    maxSizeMB: 0,
    maxBackups: 0,
    maxAgeDays: 0,
    mode: "blocking",
    version: "audit.k8s.io/v1",
    batch: { ...defaultBatch, maxBatchWaitMs: 0, throttleEnable: false },
    truncate: noTruncate,
    ...over,
  };
}

/** Batch settings without waiting or throttling unless asked for. */
export function batchOf(over: Partial<BatchSettings>): BatchSettings {
  return { ...defaultBatch, maxBatchWaitMs: 0, throttleEnable: false, throttleQPS: 0, throttleBurst: 0, ...over };
}

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export async function writePolicy(dir: string, text: string): Promise<string> {
  const path = `${dir}/policy.yaml`;
  await Deno.writeTextFile(path, text);
  return path;
}

export const allRequestResponse = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
`;

export function settings(policyFile: string, over: Partial<AuditSettings> = {}): AuditSettings {
  return { policyFile, log: null, webhook: null, ...over };
}

/**
 * Asserts that a log line is one line for every reader: no character that Python's
 * str.splitlines, editors or JavaScript take as a line end, and no raw C0/C1 control, DEL,
 * U+2028 or U+2029 (a terminal would interpret the controls).
 */
export function assertSafeLine(line: string, what = ""): void {
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(line, /[\x00-\x1f\x7f-\x9f\u2028\u2029]/, `${what} ${JSON.stringify(line)}`);
}

/** Lines of a JSON-lines file, parsed. */
export async function readEvents(path: string): Promise<Record<string, any>[]> {
  const text = await Deno.readTextFile(path);
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

/** The current value of a counter or histogram count for the given labels. */
export async function metricValue(
  metric: prom.Counter<string> | prom.Histogram<string>,
  labels: Record<string, string>,
  suffix = "",
): Promise<number> {
  const data = await metric.get();
  const name = data.name + suffix;
  return data.values
    .filter((v) => {
      const metricName = (v as { metricName?: string }).metricName;
      return metricName === undefined || metricName === name;
    })
    .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
    .reduce((n, v) => n + v.value, 0);
}

export interface Receiver {
  readonly url: string;
  readonly caPem: string;
  readonly clientCertPem: string;
  readonly clientKeyPem: string;
  /** Every EventList received (and answered 200), in order. */
  readonly lists: Record<string, any>[];
  /** Authorization headers seen. */
  readonly authorizations: (string | undefined)[];
  /** Client certificate CNs seen. */
  readonly clientNames: (string | undefined)[];
  /** Answer the next n requests with this HTTP status (or drop the connection when 0). */
  failNext(n: number, status: number): void;
  /** Hold answers until released (a webhook that hangs). */
  hold(): () => void;
  attempts: number;
  events(): Record<string, any>[];
  /** Resolves once at least n events arrived. */
  waitForEvents(n: number, timeoutMs?: number): Promise<void>;
  /** Writes a kubeconfig for this receiver; `token` instead of the client certificate when given. */
  kubeconfig(dir: string, token?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const ca = await createCA({ commonName: "audit-test-ca" });
  const server = await issueCertificate(ca, {
    commonName: "audit-webhook",
    usages: ["serverAuth"],
    ipAddresses: ["127.0.0.1"],
  });
  const client = await issueCertificate(ca, { commonName: "ingress-controller", usages: ["clientAuth"] });
  let failures: { n: number; status: number } = { n: 0, status: 500 };
  let held: (() => void)[] | null = null;
  const lists: Record<string, any>[] = [];
  const authorizations: (string | undefined)[] = [];
  const clientNames: (string | undefined)[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const count = () => lists.reduce((n, l) => n + l.items.length, 0);

  const srv = https.createServer({
    key: server.keyPem,
    cert: server.certPem,
    ca: ca.certPem,
    requestCert: true,
    rejectUnauthorized: false, // a token client has no certificate; checked per request below
  }, (req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      recv.attempts++;
      const answer = () => {
        const sock = req.socket as import("node:tls").TLSSocket;
        const cn = sock.authorized ? sock.getPeerCertificate().subject?.CN as string | undefined : undefined;
        if (!cn && !req.headers.authorization) {
          res.writeHead(401).end("no credentials");
          return;
        }
        if (failures.n > 0) {
          failures.n--;
          if (failures.status === 0) {
            req.socket.destroy();
            return;
          }
          res.writeHead(failures.status).end("failing on purpose");
          return;
        }
        const text = Buffer.concat(chunks).toString("utf8");
        lists.push(JSON.parse(text));
        authorizations.push(req.headers.authorization);
        clientNames.push(cn);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
        for (const w of [...waiters]) {
          if (count() >= w.n) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
      };
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as AddressInfo).port;

  const recv: Receiver = {
    url: `https://127.0.0.1:${port}/audit`,
    caPem: ca.certPem,
    clientCertPem: client.certPem,
    clientKeyPem: client.keyPem,
    lists,
    authorizations,
    clientNames,
    attempts: 0,
    failNext(n, status) {
      failures = { n, status };
    },
    hold() {
      held = [];
      return () => {
        const h = held ?? [];
        held = null;
        for (const a of h) a();
      };
    },
    events: () => lists.flatMap((l) => l.items),
    waitForEvents(n, timeoutMs = 20_000) {
      if (count() >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${count()} of ${n} events arrived`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    async kubeconfig(dir, token) {
      const b64 = (s: string) => btoa(s);
      const user = token
        ? `    token: ${token}\n`
        : `    client-certificate-data: ${b64(client.certPem)}\n    client-key-data: ${b64(client.keyPem)}\n`;
      const path = `${dir}/webhook-${token ? "token" : "cert"}.kubeconfig`;
      await Deno.writeTextFile(
        path,
        `apiVersion: v1
kind: Config
clusters:
- name: audit
  cluster:
    server: ${recv.url}
    certificate-authority-data: ${b64(ca.certPem)}
users:
- name: controller
  user:
${user}contexts:
- name: audit
  context:
    cluster: audit
    user: controller
current-context: audit
`,
      );
      return path;
    },
    close() {
      return new Promise<void>((resolve) => {
        srv.close(() => resolve());
        srv.closeAllConnections();
      });
    },
  };
  return recv;
}
