/**
 * @module lib/dev/localnode/mod
 * A real single-node Kubernetes cluster for tests and `deno task cluster`: etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, kube-proxy and a kubelet (built from their Go modules
 * by build.sh) with Debian's containerd, runc and CNI plugins, running the images of `dist/images`
 * (imported, never pulled).
 *
 * Everything runs in namespaces of its own (`unshare --net --mount --pid --fork --kill-child`):
 * the network namespace has a loopback interface (also carrying the node's address) and the pods'
 * bridge, and no route out, so no packet to a pod or service address can leave the machine; the
 * mount namespace holds every mount (overlay snapshots, pod volumes, tmpfs over /run and /var/log);
 * the PID namespace holds every process, containers included. Whatever way the test process ends,
 * `unshare` dies with it (the process reaper), its child (PID 1 inside) dies with `unshare`, and
 * with PID 1 the whole PID namespace, hence the mounts and the network namespace. The reaper then
 * removes the cgroups (under a cgroup root of this cluster's own) and the directory.
 * The host reaches the API server through a forwarder (`kubeconfig`) and anything else by entering
 * the network namespace (`enter`).
 */
import { basename, join } from "node:path";
import { buildBinaries, ensureBinaries } from "../localenv/binaries.ts";
import { ensureTools } from "../localenv/debian.ts";
import { type Forwarder, tcpToUnix } from "../localenv/forward.ts";
import { writeKubeConfig } from "../localenv/kubeconfig.ts";
import { type ManagedProcess, processExists, spawnProcess } from "../localenv/process.ts";
import { register } from "../localenv/cleanup.ts";
import { buildImages, repoRoot } from "../images/build.ts";
import { net } from "./config.ts";
import type { NodeInfo } from "./node.ts";

export { net } from "./config.ts";

export interface Cluster extends AsyncDisposable {
  /** Admin kubeconfig usable from the host (API server forwarded to 127.0.0.1). */
  readonly kubeconfig: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  readonly caPem: string;
  readonly admin: { certPem: string; keyPem: string };
  /** Command prefix that runs a command in the cluster's network namespace. */
  readonly enter: string[];
  /** Pid (on the host) of the cluster's PID 1. */
  readonly pid: number;
  readonly dir: string;
  /** Milliseconds: phases inside the namespace, and `total` from the call to a Ready node. */
  readonly timings: Record<string, number>;
  /** Fetch as the admin through the forwarder. */
  adminFetch(path: string, init?: RequestInit): Promise<Response>;
  /** Tears everything down. Idempotent. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Image archives to import (default every `dist/images/*.tar`, built first when pause.tar is missing). */
  images?: string[];
  /** Progress lines (default stderr). */
  say?: (line: string) => void;
  /** How long to wait for a Ready node (default 10 minutes: the first start may build nothing but is slow under load). */
  readyTimeoutMs?: number;
}

const nodeBinaries = ["kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy"];
const nodeScript = new URL("./node.ts", import.meta.url).pathname;

/** Everything the cluster needs from outside, fetched before entering its namespaces. */
export async function prepareCluster(opts: ClusterOptions = {}): Promise<{ bin: string; images: string[] }> {
  const say = opts.say ?? ((l: string) => console.error(l));
  await ensureTools([
    { command: "unshare", package: "util-linux" },
    { command: "nsenter", package: "util-linux" },
    { command: "ip", package: "iproute2" },
    { command: "iptables", package: "iptables" },
    { command: "containerd", package: "containerd" },
    { command: "ctr", package: "containerd" },
    { command: "runc", package: "runc" },
    { command: "/usr/lib/cni/bridge", package: "containernetworking-plugins" },
  ], "the single-node cluster");
  const [{ dir: controlPlane }, bin] = await Promise.all([ensureBinaries(), buildBinaries(nodeBinaries)]);
  if (controlPlane !== bin) {
    throw new Error(`the node binaries (${bin}) and the control plane's (${controlPlane}) differ`);
  }
  let images = opts.images;
  if (!images) {
    const dist = join(repoRoot, "dist/images");
    const have = await Deno.stat(join(dist, "pause.tar")).then(() => true, () => false);
    if (!have) {
      say("[cluster] no dist/images/pause.tar: building the images (deno task images)");
      await buildImages(dist, say);
    }
    images = [];
    for await (const e of Deno.readDir(dist)) if (e.isFile && e.name.endsWith(".tar")) images.push(join(dist, e.name));
    images.sort();
  }
  const cached = await new Deno.Command(Deno.execPath(), { args: ["cache", "--quiet", nodeScript] }).output();
  if (!cached.success) throw new Error(`deno cache ${nodeScript} failed (exit ${cached.code})`);
  return { bin, images };
}

/** The cgroup v1 (or v2) directories of this cluster's cgroup root, one per mounted hierarchy. */
async function cgroupDirs(root: string): Promise<string[]> {
  const dirs: string[] = [];
  for await (const e of Deno.readDir("/sys/fs/cgroup")) {
    if (e.isDirectory) dirs.push(join("/sys/fs/cgroup", e.name, root));
  }
  return dirs;
}

/** Shell command removing the cgroup trees (deepest first, a few tries while dying processes leave them). */
function cgroupCleanup(dirs: string[]): string {
  const list = dirs.map((d) => `'${d}'`).join(" ");
  return `for i in 1 2 3 4 5 6 7 8 9 10; do left=0; for c in ${list}; do ` +
    `[ -d "$c" ] && { find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || left=1; }; done; ` +
    `[ $left = 0 ] && break; sleep 0.5; done`;
}

/** Starts the cluster and waits for a Ready node. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const t0 = performance.now();
  const say = opts.say ?? ((l: string) => console.error(l));
  const { bin, images } = await prepareCluster(opts);
  const dir = await Deno.makeTempDir({ prefix: "ic-cluster-" });
  const cgroupRoot = `/${basename(dir)}`;
  const cgroups = await cgroupDirs(cgroupRoot);
  for (const c of cgroups) await Deno.mkdir(c, { recursive: true }).catch(() => {});
  const cleanupCgroups = async () => {
    await new Deno.Command("sh", { args: ["-c", cgroupCleanup(cgroups)], stdout: "null", stderr: "null" }).output();
  };
  // Inside: own /run and /var/log (pod netns files, runc state, container logs), the node's
  // address on the loopback interface (our kernels have no dummy interfaces), a route for service
  // addresses (kube-proxy rewrites them; the route only has to exist) with the node's address as
  // source, forwarding on.
  const setup = [
    "set -e",
    "mount --make-rprivate /",
    "mount -t tmpfs tmpfs /run",
    "mount -t tmpfs tmpfs /var/log",
    "ip link set lo up",
    `ip addr add ${net.nodeIp}/32 dev lo`,
    `ip route add ${net.serviceCidr} dev lo src ${net.nodeIp}`,
    "echo 1 > /proc/sys/net/ipv4/ip_forward",
    'exec "$@"',
  ].join("\n");
  let proc: ManagedProcess | null = null;
  let forwarder: Forwarder | null = null;
  let stopping: Promise<void> | null = null;
  let nsPid = 0;
  const stop = () =>
    stopping ??= (async () => {
      await forwarder?.close();
      if (proc && !proc.hasExited) {
        if (nsPid && processExists(nsPid)) {
          try {
            Deno.kill(nsPid, "SIGTERM");
          } catch { /* already gone */ }
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        const done = await Promise.race([
          proc.exited.then(() => true),
          new Promise<boolean>((r) => timer = setTimeout(() => r(false), 60_000)),
        ]);
        clearTimeout(timer);
        if (!done) say("[cluster] PID 1 did not stop within 60 s: killing the namespaces");
      }
      await proc?.stop(1000);
      await cleanupCgroups();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      unregister();
    })();
  const unregister = register(stop);
  try {
    proc = await spawnProcess({
      name: "cluster",
      command: "unshare",
      args: [
        "--net",
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "--mount-proc",
        "--",
        "sh",
        "-c",
        setup,
        "sh",
        Deno.execPath(),
        "run",
        "-A",
        "--cached-only",
        nodeScript,
        dir,
        bin,
        cgroupRoot,
        ...images,
      ],
      logPath: join(dir, "cluster.log"),
      removeOnOrphan: dir,
      cleanupOnOrphan: cgroupCleanup(cgroups),
      env: { NO_COLOR: "1" },
    });
    const ready = join(dir, "ready.json");
    const deadline = performance.now() + (opts.readyTimeoutMs ?? 600_000);
    while (!(await Deno.stat(ready).then(() => true, () => false))) {
      if (proc.hasExited || performance.now() > deadline) {
        throw new Error(
          `the cluster ${proc.hasExited ? "stopped" : "was not Ready in time"}; its log (${proc.logPath}):\n${await proc
            .logTail(40)}`,
        );
      }
      await sleep(250);
    }
    nsPid = namespacePid(proc.pid);
    const info = JSON.parse(await Deno.readTextFile(ready)) as NodeInfo;
    forwarder = tcpToUnix(info.apiSocket);
    const server = `https://127.0.0.1:${forwarder.port}`;
    const kubeconfig = await writeKubeConfig(join(dir, "kubeconfig-admin.yaml"), {
      server,
      caPem: info.caPem,
      user: "admin",
      credentials: { certPem: info.certPem, keyPem: info.keyPem },
    });
    const client = Deno.createHttpClient({ caCerts: [info.caPem], cert: info.certPem, key: info.keyPem });
    const timings = { ...info.timings, total: Math.round(performance.now() - t0) };
    say(`[cluster] node Ready ${(timings.total / 1000).toFixed(1)} s after the start (${JSON.stringify(timings)})`);
    const closeClient = () => client.close();
    const stopAll = async () => {
      await stop();
      try {
        closeClient();
      } catch { /* closed */ }
    };
    return {
      kubeconfig,
      server,
      caPem: info.caPem,
      admin: { certPem: info.certPem, keyPem: info.keyPem },
      enter: ["nsenter", `--net=/proc/${nsPid}/ns/net`],
      pid: nsPid,
      dir,
      timings,
      adminFetch: (path, init) => fetch(new URL(path, server), { ...init, client } as RequestInit),
      stop: stopAll,
      [Symbol.asyncDispose]: stopAll,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The host pid of the namespace's PID 1: the only child of `unshare --fork`. */
function namespacePid(unsharePid: number): number {
  const children = Deno.readTextFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`).trim().split(/\s+/);
  const pid = Number(children[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`unshare (${unsharePid}) has no child`);
  return pid;
}

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

export interface InsideAnswer {
  status: number;
  body: string;
}

/**
 * Sends `count` GET requests to `url` from inside the cluster's network namespace (a Deno process
 * entered with nsenter), each on a new connection (so a Service may pick another pod each time),
 * with `host` as the Host header when given. Failed requests answer status 0 and the error.
 */
export async function requestsInside(
  cluster: Pick<Cluster, "enter">,
  url: string,
  opts: { host?: string; count?: number } = {},
): Promise<InsideAnswer[]> {
  const script = `
import http from "node:http";
const [url, host, count] = Deno.args;
const one = () => new Promise((resolve) => {
  const req = http.get(url, { agent: false, timeout: 5000, headers: host ? { host } : {} }, (res) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (c) => body += c);
    res.on("end", () => resolve({ status: res.statusCode, body }));
  });
  req.on("timeout", () => req.destroy(new Error("timed out")));
  req.on("error", (e) => resolve({ status: 0, body: String(e) }));
});
const out = [];
for (let i = 0; i < Number(count); i++) out.push(await one());
console.log(JSON.stringify(out));
`;
  const [cmd, ...args] = cluster.enter;
  const out = await new Deno.Command(cmd, {
    args: [...args, Deno.execPath(), "eval", "--ext=js", script, url, opts.host ?? "", String(opts.count ?? 1)],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`request inside the cluster failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}
