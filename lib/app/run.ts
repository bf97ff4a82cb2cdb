/**
 * @module app/run
 * The start-up of `ingress-controller run`: load the cluster configuration (from `--kubeconfig`,
 * else in-cluster), failing at once with one SetupError line when there is none, then start the
 * parts of the controller. The parts are added here by their owners, one line each.
 */

import { loadKubeConfig } from "../cluster/access.ts";
import type { Config } from "../flags/config.ts";
import { log } from "../log/logger.ts";
import type { RunContext, RunPart } from "../parts/run_part.ts";

export type { RunContext, RunPart };

/** The parts `run` starts by default, one line each; all are loaded before the first is called. */
const defaultParts: readonly (() => Promise<RunPart>)[] = [
  () => import("../controller/run_part.ts").then((m) => m.runController), // lib/controller
  // lib/serving, with lib/admission's webhook mounted on the secure port
  () =>
    Promise.all([import("../serving/run_part.ts"), import("../admission/run_part.ts")])
      .then(([serving, admission]) => (ctx: RunContext) => serving.runServing(ctx, [admission.admissionMount])),
  () => import("../analytics/run_part.ts").then((m) => m.runAnalytics), // lib/analytics
];

/**
 * Starts `run`. Throws SetupError at once when no cluster configuration can be loaded; otherwise
 * runs `parts` (default: the controller's) until `signal` aborts or one part fails (which stops
 * the others); resolves or rejects once every part has stopped.
 */
export async function startRun(
  config: Config,
  signal?: AbortSignal,
  parts?: readonly RunPart[],
): Promise<void> {
  const kubeConfig = loadKubeConfig(config.get("kubeconfig"));
  log.info("cluster configuration loaded", {
    release: config.release,
    version: config.version,
    server: kubeConfig.server,
  });
  parts ??= await Promise.all(defaultParts.map((load) => load()));
  if (parts.length === 0) {
    log.warn("nothing to run: no controller parts are wired into lib/app/run.ts yet");
    return;
  }
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    // A failing part stops the others; startRun returns once every part has stopped.
    const results = await Promise.allSettled(
      parts.map((part) =>
        part({ config, kubeConfig, signal: stop.signal }).catch((err) => {
          stop.abort(err);
          throw err;
        })
      ),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
