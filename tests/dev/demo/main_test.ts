/**
 * `deno task demo` as a newcomer runs it (lib/dev/demo/main.ts as a process of its own): it serves the
 * sample host, the kubectl commands it prints show the Ingress in its namespace and the proxy's
 * objects in the controller's namespace, and Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops it in
 * order: the controller releases its Lease while the API server still runs, no part logs a warning
 * or an error on the way, the command exits 0, and no process or directory of it is left.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { httpGet } from "../../../lib/dev/localenv/harness.ts";
import { ClusterClient } from "../../../lib/cluster/client.ts";
import { collectionPath, type KubeObject, resources, type ResourceType } from "../../../lib/cluster/resources.ts";

/** Pids whose command line holds `text` (this test's own processes excluded by the caller's choice of text). */
async function pidsWith(text: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${e.name}/cmdline`)).includes(text)) out.push(Number(e.name));
    } catch {
      // gone
    }
  }
  return out;
}

/** The names of the `resource` objects that the printed `kubectl -n <namespace> get … -l <selector>` would list. */
async function listed(kubeconfig: string, resource: ResourceType, namespace: string, selector?: string) {
  const client = await ClusterClient.create({ kubeconfig, qps: 0, burst: 1 });
  try {
    const list = await client.request<{ items: KubeObject[] }>("GET", collectionPath(resource, namespace), {
      query: selector ? { labelSelector: selector } : {},
    });
    return list.items.map((o) => o.metadata.name).sort();
  } finally {
    client.close();
  }
}

Deno.test("demo: serves the sample host, prints where its Ingress and proxy are; Ctrl-C stops it in order, the Lease released, nothing left", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-demo-test-" });
  const infoPath = join(dir, "info.json");
  // `setsid`: a process group of its own, so the test can send SIGINT to all of it as a terminal does.
  const proc = new Deno.Command("setsid", {
    args: [Deno.execPath(), "run", "-A", new URL("../../../lib/dev/demo/main.ts", import.meta.url).pathname],
    env: { DEMO_INFO_OUT: infoPath },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let output = "";
  const collect = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) output += decoder.decode(chunk, { stream: true });
  };
  const collecting = Promise.all([collect(proc.stdout), collect(proc.stderr)]);
  let demoDir = "";
  try {
    const deadline = Date.now() + 180_000;
    let info: { url: string; host: string; kubeconfig: string; namespace: string; ingress: string } | null = null;
    while (!info && Date.now() < deadline) {
      try {
        info = JSON.parse(await Deno.readTextFile(infoPath));
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.ok(info, `the demo did not start within 180 s:\n${output.slice(-3000)}`);
    demoDir = output.match(/generated haproxy config: (\S+)\/proxy\/haproxy\.cfg/)?.[1] ?? "";
    assert.ok(demoDir, "the demo prints the generated config's path");
    assert.equal((await httpGet(Number(new URL(info.url).port), info.host, "/")).status, 200);

    // The Ingress side, in the Ingress's namespace.
    const userSide = output.match(/ -n (\S+) get ingress,service,endpointslice\n/);
    assert.ok(userSide, `the demo prints a kubectl command for the Ingress:\n${output.slice(-3000)}`);
    assert.equal(userSide[1], info.namespace);
    assert.deepEqual(await listed(info.kubeconfig, resources.ingresses, userSide[1]), [info.ingress]);
    // The proxy's objects, in the controller's namespace, found by the printed selector.
    const proxySide = output.match(/ -n (\S+) get configmap,deployment,service,poddisruptionbudget -l (\S+)\n/);
    assert.ok(proxySide, `the demo prints a kubectl command for the proxy's objects:\n${output.slice(-3000)}`);
    const [, proxyNamespace, selector] = proxySide;
    assert.notEqual(proxyNamespace, info.namespace, "the shared proxy lives in the controller's namespace");
    const deployments = await listed(info.kubeconfig, resources.deployments, proxyNamespace, selector);
    assert.equal(deployments.length, 1, `one proxy Deployment in ${proxyNamespace} with ${selector}`);
    assert.ok((await listed(info.kubeconfig, resources.configMaps, proxyNamespace, selector)).includes(deployments[0]));
    assert.equal((await listed(info.kubeconfig, resources.podDisruptionBudgets, proxyNamespace, selector)).length, 1);

    Deno.kill(-proc.pid, "SIGINT");
    const status = await proc.status;
    await collecting;
    assert.equal(status.code, 0, output.slice(-3000));
    assert.match(output, /leader election: released the Lease/);
    assert.match(output, /demo: stopped, everything cleaned up\./);
    const bad = output.split("\n").filter((l) => / (WARN|ERROR) /.test(l) || l.includes("[ALERT]"));
    assert.deepEqual(bad, [], "no part warns or fails while stopping");
    assert.deepEqual(await pidsWith(demoDir), [], "no process of the demo is left");
    await assert.rejects(Deno.stat(demoDir), Deno.errors.NotFound);
  } finally {
    try {
      Deno.kill(-proc.pid, "SIGKILL");
    } catch { /* already gone */ }
    await proc.status;
    await collecting.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
