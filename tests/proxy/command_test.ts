/**
 * `runProxy` against a real kube-apiserver and a real HAProxy: it watches its ConfigMap and a TLS
 * Secret as a user whose Role only names those two objects (resourceNames, as the controller's
 * Role does), serves through HAProxy, and follows every change: endpoints without a reload,
 * structure and certificates with a reload, an unusable Secret left out while the rest applies,
 * a ConfigMap whose data does not match the controller's digest refused, an invalid config refused
 * while the old one serves, a killed HAProxy restarted with the last good config; and on abort
 * nothing is left running. One tenant's bad certificate or CA file never stops the others'
 * configuration, nor a fresh proxy's start.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { type ProxySettings, runProxy } from "../../lib/proxy/command.ts";
import type { HAProxy } from "../../lib/proxy/haproxy.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import {
  api,
  buildConfig,
  eventually,
  get,
  haproxyProcessesFor,
  httpsGet,
  localProxySettings,
  loopbackAddress,
  proxyConfigMap,
  proxyReader,
  testCertificate,
  workerPid,
} from "./fixtures.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import { tlsPairProblem } from "../../lib/pki/secret_checks.ts";
import { caSecretOf, GARBAGE_CERT, goodPair, mismatchedPair, tlsSecretOf, weakChainPair } from "../pki/materials.ts";

const NS = "proxy-e2e";
const CM = "ingress-web-proxy";
const SECRET = "web-tls";

/** The proxy's settings of these tests: its ConfigMap CM, listeners on `bind`. */
function proxySettings(
  kubeconfig: string,
  namespace: string,
  haproxy: string,
  workDir: string,
  bindAddress: string,
  [httpPort, httpsPort, statsPort]: number[],
): ProxySettings {
  return { kubeconfig, namespace, configmap: CM, haproxy, workDir, bindAddress, httpPort, httpsPort, statsPort };
}

function tlsSecret(cert: { certPem: string; keyPem: string }) {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SECRET, namespace: NS },
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa(cert.certPem), "tls.key": btoa(cert.keyPem) },
  };
}

Deno.test("runProxy watches a real ConfigMap and TLS Secret and serves every change through haproxy", async () => {
  const haproxyBinary = await ensureHaproxy();
  await using cp = await startControlPlane();
  const one = await startBackend({ name: "one", host: loopbackAddress() });
  const two = await startBackend({ name: "two", host: loopbackAddress() });
  const apiBackend = await startBackend({ name: "api", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-cmd-" });
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  try {
    // Objects, and a user who may only read those two objects.
    await api(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
    const cert = await testCertificate("web.test");
    await api(cp, "POST", `/api/v1/namespaces/${NS}/secrets`, tlsSecret(cert));
    const ep = (b: { address: string; port: number }) => ({ address: b.address, port: b.port });
    const cmData = (config: string) => ({
      "haproxy.cfg": config,
      "crt-list": `${NS}_${SECRET}.pem web.test\n`,
      "secrets.json": JSON.stringify([{ file: `${NS}_${SECRET}.pem`, namespace: NS, name: SECRET }]),
    });
    await api(
      cp,
      "POST",
      `/api/v1/namespaces/${NS}/configmaps`,
      proxyConfigMap(cmData(buildConfig({ backends: [{ name: "web", endpoints: [ep(one)] }], tls: true })), {
        name: CM,
        namespace: NS,
      }),
    );
    const kubeconfig = await proxyReader(cp, NS, { configmap: CM, secrets: [SECRET] });

    const bind = loopbackAddress();
    const [httpPort, httpsPort, statsPort] = freePorts(3, bind);
    const url = `http://${bind}:${httpPort}`;
    const results: ApplyResult[] = [];
    const leftOut: string[] = [];
    const problems: string[] = [];
    let haproxy: HAProxy | null = null;
    running = runProxy(
      proxySettings(kubeconfig, NS, haproxyBinary, workDir, bind, [httpPort, httpsPort, statsPort]),
      stop.signal,
      {
        onApply: (r) => results.push(r),
        onLeftOut: (l) => leftOut.push(...l.map((x) => `${x.ref.namespace}/${x.ref.name}: ${x.reason}`)),
        onProblem: (m) => problems.push(m),
        onReady: (parts) => haproxy = parts.haproxy,
      },
    );
    running.catch(() => {}); // awaited below; keeps an early failure from being unhandled

    // 1. First configuration: HTTP and HTTPS (certificate from the Secret, chosen by SNI).
    await eventually("the first route", async () => (await get(url, "web.test")).name === "one" || undefined);
    await eventually("the first apply result", () => Promise.resolve(results.length > 0 || undefined));
    assert.equal(results[0].kind, "start");
    assert.match(await httpsGet(bind, httpsPort, "web.test", cert.caPem), /"name":"one"/);
    assert.equal((await Deno.stat(join(workDir, "certs", `${NS}_${SECRET}.pem`))).mode! & 0o777, 0o600);
    const pid = await workerPid(haproxy!);

    // 2. Endpoint change: Runtime API, same worker.
    await api(
      cp,
      "PATCH",
      `/api/v1/namespaces/${NS}/configmaps/${CM}`,
      proxyConfigMap(cmData(buildConfig({ backends: [{ name: "web", endpoints: [ep(two)] }], tls: true }))),
      "application/merge-patch+json",
    );
    await eventually("the endpoint change", async () => (await get(url, "web.test")).name === "two" || undefined);
    await eventually("the runtime apply", () => Promise.resolve(results.length > 1 || undefined));
    assert.equal(results.at(-1)?.kind, "runtime");
    assert.equal(await workerPid(haproxy!), pid, "no reload for an endpoint change");

    // 3. Structural change: a new route, through a reload.
    await api(
      cp,
      "PATCH",
      `/api/v1/namespaces/${NS}/configmaps/${CM}`,
      proxyConfigMap(cmData(buildConfig({
        backends: [{ name: "web", endpoints: [ep(two)] }, { name: "api", endpoints: [ep(apiBackend)] }],
        tls: true,
      }))),
      "application/merge-patch+json",
    );
    await eventually("the new route", async () => (await get(url, "api.test")).name === "api" || undefined);
    await eventually("the reload result", () => Promise.resolve(results.length > 2 || undefined));
    assert.equal(results.at(-1)?.kind, "reload");
    const pid2 = await workerPid(haproxy!);
    assert.notEqual(pid2, pid);

    // 4. Certificate rotation in the Secret: reload, the new certificate is served.
    const cert2 = await testCertificate("web.test");
    const appliedBeforeRotation = results.length;
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/secrets/${SECRET}`, tlsSecret(cert2));
    await eventually(
      "the new certificate",
      async () => /"name":"two"/.test(await httpsGet(bind, httpsPort, "web.test", cert2.caPem)) || undefined,
    );
    // The apply result may be reported after the new certificate already serves: wait for it.
    await eventually(
      "the rotation's apply result",
      () => Promise.resolve(results.length > appliedBeforeRotation || undefined),
    );

    // 5. A Secret whose certificate is not PEM is left out (its host gets the stand-in default
    //    certificate) and everything else is applied; then the good Secret comes back.
    const appliedBefore = results.length;
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/secrets/${SECRET}`, {
      ...tlsSecret(cert2),
      data: { "tls.crt": btoa("not a certificate"), "tls.key": btoa(cert2.keyPem) },
    });
    await eventually("the Secret left out", () => Promise.resolve(leftOut.find((m) => /no PEM certificate/.test(m))));
    await eventually("its apply", () => Promise.resolve(results.slice(appliedBefore).find((r) => r.ok)));
    await assert.rejects(httpsGet(bind, httpsPort, "web.test", cert2.caPem), "the stand-in is not web.test's");
    assert.equal((await get(url, "web.test")).name, "two");
    await api(cp, "PUT", `/api/v1/namespaces/${NS}/secrets/${SECRET}`, tlsSecret(cert2));
    await eventually(
      "the certificate back",
      async () => /"name":"two"/.test(await httpsGet(bind, httpsPort, "web.test", cert2.caPem)) || undefined,
    );

    // 6. A configuration the controller did not write (its data no longer matches the digest
    //    annotation) is refused before anything is applied; the last good one keeps serving.
    const beforeEdit = results.length;
    const edited = cmData(buildConfig({ backends: [{ name: "web", endpoints: [ep(one)] }], tls: true }));
    await api(
      cp,
      "PATCH",
      `/api/v1/namespaces/${NS}/configmaps/${CM}`,
      { data: edited },
      "application/merge-patch+json",
    );
    await eventually("the digest refusal", () => Promise.resolve(problems.find((m) => /does not match its/.test(m))));
    assert.equal(results.length, beforeEdit, "nothing applied from an edited ConfigMap");
    assert.equal((await get(url, "web.test")).name, "two", "the last good configuration serves");

    // 7. An invalid configuration is refused; the last good one keeps serving.
    const applied = results.length;
    await api(
      cp,
      "PATCH",
      `/api/v1/namespaces/${NS}/configmaps/${CM}`,
      proxyConfigMap({ ...edited, "haproxy.cfg": "global\n    no-such-directive\n" }),
      "application/merge-patch+json",
    );
    const refused = await eventually("the refusal", () => Promise.resolve(results.slice(applied).find((r) => !r.ok)));
    assert.equal(refused.stage, "check");
    assert.equal((await get(url, "api.test")).name, "api");
    assert.equal((await get(url, "web.test")).name, "two");
    assert.match(await Deno.readTextFile(join(workDir, "haproxy.cfg")), /backend api/);

    // 8. HAProxy dies (SIGKILL of the master) while the ConfigMap holds the refused config:
    //    the proxy restarts it with the last good configuration.
    const oldMaster = haproxy!.pid!;
    Deno.kill(oldMaster, "SIGKILL");
    const restarted = await eventually(
      "the restart",
      () => Promise.resolve(results.find((r, i) => i > applied && r.kind === "start" && r.ok)),
    );
    assert.ok(restarted);
    assert.notEqual(haproxy!.pid, oldMaster);
    await eventually("traffic after the restart", async () => (await get(url, "api.test")).name === "api" || undefined);
    assert.equal((await get(url, "web.test")).name, "two");

    // 9. Stop: runProxy returns and no haproxy process is left.
    stop.abort();
    await running;
    running = null;
    assert.deepEqual(await haproxyProcessesFor(workDir), []);
  } finally {
    stop.abort();
    await running?.catch(() => {});
    await Promise.all([one.close(), two.close(), apiBackend.close()]);
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("runProxy turns an htpasswd Secret into a userlist: missing denies everyone, created and changed reload", async () => {
  const haproxyBinary = await ensureHaproxy();
  await using cp = await startControlPlane();
  const web = await startBackend({ name: "web", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-auth-" });
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  const ns = "proxy-auth";
  const hash = async (pw: string) =>
    new TextDecoder().decode(
      (await new Deno.Command("openssl", { args: ["passwd", "-6", pw], stdout: "piped" }).output()).stdout,
    ).trim();
  const users = (line: string) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "users", namespace: ns },
    type: "Opaque",
    data: { auth: btoa(`${line}\n`) },
  });
  try {
    await api(cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    // the backend `web` asks for the userlist of the Secret, as the renderer writes it
    const config = buildConfig({ backends: [{ name: "web", endpoints: [{ address: web.address, port: web.port }] }] })
      .replace(
        "backend web\n",
        "backend web\n    http-request auth realm 'Staff' unless { http_auth(ul_proxy-auth_users) }\n",
      );
    await api(
      cp,
      "POST",
      `/api/v1/namespaces/${ns}/configmaps`,
      proxyConfigMap({
        "haproxy.cfg": config,
        "secrets.json": JSON.stringify([{ kind: "htpasswd", namespace: ns, name: "users" }]),
      }, { name: CM, namespace: ns }),
    );
    const kubeconfig = await proxyReader(cp, ns, { configmap: CM, secrets: ["users"] });
    const bind = loopbackAddress();
    const [httpPort, httpsPort, statsPort] = freePorts(3, bind);
    const results: ApplyResult[] = [];
    running = runProxy(
      proxySettings(kubeconfig, ns, haproxyBinary, workDir, bind, [httpPort, httpsPort, statsPort]),
      stop.signal,
      { onApply: (r) => results.push(r) },
    );
    running.catch(() => {});
    // curl: fetch does not let a caller set Host
    const status = async (user?: string) => {
      const args = [
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        "Host: web.test",
        ...(user ? ["-u", user] : []),
      ];
      const out = await new Deno.Command("curl", { args: [...args, `http://${bind}:${httpPort}/`], stdout: "piped" })
        .output();
      return Number(new TextDecoder().decode(out.stdout));
    };

    // 1. The Secret does not exist: HAProxy starts anyway, and the route is closed, not open.
    await eventually("the first start", () => Promise.resolve(results.find((r) => r.kind === "start" && r.ok)));
    assert.equal(await status(), 401);
    assert.equal(await status("alice:pw1"), 401);
    assert.equal(await Deno.readTextFile(join(workDir, "userlists.cfg")), "userlist ul_proxy-auth_users\n");
    assert.equal((await Deno.stat(join(workDir, "userlists.cfg"))).mode! & 0o777, 0o600);

    // 2. The Secret is created: its user gets in (a reload), a wrong password does not.
    await api(cp, "POST", `/api/v1/namespaces/${ns}/secrets`, users(`alice:${await hash("pw1")}`));
    await eventually("alice's access", async () => (await status("alice:pw1")) === 200 || undefined);
    assert.equal(await status("alice:pw2"), 401);
    await eventually("the reload result", () => Promise.resolve(results.find((r) => r.kind === "reload" && r.ok)));

    // 3. A new password: the old one stops working.
    await api(cp, "PUT", `/api/v1/namespaces/${ns}/secrets/users`, users(`alice:${await hash("pw2")}`));
    await eventually("the new password", async () => (await status("alice:pw2")) === 200 || undefined);
    assert.equal(await status("alice:pw1"), 401);
    assert.ok(
      !(await Deno.readTextFile(join(workDir, "haproxy.cfg"))).includes("alice"),
      "users stay out of haproxy.cfg",
    );

    stop.abort();
    await running;
    running = null;
  } finally {
    stop.abort();
    await running?.catch(() => {});
    await web.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("runProxy leaves out what one Secret cannot give or HAProxy refuses; the rest applies, a fresh proxy starts ready", async () => {
  const haproxyBinary = await ensureHaproxy();
  await using cp = await startControlPlane();
  const ns = "proxy-left-out";
  const one = await startBackend({ name: "one", host: loopbackAddress() });
  const two = await startBackend({ name: "two", host: loopbackAddress() });
  const backendCa = await createCA({ commonName: "backend CA" });
  const backendLeaf = await issueCertificate(backendCa, {
    commonName: "api.internal",
    dnsNames: ["api.internal"],
    usages: ["serverAuth"],
  });
  const verified = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: backendLeaf.certPem, key: backendLeaf.keyPem, onListen: () => {} },
    () => Response.json({ name: "verified" }),
  );
  const workDirs = [
    await Deno.makeTempDir({ prefix: "ic-proxy-left-out-" }),
    await Deno.makeTempDir({ prefix: "ic-proxy-left-out-" }),
  ];
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  try {
    await api(cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    const good = await goodPair("a.test");
    const put = (body: { metadata: { name: string } }) =>
      api(cp, "PUT", `/api/v1/namespaces/${ns}/secrets/${body.metadata.name}`, body);
    for (
      const body of [
        tlsSecretOf(ns, "a-tls", good),
        tlsSecretOf(ns, "b-tls", await mismatchedPair("b.test")),
        caSecretOf(ns, "b-ca", backendCa.certPem + GARBAGE_CERT),
      ]
    ) await api(cp, "POST", `/api/v1/namespaces/${ns}/secrets`, body);
    /** `a.test` on backend `a` (the endpoint given), `v.test` on a TLS backend verified with b-ca. */
    const cmData = (a: { address: string; port: number }) => ({
      "haproxy.cfg": buildConfig({
        backends: [{ name: "a", endpoints: [{ address: a.address, port: a.port }] }],
        tls: true,
        frontendExtra: ["    use_backend v if { var(txn.host) -m str v.test }"],
      }) +
        "backend v\n" +
        `    server s1 127.0.0.1:${verified.addr.port} ssl verify required ` +
        `ca-file "\${IC_CERT_DIR}/${ns}_b-ca_ca.pem" sni str(api.internal)\n`,
      "crt-list": `${ns}_a-tls.pem a.test\n${ns}_b-tls.pem b.test\n`,
      "secrets.json": JSON.stringify([
        { kind: "ca", file: `${ns}_b-ca_ca.pem`, namespace: ns, name: "b-ca" },
        { kind: "tls", file: `${ns}_a-tls.pem`, namespace: ns, name: "a-tls" },
        { kind: "tls", file: `${ns}_b-tls.pem`, namespace: ns, name: "b-tls" },
      ]),
    });
    await api(
      cp,
      "POST",
      `/api/v1/namespaces/${ns}/configmaps`,
      proxyConfigMap(cmData(one), { name: CM, namespace: ns }),
    );
    const kubeconfig = await proxyReader(cp, ns, { configmap: CM, secrets: ["a-tls", "b-tls", "b-ca"] });

    /** A proxy on its own address and ports, with probes; what it applied and left out. */
    const start = (workDir: string) => {
      const settings = localProxySettings({
        kubeconfig,
        namespace: ns,
        configmap: CM,
        haproxy: haproxyBinary,
        workDir,
      });
      const results: ApplyResult[] = [];
      const leftOut: string[][] = [];
      const run = runProxy(settings, stop.signal, {
        onApply: (r) => results.push(r),
        onLeftOut: (l) => leftOut.push(l.map((x) => `${x.ref.name}: ${x.reason}`)),
      });
      run.catch(() => {});
      running.push(run);
      const url = `http://${settings.bindAddress}:${settings.httpPort}`;
      const ready = async () => {
        const res = await fetch(`http://${settings.bindAddress}:${settings.healthPort}/readyz`);
        await res.body?.cancel();
        return res.status;
      };
      return { settings, results, leftOut, url, ready };
    };

    // 1. A fresh proxy with a mismatched key and a CA bundle of armoured garbage: it starts, is
    //    ready, serves a.test with its certificate; the CA's backend fails closed (503).
    const first = start(workDirs[0]);
    await eventually("the start", () => Promise.resolve(first.results.find((r) => r.kind === "start" && r.ok)));
    assert.equal(await first.ready(), 200);
    assert.equal((await get(first.url, "a.test")).name, "one");
    assert.match(
      await httpsGet(first.settings.bindAddress, first.settings.httpsPort, "a.test", good.ca.certPem),
      /"name":"one"/,
    );
    assert.equal((await get(first.url, "v.test")).status, 503);
    const reasons = first.leftOut.at(-1)!;
    assert.deepEqual(reasons.map((r) => r.split(":")[0]), ["b-ca", "b-tls"]);
    assert.match(reasons[0], /^b-ca: certificate 2 of ca\.crt cannot be parsed/);
    assert.equal(reasons[1], "b-tls: tls.key does not match the certificate (the first one in tls.crt)");
    const crtList = await Deno.readTextFile(join(workDirs[0], "certs", "crt-list"));
    assert.equal(crtList, `${ns}_a-tls.pem a.test\n`);

    // 2. The CA fixed: the backend is verified and reached.
    await put(caSecretOf(ns, "b-ca", backendCa.certPem));
    await eventually(
      "the verified backend",
      async () => (await get(first.url, "v.test")).name === "verified" || undefined,
    );

    // 3. b-tls becomes a chain the controller's check passes but HAProxy refuses (a 192-bit CA in
    //    it), and a.test moves to another endpoint at once: the move is applied, b-tls left out.
    const weak = await weakChainPair("b.test");
    assert.equal(tlsPairProblem(weak.crt, weak.key), null);
    await put(tlsSecretOf(ns, "b-tls", weak));
    await api(
      cp,
      "PATCH",
      `/api/v1/namespaces/${ns}/configmaps/${CM}`,
      proxyConfigMap(cmData(two)),
      "application/merge-patch+json",
    );
    await eventually("a.test moved", async () => (await get(first.url, "a.test")).name === "two" || undefined);
    await eventually(
      "b-tls refused by HAProxy",
      () =>
        Promise.resolve(
          first.leftOut.at(-1)?.find((r) => /^b-tls: HAProxy refuses its file: unable to load chain/.test(r)),
        ),
    );
    assert.equal(await first.ready(), 200);

    // 4. A fresh proxy for the same configuration (a new pod): it becomes ready and serves.
    const second = start(workDirs[1]);
    await eventually("the second start", () => Promise.resolve(second.results.find((r) => r.kind === "start" && r.ok)));
    assert.equal(await second.ready(), 200);
    assert.equal((await get(second.url, "a.test")).name, "two");
    assert.equal((await get(second.url, "v.test")).name, "verified");
    assert.ok(second.leftOut.at(-1)!.some((r) => /^b-tls: HAProxy refuses its file/.test(r)));
  } finally {
    stop.abort();
    await Promise.all(running.map((r) => r.catch(() => {})));
    await Promise.all([one.close(), two.close(), verified.shutdown()]);
    for (const dir of workDirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
