/**
 * @module controller/run_part
 * The controller as a part of `ingress-controller run` (lib/app/run.ts): starts it with the
 * parsed command line and the loaded cluster configuration, stops it when the run ends, and
 * registers the readiness check "informers-synced": `/readyz` fails until every informer has
 * listed once (the caches a reconcile reads are complete), with the informers still missing and
 * the last error (e.g. a 403 while RBAC does not allow the list yet) as the logged reason.
 */
import type { RunContext } from "../parts/run_part.ts";
import { ClusterClient } from "../cluster/client.ts";
import { processHealth } from "../parts/health.ts";
import { type ControllerHandle, startController } from "./controller.ts";
import { settingsFromConfig } from "./settings.ts";

export async function runController(ctx: RunContext): Promise<void> {
  // Registered before the first await: lib/app/run.ts relies on it (no probe passes too early).
  let handle: ControllerHandle | null = null;
  const unregister = processHealth.register("informers-synced", () => {
    if (!handle) throw new Error("the controller is starting");
    const pending = handle.unsynced();
    if (pending.length > 0) throw new Error(notSyncedReason(pending));
  });
  try {
    const settings = settingsFromConfig(ctx.config);
    const client = await ClusterClient.create({
      kubeConfig: ctx.kubeConfig,
      qps: settings.qps,
      burst: settings.burst,
    });
    try {
      handle = await startController(settings, { client });
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      await handle.stop();
    } finally {
      client.close();
    }
  } finally {
    unregister();
  }
}

function notSyncedReason(pending: { readonly name: string; readonly lastError: unknown }[]): string {
  const failed = pending.find((p) => p.lastError !== null);
  const why = failed
    ? `; last error (${failed.name}): ${
      failed.lastError instanceof Error ? failed.lastError.message : failed.lastError
    }`
    : "";
  return `informers not synced yet: ${pending.map((p) => p.name).join(", ")}${why}`;
}
