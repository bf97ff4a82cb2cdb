import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRun } from "../../lib/app/run.ts";
import { SetupError } from "../../lib/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";

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
            seen.push(ctx.kubeConfig.getCurrentCluster()!.server);
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
