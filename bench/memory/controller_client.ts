/**
 * @module bench/memory/controller_client
 * The benches' side of controller_process.ts: the controller in a process of its own, run with the
 * V8 flags the chart gives it (lib/controller/v8_flags.ts) plus `--expose-gc`, without the code cache
 * as the images run it (BENCH_V8_FLAGS: more flags after those, comma-separated, to measure one), and one command per
 * line (`report`, `idle`, `profile-start`, `profile-stop`, `heap-snapshot <file>`), each answered with one line.
 */
import { CONTROLLER_HEAP_LIMIT_MB, CONTROLLER_SEMI_SPACE_MB, v8Flags } from "../../lib/controller/v8_flags.ts";

export interface ControllerProcess {
  /** Sends `command` and returns the process's one-line answer. */
  request(command?: "report" | "idle" | "profile-start" | "profile-stop" | `heap-snapshot ${string}`): Promise<string>;
  /** Closes its stdin (it stops) and waits for it to exit. */
  close(): Promise<void>;
}

/** Starts the controller against `kubeconfig`; `overrides` are settings (ControllerSettings fields). */
export function startControllerProcess(kubeconfig: string, overrides?: Record<string, unknown>): ControllerProcess {
  const proc = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-code-cache", // as the images run it (lib/dev/images/build.ts)
      // As the chart runs it (BENCH_HEAP_LIMIT_MB: another `controller.heapLimitMB`).
      `--v8-flags=--expose-gc,${
        v8Flags(Number(Deno.env.get("BENCH_HEAP_LIMIT_MB") ?? CONTROLLER_HEAP_LIMIT_MB), CONTROLLER_SEMI_SPACE_MB)
      }${Deno.env.get("BENCH_V8_FLAGS") ? `,${Deno.env.get("BENCH_V8_FLAGS")}` : ""}`,
      new URL("./controller_process.ts", import.meta.url).pathname,
      kubeconfig,
      ...(overrides ? [JSON.stringify(overrides)] : []),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = proc.stdin.getWriter();
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  return {
    async request(command = "report") {
      await writer.write(new TextEncoder().encode(`${command}\n`));
      while (!buffered.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the controller process ended before answering ${command}`);
        buffered += value;
      }
      const line = buffered.slice(0, buffered.indexOf("\n"));
      buffered = buffered.slice(buffered.indexOf("\n") + 1);
      return line.trim();
    },
    async close() {
      await writer.close().catch(() => {});
      reader.releaseLock();
      await proc.stdout.cancel().catch(() => {});
      await proc.status;
    },
  };
}
