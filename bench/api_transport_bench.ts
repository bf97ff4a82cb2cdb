/**
 * `deno task bench api_transport`: the cluster client's ways to the API server, side by side
 * against the real kube-apiserver of lib/localenv (lib/cluster/transport.ts says why it uses fetch
 * over HTTP/1.1):
 * - `fetch_h1`: Deno's fetch over HTTP/1.1 (the client's default transport);
 * - `fetch_h2`: the same client with HTTP/2 allowed (kube-apiserver offers it);
 * - `node`: node:https with a keep-alive agent (the transport for `tls-server-name`).
 * Figures per way: `api_transport.<way>.post_300kb_ms_p50` (create a 300 KB ConfigMap, 20 times) and
 * `api_transport.<way>.c_heap_kept_mb` (glibc heap still in use after reading 60 MB of lists and two
 * full collections). Each way runs in a process of its own.
 */
import { join } from "node:path";
import { figureList, percentile } from "./figures.ts";
import { cHeapInUse } from "./memory/mallinfo.ts";
import { startControlPlane } from "../lib/dev/localenv/control_plane.ts";
import { writeKubeConfig } from "../lib/dev/localenv/kubeconfig.ts";
import { loadKubeConfig } from "../lib/cluster/access.ts";
import { type Transport, transportFor } from "../lib/cluster/transport.ts";

const ways = ["fetch_h1", "fetch_h2", "node"] as const;
type Way = (typeof ways)[number];
const ns = "default";
const cms = `/api/v1/namespaces/${ns}/configmaps`;
const listed = 30, listedKb = 100, lists = 20, posts = 20;

if (Deno.args[0] === "way") {
  const [, way, kubeconfig] = Deno.args as [string, Way, string];
  const access = loadKubeConfig(kubeconfig);
  const c = await access.connection();
  const server = new URL(access.server);
  let transport: Transport | undefined;
  let h2: Deno.HttpClient | undefined;
  if (way === "fetch_h2") {
    h2 = Deno.createHttpClient({ caCerts: [String(c.ca)], cert: String(c.cert), key: String(c.key) });
  } else {
    transport = transportFor(server, c);
    if (transport.kind !== (way === "node" ? "node" : "fetch")) throw new Error(`${way}: got ${transport.kind}`);
  }
  const call = async (method: string, path: string, body?: string): Promise<string> => {
    const url = new URL(server.toString().replace(/\/$/, "") + path);
    const headers = { ...c.headers, "Content-Type": "application/json", Accept: "application/json" };
    let status: number, text: string;
    if (h2) {
      const res = await fetch(url, {
        method,
        headers: { ...headers, "Accept-Encoding": "identity" },
        body,
        client: h2,
      });
      [status, text] = [res.status, await res.text()];
    } else {
      const ex = await transport!.send({ method, url, headers, body });
      const decoder = new TextDecoder();
      text = "";
      for await (const chunk of ex.body) text += decoder.decode(chunk, { stream: true });
      status = ex.status;
    }
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 200)}`);
    return text;
  };
  const { figures, fig } = figureList();
  const big = "x".repeat(300_000);
  const took: number[] = [];
  for (let i = 0; i < posts; i++) {
    const name = `post-${way.replace("_", "-")}-${i}`;
    const t = performance.now();
    await call("POST", cms, JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { big } }));
    took.push(performance.now() - t);
    await call("DELETE", `${cms}/${name}`);
  }
  fig(`api_transport.${way}.post_300kb_ms_p50`, "ms", percentile(took, 50));
  const gc = (globalThis as { gc?: () => void }).gc!;
  const settle = async () => {
    for (let i = 0; i < 2; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  await call("GET", `${cms}?labelSelector=bench%3Dlisted`);
  await settle();
  const before = cHeapInUse();
  let bytes = 0;
  for (let i = 0; i < lists; i++) bytes += (await call("GET", `${cms}?labelSelector=bench%3Dlisted`)).length;
  await settle();
  console.error(`bench: ${way} read ${(bytes / 1e6).toFixed(1)} MB of lists`);
  fig(`api_transport.${way}.c_heap_kept_mb`, "MB", (cHeapInUse() - before) / 1e6);
  transport?.close();
  h2?.close();
  console.log(JSON.stringify(figures));
} else {
  await using cp = await startControlPlane();
  const dir = await Deno.makeTempDir({ prefix: "ic-api-transport-" });
  try {
    const admin = cp.adminKubeConfigPath;
    const node = await writeKubeConfig(join(dir, "node.yaml"), {
      server: cp.server,
      caPem: cp.caPem,
      user: "admin",
      credentials: { certPem: cp.admin.certPem, keyPem: cp.admin.keyPem },
      tlsServerName: "localhost",
    });
    const data = { v: "y".repeat(listedKb * 1000) };
    for (let i = 0; i < listed; i++) {
      const res = await cp.adminFetch(cms, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `listed-${i}`, labels: { bench: "listed" } },
          data,
        }),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`creating listed-${i}: ${res.status}`);
    }
    const all = [];
    for (const way of ways) {
      console.error(`bench: ${way}`);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--v8-flags=--expose-gc", import.meta.filename!, "way", way, way === "node" ? node : admin],
        stdout: "piped",
        stderr: "inherit",
      }).output();
      if (!out.success) throw new Error(`${way}: exit code ${out.code}`);
      all.push(...JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!));
    }
    console.log(JSON.stringify(all));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
