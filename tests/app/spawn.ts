/**
 * @module tests/app/spawn
 * `deno run -A main.ts run <flags>` as a child process, the way an operator starts it: stdin
 * closed, stdout discarded, stderr (the log) piped; without the variables that would make it
 * believe it runs in a pod or send analytics (`extraEnv` adds some, e.g. POD_NAME); and its log
 * collected while it runs.
 */
const main = new URL("../../main.ts", import.meta.url).pathname;

export function spawnRun(flags: string[], extraEnv: Record<string, string> = {}): Deno.ChildProcess {
  const env = { ...Deno.env.toObject(), ...extraEnv };
  for (const name of ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "INGRESS_CONTROLLER_ANALYTICS_URL"]) {
    delete env[name];
  }
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", main, "run", ...flags],
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
}

/** A spawned process's stderr, collected while it runs; `waitFor` resolves when a line matches. */
export function collect(stream: ReadableStream<Uint8Array>) {
  let text = "";
  let ended = false;
  let wake = () => {};
  const done = (async () => {
    try {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        text += chunk;
        wake();
      }
    } finally {
      ended = true;
      wake();
    }
  })();
  return {
    get text() {
      return text;
    },
    done,
    /** Resolves with the first line matching `re`; rejects when the stream ends without one. */
    async waitFor(re: RegExp): Promise<string> {
      for (;;) {
        const line = text.split("\n").find((l) => re.test(l));
        if (line) return line;
        if (ended) throw new Error(`the process ended without a line matching ${re}:\n${text}`);
        await new Promise<void>((resolve) => wake = resolve);
      }
    },
  };
}
