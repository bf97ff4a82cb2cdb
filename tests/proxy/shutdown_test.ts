/**
 * The graceful shutdown of the real `ingress-controller proxy` command (main.ts run as a process,
 * against a real kube-apiserver and a real HAProxy): on SIGTERM `/readyz` fails at once while
 * `/livez` passes and new requests are still served (the drain); a second SIGTERM ends the drain;
 * HAProxy soft-stops (its listener closes) while a slow request is in flight, and that request
 * completes; the process exits 0 and leaves no haproxy behind. Every wait is on an event (a log
 * line of the process, the backend seeing a request, a refused connection).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startControlPlane } from "../../lib/dev/localenv/control_plane.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { freePorts } from "../../lib/dev/localenv/ports.ts";
import { buildConfig, get, haproxyProcessesFor, loopbackAddress, proxyConfigMap } from "./fixtures.ts";

const NS = "proxy-shutdown";
const CM = "shutdown-proxy";
const main = new URL("../../main.ts", import.meta.url).pathname;

/** Lines of a stream as they come; `when` resolves with the first (past or future) line matching. */
class Lines {
  readonly lines: string[] = [];
  #waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      let rest = "";
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
        const parts = (rest + chunk).split("\n");
        rest = parts.pop()!;
        for (const line of parts) this.#push(line);
      }
      if (rest) this.#push(rest);
    })();
  }

  #push(line: string): void {
    this.lines.push(line);
    this.#waiters = this.#waiters.filter((w) => !(w.re.test(line) && (w.resolve(line), true)));
  }

  /** A fail-safe (not a speed assertion) turns a hang into a failure naming the line. */
  when(re: RegExp): Promise<string> {
    const found = this.lines.find((l) => re.test(l));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no log line ${re} within 60 s; the log:\n${this.lines.slice(-30).join("\n")}`)),
        60_000,
      );
      this.#waiters.push({ re, resolve: (l) => (clearTimeout(timer), resolve(l)) });
    });
  }
}

/** Resolves once a TCP connection to host:port is refused (the listener is closed). */
async function refused(hostname: string, port: number): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    try {
      const conn = await Deno.connect({ hostname, port });
      conn.close();
    } catch (err) {
      if (err instanceof Deno.errors.ConnectionRefused) return;
      throw err;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${hostname}:${port} still accepts connections`);
}

Deno.test("proxy command: SIGTERM drains (not ready, still serving), then soft-stops HAProxy and exits 0", async () => {
  const haproxy = await ensureHaproxy();
  await using cp = await startControlPlane();
  const bind = loopbackAddress();
  const [httpPort, httpsPort, statsPort, healthPort] = freePorts(4, bind);
  const workDir = await Deno.makeTempDir({ prefix: "ic-proxy-shutdown-" });

  // A backend whose /slow answers only when the test says so.
  let slowArrived!: () => void;
  const arrived = new Promise<void>((r) => slowArrived = r);
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const backend = Deno.serve({ hostname: bind, port: 0, onListen: () => {} }, async (req) => {
    if (new URL(req.url).pathname === "/slow") {
      slowArrived();
      await released;
      return Response.json({ name: "slow" });
    }
    return Response.json({ name: "web" });
  });

  const admin = async (path: string, body: unknown) => {
    const res = await cp.adminFetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.ok(res.ok, `POST ${path}: ${res.status} ${await res.text()}`);
  };
  await admin("/api/v1/namespaces", { metadata: { name: NS } });
  await admin(
    `/api/v1/namespaces/${NS}/configmaps`,
    proxyConfigMap({
      "haproxy.cfg": buildConfig({
        backends: [{ name: "web", endpoints: [{ address: bind, port: backend.addr.port }] }],
      }),
      "crt-list": "",
      "secrets.json": "[]",
    }, { name: CM, namespace: NS }),
  );

  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      main,
      "proxy",
      `--kubeconfig=${cp.adminKubeConfigPath}`,
      `--namespace=${NS}`,
      `--configmap=${CM}`,
      `--haproxy=${haproxy}`,
      `--work-dir=${workDir}`,
      `--bind-address=${bind}`,
      `--http-port=${httpPort}`,
      `--https-port=${httpsPort}`,
      `--stats-port=${statsPort}`,
      `--health-port=${healthPort}`,
      // Long enough never to end by itself here: the second SIGTERM ends it.
      "--shutdown-drain=10m",
      "--shutdown-timeout=5m",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = new Lines(child.stderr);
  const url = `http://${bind}:${httpPort}`;
  const probe = async (path: string) => {
    const res = await fetch(`http://${bind}:${healthPort}${path}?verbose`);
    return { status: res.status, body: await res.text() };
  };
  let slow: Promise<Awaited<ReturnType<typeof get>>> | null = null;
  try {
    await log.when(/INFO haproxy started/);
    // Ready once HAProxy serves the ConfigMap's configuration (the apply returns just after the start).
    for (let i = 0; (await probe("/readyz")).status !== 200; i++) {
      if (i === 500) throw new Error("the proxy never became ready");
      await new Promise((r) => setTimeout(r, 20));
    }
    const first = await get(url, "web.test");
    assert.equal(
      first.name,
      "web",
      `the first request: ${first.status} ${first.body}\n${log.lines.slice(-20).join("\n")}`,
    );

    slow = get(`${url}/slow`, "web.test");
    slow.catch(() => {}); // awaited below
    await arrived;

    // 1. SIGTERM: not ready at once, alive, and still serving new connections.
    child.kill("SIGTERM");
    await log.when(/proxy draining: not ready, still serving/);
    const readyz = await probe("/readyz");
    assert.equal(readyz.status, 500, readyz.body);
    assert.match(readyz.body, /\[-\]shutdown failed/);
    assert.match(readyz.body, /\[\+\]serving-config ok/);
    const livez = await probe("/livez");
    assert.equal(livez.status, 200, livez.body);
    assert.match(livez.body, /\[\+\]haproxy-master ok/);
    for (let i = 0; i < 20; i++) {
      const a = await get(url, "web.test");
      assert.equal(a.status, 200, `request ${i} during the drain: ${a.body}`);
      assert.equal(a.name, "web");
    }

    // 2. A second SIGTERM ends the drain: HAProxy soft-stops, its listener closes, ...
    child.kill("SIGTERM");
    await log.when(/soft-stopping haproxy/);
    await refused(bind, httpPort);
    // ... and the request in flight since before the first SIGTERM still completes.
    release();
    const answer = await slow;
    slow = null;
    assert.equal(answer.status, 200, answer.body);
    assert.equal(answer.name, "slow");

    // 3. The process exits 0 once HAProxy is gone, and leaves no haproxy behind.
    const status = await child.status;
    assert.equal(status.code, 0, log.lines.slice(-20).join("\n"));
    await log.done;
    assert.ok(log.lines.some((l) => /INFO haproxy stopped/.test(l)), "haproxy stopped");
    assert.deepEqual(await haproxyProcessesFor(workDir), []);
  } finally {
    release();
    await slow?.catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch {
      // exited
    }
    await child.status;
    await log.done.catch(() => {});
    await backend.shutdown();
    await Deno.remove(join(workDir), { recursive: true }).catch(() => {});
  }
});
