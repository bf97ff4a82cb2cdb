/**
 * @module audit/webhook_client
 * The HTTPS client of the audit webhook: reads the kubeconfig-format file (server URL, CA, client
 * certificate and key or bearer token) with lib/cluster/kubeconfig.ts and POSTs JSON over node:https
 * with a keep-alive agent carrying that TLS material.
 */
import { Buffer } from "node:buffer";
import https from "node:https";
import { type Connection, kubeConfigFileAccess } from "../cluster/kubeconfig.ts";
import { oneLine, SetupError } from "../common/errors.ts";

export interface WebhookResponse {
  readonly status: number;
  readonly body: string;
}

export class WebhookClient {
  private constructor(
    readonly url: URL,
    private readonly agent: https.Agent,
    private readonly headers: Record<string, string>,
  ) {}

  /** Loads the kubeconfig file; a missing server, unreadable file or unusable TLS material is a SetupError. */
  static async load(configFile: string): Promise<WebhookClient> {
    const fail = (what: string) =>
      new SetupError(
        `--audit-webhook-config-file ${configFile}: ${what}; give a kubeconfig-format file for the webhook`,
      );
    let access;
    try {
      access = kubeConfigFileAccess(configFile);
    } catch (err) {
      throw fail(`cannot load (${oneLine(err)})`);
    }
    const url = new URL(access.server);
    if (url.protocol !== "https:") throw fail(`server ${access.server} must be an https:// URL`);
    let c: Connection;
    try {
      c = await access.connection();
    } catch (err) {
      throw fail(`cannot use its credentials (${oneLine(err)})`);
    }
    const agent = new https.Agent({
      keepAlive: true,
      maxSockets: 8,
      ca: c.ca,
      cert: c.cert,
      key: c.key,
      rejectUnauthorized: c.rejectUnauthorized,
      servername: c.servername,
    });
    const headers: Record<string, string> = { ...c.headers };
    return new WebhookClient(url, agent, headers);
  }

  /** POSTs a JSON body; rejects on a network error or timeout, resolves with any HTTP status. */
  post(body: string, timeoutMs: number, signal?: AbortSignal): Promise<WebhookResponse> {
    return new Promise((resolve, reject) => {
      const req = https.request(this.url, {
        method: "POST",
        agent: this.agent,
        headers: {
          ...this.headers,
          "Content-Type": "application/json",
          "Accept": "application/json",
          "Content-Length": String(new TextEncoder().encode(body).length),
        },
        signal,
      }, (res) => {
        const chunks: Uint8Array[] = [];
        res.on("data", (c: Uint8Array) => chunks.push(c));
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", (err) => {
          clearTimeout(timer);
          reject(err);
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs}ms`)), timeoutMs);
      req.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
