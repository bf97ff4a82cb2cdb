/**
 * BackendTLSPolicy through the real haproxy: a Service port a valid policy targets is reached over
 * TLS, with the policy's hostname as SNI, and only when the backend's certificate comes from the
 * policy's CA and names the checked hostname; a backend with a certificate from another CA, or for
 * another name, is refused (HAProxy answers 503), and a port whose policy cannot be used answers 500
 * (never reached unverified). The CA file is written as the proxy writes a ConfigMap's `ca.crt`.
 * Runs inside a private network namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { BackendTls } from "../../lib/gateway/backend_tls.ts";
import { configMapCaEntry, configMapCaFile } from "../../lib/render/configmap_ca.ts";
import { createCA, entry, httpPort, model, pemFor, proxyEnv, rule, service, writeRendered } from "./render_fixtures.ts";

/** A TLS backend answering its name and the SNI it was reached with. */
async function tlsBackend(address: string, pem: string): Promise<{ port: number; server: https.Server }> {
  const server = https.createServer({ cert: pem, key: pem }, (req, res) => {
    const sni = (req.socket as unknown as { servername?: string }).servername ?? "";
    res.setHeader("content-type", "text/plain");
    res.end(`sni=${sni}`);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, headers: { host: "any.test" }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => body += c);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

if (!inPrivateNetwork()) {
  Deno.test("BackendTLSPolicy traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("a backend is served only with a certificate from the policy's CA for the checked name", async (t) => {
    const [policyCa, otherCa] = [await createCA({ commonName: "policy CA" }), await createCA({ commonName: "other" })];
    const good = await tlsBackend(privateAddress(30), await pemFor(policyCa, ["backend.example"]));
    const foreign = await tlsBackend(privateAddress(31), await pemFor(otherCa, ["backend.example"]));
    const misnamed = await tlsBackend(privateAddress(32), await pemFor(policyCa, ["elsewhere.example"]));
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-btls-" });
    try {
      const tls: BackendTls = {
        policy: "ns/policy",
        ca: { namespace: "ns", name: "backend-ca", file: configMapCaFile("ns", "backend-ca") },
        sni: "backend.example",
        verifyHost: "backend.example",
      };
      const be = (name: string, b: { port: number }, address: string, t: BackendTls | null) => ({
        ...service("ns", name, [{ address, port: b.port }]),
        tls: t,
      });
      const backends = [
        be("good", good, privateAddress(30), tls),
        be("foreign", foreign, privateAddress(31), tls),
        be("misnamed", misnamed, privateAddress(32), tls),
        be("unusable", good, privateAddress(30), null),
      ];
      const m = model(
        [httpPort(80, backends.map((b) => entry("", `/${b.service}`, `gw_${b.service}`)))],
        backends.map((b) => rule(`gw_${b.service}`, [[b.name, 1]])),
        backends,
      );
      const rendered = renderGateway(m, await loadTemplates(null));
      // the proxy is told to read the policy's CA ConfigMap (once, whatever the number of backends)
      assert.deepEqual(rendered.secrets, [configMapCaEntry("ns", "backend-ca")]);
      await writeRendered(dir, rendered, { [configMapCaFile("ns", "backend-ca")]: policyCa.certPem });
      const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      const p80 = containerPort(80);
      try {
        await t.step("the policy's CA and name: served, with the policy's hostname as SNI", async () => {
          assert.deepEqual(await get(p80, "/good"), { status: 200, body: "sni=backend.example" });
        });
        await t.step("a certificate from another CA is refused", async () => {
          assert.equal((await get(p80, "/foreign")).status, 503);
        });
        await t.step("a certificate for another name is refused", async () => {
          assert.equal((await get(p80, "/misnamed")).status, 503);
        });
        await t.step("a port whose policy cannot be used is never reached", async () => {
          assert.equal((await get(p80, "/unusable")).status, 500);
        });
      } finally {
        await proxy.stop();
      }
    } finally {
      for (const b of [good, foreign, misnamed]) await new Promise((r) => b.server.close(r));
      await Deno.remove(dir, { recursive: true });
    }
  });
}
