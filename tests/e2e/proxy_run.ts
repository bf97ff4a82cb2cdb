/**
 * @module tests/e2e/proxy_run
 * Runs the proxy command (lib/proxy) for one ConfigMap beside a real haproxy on 127.0.0.1,
 * as the proxy pod would run it.
 */
import { ensureHaproxy } from "../env/haproxy.ts";
import { freePorts } from "../env/ports.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import type { Cluster } from "./harness.ts";

export interface ProxyRun {
  httpPort: number;
  httpsPort: number;
  statsPort: number;
  workDir: string;
  stop(): Promise<void>;
}

/** Runs the proxy command (lib/proxy) for one ConfigMap, with haproxy on 127.0.0.1. */
export async function startProxy(cluster: Cluster, ns: string, configmap: string): Promise<ProxyRun> {
  const haproxy = await ensureHaproxy();
  const [httpPort, httpsPort, statsPort] = freePorts(3);
  const workDir = await Deno.makeTempDir({ prefix: "ic-e2e-proxy-" });
  const abort = new AbortController();
  const done = runProxy({
    kubeconfig: cluster.kubeconfig,
    namespace: ns,
    configmap,
    haproxy,
    workDir,
    bindAddress: "127.0.0.1",
    httpPort,
    httpsPort,
    statsPort,
  }, abort.signal).catch((err) => {
    console.error(`proxy for ${ns}/${configmap} failed: ${err}`);
  });
  return {
    httpPort,
    httpsPort,
    statsPort,
    workDir,
    stop: async () => {
      abort.abort();
      await done;
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
    },
  };
}
