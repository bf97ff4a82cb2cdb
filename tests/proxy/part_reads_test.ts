/**
 * The proxy's start reads every part of its configuration once, without waiting for its client's
 * rate limit (1,358 parts at 100,000 Ingresses waited ~53 s at 20 a second past a burst of 300),
 * still through a Role that names its ConfigMaps one by one (the controller's `--rbac` rules,
 * lib/controller/transport.ts's configReadRules), against the real kube-apiserver and HAProxy.
 * A part read again for the same digest (a retry) takes its token as before.
 */
import assert from "node:assert/strict";
import { runProxy } from "../../lib/proxy/command.ts";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { configObjects, configReadRules } from "../../lib/controller/transport.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { PARTS_KEY } from "../../lib/transport/parts.ts";
import { adminPost, buildConfig, get, localProxySettings, loopbackAddress, roleUser } from "./fixtures.ts";

const NS = "parts";
const CM = "big-proxy";

Deno.test("runProxy: a start reads its many parts past the client's burst without waiting for its rate", async () => {
  const haproxy = await ensureHaproxy();
  await using cp = await startControlPlane();
  const backend = await startBackend({ name: "one", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-parts-" });
  const stop = new AbortController();
  let client: ClusterClient | null = null;
  let running: Promise<void> | null = null;
  try {
    const post = (path: string, body: unknown) => adminPost(cp, path, body);
    await post("/api/v1/namespaces", { metadata: { name: NS } });
    // 120 backends cut into parts of ~600 bytes: 25–40 part ConfigMaps (the cuts follow the content).
    const ep = { address: backend.address, port: backend.port };
    const names = Array.from({ length: 120 }, (_, i) => `web${i}`);
    const config = buildConfig({ backends: names.map((name) => ({ name, endpoints: [ep] })) });
    const objects = configObjects(CM, { "haproxy.cfg": config }, new Map(), {
      inline: 4096,
      fileInline: 512,
      targetPart: 600,
    });
    const parts = objects.filter((o) => o.name !== CM);
    assert.ok(parts.length >= 20, `${parts.length} parts`);
    for (const o of objects) {
      await post(`/api/v1/namespaces/${NS}/configmaps`, {
        metadata: { name: o.name, namespace: NS, annotations: o.annotations, labels: o.labels },
        ...o.body,
      });
    }
    assert.ok(PARTS_KEY in ((objects.find((o) => o.name === CM)!.body.data ?? {}) as Record<string, string>));
    // The proxy's Role: the head and each part slot by name, nothing else.
    const kubeconfig = await roleUser(cp, NS, configReadRules(CM, objects));

    // A token every 1,000 s past a burst of 4: the head's list and watch fit, 20 part reads would not.
    client = await ClusterClient.create({ kubeconfig, qps: 0.001, burst: 4 });
    const settings = localProxySettings({ kubeconfig, namespace: NS, configmap: CM, haproxy, workDir });
    const results: ApplyResult[] = [];
    const applied = Promise.withResolvers<void>();
    running = runProxy(settings, stop.signal, {
      client,
      onApply: (r) => {
        results.push(r);
        applied.resolve();
      },
    });
    running.catch(() => {});
    const late = setTimeout(() => applied.reject(new Error("no apply within 60 s: the part reads waited")), 60_000);
    try {
      await applied.promise;
    } finally {
      clearTimeout(late);
    }
    assert.equal(results[0].ok, true, JSON.stringify(results[0]));
    assert.equal(results[0].kind, "start");
    const url = `http://${settings.bindAddress}:${settings.httpPort}`;
    assert.equal((await get(url, "web0.test")).name, "one");
    assert.equal((await get(url, `${names.at(-1)}.test`)).name, "one");
    // Every part was read, and the burst is not spent beyond the head's list and watch.
    assert.ok(client.requestsSent >= parts.length + 2, `${client.requestsSent} requests`);
    assert.equal(client.limiter.reserve(), 0, "a token is left: the part reads took none");
  } finally {
    stop.abort();
    await running?.catch(() => {});
    client?.close();
    await backend.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});
