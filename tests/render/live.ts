/**
 * @module tests/render/live
 * A rendered configuration served by a real haproxy (with the IC_* environment the proxy command
 * sets) on free loopback ports, and curl to talk to it. The backends of these tests listen on the
 * host's loopback, so the model is built with `allowLoopbackEndpoints`.
 */
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import { buildModel, type ModelInput } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import type { ProxyOptions } from "../../lib/render/proxy_options.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import { luaDirOf, writeLuaFiles } from "../../lib/render/lua.ts";

export interface Answer {
  status: number;
  /** The name of the test backend that answered; null when haproxy answered itself. */
  backend: string | null;
  /** The request target the backend received, as it received it. */
  target: string | null;
  location: string;
  body: string;
}

/** One curl request; the path is sent as given (`--path-as-is`), without curl's own dot-segment removal. */
export async function curl(args: string[]): Promise<Answer> {
  const out = await new Deno.Command("curl", {
    args: ["-sS", "--path-as-is", "--max-time", "10", "-w", "\n%{http_code} %{redirect_url}", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, `curl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  const cut = text.lastIndexOf("\n");
  const [status, location = ""] = text.slice(cut + 1).split(" ");
  const body = text.slice(0, cut);
  let answer: { name?: string; target?: string } = {};
  try {
    answer = JSON.parse(body);
  } catch { /* not a backend answer */ }
  return { status: Number(status), backend: answer.name ?? null, target: answer.target ?? null, location, body };
}

export interface ProxyPorts {
  http: number;
  https: number;
  stats: number;
  /** Reloads haproxy through its master CLI and resolves once the new worker is the only current one. */
  reload: () => Promise<void>;
  /** haproxy's output so far (its access log lines included). */
  output: () => Promise<string>;
}

/**
 * Renders `objects` (which must render without problems, unless `allowProblems`), serves them with
 * haproxy and runs `fn`.
 */
export async function withProxy(
  objects: Omit<ModelInput, "allowLoopbackEndpoints">,
  pems: Record<string, string>,
  fn: (ports: ProxyPorts) => Promise<void>,
  opts: { allowProblems?: boolean; proxy?: ProxyOptions; bindAddress?: string; httpPort?: number } = {},
): Promise<void> {
  const { model, problems } = buildModel({ ...objects, allowLoopbackEndpoints: true });
  if (!opts.allowProblems) assert.deepEqual(problems, []);
  const rendered = render(model, await loadTemplates(null), opts.proxy);
  const dir = await Deno.makeTempDir({ prefix: "ic-routing-test-" });
  try {
    const certDir = join(dir, "certs");
    await Deno.mkdir(certDir);
    await Deno.writeTextFile(join(dir, "haproxy.cfg"), rendered.config);
    await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
    for (const [file, text] of Object.entries(rendered.maps)) await Deno.writeTextFile(join(certDir, file), text);
    for (const s of rendered.secrets) if (s.file) await Deno.writeTextFile(join(certDir, s.file), pems[s.file]);
    await writeLuaFiles(luaDirOf(dir));
    const bind = opts.bindAddress ?? "127.0.0.1";
    const [free, https, stats] = freePorts(3, bind);
    const http = opts.httpPort ?? free;
    const env = {
      IC_BIND_ADDR: bind,
      IC_HTTP_PORT: String(http),
      IC_HTTPS_PORT: String(https),
      IC_STATS_PORT: String(stats),
      IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
      IC_CERT_DIR: certDir,
      IC_LUA_DIR: luaDirOf(dir),
    };
    const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env });
    try {
      const reload = async () => {
        const before = await proxy.workerPids();
        await proxy.masterCommand("reload");
        for (let i = 0; i < 200; i++) {
          const now = await proxy.workerPids();
          if (now.length === 1 && !before.includes(now[0])) return;
          await new Promise((r) => setTimeout(r, 50));
        }
        throw new Error("haproxy did not reload");
      };
      await fn({ http, https, stats, reload, output: () => Deno.readTextFile(proxy.logPath) });
    } finally {
      await proxy.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * GETs of `/` over keep-alive connections to the proxy (HTTPS when `ca` is given, with the Host as
 * SNI), answering the name of the test backend that served each; `close` ends the connections.
 */
export function backendNames(address: string, port: number, ca?: string) {
  const agent = ca
    ? new https.Agent({ keepAlive: true, maxSockets: 4, ca })
    : new http.Agent({ keepAlive: true, maxSockets: 4 });
  const get = (host: string, headers: Record<string, string> = {}) =>
    new Promise<string>((resolve, reject) => {
      const options = { host: address, port, path: "/", headers: { host, ...headers }, agent, servername: host };
      const onAnswer = (res: http.IncomingMessage) => {
        let body = "";
        res.on("data", (d) => body += d);
        res.on("end", () => resolve(JSON.parse(body).name));
      };
      const req = ca ? https.request(options, onAnswer) : http.request(options, onAnswer);
      req.on("error", reject);
      req.end();
    });
  return { get, close: () => agent.destroy() };
}
