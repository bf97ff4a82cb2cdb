/**
 * @module serving/run_part
 * The secure port and the ops listener as a part of `ingress-controller run` (lib/app/run.ts):
 * builds the auditor from the audit options, starts serving with the process-wide health checks,
 * and on stop closes the listeners first and then flushes the audit backends.
 */
import type { RunContext } from "../app/run.ts";
import { createAuditor } from "../audit/auditor.ts";
import { processHealth } from "./health.ts";
import { startServing } from "./server.ts";

export async function runServing(ctx: RunContext): Promise<void> {
  const auditor = await createAuditor(ctx.config);
  try {
    const handle = await startServing(ctx.config, { auditor, health: processHealth });
    try {
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      await handle.stop();
    }
  } finally {
    await auditor.shutdown();
  }
}
