import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clientNodeSettled, loadKubeConfig } from "../../../lib/dev/localenv/client_node.ts";
import { processExists } from "../../../lib/dev/localenv/process.ts";

const mainTs = fileURLToPath(new URL("../../../lib/dev/localenv/main.ts", import.meta.url));

interface Started {
  child: Deno.ChildProcess;
  stdin: WritableStreamDefaultWriter<Uint8Array>;
  pids: number[];
  dir: string;
  kubeconfig: string;
  output: () => string;
  drained: Promise<void>;
}

/** Runs `deno task testenv`'s entry and reads its stdout until it says it is ready. */
async function startMain(kubeconfigOut: string): Promise<Started> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", mainTs],
    // With a piped stdin main.ts also ends when this process dies (the pipe closes).
    env: { KUBECONFIG_OUT: kubeconfigOut, TESTENV_EXIT_ON_STDIN_EOF: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  let ready: (v: void) => void;
  const readyP = new Promise<void>((r) => ready = r);
  const dec = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) {
      text += dec.decode(chunk);
      if (text.includes("Ctrl-C stops it.")) ready();
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).then(() => ready());
  await readyP;
  const m = text.match(/etcd pid (\d+), kube-apiserver pid (\d+), files in (\S+)/);
  assert.ok(m, `no pids in the output:\n${text}`);
  return {
    child,
    stdin: child.stdin.getWriter(),
    pids: [Number(m[1]), Number(m[2])],
    dir: m[3],
    kubeconfig: kubeconfigOut,
    output: () => text,
    drained,
  };
}

async function waitGone(pids: number[]) {
  for (let i = 0; i < 100 && pids.some(processExists); i++) await new Promise((r) => setTimeout(r, 100));
}

async function readDefaultNamespace(kubeconfig: string): Promise<string | undefined> {
  const kc = loadKubeConfig(kubeconfig); // HTTP/1.1: see client_node.ts
  const ns = await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: "default" });
  return ns.metadata?.name;
}

Deno.test("deno task testenv writes $KUBECONFIG_OUT once ready and SIGINT tears everything down", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "ic-testenv-main-" });
  try {
    const s = await startMain(join(tmp, "admin.kubeconfig"));
    try {
      assert.equal(await readDefaultNamespace(s.kubeconfig), "default");
      assert.ok(s.pids.every(processExists));
    } finally {
      s.child.kill("SIGINT");
      const status = await s.child.status;
      await s.stdin.close().catch(() => {});
      await s.drained;
      assert.equal(status.success, false);
      assert.match(s.output(), /SIGINT: stopping/);
    }
    await waitGone(s.pids);
    assert.deepEqual(s.pids.filter(processExists), []);
    await assert.rejects(Deno.stat(s.dir), Deno.errors.NotFound);
    await clientNodeSettled(); // the API server is gone: its connections are closed
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("deno task testenv stops cleanly when its stdin closes (its test runner died)", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "ic-testenv-main-" });
  try {
    const s = await startMain(join(tmp, "admin.kubeconfig"));
    await s.stdin.close();
    const status = await s.child.status;
    await s.drained;
    assert.equal(status.code, 0, s.output());
    await waitGone(s.pids);
    assert.deepEqual(s.pids.filter(processExists), []);
    await assert.rejects(Deno.stat(s.dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("when the Deno process is killed outright, the reapers kill etcd and kube-apiserver and remove the files", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "ic-testenv-main-" });
  try {
    const s = await startMain(join(tmp, "admin.kubeconfig"));
    s.child.kill("SIGKILL");
    await s.child.status;
    await s.stdin.close().catch(() => {});
    await s.drained;
    await waitGone(s.pids);
    assert.deepEqual(s.pids.filter(processExists), []);
    // The etcd reaper also removes the temporary directory.
    for (let i = 0; i < 50; i++) {
      if (!(await Deno.stat(s.dir).then(() => true, () => false))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await assert.rejects(Deno.stat(s.dir), Deno.errors.NotFound);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
