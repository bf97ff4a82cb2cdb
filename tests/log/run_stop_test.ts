import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnRun } from "../app/spawn.ts";

const messages = (text: string) => text.split("\n").filter(Boolean).map((l) => l.replace(/^\S+ /, ""));

Deno.test("`run` stopped by SIGTERM leaves every buffered line in the log file (spawned main.ts)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "log-run-"));
  const kubeconfig = join(dir, "kubeconfig");
  // An API server address nothing listens on: the controller starts, retries, and logs while it does.
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  const child = spawnRun([
    `--kubeconfig=${kubeconfig}`,
    "--secure-port=0",
    `--log_dir=${dir}`,
    "--logtostderr=false",
    "--stderrthreshold=INFO", // every line on stderr too, unbuffered: what the file must hold
    "--log-flush-frequency=1h", // nothing is flushed by the timer during the test
  ]);
  // Fail-safe: a run that does not stop on SIGTERM is killed and the test fails on its exit status.
  const failSafe = setTimeout(() => child.kill("SIGKILL"), 60_000);
  let stderr = "";
  let signalled = false;
  try {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderr += chunk;
      if (!signalled && stderr.includes("INFO controller started")) {
        signalled = true;
        child.kill("SIGTERM");
      }
    }
    const status = await child.status;
    assert.ok(signalled, stderr);
    assert.equal(status.signal, null, stderr);
    assert.equal(status.code, 0, stderr);
    const written = messages(readFileSync(join(dir, "ingress-controller.log"), "utf-8"));
    assert.deepEqual(written, messages(stderr));
    assert.equal(written.at(-1), "INFO controller stopped");
  } finally {
    clearTimeout(failSafe);
    rmSync(dir, { recursive: true, force: true });
  }
});
