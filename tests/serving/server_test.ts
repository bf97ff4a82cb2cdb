/**
 * The secure port's TLS side with a real TLS client, curl and openssl: self-signed generation
 * and reuse, SNI selection, TLS version and cipher policy, HTTP/2 and HTTP/1.1. Authentication
 * and authorization against the real kube-apiserver are in tests/serving/cluster_test.ts; here the
 * review functions are plain functions so that these run without a cluster.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AccessReviewer } from "../../lib/auth/authorizer.ts";
import type { TokenReviewer } from "../../lib/auth/token.ts";
import { SetupError, UsageError } from "../../lib/common/errors.ts";
import { tlsRefused } from "../../lib/serving/request_metrics.ts";
import { startServing } from "../../lib/serving/server.ts";
import { defaultSettings, type ServingSettings } from "../../lib/serving/settings.ts";
import { h2get, h2MaxStreams, handshake, request, run, tempDir, writeCA, writePair } from "./helpers.ts";

const noTokens: TokenReviewer = () => Promise.resolve({ authenticated: false });
const allowAll: AccessReviewer = () => Promise.resolve({ allowed: true, reason: "test allows all" });
const overrides = { tokenReviewer: noTokens, accessReviewer: allowAll, ephemeralPorts: true };

function settings(dir: string, extra: Partial<ServingSettings> = {}): ServingSettings {
  return {
    ...defaultSettings,
    bindAddress: "127.0.0.1",
    certDir: join(dir, "certs"),
    authenticationSkipLookup: true,
    ...extra,
  };
}

Deno.test("self-signed certificate is generated into --cert-dir and reused", async () => {
  using tmp = tempDir();
  const s = settings(tmp.dir, { bindAddress: "127.0.0.2" });
  const first = await startServing(s, overrides);
  let pem: string;
  try {
    const crt = join(s.certDir, "apiserver.crt");
    const key = join(s.certDir, "apiserver.key");
    assert.equal(statSync(key).mode & 0o777, 0o600);
    pem = readFileSync(crt, "utf8");
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----/g) ?? [];
    assert.equal(blocks.length, 2, "leaf then CA");
    const [leaf, ca] = pem.split(/(?<=-----END CERTIFICATE-----\n)/).map((b) => new X509Certificate(b));
    assert.ok(ca.ca && !leaf.ca);
    assert.ok(leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
    assert.match(leaf.subjectAltName ?? "", /DNS:localhost/);
    assert.match(leaf.subjectAltName ?? "", /IP Address:127\.0\.0\.1/);
    assert.match(leaf.subjectAltName ?? "", /IP Address:127\.0\.0\.2/);
    // A client trusting only the generated CA verifies the server for "localhost".
    const r = await request({
      port: first.secure!.port,
      host: "127.0.0.2",
      servername: "localhost",
      ca: ca.toString(),
      path: "/healthz",
    });
    assert.equal(r.status, 200);
  } finally {
    await first.stop();
  }
  const second = await startServing(s, overrides);
  try {
    assert.equal(readFileSync(join(s.certDir, "apiserver.crt"), "utf8"), pem, "reused, not regenerated");
  } finally {
    await second.stop();
  }
});

Deno.test("a lone --tls-cert-file or --tls-private-key-file is a SetupError", async () => {
  using tmp = tempDir();
  const { ca } = await writeCA(tmp.dir, "ca");
  const p = await writePair(tmp.dir, "srv", ca, { commonName: "srv", usages: ["serverAuth"] });
  await assert.rejects(startServing(settings(tmp.dir, { tlsCertFile: p.certFile }), overrides), SetupError);
  await assert.rejects(startServing(settings(tmp.dir, { tlsPrivateKeyFile: p.keyFile }), overrides), SetupError);
  // A key that does not belong to the certificate is refused too.
  const other = await writePair(tmp.dir, "other", ca, { commonName: "other", usages: ["serverAuth"] });
  await assert.rejects(
    startServing(settings(tmp.dir, { tlsCertFile: p.certFile, tlsPrivateKeyFile: other.keyFile }), overrides),
    /does not match/,
  );
});

Deno.test("--tls-sni-cert-key: exact, wildcard, explicit over extracted, default, with a real TLS client", async () => {
  using tmp = tempDir();
  const { ca } = await writeCA(tmp.dir, "ca");
  const usages = ["serverAuth"] as const;
  const def = await writePair(tmp.dir, "default", ca, { commonName: "default", usages: [...usages] });
  const wild = await writePair(tmp.dir, "wild", ca, { commonName: "wild", usages: [...usages] });
  const exact = await writePair(tmp.dir, "exact", ca, { commonName: "exact", usages: [...usages] });
  const extracted = await writePair(tmp.dir, "extracted", ca, {
    commonName: "extracted",
    usages: [...usages],
    dnsNames: ["www.example.com", "only-extracted.example.com", "shared.example.org"],
  });
  const explicit = await writePair(tmp.dir, "explicit", ca, { commonName: "explicit", usages: [...usages] });
  const h = await startServing(
    settings(tmp.dir, {
      tlsCertFile: def.certFile,
      tlsPrivateKeyFile: def.keyFile,
      tlsSniCertKey: [
        { certFile: extracted.certFile, keyFile: extracted.keyFile, names: [] },
        { certFile: wild.certFile, keyFile: wild.keyFile, names: ["*.example.com"] },
        { certFile: exact.certFile, keyFile: exact.keyFile, names: ["api.example.com"] },
        { certFile: explicit.certFile, keyFile: explicit.keyFile, names: ["shared.example.org"] },
      ],
    }),
    overrides,
  );
  try {
    const port = h.secure!.port;
    const cn = async (name?: string) => (await handshake(port, name)).subject;
    assert.equal(await cn("api.example.com"), "exact", "exact explicit name");
    assert.equal(await cn("API.Example.COM."), "exact", "case and trailing dot");
    assert.equal(await cn("other.example.com"), "wild", "wildcard matches one label");
    assert.equal(await cn("a.b.example.com"), "default", "wildcard does not match two labels");
    assert.equal(await cn("www.example.com"), "extracted", "an exact (extracted) name beats a wildcard");
    assert.equal(await cn("shared.example.org"), "explicit", "explicit beats extracted");
    assert.equal(await cn("extracted"), "extracted", "CN is an extracted name");
    assert.equal(await cn("unknown.test"), "default", "no match gets the default");
    assert.equal(await cn(undefined), "default", "no SNI gets the default");
  } finally {
    await h.stop();
  }
});

Deno.test("HTTP/2 is negotiated by ALPN and HTTP/1.1 is still served", async () => {
  using tmp = tempDir();
  const h = await startServing(settings(tmp.dir, { http2MaxStreamsPerConnection: 7 }), overrides);
  try {
    const port = h.secure!.port;
    assert.equal((await handshake(port, "localhost", ["h2", "http/1.1"])).alpn, "h2");
    assert.equal((await handshake(port, "localhost", ["http/1.1"])).alpn, "http/1.1");
    assert.equal(await h2MaxStreams(port), 7, "--http2-max-streams-per-connection is advertised");
    const r2 = await h2get(port, "/healthz");
    assert.deepEqual(r2, { status: 200, body: "ok" });
    const r1 = await request({ port, path: "/healthz" });
    assert.equal(r1.status, 200);
    const curl = await run("curl", [
      "-sk",
      "--http2",
      "-o",
      "/dev/null",
      "-w",
      "%{http_version}",
      `https://127.0.0.1:${port}/healthz`,
    ]);
    assert.equal(curl.out.trim(), "2");
  } finally {
    await h.stop();
  }
});

Deno.test("--tls-min-version: TLS 1.2 refused under VersionTLS13, accepted by default (curl)", async () => {
  using tmp = tempDir();
  const url = (p: number) => `https://127.0.0.1:${p}/healthz`;
  const strict = await startServing(
    settings(tmp.dir, { tlsMinVersion: "VersionTLS13", release: "B", version: "7.0.0-rc.2" }),
    overrides,
  );
  try {
    const p = strict.secure!.port;
    const old = await run("curl", ["-sk", "--tls-max", "1.2", url(p)]);
    assert.notEqual(old.code, 0, `TLS 1.2 must be refused: ${old.out}`);
    assert.ok(!old.out.includes("ok"));
    const modern = await run("curl", ["-sk", "--tlsv1.3", url(p)]);
    assert.equal(modern.code, 0, modern.out);
    assert.equal(modern.out, "ok");
  } finally {
    await strict.stop();
  }
  const lax = await startServing(settings(tmp.dir), overrides);
  try {
    const r = await run("curl", ["-sk", "--tls-max", "1.2", url(lax.secure!.port)]);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out, "ok");
  } finally {
    await lax.stop();
  }
});

Deno.test("--tls-cipher-suites: listed suite accepted, others refused (openssl s_client)", async () => {
  using tmp = tempDir();
  // The self-signed certificate has an ECDSA key.
  const h = await startServing(
    settings(tmp.dir, { tlsCipherSuites: ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"] }),
    overrides,
  );
  try {
    const p = h.secure!.port;
    const sClient = (cipher: string) =>
      run(
        "openssl",
        ["s_client", "-connect", `127.0.0.1:${p}`, "-tls1_2", "-cipher", cipher, "-quiet", "-ign_eof"],
        "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
      );
    const good = await sClient("ECDHE-ECDSA-AES128-GCM-SHA256");
    assert.match(good.out, /HTTP\/1\.1 200/);
    const refusedBefore = (await tlsRefused.get()).values[0]?.value ?? 0;
    const bad = await sClient("ECDHE-ECDSA-AES256-GCM-SHA384");
    assert.doesNotMatch(bad.out, /HTTP\/1\.1 200/);
    assert.equal(
      (await tlsRefused.get()).values[0]?.value,
      refusedBefore + 1,
      "refused by the policy, after the handshake",
    );
    // TLS 1.3 suites are not configurable (as in Go) and keep working.
    const tls13 = await run("curl", ["-sk", "--tlsv1.3", `https://127.0.0.1:${p}/healthz`]);
    assert.equal(tls13.out, "ok");
  } finally {
    await h.stop();
  }
});

Deno.test("--tls-cipher-suites and --tls-min-version: unknown and unavailable names", async () => {
  using tmp = tempDir();
  const start = (extra: Partial<ServingSettings>) => startServing(settings(tmp.dir, extra), overrides);
  await assert.rejects(
    start({ tlsCipherSuites: ["TLS_RSA_WITH_RC4_128_SHA"] }),
    (e: Error) => e instanceof SetupError && /cannot provide TLS_RSA_WITH_RC4_128_SHA/.test(e.message),
  );
  await assert.rejects(start({ tlsCipherSuites: ["TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"] }), SetupError);
  await assert.rejects(start({ tlsCipherSuites: ["TLS_NOT_A_SUITE"] }), UsageError);
  await assert.rejects(start({ tlsMinVersion: "VersionTLS99" }), UsageError);
  // A has no VersionTLS13 value (spec 2.3).
  await assert.rejects(start({ tlsMinVersion: "VersionTLS13" }), UsageError);
});

Deno.test("--secure-port=0 disables HTTPS; B serves telemetry on --ops-address", async () => {
  using tmp = tempDir();
  const h = await startServing(
    settings(tmp.dir, { release: "B", version: "7.0.0-rc.2", securePort: 0, opsAddress: "127.0.0.1:0" }),
    overrides,
  );
  try {
    assert.equal(h.secure, null);
    assert.ok(h.ops);
    const base = `http://127.0.0.1:${h.ops.port}`;
    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /process_cpu_user_seconds_total/);
    const health = await fetch(`${base}/healthz`);
    assert.equal(await health.text(), "ok");
    const pprof = await fetch(`${base}/debug/pprof/`);
    assert.equal(pprof.status, 200);
    assert.match(await pprof.text(), /profile/);
    const index = await fetch(`${base}/`);
    assert.match(await index.text(), /ingress-controller 7\.0\.0-rc\.2/);
  } finally {
    await h.stop();
  }
});

Deno.test("a certificate file without PEM content is a SetupError naming the option", async () => {
  using tmp = tempDir();
  const bad = join(tmp.dir, "bad.crt");
  writeFileSync(bad, "not a certificate");
  const { ca } = await writeCA(tmp.dir, "ca");
  const p = await writePair(tmp.dir, "srv", ca, { commonName: "srv", usages: ["serverAuth"] });
  await assert.rejects(
    startServing(settings(tmp.dir, { tlsCertFile: bad, tlsPrivateKeyFile: p.keyFile }), overrides),
    /--tls-cert-file/,
  );
});

Deno.test("secure port paths: version, readiness checks, swagger UI, pprof with event-loop delay", async () => {
  using tmp = tempDir();
  const h = await startServing(
    settings(tmp.dir, { enableSwaggerUi: true, contentionProfiling: true }),
    overrides,
  );
  try {
    const port = h.secure!.port;
    const version = JSON.parse((await request({ port, path: "/version" })).body);
    assert.equal(version.release, "A");
    assert.equal(version.version, "9.0.0");
    assert.equal(version.gitVersion, "v9.0.0");

    let ready = false;
    h.health.register("informers-synced", () => {
      if (!ready) throw new Error("not yet");
    });
    const notReady = await request({ port, path: "/readyz?verbose" });
    assert.equal(notReady.status, 500);
    assert.match(notReady.body, /\[-\]informers-synced failed/);
    assert.equal((await request({ port, path: "/livez" })).status, 200, "a readiness check does not fail liveness");
    ready = true;
    const verbose = await request({ port, path: "/readyz?verbose" });
    assert.equal(verbose.status, 200);
    assert.match(verbose.body, /\[\+\]ping ok\n\[\+\]informers-synced ok\nreadyz check passed/);
    assert.equal((await request({ port, path: "/readyz/informers-synced" })).body, "ok");

    const doc = JSON.parse((await request({ port, path: "/openapi/v2" })).body);
    assert.equal(doc.swagger, "2.0");
    assert.ok(doc.paths["/metrics"] && doc.paths["/debug/pprof/profile"] && doc.paths["/swagger-ui"]);
    const ui = await request({ port, path: "/swagger-ui" });
    assert.equal(ui.status, 200);
    assert.match(String(ui.headers["content-type"]), /text\/html/);
    assert.match(ui.body, /<code>\/debug\/pprof\/profile<\/code>/);
    assert.doesNotMatch(ui.body, /<script|https?:\/\/(?!localhost)/, "no external assets");

    const index = await request({ port, path: "/debug/pprof/" });
    assert.match(index.body, /eventloop/);
    const cpu = await request({ port, path: "/debug/pprof/profile?seconds=1" });
    assert.equal(cpu.status, 200);
    const profile = JSON.parse(cpu.body);
    assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0);
    assert.equal((await request({ port, path: "/debug/pprof/profile?seconds=0" })).status, 400);
    const heap = await request({ port, path: "/debug/pprof/heap?seconds=1" });
    assert.equal(heap.status, 200);
    const sampled = JSON.parse(heap.body);
    assert.ok(sampled.head?.callFrame && Array.isArray(sampled.samples), "a sampling heap profile");
    assert.equal(sampled.snapshot, undefined, "never a heap snapshot");
    const loop = JSON.parse((await request({ port, path: "/debug/pprof/eventloop" })).body);
    assert.ok(loop.count > 0 && loop.percentiles["99"] >= 0);
  } finally {
    await h.stop();
  }
  // Without --profiling and --enable-swagger-ui those paths are not served.
  const off = await startServing(settings(tmp.dir, { profiling: false }), overrides);
  try {
    const port = off.secure!.port;
    assert.equal((await request({ port, path: "/debug/pprof/" })).status, 404);
    assert.equal((await request({ port, path: "/swagger-ui" })).status, 404);
  } finally {
    await off.stop();
  }
});

Deno.test("startServing accepts the parsed Config", async () => {
  using tmp = tempDir();
  const { parseRunFlags } = await import("../../lib/flags/config.ts");
  const config = parseRunFlags("C", [
    "--bind-address=127.0.0.1",
    `--cert-dir=${join(tmp.dir, "certs")}`,
    "--authentication-skip-lookup",
    "--address=127.0.0.1:0",
  ]);
  const h = await startServing(config, overrides);
  try {
    assert.ok(h.secure && h.ops);
    const r = await fetch(`http://127.0.0.1:${h.ops.port}/healthz`);
    assert.equal(await r.text(), "ok");
  } finally {
    await h.stop();
  }
});

Deno.test("--bind-address 0.0.0.0 listens on all interfaces, dual-stack where the OS allows", async () => {
  using tmp = tempDir();
  const h = await startServing(settings(tmp.dir, { bindAddress: "0.0.0.0" }), overrides);
  try {
    const port = h.secure!.port;
    assert.equal((await request({ port, host: "127.0.0.1", path: "/healthz" })).status, 200);
    if (h.secure!.host === "::") {
      assert.equal((await request({ port, host: "::1", path: "/healthz" })).status, 200);
    }
  } finally {
    await h.stop();
  }
});

Deno.test("audit: the real Auditor (blocking log backend) records every secure-port request", async () => {
  using tmp = tempDir();
  const { createAuditor } = await import("../../lib/audit/auditor.ts");
  const { defaultBatch, noTruncate } = await import("../../lib/audit/settings.ts");
  const policyFile = join(tmp.dir, "policy.yaml");
  writeFileSync(policyFile, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n");
  const logFile = join(tmp.dir, "audit.log");
  const auditor = await createAuditor({
    policyFile,
    webhook: null,
    log: {
      path: logFile,
      format: "json",
      maxSizeMB: 100,
      maxBackups: 1,
      maxAgeDays: 0,
      mode: "blocking",
      version: "audit.k8s.io/v1",
      batch: defaultBatch,
      truncate: noTruncate,
    },
  });
  const denyMetrics: AccessReviewer = (a) =>
    Promise.resolve({ allowed: a.path !== "/metrics", reason: a.path === "/metrics" ? "" : "test policy" });
  const h = await startServing(settings(tmp.dir), { ...overrides, accessReviewer: denyMetrics, auditor });
  try {
    const port = h.secure!.port;
    const ok = await request({
      port,
      path: "/version",
      headers: { "Audit-ID": "abc-123", "User-Agent": "audit-test" },
    });
    assert.equal(ok.headers["audit-id"], "abc-123");
    const denied = await request({ port, path: "/metrics" });
    assert.equal(denied.status, 403);
    assert.ok(denied.headers["audit-id"]);
    const unauth = await request({ port, path: "/version", headers: { Authorization: "Bearer bad" } });
    assert.equal(unauth.status, 401);
  } finally {
    await h.stop();
    await auditor.shutdown();
  }
  const events = readFileSync(logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const complete = events.filter((e) => e.stage === "ResponseComplete");
  assert.equal(complete.length, 3);
  const first = complete.find((e) => e.auditID === "abc-123");
  assert.equal(first.user.username, "system:anonymous");
  assert.equal(first.verb, "get");
  assert.equal(first.requestURI, "/version");
  assert.equal(first.responseStatus.code, 200);
  assert.equal(first.annotations["authorization.k8s.io/decision"], "allow");
  const forbid = complete.find((e) => e.requestURI === "/metrics");
  assert.equal(forbid.responseStatus.code, 403);
  assert.equal(forbid.annotations["authorization.k8s.io/decision"], "forbid");
  assert.ok(complete.some((e) => e.responseStatus.code === 401));
});

Deno.test("C: --tls-ca-file is appended to the served chain", async () => {
  using tmp = tempDir();
  const { ca, file } = await writeCA(tmp.dir, "admission-ca");
  const srv = await writePair(tmp.dir, "srv", ca, {
    commonName: "srv",
    usages: ["serverAuth"],
    dnsNames: ["localhost"],
  });
  const h = await startServing(
    settings(tmp.dir, {
      release: "C",
      version: "6.0.0-rc.0",
      tlsCertFile: srv.certFile,
      tlsPrivateKeyFile: srv.keyFile,
      tlsCaFile: file,
    }),
    overrides,
  );
  try {
    const out = await run("openssl", ["s_client", "-connect", `127.0.0.1:${h.secure!.port}`, "-showcerts"], "");
    assert.equal((out.out.match(/-----BEGIN CERTIFICATE-----/g) ?? []).length, 2, out.out);
    assert.match(out.out, /CN\s*=\s*admission-ca/);
  } finally {
    await h.stop();
  }
});

Deno.test("forbidden messages and host:port parsing", async () => {
  const { forbiddenMessage, parseHostPort } = await import("../../lib/serving/server.ts");
  const user = { name: "bob", groups: [], extra: {} };
  assert.equal(
    forbiddenMessage({ user, verb: "get", path: "/metrics" }, ""),
    'forbidden: User "bob" cannot get path "/metrics"',
  );
  assert.equal(
    forbiddenMessage({
      user,
      verb: "list",
      path: "/api/v1/namespaces/ns/pods",
      resource: { apiGroup: "", apiVersion: "v1", resource: "pods", namespace: "ns" },
    }, "no RBAC rule"),
    'pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "ns": no RBAC rule',
  );
  assert.deepEqual(parseHostPort(":56790", "ops-address"), { host: "", port: 56790 });
  assert.deepEqual(parseHostPort("[::1]:8080", "ops-address"), { host: "::1", port: 8080 });
  assert.deepEqual(parseHostPort("127.0.0.1:0", "address"), { host: "127.0.0.1", port: 0 });
  assert.throws(() => parseHostPort("56790", "ops-address"), /--ops-address/);
  assert.throws(() => parseHostPort("host:99999", "address"), UsageError);
});
