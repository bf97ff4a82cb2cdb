/**
 * The proxy's readiness (`--health-port`, `/readyz`) on the real `runProxy` path, against a real
 * kube-apiserver and a real HAProxy: not ready before any configuration runs, not ready while a
 * configuration that passed `haproxy -c` cannot start or reload (its port is taken), ready once
 * HAProxy runs it, still ready when a configuration is refused (the last good one serves). Each
 * failing reason is logged. Every wait is on an event (an apply result or a log line).
 */
import assert from "node:assert/strict";
import { SetupError } from "../../lib/common/errors.ts";
import { type Fields, type Level, log, textSink } from "../../lib/log/logger.ts";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import { buildConfig, get, loopbackAddress, proxyConfigMap } from "./fixtures.ts";

const NS = "proxy-ready";
const CM = "ready-proxy";

/** Items as they happen; `when` resolves with the first (past or future) item matching. */
class Feed<T> {
  readonly items: T[] = [];
  #waiters: { match: (t: T) => boolean; resolve: (t: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => !(w.match(item) && (w.resolve(item), true)));
  }

  /** From item `from` on. A fail-safe (not a speed assertion) turns a hang into a failure. */
  when(what: string, match: (t: T) => boolean, from = 0): Promise<T> {
    const found = this.items.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} did not happen within 60 s`)), 60_000);
      this.#waiters.push({ match, resolve: (t) => (clearTimeout(timer), resolve(t)) });
    });
  }
}

interface Entry {
  level: Level;
  msg: string;
  fields: Fields;
}

Deno.test("proxy readiness: /readyz passes only while haproxy runs the configuration last accepted", async () => {
  const haproxyBinary = await ensureHaproxy();
  await using cp = await startControlPlane();
  const backend = await startBackend({ name: "web", host: loopbackAddress() });
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-ready-" });
  const bind = loopbackAddress();
  const [httpPort, httpsPort, statsPort, healthPort, extraPort] = freePorts(5, bind);
  // Sockets without SO_REUSEPORT: HAProxy cannot bind these ports while they are open.
  let blockHttp: Deno.Listener | null = Deno.listen({ hostname: bind, port: httpPort });
  let blockExtra: Deno.Listener | null = null;
  const logs = new Feed<Entry>();
  const text = textSink();
  log.configure({
    sink: {
      write: (level, msg, fields, stack) => {
        logs.push({ level, msg, fields });
        text.write(level, msg, fields, stack);
      },
    },
  });
  const applies = new Feed<ApplyResult>();
  const stop = new AbortController();
  let running: Promise<void> | null = null;
  const readyz = async () => {
    const res = await fetch(`http://${bind}:${healthPort}/readyz?verbose`);
    return { status: res.status, body: await res.text() };
  };
  const failedFor = (reason: RegExp, from: number) =>
    logs.when(
      `a logged readiness failure matching ${reason}`,
      (e) =>
        e.msg === "health check failed" && e.fields.check === "serving-config" && reason.test(String(e.fields.reason)),
      from,
    );
  const admin = async (method: string, path: string, body: unknown, type = "application/json") => {
    const res = await cp.adminFetch(path, { method, headers: { "content-type": type }, body: JSON.stringify(body) });
    const answer = await res.text();
    assert.ok(res.ok, `${method} ${path}: ${res.status} ${answer}`);
  };
  const setConfig = (config: string, method = "PATCH") =>
    method === "POST"
      ? admin(
        "POST",
        `/api/v1/namespaces/${NS}/configmaps`,
        proxyConfigMap({ "haproxy.cfg": config, "crt-list": "", "secrets.json": "[]" }, { name: CM, namespace: NS }),
      )
      : admin(
        "PATCH",
        `/api/v1/namespaces/${NS}/configmaps/${CM}`,
        proxyConfigMap({ "haproxy.cfg": config, "crt-list": "", "secrets.json": "[]" }),
        "application/merge-patch+json",
      );
  const web = { name: "web", endpoints: [{ address: backend.address, port: backend.port }] };
  try {
    await admin("POST", "/api/v1/namespaces", { metadata: { name: NS } });
    running = runProxy(
      {
        kubeconfig: cp.adminKubeConfigPath,
        namespace: NS,
        configmap: CM,
        haproxy: haproxyBinary,
        workDir,
        bindAddress: bind,
        httpPort,
        httpsPort,
        statsPort,
        healthPort,
      },
      stop.signal,
      { onApply: (r) => applies.push(r) },
    );
    running.catch(() => {}); // awaited below; keeps an early failure from being unhandled

    // 1. No ConfigMap yet: not ready, and the log says what the proxy waits for.
    await logs.when("the probe endpoint", (e) => e.msg === "serving the proxy's probes");
    let mark = logs.items.length;
    const waiting = await readyz();
    assert.equal(waiting.status, 500, waiting.body);
    assert.match(
      waiting.body,
      /^\[\+\]ping ok\n\[-\]serving-config failed: reason withheld\n\[\+\]shutdown ok\n\[\+\]haproxy-master ok\nreadyz check failed\n$/,
    );
    await failedFor(new RegExp(`^no configuration applied yet: waiting for the ConfigMap ${NS}/${CM}$`), mark);
    assert.equal(await fetch(`http://${bind}:${healthPort}/livez`).then((r) => r.text()), "ok");

    // 2. A valid configuration whose port is taken: accepted (haproxy -c passes) but not running.
    await setConfig(buildConfig({ backends: [web] }), "POST");
    const failedStart = await applies.when("the failed start", (r) => !r.ok);
    assert.equal(failedStart.stage, "start", String(failedStart.error));
    mark = logs.items.length;
    assert.equal((await readyz()).status, 500);
    await failedFor(/the accepted configuration is not running: start failed: .*[Aa]ddress already in use/, mark);

    // 3. The port is freed: the retry starts HAProxy, and only now the proxy is ready.
    blockHttp.close();
    blockHttp = null;
    await applies.when("the start", (r) => r.ok && r.kind === "start");
    const ready = await readyz();
    assert.equal(ready.status, 200, ready.body);
    assert.match(
      ready.body,
      /\[\+\]serving-config ok\n\[\+\]shutdown ok\n\[\+\]haproxy-master ok\nreadyz check passed/,
    );
    assert.equal((await get(`http://${bind}:${httpPort}`, "web.test")).name, "web");

    // 4. A configuration haproxy -c refuses was never accepted: the last good one serves, still ready.
    let from = applies.items.length;
    await setConfig("global\n    no-such-directive\n");
    assert.equal((await applies.when("the refusal", (r) => !r.ok, from)).stage, "check");
    assert.equal((await readyz()).status, 200);

    // 5. An accepted change whose reload fails (a new bind on a taken port): the old workers keep
    //    serving, but HAProxy does not run what was accepted, so the proxy is not ready ...
    blockExtra = Deno.listen({ hostname: bind, port: extraPort });
    from = applies.items.length;
    await setConfig(buildConfig({ backends: [web], frontendExtra: [`    bind "\${IC_BIND_ADDR}:${extraPort}"`] }));
    const failedReload = await applies.when("the failed reload", (r) => !r.ok, from);
    assert.equal(failedReload.stage, "reload", String(failedReload.error));
    mark = logs.items.length;
    assert.equal((await readyz()).status, 500);
    await failedFor(/^the accepted configuration is not running: reload failed: /, mark);
    assert.equal((await get(`http://${bind}:${httpPort}`, "web.test")).name, "web", "the old workers serve");

    // 6. ... until the retried reload succeeds.
    blockExtra.close();
    blockExtra = null;
    await applies.when("the reload", (r) => r.ok && r.kind === "reload", from);
    assert.equal((await readyz()).status, 200);
    await logs.when("the recovery log", (e) => e.msg === "health check passes again", mark);

    // 7. Stop: the endpoint closes with the proxy.
    stop.abort();
    await running;
    running = null;
    // A new connection, not fetch's: a kept-alive one closed by the stopping server fails otherwise.
    await assert.rejects(Deno.connect({ hostname: bind, port: healthPort }), Deno.errors.ConnectionRefused);
  } finally {
    stop.abort();
    await running?.catch(() => {});
    blockHttp?.close();
    blockExtra?.close();
    log.configure({ sink: textSink() });
    await backend.close();
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  }
});

Deno.test("proxy readiness: --health-port must be a port of its own", async () => {
  const settings = {
    kubeconfig: "",
    namespace: NS,
    configmap: CM,
    haproxy: "haproxy",
    workDir: "/tmp/ic-unused",
    bindAddress: "127.0.0.1",
    httpPort: 8080,
    httpsPort: 8443,
    statsPort: 56789,
  };
  await assert.rejects(
    runProxy({ ...settings, healthPort: 56789 }, AbortSignal.abort()),
    (err: Error) =>
      err instanceof SetupError && err.message === "--health-port: 56789 is already --stats-port; give another port",
  );
  await assert.rejects(
    runProxy({ ...settings, healthPort: 70000 }, AbortSignal.abort()),
    (err: Error) => err instanceof SetupError && /^--health-port: 70000 is not a TCP port/.test(err.message),
  );
});
