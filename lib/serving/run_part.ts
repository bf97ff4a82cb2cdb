/**
 * @module serving/run_part
 * The secure port and the ops listener as a part of `ingress-controller run` (lib/app/run.ts):
 * builds the auditor from the audit options, starts serving with the process-wide health checks,
 * and on stop closes the listeners first and then flushes the audit backends.
 */
import type { RunContext } from "../app/run.ts";
import { createAuditor } from "../audit/auditor.ts";
import { prepareAdmission } from "../admission/run_part.ts";
import { processHealth } from "./health.ts";
import { startServing } from "./server.ts";

export async function runServing(ctx: RunContext): Promise<void> {
  const auditor = await createAuditor(ctx.config);
  // --enable-validating-webhook (A): its route on the secure port, registered once the port serves.
  const admission = await prepareAdmission(ctx).catch(async (err) => {
    await auditor.shutdown();
    throw err;
  });
  try {
    const bodyRoutes = admission ? [admission.route] : [];
    const handle = await startServing(ctx.config, { auditor, health: processHealth, bodyRoutes });
    try {
      const registered = admission && handle.certificateChain
        ? admission.register(handle.certificateChain, ctx.signal)
        : Promise.resolve();
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      await registered;
    } finally {
      await handle.stop();
    }
  } finally {
    admission?.close();
    await auditor.shutdown();
  }
}
