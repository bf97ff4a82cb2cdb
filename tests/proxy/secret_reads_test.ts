/**
 * The proxy's watch of each listed Secret by name takes no token of its client's rate limit while it is
 * healthy: a start opens one list and one watch per Secret (10,000 Secrets: 20,000 calls, ~16 minutes at
 * the client's 20 a second), through a Role that names the Secrets one by one, against the real
 * kube-apiserver and HAProxy. A Secret changed afterwards still reaches HAProxy through its watch.
 */
import assert from "node:assert/strict";
import { runProxy } from "../../lib/proxy/command.ts";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import {
  adminPost,
  api,
  buildConfig,
  eventually,
  httpsGet,
  localProxySettings,
  loopbackAddress,
  proxyConfigMap,
  proxyReader,
  testCertificate,
} from "./fixtures.ts";

const NS = "many-secrets";
const CM = "tls-proxy";
const SECRETS = 16;

Deno.test("runProxy: a start reads its many Secrets past the client's burst, and a changed one is still served", async () => {
  const haproxy = await ensureHaproxy();
  await using cp = await startControlPlane();
  const backend = await startBackend({ name: "one", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-secrets-" });
  const stop = new AbortController();
  let client: ClusterClient | null = null;
  let running: Promise<void> | null = null;
  try {
    await adminPost(cp, "/api/v1/namespaces", { metadata: { name: NS } });
    const names = Array.from({ length: SECRETS }, (_, i) => `tls${i}`);
    const secret = (name: string, cert: { certPem: string; keyPem: string }) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: NS },
      type: "kubernetes.io/tls",
      data: { "tls.crt": btoa(cert.certPem), "tls.key": btoa(cert.keyPem) },
    });
    const cert = await testCertificate("web.test");
    for (const name of names) await adminPost(cp, `/api/v1/namespaces/${NS}/secrets`, secret(name, cert));
    const ep = { address: backend.address, port: backend.port };
    await adminPost(
      cp,
      `/api/v1/namespaces/${NS}/configmaps`,
      proxyConfigMap({
        "haproxy.cfg": buildConfig({ backends: [{ name: "web", endpoints: [ep] }], tls: true }),
        // the last Secret serves web.test; the others other hosts
        "crt-list": names.map((n, i) => `${NS}_${n}.pem ${i === SECRETS - 1 ? "web.test" : `other${i}.test`}\n`)
          .join(""),
        "secrets.json": JSON.stringify(names.map((name) => ({ file: `${NS}_${name}.pem`, namespace: NS, name }))),
      }, { name: CM, namespace: NS }),
    );
    const kubeconfig = await proxyReader(cp, NS, { configmap: CM, secrets: names });

    // A token every 1,000 s past a burst of 4: the head's list and watch fit, 32 Secret calls would not.
    client = await ClusterClient.create({ kubeconfig, qps: 0.001, burst: 4 });
    const settings = localProxySettings({ kubeconfig, namespace: NS, configmap: CM, haproxy, workDir });
    const results: ApplyResult[] = [];
    running = runProxy(settings, stop.signal, { client, onApply: (r) => results.push(r) });
    running.catch(() => {});
    await eventually("the first apply", () => Promise.resolve(results.length > 0 || undefined), 60_000);
    assert.equal(results[0].ok, true, JSON.stringify(results[0]));
    assert.equal(results[0].kind, "start");
    assert.match(await httpsGet(settings.bindAddress, settings.httpsPort, "web.test", cert.caPem), /"name":"one"/);
    assert.ok(client.requestsSent >= 2 * SECRETS + 2, `${client.requestsSent} requests`);
    assert.equal(client.limiter.reserve(), 0, "a token is left: the Secrets' lists and watches took none");

    // A renewed certificate (another CA) reaches HAProxy through the Secret's watch.
    const renewed = await testCertificate("web.test");
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/secrets/${names.at(-1)}`, secret(names.at(-1)!, renewed));
    await eventually(
      "the renewed certificate",
      () =>
        httpsGet(settings.bindAddress, settings.httpsPort, "web.test", renewed.caPem)
          .then((body) => /"name":"one"/.test(body) || undefined, () => undefined),
      60_000,
    );
  } finally {
    stop.abort();
    await running?.catch(() => {});
    client?.close();
    await backend.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});
