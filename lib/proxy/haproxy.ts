/**
 * @module proxy/haproxy
 * One HAProxy 2.6 in master-worker mode, run in the foreground as our child:
 * `haproxy -W -db -S <workDir>/master.sock -f <workDir>/haproxy.cfg [-f <workDir>/userlists.cfg]` with the `IC_*` environment of
 * contracts.md §4. The master CLI (`reload`, `show proc`) reloads it hitlessly — in master-worker
 * mode the re-executed master takes the listening sockets over from the running worker
 * (`-x sockpair@…`, automatic since 2.2), and old workers finish their connections — and the
 * Runtime API on the admin stats socket changes servers without a reload. HAProxy's stdout is this
 * process's (the proxy container's): its workers write the access log there themselves
 * (docs/access-log.md).
 */
import { join } from "node:path";
import { cliCommand, type CliOptions } from "../haproxy/cli_socket.ts";
import { log } from "../log/logger.ts";
import { sleep } from "../runtime/timers.ts";
// lib/render/lua.ts imports nothing of the renderer: the proxy ships the Lua files of its own image.
import { luaDirOf, writeLuaFiles } from "../render/lua.ts";
import { checkTimeLimit } from "../render/validate.ts";

/** Where HAProxy listens and finds its files; becomes the `IC_*` environment. */
export interface HAProxyEnvSettings {
  bindAddress: string;
  httpPort: number;
  httpsPort: number;
  statsPort: number;
  runtimeSocket: string;
  certDir: string;
}

/**
 * Where the stats listener binds: always a loopback address, because the stats page lists every
 * tenant's backends, endpoints and traffic. `--bind-address` itself when it is one (tests give
 * each proxy a loopback address of its own), else 127.0.0.1, where the exporter sidecar of the
 * pod reads it (`--proxy.scrape-uri`).
 */
export function statsAddress(bindAddress: string): string {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bindAddress) || bindAddress === "::1" ? bindAddress : "127.0.0.1";
}

/** The environment the rendered config expects (contracts.md §4). */
export function haproxyEnv(s: HAProxyEnvSettings): Record<string, string> {
  return {
    IC_BIND_ADDR: s.bindAddress,
    IC_HTTP_PORT: String(s.httpPort),
    IC_HTTPS_PORT: String(s.httpsPort),
    IC_STATS_ADDR: statsAddress(s.bindAddress),
    IC_STATS_PORT: String(s.statsPort),
    IC_RUNTIME_SOCKET: s.runtimeSocket,
    IC_CERT_DIR: s.certDir,
  };
}

export interface ProcEntry {
  pid: number;
  /** For the master: reloads so far; for a worker: reloads it has lived through. */
  reloads: number;
}

/** `show proc` of the master CLI. */
export interface ProcInfo {
  master: ProcEntry & { failed: number };
  /** The current workers (normally one). */
  workers: ProcEntry[];
  /** Workers of earlier generations still finishing their connections. */
  oldWorkers: ProcEntry[];
}

/**
 * Parses `show proc` (HAProxy 2.6):
 * ```
 * #<PID>          <type>          <reloads>       <uptime>        <version>
 * 5916            master          2 [failed: 1]   0d00h00m07s     2.6.12
 * # workers
 * 6016            worker          1               0d00h00m03s     2.6.12
 * # old workers
 * 5919            worker          3               0d00h00m09s     2.6.12
 * ```
 */
export function parseShowProc(text: string): ProcInfo {
  let master: ProcInfo["master"] | null = null;
  const workers: ProcEntry[] = [];
  const oldWorkers: ProcEntry[] = [];
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("#")) {
      section = line.replace(/^#\s*/, "");
      continue;
    }
    const m = /^(\d+)\s+(master|worker)\s+(\d+)(?:\s+\[failed:\s*(\d+)\])?/.exec(line);
    if (!m) continue;
    const entry = { pid: Number(m[1]), reloads: Number(m[3]) };
    if (m[2] === "master") master = { ...entry, failed: Number(m[4] ?? 0) };
    else if (section === "old workers") oldWorkers.push(entry);
    else workers.push(entry);
  }
  if (!master) throw new Error(`unexpected "show proc" answer: ${JSON.stringify(text.slice(0, 200))}`);
  return { master, workers, oldWorkers };
}

/**
 * Where HAProxy's stdout goes. It holds the access log lines only (`-db` mode writes nothing else
 * there; the frontends' loggers let no notice through: templates/access_log.eta).
 * - `"inherit"`: this process's stdout, the proxy container's. HAProxy's workers write each line
 *   there themselves (non-blocking: a line that finds the pipe full is dropped and counted in
 *   `show info`'s `DroppedLogs`); across reloads the master hands the same descriptor to each new worker.
 * - `"null"`: nowhere (a bench or a test that does not read the lines).
 * - a function: HAProxy's stdout is a pipe to this process, and each line, as HAProxy wrote it, is
 *   passed to it (tests reading the lines).
 */
export type AccessLogSink = "inherit" | "null" | ((line: string) => void);

export interface HAProxyOptions extends HAProxyEnvSettings {
  /** The haproxy binary. */
  binary: string;
  /** Holds master.sock and (by default) haproxy.cfg. */
  workDir: string;
  /** The configuration file haproxy reads; default `<workDir>/haproxy.cfg`. */
  configPath?: string;
  /**
   * A second configuration file with the `userlist` sections of htpasswd Secrets (HAProxy 2.6
   * has no directive that loads users from a file, but reads several `-f` files in order, also
   * on every reload); it must exist before start. Default: none.
   */
  userlistsPath?: string;
  /**
   * How long start, reload and `haproxy -c` may take for a configuration of up to 2 MB (10,000
   * Ingresses); default 30 s. A larger one gets longer in proportion ({@link timeLimitOf}).
   */
  timeoutMs?: number;
  /** Called when the master exits without stop() having been asked (a crash). */
  onUnexpectedExit?: (status: Deno.CommandStatus) => void;
  /** Where the access log lines go; default `"inherit"`. */
  accessLog?: AccessLogSink;
}

/**
 * How long HAProxy may take to check, start or reload the configuration at `configPath`: `baseMs`
 * up to 2 MB, then in proportion (lib/render/validate.ts's checkTimeLimit). Parsing grows with the
 * backends and servers: at 100,000 Ingresses (~19 MB) a start took 17–35 s and a reload 20–52 s on a
 * busy 2-core machine, and a fixed 30 s stopped a start whose worker was about to serve.
 */
export function timeLimitOf(baseMs: number, configPath: string): number {
  let bytes = 0;
  try {
    bytes = Deno.statSync(configPath).size;
  } catch {
    // not written yet: HAProxy will say so at once
  }
  return checkTimeLimit(baseMs, bytes);
}

export interface CheckResult {
  ok: boolean;
  output: string;
}

export interface ReloadResult {
  ok: boolean;
  /** Pids of the current workers after the reload. */
  workers: number[];
  /** On failure: HAProxy's alerts of this reload. */
  error?: string;
}

/** HAProxy warnings that are the expected result of our own reloads, runtime changes and stops. */
const EXPECTED_WARNING =
  /Proxy \S+ stopped|exited with code 0|Stopping |Exiting Master|All workers exited|leaving forced maintenance|is going DOWN for maintenance|is UP\/READY|(Paused|Resumed) frontend/;

/** How many of HAProxy's own output lines are kept for error reports. */
const KEEP_LINES = 200;

export class HAProxy {
  readonly masterSocket: string;
  readonly configPath: string;
  readonly userlistsPath: string | null;
  readonly env: Record<string, string>;
  #opts: HAProxyOptions;
  #child: Deno.ChildProcess | null = null;
  #status: Promise<Deno.CommandStatus> | null = null;
  #exited = false;
  #stopping = false;
  #started = false;
  #pumps: Promise<void>[] = [];
  #lines: { seq: number; text: string }[] = [];
  #seq = 0;

  constructor(opts: HAProxyOptions) {
    this.#opts = opts;
    this.masterSocket = join(opts.workDir, "master.sock");
    this.configPath = opts.configPath ?? join(opts.workDir, "haproxy.cfg");
    this.userlistsPath = opts.userlistsPath ?? null;
    // The Lua files a configuration may load live in the (writable) work dir: IC_LUA_DIR.
    this.env = { ...haproxyEnv(opts), IC_LUA_DIR: luaDirOf(opts.workDir) };
  }

  get runtimeSocket(): string {
    return this.#opts.runtimeSocket;
  }

  /** True between a successful start() and the master's exit. */
  get running(): boolean {
    return this.#child !== null && !this.#exited;
  }

  /** Pid of the master process. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /**
   * `haproxy -c` on a configuration file (and `userlists`, the staged twin of {@link userlistsPath})
   * with the real environment (or `env` overrides, e.g. a staging cert dir). Killed after the timeout.
   */
  async check(configPath: string, env: Record<string, string> = {}, userlists?: string): Promise<CheckResult> {
    await writeLuaFiles(this.env.IC_LUA_DIR);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeLimitOf(this.#opts.timeoutMs ?? 30_000, configPath));
    try {
      const out = await new Deno.Command(this.#opts.binary, {
        args: ["-c", "-f", configPath, ...(userlists ? ["-f", userlists] : [])],
        env: { ...this.env, ...env },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: abort.signal,
      }).output();
      const dec = new TextDecoder();
      const output = (dec.decode(out.stdout) + dec.decode(out.stderr)).trim();
      if (abort.signal.aborted) return { ok: false, output: `haproxy -c did not finish in time. ${output}` };
      return { ok: out.success, output };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Starts the master and waits until it has a worker. Throws with HAProxy's output if it cannot. */
  async start(): Promise<void> {
    if (this.running) throw new Error("haproxy is already running");
    await this.#stopLeftover();
    await writeLuaFiles(this.env.IC_LUA_DIR);
    await Deno.remove(this.masterSocket).catch(() => {});
    const sink = this.#opts.accessLog ?? "inherit";
    const child = new Deno.Command(this.#opts.binary, {
      // -W master-worker, -db foreground (never daemonize: the master is our child), -S master CLI.
      args: [
        "-W",
        "-db",
        "-S",
        `${this.masterSocket},mode,600`,
        "-f",
        this.configPath,
        ...(this.userlistsPath ? ["-f", this.userlistsPath] : []),
      ],
      env: this.env,
      stdin: "null",
      stdout: typeof sink === "function" ? "piped" : sink,
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#exited = false;
    this.#stopping = false;
    this.#started = false;
    this.#status = child.status.then((s) => {
      this.#exited = true;
      if (this.#child === child && !this.#stopping) {
        log.error("haproxy master exited unexpectedly", { pid: child.pid, code: s.code, signal: s.signal });
        if (this.#started) this.#opts.onUnexpectedExit?.(s);
      }
      return s;
    });
    this.#pumps = [this.#pump(child.stderr)];
    if (typeof sink === "function") this.#pumps.push(passLines(child.stdout, sink));
    const limit = timeLimitOf(this.#opts.timeoutMs ?? 30_000, this.configPath);
    const deadline = performance.now() + limit;
    for (;;) {
      if (this.#exited) {
        const status = await this.#status;
        await Promise.all(this.#pumps);
        this.#child = null;
        throw new Error(`haproxy exited during start-up (code ${status.code}): ${this.#alerts(0) || this.#tail(5)}`);
      }
      const info = await this.showProc().catch(() => null);
      if (info && info.workers.length > 0) break;
      if (performance.now() > deadline) {
        await this.stop();
        throw new Error(`haproxy started no worker within ${limit} ms: ${this.#tail(5)}`);
      }
      await sleep(20);
    }
    this.#started = true;
    log.info("haproxy started", { pid: child.pid, config: this.configPath });
  }

  /**
   * A HAProxy left running on this work dir by an earlier proxy process (killed without its
   * clean-up) would keep serving its stale configuration beside ours (SO_REUSEPORT lets both
   * bind): stop it first.
   */
  async #stopLeftover(): Promise<void> {
    const info = await this.showProc().catch(() => null);
    if (!info) return;
    const pids = [info.master.pid, ...info.workers.map((w) => w.pid), ...info.oldWorkers.map((w) => w.pid)];
    log.warn("stopping a haproxy left by an earlier run on this work dir", { pids });
    for (const [sig, wait] of [["SIGUSR1", 10_000], ["SIGKILL", 3_000]] as const) {
      for (const pid of pids) {
        if (!(await isHaproxyProcess(pid))) continue;
        try {
          Deno.kill(pid, sig);
        } catch {
          // gone meanwhile
        }
      }
      const deadline = performance.now() + wait;
      while (performance.now() < deadline) {
        const alive = await Promise.all(pids.map(isHaproxyProcess));
        if (!alive.includes(true)) return;
        await sleep(20);
      }
    }
  }

  /** A command on the master CLI. */
  master(command: string, opts: CliOptions = {}): Promise<string> {
    return cliCommand(this.masterSocket, command, opts);
  }

  /** A command on the Runtime API (the admin stats socket of the current worker). */
  runtime(command: string): Promise<string> {
    return cliCommand(this.#opts.runtimeSocket, command);
  }

  async showProc(): Promise<ProcInfo> {
    return parseShowProc(await this.master("show proc"));
  }

  /**
   * Hitless reload through the master CLI, verified: the master's reload counter must move on,
   * report no failure, and list a new worker. On failure the previous workers keep serving
   * with the previous configuration, and `error` has HAProxy's alerts.
   */
  async reload(): Promise<ReloadResult> {
    if (!this.running) throw new Error("haproxy is not running");
    await writeLuaFiles(this.env.IC_LUA_DIR);
    const before = await this.showProc();
    const mark = this.#seq;
    // The master re-executes itself on `reload` and drops the connection (2.6 sends no status).
    await this.master("reload").catch(() => "");
    const deadline = performance.now() + timeLimitOf(this.#opts.timeoutMs ?? 30_000, this.configPath);
    let after: ProcInfo | null = null;
    for (;;) {
      if (this.#exited) return { ok: false, workers: [], error: `haproxy master exited: ${this.#tail(5)}` };
      after = await this.showProc().catch(() => null);
      if (after && after.master.reloads > before.master.reloads) break;
      if (performance.now() > deadline) {
        return { ok: false, workers: before.workers.map((w) => w.pid), error: "the master did not reload in time" };
      }
      await sleep(10);
    }
    const workers = after.workers.map((w) => w.pid);
    const fresh = after.workers.some((w) => !before.workers.some((b) => b.pid === w.pid));
    if (after.master.failed > 0 || !fresh) {
      await sleep(20); // let the master's alert lines arrive through the pipe
      return { ok: false, workers, error: this.#alerts(mark) || "reload failed (no new worker)" };
    }
    return { ok: true, workers };
  }

  /**
   * Stops HAProxy: SIGUSR1 (soft stop: workers finish their connections), SIGTERM after
   * `timeoutMs`, SIGKILL 3 s later; any worker left after the master is killed too.
   */
  async stop(timeoutMs = 10_000): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#stopping = true;
    const pids = new Set<number>();
    const info = this.#exited ? null : await this.showProc().catch(() => null);
    for (const w of [...(info?.workers ?? []), ...(info?.oldWorkers ?? [])]) pids.add(w.pid);
    for (const [sig, wait] of [["SIGUSR1", timeoutMs], ["SIGTERM", 3_000], ["SIGKILL", 3_000]] as const) {
      if (this.#exited) break;
      try {
        child.kill(sig);
      } catch {
        // already gone
      }
      if (await exitedWithin(this.#status!, wait)) break;
      log.warn("haproxy did not stop in time", { signal: sig, waitedMs: wait });
    }
    await this.#status;
    for (const pid of pids) {
      if (await isHaproxyProcess(pid)) {
        log.warn("killing a haproxy worker left after the master", { pid });
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
    // Workers inherit the output pipes: they end once the last haproxy process is gone.
    await Promise.all(this.#pumps);
    this.#child = null;
    log.info("haproxy stopped", { pid: child.pid });
  }

  /** The last `n` lines HAProxy wrote. */
  #tail(n: number): string {
    return this.#lines.slice(-n).map((l) => l.text).join(" | ");
  }

  /** ALERT lines written after sequence number `mark`. */
  #alerts(mark: number): string {
    return this.#lines.filter((l) => l.seq > mark && l.text.includes("[ALERT]")).map((l) => l.text).join(" | ");
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    let rest = "";
    const dec = new TextDecoder();
    const take = (line: string) => {
      if (!line.trim()) return;
      this.#lines.push({ seq: ++this.#seq, text: line });
      if (this.#lines.length > KEEP_LINES) this.#lines.splice(0, this.#lines.length - KEEP_LINES);
      if (line.includes("[ALERT]")) log.error("haproxy", { line });
      else if (line.includes("[WARNING]") && !EXPECTED_WARNING.test(line)) log.warn("haproxy", { line });
      else log.debug("haproxy", { line });
    };
    for await (const chunk of stream) {
      rest += dec.decode(chunk, { stream: true });
      const lines = rest.split("\n");
      rest = lines.pop()!;
      lines.forEach(take);
    }
    take(rest);
  }
}

/** Each line HAProxy wrote to a piped stdout, to `sink` as it is (a test's reader). */
async function passLines(stream: ReadableStream<Uint8Array>, sink: (line: string) => void): Promise<void> {
  let rest = "";
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    rest += dec.decode(chunk, { stream: true });
    const lines = rest.split("\n");
    rest = lines.pop()!;
    lines.forEach(sink);
  }
  if (rest) sink(rest);
}

async function exitedWithin(status: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([status.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `pid` is a live haproxy process (guards against killing a reused pid). */
async function isHaproxyProcess(pid: number): Promise<boolean> {
  try {
    const cmdline = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return cmdline.split("\0")[0].endsWith("haproxy") && !/\) Z /.test(stat);
  } catch {
    return false;
  }
}
