/**
 * @module lib/dev/localnode/node
 * The single-node cluster's inside, run as PID 1 of the cluster's own PID, mount and network
 * namespaces (started by mod.ts): etcd + kube-apiserver (control_plane.ts, with service accounts
 * on), containerd with Debian's runc and CNI plugins, the images of `dist/images` imported into it,
 * kube-controller-manager, kube-scheduler, kube-proxy and a kubelet, and, when the CoreDNS image
 * is among the images, the DNS add-on (dns_addon.ts; pods get it as their nameserver). It makes the API server
 * reachable through a unix socket in `dir`, writes `dir/ready.json` once the node is Ready, and on
 * SIGTERM stops everything; whatever is left dies with the namespaces.
 *
 *   deno run -A lib/dev/localnode/node.ts <dir> <binary dir> <image archive>…
 */
import { join } from "node:path";
import { startControlPlane } from "../localenv/control_plane.ts";
import { unixToTcp } from "../localenv/forward.ts";
import { type ManagedProcess, spawnProcess } from "../localenv/process.ts";
import { corednsRef, normalizedRef, pauseRef } from "../images/refs.ts";
import { applyManifests } from "../deploy/apply.ts";
import { dnsAddonObjects } from "./dns_addon.ts";
import { clusterPaths, cniConfig, containerdConfig, kubeletConfig, kubeProxyConfig, net } from "./config.ts";

/** What the host side reads from `dir/ready.json`. */
export interface NodeInfo {
  apiSocket: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Milliseconds from the start of this process to the node being Ready, and per phase. */
  timings: Record<string, number>;
}

const t0 = performance.now();
const timings: Record<string, number> = {};
const mark = (name: string) => {
  timings[name] = Math.round(performance.now() - t0);
  console.error(`[cluster] ${name} after ${(timings[name] / 1000).toFixed(1)} s`);
};

async function main(dir: string, bin: string, archives: string[], cgroupRoot: string): Promise<void> {
  const p = clusterPaths(dir);
  for (const d of [p.cniConfDir, p.cniIpamDir, p.kubeletRoot, p.podLogs, p.logs, join(dir, "containerd")]) {
    await Deno.mkdir(d, { recursive: true });
  }
  const parts: ManagedProcess[] = [];
  const stop = new AbortController();
  for (const sig of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(sig, () => stop.abort());
  const start = (name: string, command: string, args: string[]) =>
    spawnProcess({ name, command, args, logPath: join(p.logs, `${name}.log`) }).then((proc) => {
      parts.push(proc);
      proc.exited.then((s) => {
        if (!stop.signal.aborted) console.error(`[cluster] ${name} exited (${s.code}); see ${proc.logPath}`);
      });
      return proc;
    });

  const cp = await startControlPlane({
    serviceAccountAdmission: true,
    apiServerFlags: ["--bind-address=0.0.0.0", `--advertise-address=${net.nodeIp}`],
  });
  mark("control plane ready");
  await Deno.writeTextFile(p.rootCa, cp.caPem);
  await Deno.writeTextFile(p.resolvConf, "");
  const admin = cp.adminKubeConfigPath;
  const nodeKubeconfig = await cp.kubeConfig(`system:node:${net.nodeName}`, ["system:nodes", "system:masters"]);

  await Deno.writeTextFile(p.containerdConfig, containerdConfig(p, normalizedRef(pauseRef)));
  await Deno.writeTextFile(join(p.cniConfDir, "10-ic-cluster.conflist"), cniConfig(p));
  await start("containerd", "containerd", ["--config", p.containerdConfig]);
  await waitFor("containerd", async () => (await ctr(p.containerdSocket, ["version"])).ok);
  for (const archive of archives) {
    const out = await ctr(p.containerdSocket, ["-n", "k8s.io", "images", "import", archive]);
    if (!out.ok) throw new Error(`ctr images import ${archive} failed: ${out.text}`);
  }
  mark("containerd ready, images imported");
  // The DNS add-on runs when its image is on the node (deno task images builds it).
  const dnsImage = normalizedRef(corednsRef);
  const listed = await ctr(p.containerdSocket, ["-n", "k8s.io", "images", "ls", "-q"]);
  const withDns = listed.ok && listed.text.split("\n").includes(dnsImage);

  await start("kube-controller-manager", join(bin, "kube-controller-manager"), [
    `--kubeconfig=${admin}`,
    `--authentication-kubeconfig=${admin}`,
    `--authorization-kubeconfig=${admin}`,
    `--service-account-private-key-file=${cp.serviceAccountKeyFile}`,
    `--root-ca-file=${p.rootCa}`,
    `--cluster-cidr=${net.clusterCidr}`,
    `--service-cluster-ip-range=${net.serviceCidr}`,
    "--leader-elect=false",
    "--use-service-account-credentials=false",
    "--secure-port=0",
    "--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller,-route",
  ]);
  await start("kube-scheduler", join(bin, "kube-scheduler"), [
    `--kubeconfig=${admin}`,
    `--authentication-kubeconfig=${admin}`,
    `--authorization-kubeconfig=${admin}`,
    "--leader-elect=false",
    "--secure-port=0",
  ]);
  await Deno.writeTextFile(p.kubeProxyConfig, kubeProxyConfig(admin));
  await start("kube-proxy", join(bin, "kube-proxy"), [`--config=${p.kubeProxyConfig}`]);
  await Deno.writeTextFile(p.kubeletConfig, kubeletConfig(p, cgroupRoot, withDns));
  const kubeletStarted = performance.now();
  await start("kubelet", join(bin, "kubelet"), [
    `--config=${p.kubeletConfig}`,
    `--kubeconfig=${nodeKubeconfig}`,
    `--root-dir=${p.kubeletRoot}`,
    `--cert-dir=${join(p.kubeletRoot, "pki")}`,
    `--hostname-override=${net.nodeName}`,
    `--node-ip=${net.nodeIp}`,
    "--v=1",
  ]);
  await waitFor(
    "the node to be Ready",
    async () => {
      const res = await cp.adminFetch(`/api/v1/nodes/${net.nodeName}`);
      const node = await res.json();
      return (node.status?.conditions ?? []).some((c: { type: string; status: string }) =>
        c.type === "Ready" && c.status === "True"
      );
    },
    stop.signal,
    180_000,
  );
  timings["kubelet start to node Ready"] = Math.round(performance.now() - kubeletStarted);
  mark("node Ready");
  if (withDns) {
    await applyManifests((path, init) => cp.adminFetch(path, init), dnsAddonObjects(dnsImage), {
      fieldManager: "ic-cluster",
    });
    mark("DNS add-on applied");
  }

  const apiSocket = join(dir, "api.sock");
  const fwd = unixToTcp(apiSocket, "127.0.0.1", Number(new URL(cp.server).port));
  const info: NodeInfo = { apiSocket, caPem: cp.caPem, certPem: cp.admin.certPem, keyPem: cp.admin.keyPem, timings };
  await Deno.writeTextFile(join(dir, "ready.json.tmp"), JSON.stringify(info));
  await Deno.rename(join(dir, "ready.json.tmp"), join(dir, "ready.json"));

  await new Promise<void>((resolve) => {
    if (stop.signal.aborted) resolve();
    stop.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  console.error("[cluster] stopping");
  await fwd.close();
  // Pods die with the PID namespace; the node's own parts stop in reverse order first.
  for (const part of parts.toReversed()) await part.stop(3000).catch(() => {});
  await cp.stop();
}

async function ctr(socket: string, args: string[]): Promise<{ ok: boolean; text: string }> {
  const out = await new Deno.Command("ctr", {
    args: ["--address", socket, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { ok: out.success, text: (dec.decode(out.stdout) + dec.decode(out.stderr)).trim() };
}

async function waitFor(what: string, check: () => Promise<boolean>, signal?: AbortSignal, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (signal?.aborted) throw new Error(`stopped while waiting for ${what}`);
    if (Date.now() > end) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

if (import.meta.main) {
  const [dir, bin, cgroupRoot, ...archives] = Deno.args;
  if (!dir || !bin || !cgroupRoot) throw new Error("usage: node.ts <dir> <binary dir> <cgroup root> <archive>…");
  try {
    await main(dir, bin, archives, cgroupRoot);
    Deno.exit(0);
  } catch (err) {
    console.error(`[cluster] failed: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
