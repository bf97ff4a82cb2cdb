/**
 * @module main
 * Entry point of `ingress-controller`: wires the command line (lib/flags/cli.ts) to the real
 * process: stdout/stderr, the environment, `run` (lib/app), `proxy` (lib/proxy), `exporter`
 * (lib/exporter) and `nginx-check` (lib/nginx).
 */

import { cli } from "./lib/flags/cli.ts";
import type { ProxySettings } from "./lib/flags/proxy_settings.ts";
import type { ExporterSettings } from "./lib/flags/exporter_settings.ts";
import type { NginxCheckSettings } from "./lib/flags/nginx_check_settings.ts";
import { configureLogging } from "./lib/log/configure.ts";
import { logSettingsFromConfig } from "./lib/flags/log_settings.ts";

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

// Each command's runtime is imported when that command runs, so the others start fast and small
// (the exporter sidecar need not load the controller: ~80 MB RSS). The specifiers are literals, so
// `deno compile` includes them.
async function runProxyCommand(settings: ProxySettings): Promise<void> {
  const { runProxy } = await import("./lib/proxy/command.ts");
  await runProxy(settings, stopSignal());
}

async function runExporterCommand(settings: ExporterSettings): Promise<void> {
  const { runExporter } = await import("./lib/exporter/command.ts");
  await runExporter(settings, stopSignal());
}

async function runNginxCheckCommand(settings: NginxCheckSettings): Promise<void> {
  const { runNginxCheck } = await import("./lib/nginx/command.ts");
  await runNginxCheck(settings, (text) => write(Deno.stdout, text));
}

const code = await cli(Deno.args, {
  stdout: (text) => write(Deno.stdout, text),
  stderr: (text) => write(Deno.stderr, text),
  env: (name) => Deno.env.get(name),
  run: async (config) => {
    const close = configureLogging(logSettingsFromConfig(config));
    try {
      const { startRun } = await import("./lib/app/run.ts");
      await startRun(config, stopSignal());
    } finally {
      close();
    }
  },
  proxy: runProxyCommand,
  exporter: runExporterCommand,
  nginxCheck: runNginxCheckCommand,
});
Deno.exit(code);
