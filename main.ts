/**
 * @module main
 * Entry point of `ingress-controller`: wires the command line (lib/flags/cli.ts) to the real
 * process: stdout/stderr, the environment, `run` (lib/app), `proxy` (lib/proxy) and `exporter`
 * (lib/exporter).
 */

import { cli } from "./lib/flags/cli.ts";
import type { ProxySettings } from "./lib/flags/proxy_settings.ts";
import type { ExporterSettings } from "./lib/flags/exporter_settings.ts";
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

/**
 * Imports a command's runtime lazily, so the other commands start fast; the path is a variable so
 * compile.sh lists these files with `--include`.
 */
async function importCommand<T>(path: string, command: string): Promise<T> {
  try {
    return await import(path);
  } catch (err) {
    throw new SetupError(
      `the ${command} command is not available in this build (${(err as Error).message.split("\n")[0]})`,
    );
  }
}

type ProxyModule = { runProxy(settings: ProxySettings, signal?: AbortSignal): Promise<void> };
type ExporterModule = { runExporter(settings: ExporterSettings, signal?: AbortSignal): Promise<void> };

async function runProxyCommand(settings: ProxySettings): Promise<void> {
  const mod = await importCommand<ProxyModule>("./lib/proxy/command.ts", "proxy");
  await mod.runProxy(settings, stopSignal());
}

async function runExporterCommand(settings: ExporterSettings): Promise<void> {
  const mod = await importCommand<ExporterModule>("./lib/exporter/command.ts", "exporter");
  await mod.runExporter(settings, stopSignal());
}

const code = await cli(Deno.args, {
  stdout: (text) => write(Deno.stdout, text),
  stderr: (text) => write(Deno.stderr, text),
  env: (name) => Deno.env.get(name),
  run: async (config) => {
    const close = configureLogging(logSettingsFromConfig(config));
    try {
      // Imported when used: the exporter sidecar need not load the controller (~80 MB RSS).
      const { startRun } = await import("./lib/app/run.ts");
      await startRun(config, stopSignal());
    } finally {
      close();
    }
  },
  proxy: runProxyCommand,
  exporter: runExporterCommand,
});
Deno.exit(code);
