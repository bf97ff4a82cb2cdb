/**
 * Frontend client-certificate validation through the real haproxy: an HTTPS port checking clients
 * against a CA (AllowValidOnly) serves a client whose certificate that CA signed and refuses, in
 * the TLS handshake, a client without a certificate or with one from another CA; a port with a CA
 * of its own (perPort) checks against that one; a port in AllowInsecureFallback serves every
 * client and tells the backend what the certificate was (`X-SSL-Client-Verify`), a client's own
 * header of that name never reaching it; a TLS session made on one port does not skip the check
 * of another (HAProxy's shared session cache is off on such a proxy, so no session resumes). The
 * CA files are written as the proxy writes a ConfigMap's `ca.crt`. Runs inside a private network
 * namespace (lib/dev/localenv/netns.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import tls from "node:tls";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import { configMapCaFile } from "../../lib/render/configmap_ca.ts";
import type { ClientValidation, ProxyPort } from "../../lib/gateway/model_types.ts";
import { issueCertificate } from "../../lib/pki/certs.ts";
import {
  cert,
  createCA,
  entry,
  httpsPort,
  model,
  pemFor,
  proxyEnv,
  rule,
  service,
  writeRendered,
} from "./render_fixtures.ts";

/**
 * The openssl client (Deno's TLS client cannot resume sessions) over TLS `version`: one GET, saving
 * the session to `sessOut` or resuming `sessIn`. `reused`: the server resumed the session.
 */
async function opensslGet(
  dir: string,
  port: number,
  opts: { version: "1_2" | "1_3"; client?: string; sessOut?: string; sessIn?: string },
): Promise<{ status: number; reused: boolean }> {
  const args = ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", "site.example", `-tls${opts.version}`];
  args.push("-ign_eof");
  args.push("-CAfile", join(dir, "server-ca.pem"));
  if (opts.client) args.push("-cert", join(dir, opts.client), "-key", join(dir, opts.client));
  if (opts.sessOut) args.push("-sess_out", join(dir, opts.sessOut));
  if (opts.sessIn) args.push("-sess_in", join(dir, opts.sessIn));
  const child = new Deno.Command("openssl", { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode("GET / HTTP/1.1\r\nhost: site.example\r\nconnection: close\r\n\r\n"));
  await w.close();
  const out = new TextDecoder().decode((await child.output()).stdout);
  const status = /^HTTP\/1\.1 (\d{3})/m.exec(out);
  return { status: status ? Number(status[1]) : 0, reused: /^Reused, /m.test(out) };
}

/** A backend answering what the proxy told it about the client's certificate. */
async function echoBackend(address: string): Promise<{ port: number; server: http.Server }> {
  const server = http.createServer((req, res) => {
    res.setHeader("content-type", "text/plain");
    const verify = req.headers["x-ssl-client-verify"] ?? "-";
    res.end(`verify=${verify} cert=${req.headers["x-ssl-client-cert"] ? "yes" : "no"}`);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

/**
 * One HTTP/1.1 GET over TLS to `port` with SNI and Host `host`, optionally with a client
 * certificate: `<status> <body>`, or "refused" when the handshake or the request failed.
 */
function get(
  port: number,
  host: string,
  serverCa: string,
  opts: { client?: { cert: string; key: string }; headers?: Record<string, string> } = {},
): Promise<string> {
  return new Promise((resolve) => {
    let data = "";
    const s = tls.connect({
      host: "127.0.0.1",
      port,
      servername: host,
      ca: serverCa,
      ...(opts.client ?? {}),
    }, () => {
      const extra = Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      s.write(`GET / HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n${extra}\r\n`);
    });
    s.setEncoding("utf8");
    s.on("data", (d: string) => data += d);
    const done = () => {
      const m = /^HTTP\/1\.1 (\d{3})[^]*?\r\n\r\n([^]*)$/.exec(data);
      resolve(m ? `${m[1]} ${m[2]}` : "refused");
    };
    s.on("error", done);
    s.on("close", done);
  });
}

if (!inPrivateNetwork()) {
  Deno.test("client certificate validation traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("HTTPS ports check client certificates against their CA; insecure fallback passes the outcome on", async (t) => {
    const serverCa = await createCA({ commonName: "server CA" });
    const [caA, caB] = [await createCA({ commonName: "clients A" }), await createCA({ commonName: "clients B" })];
    const client = async (ca: typeof caA, name: string) => {
      const c = await issueCertificate(ca, { commonName: name, usages: ["clientAuth"] });
      return { cert: c.certPem, key: c.keyPem };
    };
    const [alice, bob] = [await client(caA, "alice"), await client(caB, "bob")];
    const backend = await echoBackend(privateAddress(40));
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-fcv-" });
    try {
      const be = service("ns", "echo", [{ address: privateAddress(40), port: backend.port }]);
      const check = (name: string, mode: ClientValidation["mode"]): ClientValidation => ({
        mode,
        ca: { namespace: "ns", name, file: configMapCaFile("ns", name) },
      });
      const port = (n: number, v: ClientValidation): ProxyPort => ({
        ...httpsPort(n, [entry("", "/", "gw_echo")], [cert("ns", "site", [])]),
        clientValidation: v,
      });
      const m = model(
        [
          port(443, check("ca-a", "AllowValidOnly")),
          port(8443, check("ca-b", "AllowValidOnly")),
          port(9443, check("ca-a", "AllowInsecureFallback")),
        ],
        [rule("gw_echo", [[be.name, 1]])],
        [be],
      );
      const rendered = renderGateway(m, await loadTemplates(null));
      // the CA ConfigMaps' ca.crt as the proxy writes them (the render lists them in secrets.json)
      await writeRendered(dir, rendered, {
        "ns_site.pem": await pemFor(serverCa, ["site.example"]),
        [configMapCaFile("ns", "ca-a")]: caA.certPem,
        [configMapCaFile("ns", "ca-b")]: caB.certPem,
      });
      const proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      const [p443, p8443, p9443] = [443, 8443, 9443].map(containerPort);
      const ask = (p: number, opts: Parameters<typeof get>[3] = {}) => get(p, "site.example", serverCa.certPem, opts);
      try {
        await t.step("AllowValidOnly: a certificate the port's CA signed is served", async () => {
          assert.equal(await ask(p443, { client: alice }), "200 verify=SUCCESS cert=yes");
          assert.equal(await ask(p8443, { client: bob }), "200 verify=SUCCESS cert=yes");
        });
        await t.step("AllowValidOnly: no certificate, or another CA's, is refused in the handshake", async () => {
          assert.equal(await ask(p443), "refused");
          assert.equal(await ask(p443, { client: bob }), "refused");
          assert.equal(await ask(p8443, { client: alice }), "refused");
        });
        await t.step("a TLS session of one port does not pass another port's check", async () => {
          await Deno.writeTextFile(join(dir, "server-ca.pem"), serverCa.certPem);
          await Deno.writeTextFile(join(dir, "bob.pem"), `${bob.cert}${bob.key}`);
          for (const version of ["1_2", "1_3"] as const) {
            const first = await opensslGet(dir, p8443, { version, client: "bob.pem", sessOut: "bob.session" });
            assert.deepEqual(first, { status: 200, reused: false }, `TLS ${version}`);
            // Without `tune.ssl.cachesize 0` HAProxy 2.6 resumed a TLS 1.2 session from its shared cache on
            // the other port and served it (measured: reused, 200). With it, no session resumes at all
            // (on its own port neither): every connection is a full handshake with the port's check.
            const elsewhere = await opensslGet(dir, p443, { version, sessIn: "bob.session" });
            assert.deepEqual(elsewhere, { status: 0, reused: false }, `TLS ${version}: the other port's check is kept`);
            const again = await opensslGet(dir, p8443, { version, sessIn: "bob.session" });
            assert.deepEqual(again, { status: 0, reused: false }, `TLS ${version}: no resumption on its own port`);
          }
        });
        await t.step(
          "AllowInsecureFallback: every client is served, the backend told what the certificate was",
          async () => {
            assert.equal(await ask(p9443, { client: alice }), "200 verify=SUCCESS cert=yes");
            assert.equal(await ask(p9443, { client: bob }), "200 verify=FAILED cert=no");
            assert.equal(await ask(p9443), "200 verify=NONE cert=no");
          },
        );
        await t.step("a client's own X-SSL-Client-Verify and X-SSL-Client-Cert never reach the backend", async () => {
          const forged = { "x-ssl-client-verify": "SUCCESS", "x-ssl-client-cert": "Zm9yZ2Vk" };
          assert.equal(await ask(p9443, { headers: forged }), "200 verify=NONE cert=no");
        });
      } finally {
        await proxy.stop();
      }
    } finally {
      await new Promise((r) => backend.server.close(r));
      await Deno.remove(dir, { recursive: true });
    }
  });
}
