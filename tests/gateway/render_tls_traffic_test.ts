/**
 * TLS passthrough by SNI (TLSRoutes) serving real connections: the rendered Gateway configuration
 * run by the real haproxy, TLS backends with their own certificates on addresses of a private
 * network namespace, clients from this process. The client sees the backend's own certificate
 * (nothing is decrypted on the way), exact names and wildcard suffixes go where passthrough.map
 * says, and a name no route has, a route whose backends are all invalid, and the invalid share of
 * a weighted rule are refused (the connection is closed). Terminate listeners: the client gets the
 * listener's certificate and the backend the plain stream (a server that speaks first, as the
 * conformance suite's tcp-backend does); a mixed port serves both kinds by SNI. Outside a private
 * network namespace, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { join } from "node:path";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { startHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { issueCertificate } from "../../lib/pki/certs.ts";
import { renderGateway } from "../../lib/gateway/render.ts";
import { loadTemplates } from "../../lib/render/render.ts";
import { containerPort } from "../../lib/gateway/ports.ts";
import type { GatewayProxyModel, SniEntry } from "../../lib/gateway/model_types.ts";
import { createCA, proxyEnv, service, writeRendered } from "./render_fixtures.ts";

/** A server certificate of `ca` for `names`. */
async function serverPem(ca: Awaited<ReturnType<typeof createCA>>, names: string[]) {
  const c = await issueCertificate(ca, { commonName: names[0], dnsNames: names, usages: ["serverAuth"] });
  return { cert: c.certPem, key: c.keyPem };
}

/** `server` listening on `host` (a free port), named `name`. */
async function listening(server: net.Server, name: string, host: string) {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return { name, host, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A TLS server that answers every connection with its name and closes it. */
function tlsServer(name: string, host: string, pem: { cert: string; key: string }) {
  return listening(tls.createServer({ cert: pem.cert, key: pem.key }, (s) => s.end(`${name}\n`)), name, host);
}

/**
 * Connects with SNI `servername`: the certificate's common name and the backend's answer, or
 * "refused". The chain is checked against `ca`, the name is not (the common name is returned: a
 * `*.wild.example` certificate covers one label only, but the route's wildcard matches more).
 */
function connect(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    let peer = "";
    let text = "";
    const s = tls.connect({ host: "127.0.0.1", port, servername, ca, checkServerIdentity: () => undefined }, () => {
      peer = String(s.getPeerCertificate().subject?.CN);
    });
    s.setEncoding("utf8");
    s.on("data", (d: string) => text += d);
    s.on("error", () => resolve("refused"));
    s.on("close", () => resolve(peer && text ? `${peer} ${text.trim()}` : "refused"));
  });
}

/** A plain TCP server that speaks first (its name), then echoes what it gets. */
function plainServer(name: string, host: string) {
  const server = net.createServer((s) => {
    s.write(`${name}\n`);
    s.on("data", (d) => s.write(d));
    s.on("error", () => {});
  });
  return listening(server, name, host);
}

/**
 * Connects with SNI `servername`, checking the certificate's chain and name against it, waits for
 * the backend's first line, sends `ping` and reads it back: `<common name> <first line> <echo>`,
 * or "refused".
 */
function exchange(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    let peer = "";
    let text = "";
    const s = tls.connect({ host: "127.0.0.1", port, servername, ca }, () => {
      peer = String(s.getPeerCertificate().subject?.CN);
    });
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      text += d;
      const lines = text.split("\n");
      if (lines.length === 2) s.write("ping\n");
      if (lines.length === 3) {
        s.end();
        resolve(`${peer} ${lines[0]} ${lines[1]}`);
      }
    });
    s.on("error", () => resolve("refused"));
    s.on("close", () => resolve("refused"));
  });
}

if (!inPrivateNetwork()) {
  Deno.test("TLS passthrough traffic tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the TLS traffic tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("TLSRoutes: connections routed by SNI to their backends undecrypted; unknown names and invalid shares refused", async (t) => {
    const ca = await createCA({ commonName: "tls passthrough test CA" });
    const issue = (names: string[]) => serverPem(ca, names);
    const alpha = await tlsServer("alpha", privateAddress(60), await issue(["a.example.com"]));
    const beta = await tlsServer("beta", privateAddress(61), await issue(["*.wild.example"]));
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-tls-" });
    try {
      const tcp = (s: typeof alpha) => ({
        ...service("ns", s.name, [{ address: s.host, port: s.port }], 443),
        name: `be_ns_${s.name}_443_tcp`,
        mode: "tcp" as const,
      });
      const [a, b] = [tcp(alpha), tcp(beta)];
      const sni = (hostname: string, rule: string): SniEntry => ({ hostname, rule, route: "ns/r" });
      const model: GatewayProxyModel = {
        ports: [{
          port: 443,
          protocol: "TLS",
          routes: [],
          certs: [],
          sni: [
            sni("a.example.com", "gw_a"),
            sni("half.example.com", "gw_half"),
            sni("gone.example.com", "gw_gone"),
            sni("*.wild.example", "gw_b"),
          ],
        }],
        rules: [],
        tlsRules: [
          { name: "gw_a", targets: [{ backend: a.name, weight: 1 }], invalidWeight: 0 },
          { name: "gw_b", targets: [{ backend: b.name, weight: 1 }], invalidWeight: 0 },
          { name: "gw_gone", targets: [], invalidWeight: 1 },
          { name: "gw_half", targets: [{ backend: a.name, weight: 1 }], invalidWeight: 1 },
        ],
        backends: [a, b],
      };
      const rendered = renderGateway(model, await loadTemplates(null));
      await writeRendered(dir, rendered, {});
      await using _proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      const port = containerPort(443);
      await t.step(
        "exact names and wildcard suffixes reach their backend, which shows its own certificate",
        async () => {
          assert.equal(await connect(port, "a.example.com", ca.certPem), "a.example.com alpha");
          assert.equal(await connect(port, "x.wild.example", ca.certPem), "*.wild.example beta");
          assert.equal(await connect(port, "y.x.wild.example", ca.certPem), "*.wild.example beta");
        },
      );
      await t.step("a name no route has, and a bare wildcard suffix, are refused", async () => {
        assert.equal(await connect(port, "other.example.com", ca.certPem), "refused");
        assert.equal(await connect(port, "wild.example", ca.certPem), "refused");
      });
      await t.step("a route with no valid backend refuses every connection", async () => {
        assert.equal(await connect(port, "gone.example.com", ca.certPem), "refused");
      });
      await t.step("the invalid share of a weighted rule is refused, the rest reaches the backend", async () => {
        const seen = new Set<string>();
        // 1:1, so 40 connections see both outcomes but with probability 2^-39
        for (let i = 0; i < 40 && seen.size < 2; i++) {
          // the certificate is a.example.com's: the client checks the chain, not the name here
          seen.add(
            await new Promise<string>((resolve) => {
              let text = "";
              const s = tls.connect({
                host: "127.0.0.1",
                port,
                servername: "half.example.com",
                ca: ca.certPem,
                checkServerIdentity: () => undefined,
              });
              s.setEncoding("utf8");
              s.on("data", (d: string) => text += d);
              s.on("error", () => resolve("refused"));
              s.on("close", () => resolve(text.trim() || "refused"));
            }),
          );
        }
        assert.deepEqual([...seen].sort(), ["alpha", "refused"]);
      });
    } finally {
      await alpha.close();
      await beta.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test("TLS Terminate: the listener's certificate, the plain stream to the backend; a mixed port serves both", async (t) => {
    const ca = await createCA({ commonName: "tls terminate test CA" });
    const issue = (names: string[]) => serverPem(ca, names);
    const alpha = await tlsServer("alpha", privateAddress(62), await issue(["abc.example.com"]));
    const plain = await plainServer("plain", privateAddress(63));
    const listenerPem = await issue(["tls.example.com"]);
    const dir = await Deno.makeTempDir({ prefix: "ic-gateway-tlsterm-" });
    try {
      const tcp = (s: { name: string; host: string; port: number }) => ({
        ...service("ns", s.name, [{ address: s.host, port: s.port }], 443),
        name: `be_ns_${s.name}_443_tcp`,
        mode: "tcp" as const,
      });
      const [a, p] = [tcp(alpha), tcp(plain)];
      const pass = (hostname: string, rule: string): SniEntry => ({ hostname, rule, route: "ns/p" });
      const term = (hostname: string, rule: string | null): SniEntry => ({
        hostname,
        rule,
        route: "ns/t",
        terminate: true,
      });
      const cert = { file: "ns_cert.pem", namespace: "ns", name: "cert", hosts: ["tls.example.com"] };
      const model: GatewayProxyModel = {
        ports: [
          {
            port: 443,
            protocol: "TLS",
            routes: [],
            certs: [cert],
            sni: [term("tls.example.com", "gw_plain"), term("*.example.com", null)],
            tlsModes: ["Terminate"],
          },
          {
            port: 8883,
            protocol: "TLS",
            routes: [],
            certs: [cert],
            sni: [pass("abc.example.com", "gw_a"), term("tls.example.com", "gw_plain")],
            tlsModes: ["Passthrough", "Terminate"],
          },
        ],
        rules: [],
        tlsRules: [
          { name: "gw_a", targets: [{ backend: a.name, weight: 1 }], invalidWeight: 0 },
          { name: "gw_plain", targets: [{ backend: p.name, weight: 1 }], invalidWeight: 0 },
        ],
        backends: [a, p],
      };
      const rendered = renderGateway(model, await loadTemplates(null));
      await writeRendered(dir, rendered, { "ns_cert.pem": listenerPem.cert + listenerPem.key });
      await using _proxy = await startHaproxy(join(dir, "haproxy.cfg"), { env: proxyEnv(dir, "127.0.0.1", 56789) });
      await t.step(
        "Terminate port: the listener's certificate (name checked), the backend speaks first in clear",
        async () => {
          assert.equal(await exchange(containerPort(443), "tls.example.com", ca.certPem), "tls.example.com plain ping");
        },
      );
      await t.step("Terminate port: a name without certificate fails the handshake (strict-sni)", async () => {
        assert.equal(await exchange(containerPort(443), "other.example.com", ca.certPem), "refused");
        assert.equal(await exchange(containerPort(443), "x.example.com", ca.certPem), "refused");
      });
      await t.step(
        "mixed port: Passthrough names reach their TLS backend undecrypted, Terminate names decrypted",
        async () => {
          assert.equal(await connect(containerPort(8883), "abc.example.com", ca.certPem), "abc.example.com alpha");
          assert.equal(
            await exchange(containerPort(8883), "tls.example.com", ca.certPem),
            "tls.example.com plain ping",
          );
          assert.equal(await connect(containerPort(8883), "other.example.com", ca.certPem), "refused");
        },
      );
    } finally {
      await alpha.close();
      await plain.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}
