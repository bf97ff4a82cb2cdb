/**
 * Host ownership through a real haproxy (lib/render/host_ownership.ts, templates/routes.eta,
 * frontend_http.eta, frontend_https.eta): an owned host's unmatched requests stop before another
 * namespace's wildcard and catch-all (404, or on to the owner's own catch-all), another
 * namespace's wildcard redirect, wildcard certificate and wildcard passthrough do not reach it, and
 * without a default certificate of the administrator's no Ingress's certificate is the default.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import type { ClusterLookup } from "../../lib/render/model.ts";
import { endpointSlice, ingress, pemFile, service } from "./fixtures.ts";
import { curl, withProxy } from "./live.ts";

const A = "ingress-controller.io/";

/** The common name of the certificate haproxy shows for `servername`, or null when it refuses the handshake. */
function certificateFor(port: number, servername: string): Promise<string | null> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      resolve(String(s.getPeerCertificate().subject?.CN));
      s.destroy();
    });
    s.on("error", () => resolve(null));
  });
}

Deno.test("ownership through haproxy: stops, wildcard redirects, certificates and passthrough stay with their owners", async () => {
  const ca = await createCA({ commonName: "test-ca" });
  const wildCert = await issueCertificate(ca, {
    commonName: "wild.bank.test",
    dnsNames: ["*.bank.test"],
    usages: ["serverAuth"],
  });
  const ownCert = await issueCertificate(ca, {
    commonName: "own.test",
    dnsNames: ["own.test"],
    usages: ["serverAuth"],
  });
  await using bank = await startBackend({ name: "bank" });
  await using evil = await startBackend({ name: "evil" });
  await using edge = await startBackend({ name: "edge" });
  await using shop = await startBackend({ name: "shop" });
  const ports: Record<string, number> = { bank: bank.port, evil: evil.port, edge: edge.port, shop: shop.port };
  const services = new Map<string, V1Service>();
  const slices = new Map<string, V1EndpointSlice[]>();
  for (const [ns, port] of Object.entries(ports)) {
    services.set(ns, service("web", [{ port: 80 }], ns));
    slices.set(ns, [endpointSlice("web", [{ name: "", port }], [{ address: "127.0.0.1" }], { namespace: ns })]);
  }
  const secret = (ns: string, name: string) => ({
    metadata: { namespace: ns, name },
    type: "kubernetes.io/tls",
    tlsSummary: { valid: true, sha256: name },
  });
  const lookup: ClusterLookup = {
    service: (ns, n) => (n === "web" ? services.get(ns) : undefined),
    endpointSlices: (ns, n) => (n === "web" ? slices.get(ns) ?? [] : []),
    secret: (ns, n) => (n === "tls" ? secret(ns, n) : undefined),
  };
  const web = (p: string, pathType = "Prefix") => ({ path: p, pathType, service: "web", port: 80 });
  let minute = 0;
  const at = () => new Date(Date.UTC(2026, 0, 1, 0, ++minute)).toISOString();
  const objects = {
    lookup,
    ingresses: [
      // the oldest: the catch-all is edge's
      ingress({ namespace: "edge", name: "default", created: at(), defaultBackend: { service: "web", port: 80 } }),
      ingress({
        namespace: "bank",
        name: "api",
        created: at(),
        rules: [{ host: "api.bank.test", paths: [web("/app")] }],
      }),
      ingress({
        namespace: "evil",
        name: "wild",
        created: at(),
        tls: [{ hosts: ["*.bank.test"], secretName: "tls" }],
        rules: [{ host: "*.bank.test", paths: [web("/")] }, { host: "api.bank.test", paths: [web("/", "Exact")] }],
      }),
      ingress({
        namespace: "shop",
        name: "cart",
        created: at(),
        tls: [{ hosts: ["cart.shop.test"], secretName: "tls" }],
        rules: [{ host: "cart.shop.test", paths: [web("/")] }],
      }),
      ingress({
        namespace: "evil",
        name: "pass",
        created: at(),
        annotations: { [`${A}ssl-passthrough`]: "true" },
        rules: [{ host: "*.shop.test", paths: [web("/")] }],
      }),
      ingress({ namespace: "edge", name: "own", created: at(), rules: [{ host: "own.test", paths: [web("/x")] }] }),
    ],
  };
  const pems = { "evil_tls.pem": pemFile(wildCert), "shop_tls.pem": pemFile(ownCert) };
  await withProxy(objects, pems, async ({ http, https }) => {
    const get = (host: string, path: string) => curl(["-H", `Host: ${host}`, `http://127.0.0.1:${http}${path}`]);
    // bank's own route
    assert.equal((await get("api.bank.test", "/app/1")).backend, "bank");
    // bank's unmatched path: neither evil's Exact / on its host, nor evil's wildcard, nor edge's default
    for (const p of ["/", "/other", "/.well-known/acme-challenge/token"]) {
      const r = await get("api.bank.test", p);
      assert.deepEqual([r.status, r.backend, r.location], [404, null, ""], p);
    }
    // evil's wildcard serves (and redirects) the hosts no one else owns; the catch-all the rest
    assert.deepEqual([(await get("x.bank.test", "/")).status, (await get("x.bank.test", "/")).location], [
      308,
      "https://x.bank.test/",
    ]);
    assert.equal((await get("nobody.test", "/")).backend, "edge");
    // edge's own host falls through to edge's own default backend
    assert.equal((await get("own.test", "/elsewhere")).backend, "edge");
    // TLS: evil's wildcard certificate for its hosts, never for bank's; no Ingress's certificate is the default
    assert.equal(await certificateFor(https, "x.bank.test"), "wild.bank.test");
    assert.equal(await certificateFor(https, "api.bank.test"), null);
    assert.equal(await certificateFor(https, "unknown.test"), null);
    // evil's (younger) passthrough wildcard does not take shop's host, which shop terminates itself
    assert.equal(await certificateFor(https, "cart.shop.test"), "own.test");
  }, { allowProblems: true });
});
