/**
 * @module tests/app/spawn
 * `deno run -A main.ts run <flags>` as a child process, the way an operator starts it: stdin
 * closed, stdout discarded, stderr (the log) piped; without the variables that would make it
 * believe it runs in a pod or send analytics.
 */
const main = new URL("../../main.ts", import.meta.url).pathname;

export function spawnRun(flags: string[]): Deno.ChildProcess {
  const env = Deno.env.toObject();
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
