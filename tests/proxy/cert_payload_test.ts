/**
 * A tenant's TLS Secret whose PEM, sent as the `set ssl cert` payload, would make the command line
 * plus the payload's lines exactly tune.bufsize - 1 (16,383) bytes makes HAProxy 2.6's CLI loop
 * until the process aborts itself ("A bogus APPCTX ... is spinning"), taking every tenant's traffic
 * down. The PEM passes every check of the proxy (tlsSecretPem, haproxy -c). The proxy does not send
 * a payload that large (lib/haproxy/cli_socket.ts CLI_REQUEST_LIMIT): the change is a reload, the
 * same master keeps running, and the other tenant is served throughout. Against the real HAProxy.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import type { MapFile } from "../../lib/render/maps.ts";
import { tlsSecretPem } from "../../lib/proxy/files.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { httpsGet, loopbackAddress, proxyUnderTest, testCertificate } from "./fixtures.ts";

const templates = await loadTemplates(null);
type Cert = { certPem: string; keyPem: string; caPem: string };
const secret = (name: string, crt: string, key: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  type: "kubernetes.io/tls",
  metadata: { namespace: "default", name },
  data: { "tls.crt": btoa(crt), "tls.key": btoa(key) },
});

Deno.test("a tenant's certificate chain too large for the command buffer is applied by a reload, never sent", async () => {
  const backend = await startBackend({ name: "web", host: loopbackAddress() });
  await using p = await proxyUnderTest();
  try {
    const web = await testCertificate("web.test");
    const api = await testCertificate("api.test");
    const ings = ["web", "api"].map((n) =>
      ingress({
        name: n,
        tls: [{ hosts: [`${n}.test`], secretName: `${n}-tls` }],
        rules: [{ host: `${n}.test`, paths: [{ path: "/", service: "web", port: 80, pathType: "Prefix" }] }],
      })
    );
    const desired = (webCrt: string, webKey: string): DesiredState => {
      const secrets = [secret("web-tls", webCrt, webKey), secret("api-tls", api.certPem, api.keyPem)];
      const { model, problems } = buildModel({
        ingresses: ings,
        lookup: lookupFromLists({
          services: [service("web", [{ port: 80 }])],
          endpointSlices: [endpointSlice("web", [{ name: "", port: backend.port }], [{ address: backend.address }])],
          secrets: secrets as never[],
        }),
        allowLoopbackEndpoints: true,
      });
      assert.deepEqual(problems, []);
      const r = render(model, templates);
      // the PEM files exactly as the proxy makes them from the Secrets (lib/proxy/files.ts)
      const pems = new Map(secrets.map((s) => [
        `default_${s.metadata.name}.pem`,
        tlsSecretPem({ namespace: "default", name: s.metadata.name }, s),
      ]));
      return {
        config: r.config,
        crtList: r.crtList,
        pems,
        maps: new Map(Object.entries(r.maps)) as Map<MapFile, string>,
      };
    };
    const start = await p.applier.apply(desired(web.certPem, web.keyPem));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    assert.match(await httpsGet(p.bind, p.httpsPort, "api.test", api.caPem), /"name":"web"/);
    const master = p.haproxy.pid;

    // The hostile tls.crt: the leaf, its CA repeated up to ~17 kB (a long chain), and one comment line before
    // them whose length puts a line end exactly at byte 16383 of what replaceCert sends.
    const chain = web.certPem + web.caPem.repeat(Math.ceil(17_000 / web.caPem.length));
    const command = `set ssl cert ${join(p.certDir, "default_web-tls.pem")} <<\n`;
    let crt = "";
    for (let pad = 1; pad < 200 && crt === ""; pad++) {
      const candidate = `${"#".repeat(pad)}\n${chain}`;
      const pem = tlsSecretPem({ namespace: "default", name: "web-tls" }, secret("web-tls", candidate, web.keyPem));
      let at = command.length;
      for (const l of pem.split("\n").filter((l) => l.trim() !== "")) {
        at += l.length + 1;
        if (at === 16383) crt = candidate;
      }
    }
    assert.notEqual(crt, "", "no padding found");

    const r = await p.applier.apply(desired(crt, web.keyPem));
    assert.deepEqual([r.kind, r.ok], ["reload", true], `${r.reason ?? ""}: ${r.error ?? ""}`);
    // the same master (HAProxy never died), the other tenant still served, the new chain served
    assert.equal(p.haproxy.pid, master);
    assert.match(await httpsGet(p.bind, p.httpsPort, "api.test", api.caPem), /"name":"web"/);
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", web.caPem), /"name":"web"/);
  } finally {
    await p.close();
    await backend.close();
  }
});
