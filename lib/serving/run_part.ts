/**
 * @module serving/run_part
 * The secure port and the ops listener as a part of `ingress-controller run` (lib/app/run.ts):
 * builds the auditor from the audit options, prepares the endpoints other parts mount on the
 * secure port (lib/parts/secure_port.ts; the run wiring passes their factories, e.g. lib/admission's
 * webhook), starts serving with the process-wide health checks, tells the mounts once the port
 * serves, and on stop closes the listeners first and then the mounts and the audit backends.
 */
import type { RunContext } from "../parts/run_part.ts";
import { createAuditor } from "../audit/auditor.ts";
import type { SecurePortMount, SecurePortMountFactory } from "../parts/secure_port.ts";
import { processHealth } from "../parts/health.ts";
import { startServing } from "./server.ts";

export async function runServing(ctx: RunContext, factories: readonly SecurePortMountFactory[] = []): Promise<void> {
  const auditor = await createAuditor(ctx.config);
  const mounts: SecurePortMount[] = [];
  try {
    for (const factory of factories) {
      const mount = await factory(ctx);
      if (mount) mounts.push(mount);
    }
    const bodyRoutes = mounts.flatMap((m) => m.routes);
    const handle = await startServing(ctx.config, { auditor, health: processHealth, bodyRoutes });
    try {
      const chain = handle.certificateChain;
      const served = chain ? Promise.all(mounts.map((m) => m.serving(chain, ctx.signal))) : Promise.resolve();
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      await served;
    } finally {
      await handle.stop();
    }
  } finally {
    for (const m of mounts) m.close();
    await auditor.shutdown();
  }
}
