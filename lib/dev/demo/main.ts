/**
 * @module demo/main
 * `deno task demo`: a local ingress controller with real traffic, in one command. The cluster
 * side (API server, etcd, sample backends, controller, proxy with haproxy) runs in a private
 * network namespace (demo/netns.ts, demo/stack.ts); this process makes its API server and the
 * proxy reachable on 127.0.0.1, prints the curl command and the generated config's path, writes
 * `$DEMO_INFO_OUT` when ready, and cleans everything up on Ctrl-C.
 */
import { join } from "node:path";
import { writeKubeConfig } from "../localenv/kubeconfig.ts";
import { prepareOutside, privateNetworkCommand } from "../localenv/netns.ts";
import { type Forwarder, tcpToUnix } from "../localenv/forward.ts";
import type { StackInfo } from "./stack.ts";

const say = (line: string) => console.log(line);

/**
 * What to look at with kubectl: the user's side (the Ingress, its Service and EndpointSlice) and
 * the proxy the controller made for it, which lives in the controller's namespace, not the
 * Ingress's (one shared proxy per IngressClass; the sample Ingress has no class).
 */
function kubectlLines(kubeconfig: string, info: StackInfo): string[] {
  const kubectl = `kubectl --kubeconfig ${kubeconfig}`;
  return [
    `  the Ingress and its backend, in namespace ${info.namespace}:`,
    `    ${kubectl} -n ${info.namespace} get ingress,service,endpointslice`,
    `  the proxy serving it, ${info.proxy}, in the controller's namespace ${info.proxyNamespace} (one shared proxy`,
    "  per IngressClass, haproxy-shared for Ingresses without one; this cluster has no node, so the Deployment gets no",
    "  pods and the demo runs the proxy and HAProxy itself):",
    `    ${kubectl} -n ${info.proxyNamespace} get configmap,deployment,service,poddisruptionbudget ` +
    `-l app.kubernetes.io/instance=${info.proxy}`,
  ];
}

async function main(): Promise<number> {
  const stack = new URL("./stack.ts", import.meta.url).pathname;
  // Binaries, haproxy and modules first: the namespace has no route to any registry.
  try {
    await prepareOutside(stack);
  } catch (err) {
    console.error(`demo: ${(err as Error).message}`);
    return 1;
  }
  const dir = await Deno.makeTempDir({ prefix: "ic-demo-" });
  let child: Deno.ChildProcess;
  try {
    // In a session of its own, so a terminal's Ctrl-C reaches this process only and the stack is
    // stopped in order (its controller releases the Lease before the API server stops). It stops
    // on its own too when its stdin, held here, closes because this process is gone.
    child = privateNetworkCommand([Deno.execPath(), "run", "-A", stack, dir], {
      stdout: "inherit",
      stderr: "inherit",
      stdin: "piped",
      detached: true,
    }).spawn();
  } catch (err) {
    console.error(
      `demo: cannot start a private network namespace with unshare (${
        (err as Error).message
      }); install util-linux and iproute2`,
    );
    await Deno.remove(dir, { recursive: true });
    return 1;
  }
  const forwarders: Forwarder[] = [];
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    say("\ndemo: stopping (cleaning up the API server, etcd, haproxy and backends)…");
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const sig of signals) Deno.addSignalListener(sig, stop);

  const ready = join(dir, "ready.json");
  const status = child.status;
  let exited = false;
  status.then(() => (exited = true));
  while (!exited && !stopping) {
    try {
      await Deno.stat(ready);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (!exited && !stopping) {
    const info = JSON.parse(await Deno.readTextFile(ready)) as StackInfo;
    const api = tcpToUnix(info.apiSocket);
    const http = tcpToUnix(info.httpSocket);
    forwarders.push(api, http);
    const kubeconfig = await writeKubeConfig(join(dir, "kubeconfig-admin.yaml"), {
      server: `https://127.0.0.1:${api.port}`,
      caPem: info.caPem,
      user: "admin",
      credentials: { certPem: info.certPem, keyPem: info.keyPem },
    });
    const url = `http://127.0.0.1:${http.port}/`;
    say("");
    say("The ingress controller demo is running.");
    say(`  curl -H 'Host: ${info.host}' ${url}`);
    say(`  generated haproxy config: ${info.configPath}`);
    for (const line of kubectlLines(kubeconfig, info)) say(line);
    say("Press Ctrl-C to stop and clean up.");
    const out = Deno.env.get("DEMO_INFO_OUT");
    if (out) {
      const { namespace, ingress, host, proxyNamespace, proxy } = info;
      await Deno.writeTextFile(
        out,
        JSON.stringify({ kubeconfig, namespace, ingress, url, host, proxyNamespace, proxy }),
      );
    }
  }
  const { code } = await status;
  for (const f of forwarders) await f.close();
  for (const sig of signals) Deno.removeSignalListener(sig, stop);
  await child.stdin.close().catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  if (!stopping && code !== 0) {
    console.error(`demo: the demo stack exited with code ${code}; its messages are above`);
    return code || 1;
  }
  say("demo: stopped, everything cleaned up.");
  return 0;
}

Deno.exit(await main());
