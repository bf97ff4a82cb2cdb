/**
 * @module lib/dev/localenv/process
 * Long-running child processes of the test environment (etcd, kube-apiserver, haproxy) that never
 * outlive the Deno process that started them:
 * - `stop()` sends SIGTERM, then SIGKILL after a grace period, and waits for the exit;
 * - SIGINT/SIGTERM to the Deno process stop every live process, then exit (see `cleanup.ts`);
 * - a tiny `sh` reaper per process holds a pipe from Deno: when Deno dies in any way (even SIGKILL)
 *   the pipe closes and the reaper kills the process.
 * stderr and stdout go to a log file, whose tail is quoted when start-up fails.
 */
import { register } from "./cleanup.ts";

export interface SpawnOptions {
  /** Name for messages, e.g. "etcd". */
  name: string;
  command: string;
  args: string[];
  /** File receiving the process's stdout and stderr. */
  logPath: string;
  env?: Record<string, string>;
  cwd?: string;
  /** A directory the reaper removes after killing the process when Deno died (normal stops leave it to the caller). */
  removeOnOrphan?: string;
  /** A shell command the reaper runs after killing the process when Deno died (e.g. `runc delete -f <id>`). */
  cleanupOnOrphan?: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves when the process has exited (with its status). */
  readonly exited: Promise<Deno.CommandStatus>;
  /** True once the process has exited. */
  readonly hasExited: boolean;
  /** SIGTERM, SIGKILL after `graceMs` (default 5000), wait for exit. Idempotent. */
  stop(graceMs?: number): Promise<Deno.CommandStatus>;
  /** The last `lines` lines of the log file. */
  logTail(lines?: number): Promise<string>;
}

// Reads one line; unless it is "done" (a normal stop) the parent has gone: kill the process, run
// the cleanup command and remove the directory, if any, once the process is gone.
// It ignores the terminal's Ctrl-C (sent to the whole process group): it must outlive Deno.
const reaperScript = `trap '' INT TERM HUP
read -r word
if [ "$word" != done ]; then
  kill -9 "$1" 2>/dev/null
  if [ -n "$2$3" ]; then
    while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
    if [ -n "$3" ]; then sh -c "$3" >/dev/null 2>&1; fi
    if [ -n "$2" ]; then rm -rf -- "$2"; fi
  fi
fi
exit 0`;

/** Starts `command` with its output in `logPath`, guarded as described in the module header. */
export async function spawnProcess(opts: SpawnOptions): Promise<ManagedProcess> {
  const log = await Deno.open(opts.logPath, { create: true, append: true });
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(opts.command, {
      args: opts.args,
      env: opts.env,
      cwd: opts.cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    log.close();
    throw new Error(`cannot start ${opts.name} (${opts.command}): ${(err as Error).message}`);
  }
  // Both streams go to one file; each write is appended whole.
  const logWriter = (async () => {
    const enc = log;
    const copy = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) await writeAll(enc, chunk);
    };
    try {
      await Promise.all([copy(child.stdout), copy(child.stderr)]);
    } finally {
      log.close();
    }
  })();
  const reaper = new Deno.Command("sh", {
    args: ["-c", reaperScript, "reaper", String(child.pid), opts.removeOnOrphan ?? "", opts.cleanupOnOrphan ?? ""],
    stdin: "piped",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const reaperIn = reaper.stdin.getWriter();

  let exitedFlag = false;
  const exited = child.status.then(async (status) => {
    exitedFlag = true;
    await logWriter.catch(() => {});
    return status;
  });
  let stopping: Promise<Deno.CommandStatus> | null = null;
  const unregister = register(() => handle.stop());

  const handle: ManagedProcess = {
    name: opts.name,
    pid: child.pid,
    logPath: opts.logPath,
    exited,
    get hasExited() {
      return exitedFlag;
    },
    stop(graceMs = 5000) {
      stopping ??= (async () => {
        if (!exitedFlag) {
          trySignal(child, "SIGTERM");
          let timer: ReturnType<typeof setTimeout> | undefined;
          const killer = new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              trySignal(child, "SIGKILL");
              resolve();
            }, graceMs);
          });
          await Promise.race([exited, killer]);
          clearTimeout(timer);
        }
        const status = await exited;
        // The process is gone: tell the reaper so it exits without killing anything.
        await reaperIn.write(new TextEncoder().encode("done\n")).catch(() => {});
        await reaperIn.close().catch(() => {});
        await reaper.status;
        unregister();
        return status;
      })();
      return stopping;
    },
    async logTail(lines = 30) {
      try {
        const text = await Deno.readTextFile(opts.logPath);
        return text.trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "(no log)";
      }
    },
  };
  return handle;
}

function trySignal(child: Deno.ChildProcess, signal: Deno.Signal) {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
}

async function writeAll(file: Deno.FsFile, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
}

/** Whether a process with this pid exists (not yet reaped). */
export function processExists(pid: number): boolean {
  try {
    // /proc/<pid> disappears once the process is reaped.
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}
