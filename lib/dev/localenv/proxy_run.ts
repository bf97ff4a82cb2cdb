/**
 * @module lib/dev/localenv/proxy_run
 * Runs the proxy command (lib/proxy) for one ConfigMap beside a real haproxy on 127.0.0.1 (or
 * another address of the private network namespace, as a pod IP), as the proxy pod would run it.
 */
import { ensureHaproxy } from "./haproxy.ts";
import { freePorts } from "./ports.ts";
import { runProxy } from "../../proxy/command.ts";
import type { ApplyResult } from "../../proxy/apply.ts";
import type { AccessLogSink } from "../../proxy/haproxy.ts";
import { type Cluster, resources } from "./harness.ts";

export interface ProxyRun {
  /** `--bind-address`: where clients reach HAProxy. */
  address: string;
  httpPort: number;
  httpsPort: number;
  statsPort: number;
  workDir: string;
  /** How each configuration the proxy saw was applied (start, reload, runtime, none), in order. */
  applied: ApplyResult[];
  /** The Secrets left out of each configuration the proxy was about to apply (`namespace/name: reason`), in order. */
  leftOut: string[][];
  /** With `probes`: the port of `/readyz`, `/livez` on 127.0.0.1; else null. */
  healthPort: number | null;
  stop(): Promise<void>;
}

/**
 * Runs the proxy command (lib/proxy) for one ConfigMap, with haproxy on `bindAddress` (default
 * 127.0.0.1). `accessLog`: where HAProxy's stdout goes (lib/proxy/haproxy.ts; default nowhere). With
 * `followDeployment` it plays the kubelet for the proxy Deployment of the same name: once that
 * Deployment is gone, the proxy stops (in a cluster its pod would be deleted).
 */
export async function startProxy(
  cluster: Cluster,
  ns: string,
  configmap: string,
  opts: { followDeployment?: boolean; accessLog?: AccessLogSink; bindAddress?: string; probes?: boolean } = {},
): Promise<ProxyRun> {
  const haproxy = await ensureHaproxy();
  const bindAddress = opts.bindAddress ?? "127.0.0.1";
  const [httpPort, httpsPort, statsPort, health] = freePorts(4, bindAddress);
  const healthPort = opts.probes ? health : null;
  const workDir = await Deno.makeTempDir({ prefix: "ic-e2e-proxy-" });
  const abort = new AbortController();
  const applied: ApplyResult[] = [];
  const leftOut: string[][] = [];
  const done = runProxy(
    {
      kubeconfig: cluster.kubeconfig,
      namespace: ns,
      configmap,
      haproxy,
      workDir,
      bindAddress,
      httpPort,
      httpsPort,
      statsPort,
      ...(healthPort ? { healthPort } : {}),
    },
    abort.signal,
    {
      onApply: (r) => applied.push(r),
      onLeftOut: (l) => leftOut.push(l.map((x) => `${x.ref.namespace}/${x.ref.name}: ${x.reason}`)),
      // Not this process's stdout by default: HAProxy would make it non-blocking under the test runner.
      accessLog: opts.accessLog ?? "null",
    },
  ).catch((err: unknown) => {
    console.error(`proxy for ${ns}/${configmap} failed: ${err}`);
  });
  let following: Promise<void> = Promise.resolve();
  if (opts.followDeployment) {
    following = (async () => {
      while (!abort.signal.aborted) {
        await new Promise((r) => setTimeout(r, 100));
        if (abort.signal.aborted) return;
        const gone = await cluster.get(resources.deployments, ns, configmap).then((d) => d === null, () => false);
        if (gone) {
          abort.abort();
          return;
        }
      }
    })();
  }
  return {
    address: bindAddress,
    httpPort,
    httpsPort,
    statsPort,
    workDir,
    applied,
    leftOut,
    healthPort,
    stop: async () => {
      abort.abort();
      await done;
      await following;
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
    },
  };
}
