/**
 * `deno task demo` as a newcomer runs it (lib/demo/main.ts as a process of its own): it serves the
 * sample host, and Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stops it in
 * order: the controller releases its Lease while the API server still runs, no part logs a warning
 * or an error on the way, the command exits 0, and no process or directory of it is left.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { httpGet } from "../../lib/localenv/harness.ts";

/** Pids whose command line holds `text` (this test's own processes excluded by the caller's choice of text). */
async function pidsWith(text: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${e.name}/cmdline`)).includes(text)) out.push(Number(e.name));
    } catch {
      // gone
    }
  }
  return out;
}

Deno.test("demo: serves the sample host; Ctrl-C stops it in order, the Lease released, nothing left", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ic-demo-test-" });
  const infoPath = join(dir, "info.json");
  // `setsid`: a process group of its own, so the test can send SIGINT to all of it as a terminal does.
  const proc = new Deno.Command("setsid", {
    args: [Deno.execPath(), "run", "-A", new URL("../../lib/demo/main.ts", import.meta.url).pathname],
    env: { DEMO_INFO_OUT: infoPath },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let output = "";
  const collect = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) output += decoder.decode(chunk, { stream: true });
  };
  const collecting = Promise.all([collect(proc.stdout), collect(proc.stderr)]);
  let demoDir = "";
  try {
    const deadline = Date.now() + 180_000;
    let info: { url: string; host: string } | null = null;
    while (!info && Date.now() < deadline) {
      try {
        info = JSON.parse(await Deno.readTextFile(infoPath));
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    assert.ok(info, `the demo did not start within 180 s:\n${output.slice(-3000)}`);
    demoDir = output.match(/generated haproxy config: (\S+)\/proxy\/haproxy\.cfg/)?.[1] ?? "";
    assert.ok(demoDir, "the demo prints the generated config's path");
    assert.equal((await httpGet(Number(new URL(info.url).port), info.host, "/")).status, 200);

    Deno.kill(-proc.pid, "SIGINT");
    const status = await proc.status;
    await collecting;
    assert.equal(status.code, 0, output.slice(-3000));
    assert.match(output, /leader election: released the Lease/);
    assert.match(output, /demo: stopped, everything cleaned up\./);
    const bad = output.split("\n").filter((l) => / (WARN|ERROR) /.test(l) || l.includes("[ALERT]"));
    assert.deepEqual(bad, [], "no part warns or fails while stopping");
    assert.deepEqual(await pidsWith(demoDir), [], "no process of the demo is left");
    await assert.rejects(Deno.stat(demoDir), Deno.errors.NotFound);
  } finally {
    try {
      Deno.kill(-proc.pid, "SIGKILL");
    } catch { /* already gone */ }
    await proc.status;
    await collecting.catch(() => {});
    await Deno.remove(dir, { recursive: true });
  }
});
