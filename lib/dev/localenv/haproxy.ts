/**
 * @module lib/dev/localenv/haproxy
 * A real HAProxy (Debian's package, 2.6 on bookworm) for tests: `haproxyCheck` runs `haproxy -c`,
 * `startHaproxy` runs it in master-worker mode with its master socket in a temporary directory.
 * `ensureHaproxy` installs the package with apt-get when missing and running as root; otherwise it
 * says what to install. `deno run -A lib/dev/localenv/haproxy.ts` does the same from the command line.
 */
import { join } from "node:path";
import { ensureTools } from "./debian.ts";
import { cliCommand } from "../../haproxy/cli_socket.ts";
import { sleep } from "../../runtime/timers.ts";
import { type ManagedProcess, spawnProcess } from "./process.ts";

export interface HaproxyCheckResult {
  ok: boolean;
  /** Exit code of `haproxy -c`. */
  code: number;
  /** Its stdout and stderr. */
  output: string;
}

export interface HaproxyOptions {
  /** Environment for haproxy (the config may reference `"${VAR}"`). */
  env?: Record<string, string>;
  /** The haproxy binary; default `haproxy` from PATH (or /usr/sbin/haproxy). */
  haproxy?: string;
}

export interface StartHaproxyOptions extends HaproxyOptions {
  /** How long to wait for the master socket to list a worker; default 20 s. */
  readyTimeoutMs?: number;
}

export interface Haproxy extends AsyncDisposable {
  /** Pid of the master process. */
  readonly pid: number;
  /** Temporary directory holding the master socket and the log; removed by stop(). */
  readonly dir: string;
  readonly masterSocket: string;
  readonly logPath: string;
  /** Sends one command to the master CLI (e.g. "show proc", "reload") and returns the answer. */
  masterCommand(command: string): Promise<string>;
  /** Pids of the current workers (from "show proc"). */
  workerPids(): Promise<number[]>;
  /** Stops the master (and so the workers) and removes `dir`. Idempotent. */
  stop(): Promise<void>;
}

let located: string | null = null;

/** The haproxy binary, installing Debian's package first when it is missing and we are root. */
export async function ensureHaproxy(): Promise<string> {
  if (located) return located;
  const [path] = await ensureTools([{ command: "haproxy", package: "haproxy" }], "HAProxy 2.6 or newer");
  return located = path;
}

/**
 * Runs `haproxy -c` on a configuration: `config` is the configuration text when it contains a
 * line break, otherwise the path of a configuration file.
 */
export async function haproxyCheck(config: string, opts: HaproxyOptions = {}): Promise<HaproxyCheckResult> {
  const haproxy = opts.haproxy ?? await ensureHaproxy();
  let tmpDir: string | null = null;
  let path = config;
  if (config.includes("\n")) {
    tmpDir = await Deno.makeTempDir({ prefix: "ic-haproxy-check-" });
    path = join(tmpDir, "haproxy.cfg");
    await Deno.writeTextFile(path, config);
  }
  try {
    const out = await new Deno.Command(haproxy, {
      args: ["-c", "-f", path],
      env: opts.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { ok: out.success, code: out.code, output: (dec.decode(out.stdout) + dec.decode(out.stderr)).trim() };
  } finally {
    if (tmpDir) await Deno.remove(tmpDir, { recursive: true });
  }
}

/** Starts `haproxy -W -S <dir>/master.sock -f configPath` and waits until a worker runs. */
export async function startHaproxy(configPath: string, opts: StartHaproxyOptions = {}): Promise<Haproxy> {
  const haproxy = opts.haproxy ?? await ensureHaproxy();
  const dir = await Deno.makeTempDir({ prefix: "ic-haproxy-" });
  const masterSocket = join(dir, "master.sock");
  const logPath = join(dir, "haproxy.log");
  let proc: ManagedProcess | null = null;
  let stopping: Promise<void> | null = null;
  const stop = () =>
    stopping ??= (async () => {
      await proc?.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  try {
    proc = await spawnProcess({
      name: "haproxy",
      command: haproxy,
      // -db: stay in the foreground so the master is our child; -W: master-worker; -S: master CLI.
      args: ["-W", "-db", "-S", `${masterSocket},mode,600`, "-f", configPath],
      logPath,
      env: opts.env,
      removeOnOrphan: dir,
    });
    const masterCommand = (command: string) => cliCommand(masterSocket, command, { connectRetryMs: 5000 });
    // `show proc` is safe to repeat: retried while a reloading master resets the connection.
    const workerPids = async () => {
      const until = performance.now() + 5000;
      for (;;) {
        try {
          return parseWorkers(await masterCommand("show proc"));
        } catch (err) {
          if (!(err instanceof Deno.errors.ConnectionReset) || performance.now() > until) throw err;
          await sleep(50);
        }
      }
    };
    const deadline = performance.now() + (opts.readyTimeoutMs ?? 20_000);
    for (;;) {
      if (proc.hasExited) throw new Error(`haproxy exited during start-up (exit ${(await proc.exited).code})`);
      const workers = await workerPids().catch(() => []);
      if (workers.length > 0) break;
      if (performance.now() > deadline) throw new Error("haproxy started no worker in time");
      await new Promise((r) => setTimeout(r, 50));
    }
    const p = proc;
    return { pid: p.pid, dir, masterSocket, logPath, masterCommand, workerPids, stop, [Symbol.asyncDispose]: stop };
  } catch (err) {
    const tail = proc ? await proc.logTail() : "";
    await stop();
    throw new Error(`haproxy did not start: ${(err as Error).message}\n${tail}`);
  }
}

/**
 * Current worker pids from `show proc`: lines `<pid> worker <reloads> <uptime> <version>`, up to
 * the "# old workers" section (workers still finishing after a reload).
 */
export function parseWorkers(showProc: string): number[] {
  const current = showProc.split(/^# old workers/m)[0];
  return current.split("\n")
    .map((line) => line.trim().match(/^(\d+)\s+worker\s/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map((m) => Number(m[1]));
}

if (import.meta.main) {
  try {
    const path = await ensureHaproxy();
    const v = await new Deno.Command(path, { args: ["-v"], stdout: "piped" }).output();
    console.log(new TextDecoder().decode(v.stdout).split("\n")[0]);
  } catch (err) {
    console.error((err as Error).message);
    Deno.exit(1);
  }
}
