/**
 * @module flags/proxy_settings
 * The flags of the hidden `proxy` command (contracts.md section 5), read with the same table
 * engine as `run`, as the camelCase settings object `runProxy` takes.
 */

import { UsageError } from "../common/errors.ts";
import { parseFlags } from "./parse.ts";
import { proxyTable } from "./table.ts";
import { validateFlags } from "./validate.ts";

export interface ProxySettings {
  /** Path of a kubeconfig file; "" means the in-cluster configuration. */
  readonly kubeconfig: string;
  /** Namespace of the ConfigMap; "" means the pod's own namespace. */
  readonly namespace: string;
  /** Name of the ConfigMap with the rendered configuration. */
  readonly configmap: string;
  readonly haproxy: string;
  readonly workDir: string;
  readonly bindAddress: string;
  readonly httpPort: number;
  readonly httpsPort: number;
  readonly statsPort: number;
  /** Port of the probe endpoint (lib/proxy/health_endpoint.ts); 0 or absent: none. */
  readonly healthPort?: number;
  /** On stop: milliseconds of serving with /readyz failing before HAProxy soft-stops; absent: 0. */
  readonly shutdownDrainMs?: number;
  /** Milliseconds HAProxy's soft stop may wait for requests in flight before a hard stop; absent: 10 s. */
  readonly shutdownTimeoutMs?: number;
}

/** Parses `proxy` flags; returns "help" when --help/-h was given. */
export function parseProxyFlags(argv: readonly string[]): ProxySettings | "help" {
  const parsed = parseFlags(proxyTable, "A", argv);
  if (parsed.values.get("help") === true) return "help";
  if (parsed.args.length > 0) {
    throw new UsageError(`proxy takes no arguments, got ${JSON.stringify(parsed.args[0])} (options start with --)`);
  }
  validateFlags(proxyTable, parsed);
  const v = parsed.values;
  return Object.freeze({
    kubeconfig: v.get("kubeconfig") as string,
    namespace: v.get("namespace") as string,
    configmap: v.get("configmap") as string,
    haproxy: v.get("haproxy") as string,
    workDir: v.get("work-dir") as string,
    bindAddress: v.get("bind-address") as string,
    httpPort: v.get("http-port") as number,
    httpsPort: v.get("https-port") as number,
    statsPort: v.get("stats-port") as number,
    healthPort: v.get("health-port") as number,
    // Durations are parsed as bigint nanoseconds.
    shutdownDrainMs: Number(v.get("shutdown-drain") as bigint) / 1e6,
    shutdownTimeoutMs: Number(v.get("shutdown-timeout") as bigint) / 1e6,
  });
}
