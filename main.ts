/**
 * @module main
 * Entry point of `ingress-controller`: wires the command line (lib/flags/cli.ts) to the real
 * process: stdout/stderr, the environment, `run` (lib/app) and `proxy` (lib/proxy).
 */

import { startRun } from "./lib/app/run.ts";
import { cli } from "./lib/flags/cli.ts";
import type { ProxySettings } from "./lib/flags/proxy_settings.ts";
import { configureLogging, logSettingsFromConfig } from "./lib/log/configure.ts";
import { SetupError } from "./lib/errors.ts";

const enc = new TextEncoder();
const write = (f: { writeSync(p: Uint8Array): number }, text: string) => {
  const bytes = enc.encode(text);
  for (let done = 0; done < bytes.length;) done += f.writeSync(bytes.subarray(done));
};

/** Stops on SIGINT / SIGTERM. */
function stopSignal(): AbortSignal {
  const stop = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => stop.abort(sig));
  return stop.signal;
}

async function runProxyCommand(settings: ProxySettings): Promise<void> {
  // The proxy runtime is owned by lib/proxy; imported lazily so the other commands start fast.
  const path = "./lib/proxy/command.ts";
  let mod: { runProxy(settings: ProxySettings, signal?: AbortSignal): Promise<void> };
  try {
    mod = await import(path);
  } catch (err) {
    throw new SetupError(`the proxy command is not available in this build (${(err as Error).message.split("\n")[0]})`);
  }
  await mod.runProxy(settings, stopSignal());
}

const code = await cli(Deno.args, {
  stdout: (text) => write(Deno.stdout, text),
  stderr: (text) => write(Deno.stderr, text),
  env: (name) => Deno.env.get(name),
  run: async (config) => {
    const close = configureLogging(logSettingsFromConfig(config));
    try {
      await startRun(config, stopSignal());
    } finally {
      close();
    }
  },
  proxy: runProxyCommand,
});
Deno.exit(code);
