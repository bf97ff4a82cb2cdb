import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRun } from "../../lib/app/run.ts";
import { SetupError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { freePort, startControlPlane } from "../../lib/dev/localenv/mod.ts";
import { request } from "../serving/helpers.ts";
import { collect, spawnRun } from "./spawn.ts";

const main = new URL("../../main.ts", import.meta.url).pathname;

Deno.test("run without --kubeconfig outside a cluster fails at once with one line (spawned)", async () => {
  const env = { ...Deno.env.toObject() };
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.KUBERNETES_SERVICE_PORT;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", main, "run"],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, err);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  assert.equal(err.trimEnd().split("\n").length, 1, err);
  assert.match(err, /^error: no cluster configuration: .*--kubeconfig/);
});

Deno.test("startRun with an unusable kubeconfig file fails with a SetupError naming it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "app-run-"));
  try {
    const path = join(dir, "kubeconfig");
    writeFileSync(path, "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n");
    const config = parseRunFlags("A", [`--kubeconfig=${path}`]);
    await assert.rejects(() => startRun(config), (err: Error) => {
      assert.ok(err instanceof SetupError, String(err));
      assert.match(err.message, /--kubeconfig/);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("startRun with a kubeconfig runs the given parts until they stop, and stops all when one fails", async () => {
  const dir = mkdtempSync(join(tmpdir(), "app-run-"));
  try {
    const path = join(dir, "kubeconfig");
    writeFileSync(
      path,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    );
    const config = parseRunFlags("A", [`--kubeconfig=${path}`]);
    const seen: string[] = [];
    await assert.rejects(
      () =>
        startRun(config, undefined, [
          async (ctx) => {
            seen.push(ctx.kubeConfig.server);
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
            seen.push("stopped");
          },
          () => Promise.reject(new Error("part failed")),
        ]),
      /part failed/,
    );
    assert.deepEqual(seen, ["https://127.0.0.1:6443", "stopped"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test({
  name: "run: /readyz is 500 until the informers synced, with the reason logged, and 200 once RBAC allows the lists",
  fn: async () => {
    await using cp = await startControlPlane();
    const dir = mkdtempSync(join(tmpdir(), "app-run-ready-"));
    // A user the API server knows but RBAC does not yet allow to list anything.
    const kubeconfig = await cp.kubeConfig("ctl-user");
    const port = freePort();
    const child = spawnRun([
      `--kubeconfig=${kubeconfig}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      `--cert-dir=${join(dir, "certs")}`,
      `--authentication-kubeconfig=${cp.adminKubeConfigPath}`,
      `--authorization-kubeconfig=${cp.adminKubeConfigPath}`,
      "--authorization-always-allow-paths=/healthz,/readyz,/livez",
      "--enable-analytics=false",
    ]);
    const stderr = collect(child.stderr);
    // Fail-safe: a run that does not stop on SIGTERM is killed and the test fails on its exit status.
    const failSafe = setTimeout(() => child.kill("SIGKILL"), 120_000);
    try {
      // The secure port answers once it listens; until then the connection is refused.
      await stderr.waitFor(/INFO serving /);
      const first = await request({ port, path: "/readyz?verbose" });
      assert.equal(first.status, 500, first.body);
      assert.match(first.body, /^\[\+\]ping ok\n\[-\]informers-synced failed: reason withheld\nreadyz check failed\n$/);
      assert.equal((await request({ port, path: "/livez" })).status, 200, "not ready is not dead");
      // The reason is in the log: which informers are missing and the API server's refusal.
      const logged = await stderr.waitFor(/WARN health check failed check="informers-synced"/);
      assert.match(logged, /reason="informers not synced yet: ingresses, .*forbidden: User \\"ctl-user\\" cannot list/);

      // Grant what the controller reads; the informers retry with backoff and then list.
      const rules = [
        {
          apiGroups: ["networking.k8s.io"],
          resources: ["ingresses", "ingressclasses"],
          verbs: ["get", "list", "watch"],
        },
        { apiGroups: [""], resources: ["services", "secrets", "configmaps"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: ["get", "list", "watch"] },
      ];
      for (
        const [path, body] of [
          ["/apis/rbac.authorization.k8s.io/v1/clusterroles", { metadata: { name: "ctl-reader" }, rules }],
          ["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            metadata: { name: "ctl-reader" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ctl-reader" },
            subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "ctl-user" }],
          }],
        ] as const
      ) {
        const res = await cp.adminFetch(path, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        assert.equal(res.status, 201, await res.text());
      }
      await stderr.waitFor(/INFO controller caches synced/);
      const ready = await request({ port, path: "/readyz?verbose" });
      assert.equal(ready.status, 200, ready.body);
      assert.match(ready.body, /\[\+\]informers-synced ok\nreadyz check passed/);
      // The next probe ran the check again and logged the recovery.
      await stderr.waitFor(/INFO health check passes again check="informers-synced"/);

      child.kill("SIGTERM");
      const status = await child.status;
      await stderr.done;
      assert.equal(status.code, 0, stderr.text);
    } finally {
      clearTimeout(failSafe);
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await child.status;
      await stderr.done.catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
