/**
 * @module controller/run_part
 * The controller as a part of `ingress-controller run` (lib/app/run.ts): starts it with the
 * parsed command line and the loaded cluster configuration, stops it when the run ends.
 */
import type { RunContext } from "../app/run.ts";
import { ClusterClient } from "../cluster/client.ts";
import { startController } from "./controller.ts";
import { settingsFromConfig } from "./settings.ts";

export async function runController(ctx: RunContext): Promise<void> {
  const settings = settingsFromConfig(ctx.config);
  const client = await ClusterClient.create({ kubeConfig: ctx.kubeConfig, qps: settings.qps, burst: settings.burst });
  try {
    const handle = await startController(settings, { client });
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await handle.stop();
  } finally {
    client.close();
  }
}
