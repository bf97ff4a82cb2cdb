/**
 * @module lib/dev/conformance/suite
 * Runs the suite's test binary inside the cluster's network namespace (so the Gateways' cluster
 * addresses answer it), its output in a log file; meanwhile each test that passed or failed and the
 * setup's steps are printed as one line each (skipped tests only in the summary), and during a long wait its latest line once a minute. The process dies with this one (process.ts).
 */
import { spawnProcess } from "../localenv/process.ts";
import type { Cluster } from "../localnode/mod.ts";

/** Lines of the `-test.v` log worth showing while the suite runs. */
const shown = [
  /^\s*--- (PASS|FAIL): TestConformance(\/[^/\s]+)? \(/,
  /^\s*suite\.go:\d+: (\S+Z: )?(Test Setup|Running|Sleeping)/,
  /^\s*(FAIL|PASS|ok)\s*$/,
  /^panic:/,
];

export interface SuiteRun {
  code: number;
  seconds: number;
}

/**
 * Runs `binary args…` with `KUBECONFIG` in the cluster's network namespace, appending its output to
 * `logPath`; `say` gets the lines worth showing. Resolves with its exit code.
 */
export async function runSuite(
  cluster: Pick<Cluster, "enter">,
  binary: string,
  args: string[],
  opts: { kubeconfig: string; logPath: string; cwd: string; say: (line: string) => void },
): Promise<SuiteRun> {
  const t0 = performance.now();
  const [cmd, ...enterArgs] = cluster.enter;
  await Deno.writeTextFile(opts.logPath, `# ${binary} ${args.join(" ")}\n`);
  const proc = await spawnProcess({
    name: "conformance.test",
    command: cmd,
    args: [...enterArgs, binary, ...args],
    logPath: opts.logPath,
    cwd: opts.cwd,
    env: { KUBECONFIG: opts.kubeconfig },
  });
  let offset = 0;
  let partial = "";
  let last = "";
  let quietSince = performance.now();
  const follow = async () => {
    const file = await Deno.open(opts.logPath, { read: true });
    try {
      await file.seek(offset, Deno.SeekMode.Start);
      const chunk = new Uint8Array(1 << 16);
      for (;;) {
        const n = await file.read(chunk);
        if (n === null || n === 0) break;
        offset += n;
        partial += new TextDecoder().decode(chunk.subarray(0, n), { stream: true });
      }
    } finally {
      file.close();
    }
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim()) last = line.trim();
      if (shown.some((r) => r.test(line))) {
        opts.say(`  ${line.trim()}`);
        quietSince = performance.now();
      }
    }
    // A long wait (a setup wait, a test's retries): its latest line once a minute.
    if (performance.now() - quietSince > 60_000 && last) {
      const secs = ((performance.now() - t0) / 1000).toFixed(0);
      opts.say(`  [${secs} s] ${last.length > 220 ? last.slice(0, 220) + "…" : last}`);
      quietSince = performance.now();
    }
  };
  let done = false;
  const exited = proc.exited.then((s) => {
    done = true;
    return s;
  });
  while (!done) {
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
    await follow();
  }
  const status = await exited;
  if (partial) opts.say(`  ${partial.trim()}`);
  return { code: status.code, seconds: (performance.now() - t0) / 1000 };
}
