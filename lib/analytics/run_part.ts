/**
 * @module analytics/run_part
 * Analytics as a part of `ingress-controller run` (lib/app/run.ts): started with the parsed command
 * line and the environment, stopped (sending `controller_stopped`) when the run ends.
 */
import type { RunContext } from "../parts/run_part.ts";
import { startAnalytics } from "./analytics.ts";
import { settingsFromConfig } from "./settings.ts";

export async function runAnalytics(ctx: RunContext): Promise<void> {
  const handle = await startAnalytics(settingsFromConfig(ctx.config), { kubeConfig: ctx.kubeConfig });
  if (!handle.active) return;
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await handle.stop();
}
