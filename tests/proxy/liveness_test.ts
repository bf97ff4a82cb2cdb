/**
 * The proxy's liveness (`/livez` on `--health-port`) on the real `runProxy` path with a real
 * HAProxy and kube-apiserver: it fails while HAProxy's master does not answer (stopped with
 * SIGSTOP: hung) and passes again once it does; it does not depend on the API server — with the
 * API server gone, `/livez` and `/readyz` pass and HAProxy keeps serving the last configuration.
 */
import assert from "node:assert/strict";
import type { HAProxy } from "../../lib/proxy/haproxy.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { buildConfig, get, localProxySettings, loopbackAddress, proxyConfigMap } from "./fixtures.ts";

const NS = "proxy-live";
const CM = "live-proxy";

Deno.test("proxy liveness: fails while the HAProxy master hangs, never because the API server is away", async () => {
  const haproxyBinary = await ensureHaproxy();
  const cp = await startControlPlane();
  const backend = await startBackend({ name: "web", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-live-" });
  const settings = localProxySettings({
    kubeconfig: cp.adminKubeConfigPath,
    namespace: NS,
    configmap: CM,
    haproxy: haproxyBinary,
    workDir,
  });
  const { bindAddress: bind, httpPort, healthPort } = settings;
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  let master: number | null = null;
  const probe = async (path: string) => {
    const res = await fetch(`http://${bind}:${healthPort}${path}?verbose`);
    return { status: res.status, body: await res.text() };
  };
  try {
    for (
      const [path, body] of [
        ["/api/v1/namespaces", { metadata: { name: NS } }],
        [
          `/api/v1/namespaces/${NS}/configmaps`,
          proxyConfigMap({
            "haproxy.cfg": buildConfig({
              backends: [{ name: "web", endpoints: [{ address: backend.address, port: backend.port }] }],
            }),
            "crt-list": "",
            "secrets.json": "[]",
          }, { name: CM, namespace: NS }),
        ],
      ] as const
    ) {
      const res = await cp.adminFetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.ok(res.ok, `POST ${path}: ${res.status} ${await res.text()}`);
    }
    let haproxy!: HAProxy;
    let started!: () => void;
    const applied = new Promise<void>((r) => started = r);
    running = runProxy(
      settings,
      stop.signal,
      {
        onReady: (parts) => haproxy = parts.haproxy,
        onApply: (r) => r.ok && started(),
      },
    );
    running.catch(() => {}); // awaited below
    await applied;
    assert.equal((await probe("/livez")).status, 200);

    // 1. A master that does not answer (stopped): not live; answering again: live.
    master = haproxy.pid!;
    Deno.kill(master, "SIGSTOP");
    const hung = await probe("/livez");
    assert.equal(hung.status, 500, hung.body);
    assert.match(hung.body, /\[-\]haproxy-master failed/);
    Deno.kill(master, "SIGCONT");
    master = null;
    const back = await probe("/livez");
    assert.equal(back.status, 200, back.body);

    // 2. The API server goes away: still live and ready, still serving the last configuration.
    await cp.stop();
    const livez = await probe("/livez");
    assert.equal(livez.status, 200, livez.body);
    const readyz = await probe("/readyz");
    assert.equal(readyz.status, 200, readyz.body);
    assert.equal((await get(`http://${bind}:${httpPort}`, "web.test")).name, "web");

    stop.abort();
    await running;
    running = null;
  } finally {
    if (master) Deno.kill(master, "SIGCONT");
    stop.abort();
    await running?.catch(() => {});
    await cp.stop();
    await backend.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});
