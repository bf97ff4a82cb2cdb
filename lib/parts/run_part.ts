/**
 * @module run_part
 * The contract between `run` (lib/app/run.ts) and the parts it starts (each package's
 * `run_part.ts`): in a module of its own, so that the parts depend on the contract and not on the
 * start-up code that imports them.
 */
import type { ClusterAccess } from "../cluster/access.ts";
import type { Config } from "../flags/config.ts";

/** What `startRun` hands to the parts it starts. */
export interface RunContext {
  readonly config: Config;
  readonly kubeConfig: ClusterAccess;
  readonly signal: AbortSignal;
}

/**
 * One part of the running controller: resolves when it has stopped (after `signal` aborts).
 * Parts are called one after the other in one synchronous pass, so a health check a part
 * registers before its first `await` exists before any later part (the secure port) can answer
 * a probe.
 */
export type RunPart = (ctx: RunContext) => Promise<void>;
