/**
 * The secure port against the real kube-apiserver of lib/localenv: client-certificate users allowed
 * and denied by RBAC through SubjectAccessReview, request-header identity only behind a valid
 * front-proxy certificate with an allowed CN, forged headers ignored, bearer tokens through
 * TokenReview and then from the cache, always-allow paths, anonymous probes, a failed review (500),
 * the extension-apiserver-authentication lookup, and audit calls.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { AuditHandle, Auditor, AuditRequest } from "../../lib/audit/types.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings, type ServingSettings } from "../../lib/serving/settings.ts";
import { type ControlPlane, freePort, startControlPlane } from "../../lib/dev/localenv/mod.ts";
import { request, tempDir } from "./helpers.ts";
import { readFileSync, writeFileSync } from "node:fs";
import { loadKubeConfig } from "../../lib/cluster/access.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { runServing } from "../../lib/serving/run_part.ts";

async function apply(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  const res = await cp.adminFetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201 && res.status !== 409) throw new Error(`POST ${path}: ${res.status} ${text}`);
}

const rbac = "/apis/rbac.authorization.k8s.io/v1";

async function grantMetrics(cp: ControlPlane): Promise<void> {
  await apply(cp, `${rbac}/clusterroles`, {
    metadata: { name: "serving-test-metrics-reader" },
    rules: [{ nonResourceURLs: ["/metrics", "/version"], verbs: ["get"] }],
  });
  await apply(cp, `${rbac}/clusterrolebindings`, {
    metadata: { name: "serving-test-metrics-reader" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "serving-test-metrics-reader" },
    subjects: [
      { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" },
      { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "proxied-readers" },
      { kind: "ServiceAccount", name: "reader", namespace: "default" },
    ],
  });
  // The delegated identity: may create TokenReviews and SubjectAccessReviews, and read the
  // extension-apiserver-authentication ConfigMap (the documented roles for extension servers).
  await apply(cp, `${rbac}/clusterrolebindings`, {
    metadata: { name: "serving-test-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "ingress-controller" }],
  });
  await apply(cp, `${rbac}/namespaces/kube-system/rolebindings`, {
    metadata: { name: "serving-test-auth-reader", namespace: "kube-system" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extension-apiserver-authentication-reader" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "ingress-controller" }],
  });
}

function recordingAuditor(): Auditor & {
  events: { req: AuditRequest; notes: Record<string, string>; status?: number }[];
} {
  const events: { req: AuditRequest; notes: Record<string, string>; status?: number }[] = [];
  let n = 0;
  return {
    enabled: true,
    events,
    begin(req): AuditHandle {
      const e: { req: AuditRequest; notes: Record<string, string>; status?: number } = { req, notes: {} };
      events.push(e);
      return {
        auditID: req.auditID ?? `test-${++n}`,
        level: "Metadata",
        annotate: (k, v) => void (e.notes[k] = v),
        requestBody: () => {},
        responseStarted: () => {},
        complete: (status) => {
          e.status = status;
          return Promise.resolve();
        },
        panic: () => Promise.resolve(),
      };
    },
    shutdown: () => Promise.resolve(),
  };
}

Deno.test({
  name: "secure port against the real kube-apiserver",
  // The control plane takes a while on shared cores; one plane serves every step.
  async fn(t) {
    await using cp = await startControlPlane();
    using tmp = tempDir();
    await grantMetrics(cp);
    const delegatedKubeconfig = await cp.kubeConfig("ingress-controller");
    const base: ServingSettings = {
      ...defaultSettings,
      bindAddress: "127.0.0.1",
      certDir: join(tmp.dir, "certs"),
      authenticationKubeconfig: delegatedKubeconfig,
      authorizationKubeconfig: delegatedKubeconfig,
      // No CA files: client CA and request-header settings come from the cluster lookup.
      authenticationSkipLookup: false,
      authorizationAlwaysAllowPaths: ["/healthz", "/readyz", "/livez"],
      enableSwaggerUi: true,
    };
    const auditor = recordingAuditor();
    const h = await startServing(base, { auditor, ephemeralPorts: true });
    try {
      const port = h.secure!.port;
      const alice = await cp.mintUser("alice", ["devs"]);
      const bob = await cp.mintUser("bob");
      const get = (path: string, extra: Partial<Parameters<typeof request>[0]> = {}) =>
        request({ port, path, ...extra });

      await t.step("client-certificate user allowed and denied per RBAC", async () => {
        const ok = await get("/metrics", { cert: alice.certPem, key: alice.keyPem });
        assert.equal(ok.status, 200, ok.body);
        assert.match(ok.body, /serving_requests_total/);
        const denied = await get("/metrics", { cert: bob.certPem, key: bob.keyPem });
        assert.equal(denied.status, 403);
        assert.match(JSON.parse(denied.body).message, /User "bob" cannot get path "\/metrics"/);
      });

      await t.step("authenticated users carry system:authenticated (cluster's system:discovery binding)", async () => {
        const doc = await get("/openapi/v2", { cert: bob.certPem, key: bob.keyPem });
        assert.equal(doc.status, 200, doc.body);
        assert.equal(JSON.parse(doc.body).swagger, "2.0");
        const anon = await get("/openapi/v2");
        assert.equal(anon.status, 403, "anonymous is not in system:authenticated");
      });

      await t.step("request-header identity only with a valid front-proxy certificate and allowed CN", async () => {
        const proxy = await cp.mintFrontProxyClient();
        const asAlice = await get("/metrics", {
          cert: proxy.certPem,
          key: proxy.keyPem,
          headers: { "X-Remote-User": "alice" },
        });
        assert.equal(asAlice.status, 200);
        const viaGroup = await get("/metrics", {
          cert: proxy.certPem,
          key: proxy.keyPem,
          headers: { "x-remote-user": "carol", "X-Remote-Group": ["other", "proxied-readers"] },
        });
        assert.equal(viaGroup.status, 200, "groups from every value of the group header");
        const asBob = await get("/metrics", {
          cert: proxy.certPem,
          key: proxy.keyPem,
          headers: { "X-Remote-User": "bob" },
        });
        assert.equal(asBob.status, 403);
        assert.match(JSON.parse(asBob.body).message, /User "bob"/);
        const wrongCN = await cp.mintFrontProxyClient("not-the-front-proxy");
        const refused = await get("/metrics", {
          cert: wrongCN.certPem,
          key: wrongCN.keyPem,
          headers: { "X-Remote-User": "alice" },
        });
        assert.equal(refused.status, 401);
      });

      await t.step("forged identity headers never authenticate", async () => {
        const anon = await get("/metrics", {
          headers: { "X-Remote-User": "alice", "X-Remote-Group": "system:masters" },
        });
        assert.equal(anon.status, 403);
        assert.match(JSON.parse(anon.body).message, /User "system:anonymous"/);
        const asBob = await get("/metrics", {
          cert: bob.certPem,
          key: bob.keyPem,
          headers: { "X-Remote-User": "alice", "X-Remote-Group": "system:masters" },
        });
        assert.equal(asBob.status, 403);
        assert.match(JSON.parse(asBob.body).message, /User "bob"/);
        // The audit copy of the headers does not carry them either.
        const last = auditor.events.at(-1)!;
        assert.equal(last.req.headers.get("x-remote-user"), null);
        assert.equal(last.req.user.name, "bob");
      });

      await t.step("bearer token via TokenReview, then from the cache", async () => {
        const token = await cp.mintToken({ serviceAccount: "reader", namespace: "default" });
        const tokens = h.delegation!.authentication.tokens!;
        const before = tokens.reviewsSent;
        for (let i = 0; i < 5; i++) {
          const r = await get("/metrics", { headers: { Authorization: `Bearer ${token}` } });
          assert.equal(r.status, 200, r.body);
        }
        assert.equal(tokens.reviewsSent - before, 1, "one TokenReview, four answers from the cache");
        const bad = await get("/metrics", { headers: { Authorization: "Bearer not-a-token" } });
        assert.equal(bad.status, 401);
        const unknownCA = await get("/metrics", {
          cert: (await unknownClient()).certPem,
          key: (await unknownClient()).keyPem,
        });
        assert.equal(unknownCA.status, 401, "a certificate no bundle verifies is rejected, not anonymous");
      });

      await t.step("SubjectAccessReview answers are cached; always-allow paths skip the review", async () => {
        const authz = h.delegation!.authorizer;
        const before = authz.reviewsSent;
        await get("/version", { cert: alice.certPem, key: alice.keyPem });
        await get("/version", { cert: alice.certPem, key: alice.keyPem });
        assert.equal(authz.reviewsSent - before, 1);
        const probe = await get("/healthz");
        assert.equal(probe.status, 200);
        assert.equal(probe.body, "ok");
        assert.equal(authz.reviewsSent - before, 1, "no review for an always-allowed path");
        // Always-allowed still authenticates: a bad token is 401.
        const bad = await get("/healthz", { headers: { Authorization: "Bearer nope" } });
        assert.equal(bad.status, 401);
      });

      await t.step("audit: every request is begun, annotated with the decision and completed", async () => {
        const r = await get("/metrics", {
          cert: alice.certPem,
          key: alice.keyPem,
          headers: { "Audit-ID": "fixed-id-1" },
        });
        assert.equal(r.headers["audit-id"], "fixed-id-1");
        const e = auditor.events.find((x) => x.req.auditID === "fixed-id-1")!;
        assert.equal(e.req.user.name, "alice");
        assert.equal(e.req.verb, "get");
        assert.equal(e.notes["authorization.k8s.io/decision"], "allow");
        assert.equal(e.status, 200);
        assert.ok(
          auditor.events.some((x) => x.status === 403 && x.notes["authorization.k8s.io/decision"] === "forbid"),
        );
        assert.ok(auditor.events.some((x) => x.status === 401));
      });
    } finally {
      await h.stop();
    }

    await t.step("B: anonymous probes pass through the cluster's public-info-viewer binding", async () => {
      const b = await startServing(
        { ...base, release: "B", version: "7.0.0-rc.2", authorizationAlwaysAllowPaths: [], opsAddress: null },
        { ephemeralPorts: true },
      );
      try {
        const port = b.secure!.port;
        const probe = await request({ port, path: "/readyz" });
        assert.equal(probe.status, 200, probe.body);
        assert.equal(b.delegation!.authorizer.reviewsSent, 1, "authorized by SubjectAccessReview");
        const metrics = await request({ port, path: "/metrics" });
        assert.equal(metrics.status, 403);
      } finally {
        await b.stop();
      }
    });

    await t.step("explicit CA files; a review the delegated identity may not make is a 500", async () => {
      const clientCa = join(tmp.dir, "client-ca.crt");
      writeFileSync(clientCa, cp.clientCaPem);
      const weakKubeconfig = await cp.kubeConfig("nobody");
      const c = await startServing(
        {
          ...base,
          release: "C",
          version: "6.0.0-rc.0",
          clientCaFile: clientCa,
          authenticationSkipLookup: true,
          authorizationKubeconfig: weakKubeconfig,
          authorizationAlwaysAllowPaths: [],
        },
        { ephemeralPorts: true },
      );
      try {
        const alice = await cp.mintUser("alice");
        const r = await request({ port: c.secure!.port, path: "/metrics", cert: alice.certPem, key: alice.keyPem });
        assert.equal(r.status, 500);
        assert.match(r.body, /authorization review failed/);
      } finally {
        await c.stop();
      }
    });

    await t.step("as a part of run: parsed flags, real auditor, stops on abort", async () => {
      const port = freePort();
      const policy = join(tmp.dir, "policy.yaml");
      writeFileSync(policy, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n");
      const auditLog = join(tmp.dir, "run-audit.log");
      const config = parseRunFlags("A", [
        `--kubeconfig=${cp.adminKubeConfigPath}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${port}`,
        `--cert-dir=${join(tmp.dir, "run-certs")}`,
        `--authentication-kubeconfig=${delegatedKubeconfig}`,
        `--authorization-kubeconfig=${delegatedKubeconfig}`,
        "--authorization-always-allow-paths=/healthz,/readyz,/livez",
        `--audit-policy-file=${policy}`,
        `--audit-log-path=${auditLog}`,
      ]);
      const stop = new AbortController();
      const running = runServing({ config, kubeConfig: loadKubeConfig(cp.adminKubeConfigPath), signal: stop.signal });
      let r = { status: 0, body: "" };
      for (let i = 0; i < 100 && r.status !== 200; i++) {
        r = await request({ port, path: "/livez" }).catch(() => ({ status: 0, body: "", headers: {} }));
        if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(r.status, 200);
      const alice = await cp.mintUser("alice");
      assert.equal((await request({ port, path: "/metrics", cert: alice.certPem, key: alice.keyPem })).status, 200);
      stop.abort();
      await running;
      const events = readFileSync(auditLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(
        events.some((e) =>
          e.user?.username === "alice" && e.requestURI === "/metrics" && e.responseStatus?.code === 200
        ),
      );
    });

    await t.step("a missing --authentication-kubeconfig file is a SetupError naming the option", async () => {
      await assert.rejects(
        startServing({ ...base, authenticationKubeconfig: join(tmp.dir, "missing") }, { ephemeralPorts: true }),
        /--authentication-kubeconfig/,
      );
    });
  },
});

let stranger: Promise<{ certPem: string; keyPem: string }> | null = null;
function unknownClient() {
  stranger ??= (async () => {
    const { createCA, issueCertificate } = await import("../../lib/pki/certs.ts");
    const ca = await createCA({ commonName: "stranger-ca" });
    return await issueCertificate(ca, { commonName: "alice", usages: ["clientAuth"] });
  })();
  return stranger;
}
