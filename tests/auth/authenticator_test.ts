import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { authenticate, type AuthenticationChain, bearerToken } from "../../lib/auth/authenticator.ts";
import { ClientCertVerifier } from "../../lib/auth/client_cert.ts";
import { TokenAuthenticator } from "../../lib/auth/token.ts";
import { anonymousUser } from "../../lib/auth/types.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

const names = {
  usernameHeaders: ["x-remote-user"],
  groupHeaders: ["x-remote-group"],
  extraHeaderPrefixes: ["x-remote-extra-"],
};

async function setup() {
  const clientCA = await createCA({ commonName: "client-ca" });
  const proxyCA = await createCA({ commonName: "front-proxy-ca" });
  const node = (pem: string) => new X509Certificate(pem);
  const chain: AuthenticationChain = {
    requestHeader: { verifier: new ClientCertVerifier([node(proxyCA.certPem)]), allowedNames: ["front-proxy"], names },
    clientCert: new ClientCertVerifier([node(clientCA.certPem)]),
    tokens: new TokenAuthenticator(
      (t) =>
        Promise.resolve(
          t === "good"
            ? { authenticated: true, user: { name: "tok", groups: [], extra: {} } }
            : { authenticated: false },
        ),
      10_000,
    ),
  };
  const proxy = node((await issueCertificate(proxyCA, { commonName: "front-proxy", usages: ["clientAuth"] })).certPem);
  const otherProxy = node(
    (await issueCertificate(proxyCA, { commonName: "not-allowed", usages: ["clientAuth"] })).certPem,
  );
  const alice = node(
    (await issueCertificate(clientCA, { commonName: "alice", organizations: ["devs"], usages: ["clientAuth"] }))
      .certPem,
  );
  return { chain, proxy, otherProxy, alice };
}

Deno.test("authenticator: request header identity only with an allowed front-proxy certificate", async () => {
  const { chain, proxy, otherProxy, alice } = await setup();
  const headers = [["X-Remote-User", "bob"], ["X-Remote-Group", "g1"]] as const;
  const viaProxy = await authenticate(chain, { peerChain: [proxy], headers });
  assert.deepEqual(viaProxy, {
    ok: true,
    user: { name: "bob", groups: ["g1", "system:authenticated"], extra: {} },
    method: "requestheader",
  });
  // Forged headers from a client-CA user: the certificate identity wins, the headers are ignored.
  const forgedByUser = await authenticate(chain, { peerChain: [alice], headers });
  assert.equal(forgedByUser.ok && forgedByUser.user.name, "alice");
  // Forged headers without any certificate: anonymous.
  const forgedAnon = await authenticate(chain, { peerChain: [], headers });
  assert.deepEqual(forgedAnon, { ok: true, user: anonymousUser, method: "anonymous" });
  // A front-proxy certificate with a CN that is not allowed: rejected.
  const wrongCN = await authenticate(chain, { peerChain: [otherProxy], headers });
  assert.equal(wrongCN.ok, false);
});

Deno.test("authenticator: client certificate, then bearer token; bad credentials are 401 material", async () => {
  const { chain, alice } = await setup();
  const cert = await authenticate(chain, { peerChain: [alice], headers: [] });
  assert.deepEqual(cert, {
    ok: true,
    user: { name: "alice", groups: ["devs", "system:authenticated"], extra: {} },
    method: "x509",
  });
  const tok = await authenticate(chain, { peerChain: [], headers: [["Authorization", "Bearer good"]] });
  assert.equal(tok.ok && tok.user.name, "tok");
  const bad = await authenticate(chain, { peerChain: [], headers: [["authorization", "bearer nope"]] });
  assert.equal(bad.ok, false);
  // An unknown certificate and no other credentials: rejected, not anonymous.
  const stranger = new X509Certificate(
    (await issueCertificate(await createCA({ commonName: "x" }), { commonName: "m", usages: ["clientAuth"] })).certPem,
  );
  assert.equal((await authenticate(chain, { peerChain: [stranger], headers: [] })).ok, false);
  // An unknown certificate but a good token: the token identifies the caller.
  const both = await authenticate(chain, { peerChain: [stranger], headers: [["Authorization", "Bearer good"]] });
  assert.equal(both.ok && both.user.name, "tok");
});

Deno.test("authenticator: bearer header parsing", () => {
  assert.equal(bearerToken([["Authorization", "Bearer abc"]]), "abc");
  assert.equal(bearerToken([["authorization", "bearer abc"]]), "abc");
  assert.equal(bearerToken([["Authorization", "Basic abc"]]), null);
  assert.equal(bearerToken([["Authorization", "Bearer "]]), null);
  assert.equal(bearerToken([]), null);
});

Deno.test("authenticator: system:authenticated is added once, never to anonymous", async () => {
  const { withAuthenticatedGroup } = await import("../../lib/auth/authenticator.ts");
  const u = { name: "x", groups: ["a"], extra: {} };
  assert.deepEqual(withAuthenticatedGroup(u).groups, ["a", "system:authenticated"]);
  const already = { name: "x", groups: ["system:authenticated", "a"], extra: {} };
  assert.equal(withAuthenticatedGroup(already), already);
  assert.equal(withAuthenticatedGroup(anonymousUser), anonymousUser);
});
