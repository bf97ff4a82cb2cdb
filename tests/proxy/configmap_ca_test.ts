/**
 * CA bundles from ConfigMaps (`configmap-ca` entries of `secrets.json`, contracts.md §4) through
 * a real kube-apiserver and a real HAProxy: the proxy, allowed to read only the ConfigMaps and
 * Secrets it is given by name, writes a ConfigMap's `ca.crt` as `<ns>_<name>_configmap_ca.pem`,
 * and a backend verified against it is reached; a missing or unusable CA ConfigMap is left out
 * with a CA that verifies nothing, so only the backends checked against it fail closed (503); a
 * Secret of the same name is another object with its own file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { configMapCaEntry, configMapCaFile } from "../../lib/render/configmap_ca.ts";
import {
  api,
  buildConfig,
  eventually,
  get,
  localProxySettings,
  loopbackAddress,
  proxyConfigMap,
  proxyReader,
} from "./fixtures.ts";
import { caSecretOf, GARBAGE_CERT } from "../pki/materials.ts";

const NS = "proxy-cm-ca";
const CM = "gateway-proxy";

function caConfigMap(name: string, ca: string) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { namespace: NS, name }, data: { "ca.crt": ca } };
}

Deno.test("the proxy reads CA bundles from ConfigMaps by name; a missing or bad one fails closed for its backends only", async () => {
  const haproxyBinary = await ensureHaproxy();
  await using cp = await startControlPlane();
  const plain = await startBackend({ name: "plain", host: loopbackAddress() });
  const caB = await createCA({ commonName: "backend CA b" });
  const caC = await createCA({ commonName: "backend CA c" });
  const serve = async (ca: typeof caB, name: string) => {
    const leaf = await issueCertificate(ca, {
      commonName: "api.internal",
      dnsNames: ["api.internal"],
      usages: ["serverAuth"],
    });
    return Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert: leaf.certPem, key: leaf.keyPem, onListen: () => {} },
      () => Response.json({ name }),
    );
  };
  const [b, c] = [await serve(caB, "b"), await serve(caC, "c")];
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-cm-ca-" });
  const stop = new AbortController();
  let run: Promise<void> | null = null;
  try {
    await api(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
    // The ConfigMap `b-ca` holds CA b; a Secret `b-ca` (another object) holds garbage: it is not read.
    await api(cp, "POST", `/api/v1/namespaces/${NS}/configmaps`, caConfigMap("b-ca", caB.certPem));
    await api(cp, "POST", `/api/v1/namespaces/${NS}/secrets`, caSecretOf(NS, "b-ca", caB.certPem + GARBAGE_CERT));
    const verified = (backend: string, port: number, ca: string) =>
      `backend ${backend}\n    server s1 127.0.0.1:${port} ssl verify required ` +
      `ca-file "\${IC_CERT_DIR}/${configMapCaFile(NS, ca)}" sni str(api.internal)\n`;
    const data = {
      "haproxy.cfg": buildConfig({
        backends: [{ name: "plain", endpoints: [{ address: plain.address, port: plain.port }] }],
        frontendExtra: [
          "    use_backend vb if { var(txn.host) -m str b.test }",
          "    use_backend vc if { var(txn.host) -m str c.test }",
        ],
      }) + verified("vb", b.addr.port, "b-ca") + verified("vc", c.addr.port, "c-ca"),
      "crt-list": "",
      "secrets.json": JSON.stringify([configMapCaEntry(NS, "b-ca"), configMapCaEntry(NS, "c-ca")]),
    };
    await api(cp, "POST", `/api/v1/namespaces/${NS}/configmaps`, proxyConfigMap(data, { name: CM, namespace: NS }));
    const kubeconfig = await proxyReader(cp, NS, { configmap: CM, configMaps: ["b-ca", "c-ca"] });
    const settings = localProxySettings({ kubeconfig, namespace: NS, configmap: CM, haproxy: haproxyBinary, workDir });
    const results: ApplyResult[] = [];
    const leftOut: string[][] = [];
    run = runProxy(settings, stop.signal, {
      onApply: (r) => results.push(r),
      onLeftOut: (l) => leftOut.push(l.map((x) => `${x.ref.kind} ${x.ref.name}: ${x.reason}`)),
    });
    run.catch(() => {});
    const url = `http://${settings.bindAddress}:${settings.httpPort}`;

    // 1. c-ca does not exist: the proxy starts anyway; b.test is verified with the ConfigMap's CA,
    //    c.test fails closed, the plain backend is served.
    await eventually("the start", () => Promise.resolve(results.find((r) => r.kind === "start" && r.ok)));
    assert.equal((await get(url, "plain.test")).name, "plain");
    assert.equal((await get(url, "b.test")).name, "b");
    assert.equal((await get(url, "c.test")).status, 503);
    assert.deepEqual(leftOut.at(-1), ["configmap-ca c-ca: the ConfigMap does not exist"]);
    assert.equal(
      await Deno.readTextFile(join(workDir, "certs", configMapCaFile(NS, "b-ca"))),
      `${caB.certPem.trim()}\n`,
    );

    // 2. c-ca created with the right CA: c.test is reached (a CA change reloads).
    await api(cp, "POST", `/api/v1/namespaces/${NS}/configmaps`, caConfigMap("c-ca", caC.certPem));
    await eventually("c.test verified", async () => (await get(url, "c.test")).name === "c" || undefined);
    assert.deepEqual(leftOut.at(-1), []);

    // 3. b-ca becomes something HAProxy must not load (a certificate, then garbage): left out,
    //    b.test fails closed, c.test and plain.test unaffected.
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/configmaps/b-ca`, caConfigMap("b-ca", caB.certPem + GARBAGE_CERT));
    await eventually("b.test closed", async () => (await get(url, "b.test")).status === 503 || undefined);
    assert.match(leftOut.at(-1)![0], /^configmap-ca b-ca: certificate 2 of ca\.crt cannot be parsed/);
    assert.equal((await get(url, "c.test")).name, "c");
    assert.equal((await get(url, "plain.test")).name, "plain");

    // 4. b-ca now holds CA c (a valid bundle, the wrong CA for b's certificate): b.test still refused.
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/configmaps/b-ca`, caConfigMap("b-ca", caC.certPem));
    await eventually("b-ca applied", () => Promise.resolve(leftOut.at(-1)?.length === 0 || undefined));
    assert.equal((await get(url, "b.test")).status, 503);
  } finally {
    stop.abort();
    await run?.catch(() => {});
    await Promise.all([plain.close(), b.shutdown(), c.shutdown()]);
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});
