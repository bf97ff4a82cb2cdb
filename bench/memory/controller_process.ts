/**
 * @module bench/memory/controller_process
 * Runs the controller alone in this process for the RSS figures of convergence_bench.ts and
 * scale_bench.ts: `controller_process.ts <kubeconfig> [settings JSON]` (the JSON overrides the
 * settings below, e.g. an operator namespace and validation on); prints one JSON line `{"rssBytes", "ingresses", …}` on
 * stdout each time its queue is idle after a line arrives on stdin, after a GC, the controller's next
 * C-heap trim and V8's memory reducer (`idle` answers at once with its counters, `profile-start`/`profile-stop` take a CPU
 * profile instead, `heap-snapshot <file>` writes a V8 heap snapshot after a GC), and exits on EOF.
 */
import { startController } from "../../lib/controller/controller.ts";
import { log } from "../../lib/log/logger.ts";
import type { Session } from "node:inspector/promises";
import { mallinfo2 } from "./mallinfo.ts";

log.configure({
  level: (Deno.env.get("BENCH_LOG") ?? "warn") as "warn",
  verbosity: Number(Deno.env.get("BENCH_V") ?? 0),
});
const kubeconfig = Deno.args[0];
const overrides = Deno.args[1] ? JSON.parse(Deno.args[1]) : {};
// BENCH_PROFILE_FIRST=<file>: a CPU profile from the start until the first command (the first sync),
// written to <file> (Chrome's DevTools read it) with its top functions on stderr.
const firstProfile = Deno.env.get("BENCH_PROFILE_FIRST");
/**
 * The inspector session, made when a profile or snapshot is asked for: made at the start, it held
 * about 4 MB of the figures' RSS (the inspector's code and state), which the controller itself never
 * has unless `/debug/pprof` is asked for a profile.
 */
let session: Session | null = null;
async function inspector(): Promise<Session> {
  const { Session } = await import("node:inspector/promises");
  return session ??= new Session();
}
const profiler = {
  connect: async () => (await inspector()).connect(),
  disconnect: () => session?.disconnect(),
  post: async (method: string, params?: object) => await (await inspector()).post(method as any, params as any) as any,
};
if (firstProfile) {
  await profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.setSamplingInterval", { interval: 1000 });
  await profiler.post("Profiler.start");
}
// BENCH_STALLS=1: every time the event loop was blocked for over a second, on stderr.
if (Deno.env.get("BENCH_STALLS")) {
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    if (now - last > 1100) {
      console.error(`stall: event loop blocked ${Math.round(now - last - 100)} ms until ${new Date().toISOString()}`);
    }
    last = now;
  }, 100);
}
const ctl = await startController({
  kubeconfig,
  validateProxyConfig: false,
  resyncPeriodMs: 0,
  workers: 8,
  coalesceMs: 0,
  ...overrides,
});
await ctl.synced;
// Commands, one per line on stdin: `profile-start` / `profile-stop` (a CPU profile; the functions
// with the most self time go to stderr), anything else: wait until idle and print the figures.
let firstProfileOpen = !!firstProfile;
/** Longer than the controller's quiet time plus the least interval between two trims. */
const TRIM_WAIT_MS = 12_000;
/**
 * V8's memory reducer compacts the heap and gives its free pages back once the process has been
 * idle for a while after a full collection (its default delay is 8 s): the RSS figures are taken
 * after it, as a controller left alone shows them; the same figures right after the work and the
 * trim are in `afterWork`.
 */
const REDUCER_WAIT_MS = 12_000;
const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream());
let buf = "";
for await (const chunk of lines) {
  buf += chunk;
  while (buf.includes("\n")) {
    const command = buf.slice(0, buf.indexOf("\n")).trim();
    buf = buf.slice(buf.indexOf("\n") + 1);
    if (firstProfileOpen) {
      firstProfileOpen = false;
      const result = await profiler.post("Profiler.stop");
      await Deno.writeTextFile(firstProfile!, JSON.stringify(result.profile));
      console.error(topSelfTime(result));
      profiler.disconnect();
    }
    if (command === "profile-start") {
      await profiler.connect();
      await profiler.post("Profiler.enable");
      await profiler.post("Profiler.start");
      console.log("{}");
      continue;
    }
    if (command.startsWith("heap-snapshot ")) {
      await ctl.idle();
      (globalThis as { gc?: () => void }).gc?.();
      await writeHeapSnapshot(command.slice("heap-snapshot ".length));
      console.log("{}");
      continue;
    }
    if (command === "idle") {
      await ctl.idle();
      console.log(JSON.stringify(ctl.stats()));
      continue;
    }
    if (command === "profile-stop") {
      const result = await profiler.post("Profiler.stop");
      const file = Deno.env.get("BENCH_PROFILE_FILE");
      if (file) await Deno.writeTextFile(file, JSON.stringify(result.profile));
      console.error(topSelfTime(result));
      profiler.disconnect();
      console.log("{}");
      continue;
    }
    await ctl.idle();
    // With --v8-flags=--expose-gc: collect first, so the figure is the live set, not garbage.
    const trims = ctl.stats().mallocTrims;
    (globalThis as { gc?: () => void }).gc?.();
    // The controller trims the C heap a moment after its work ends (lib/runtime/malloc_trim.ts): wait for
    // that trim, which comes after the collection, as it would after the runtime's own ones.
    const trimWaitEnd = performance.now() + TRIM_WAIT_MS;
    while (ctl.stats().mallocTrims === trims && performance.now() < trimWaitEnd) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const trimmedAfterGc = ctl.stats().mallocTrims > trims;
    const afterWork = memoryFigures();
    await new Promise((r) => setTimeout(r, REDUCER_WAIT_MS));
    // The figures first: reading and parsing /proc/self/smaps adds about 3 MB to the RSS.
    const settled = memoryFigures();
    if (Deno.env.get("BENCH_SMAPS")) console.error(`${largestMappings()}\n${mallocInUse()}`);
    console.log(JSON.stringify({ ...settled, afterWork, trimmedAfterGc, ...ctl.stats() }));
  }
}
await ctl.stop();

function memoryFigures() {
  const m = Deno.memoryUsage();
  return { rssBytes: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, ...rssParts() };
}

/** Anonymous (heap, malloc) and file-backed (the deno binary's pages) parts of the RSS, from /proc. */
function rssParts(): { rssAnonBytes?: number; rssFileBytes?: number } {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1]) * 1024;
    return { rssAnonBytes: kb("RssAnon"), rssFileBytes: kb("RssFile") };
  } catch {
    return {};
  }
}

/**
 * The mappings with the most resident memory (BENCH_SMAPS=1), and the RSS by kind of mapping:
 * files (the deno binary), glibc's main heap (`[heap]`), anonymous mappings in the high range
 * where glibc's other arenas, large blocks and thread stacks are, and the other anonymous ones
 * (V8 places its heap pages at random addresses, so these are mostly V8's pages).
 */
function largestMappings(): string {
  const rows: { name: string; rssKb: number }[] = [];
  const kinds = new Map<string, number>();
  let current = "";
  let kind = "";
  for (const line of Deno.readTextFileSync("/proc/self/smaps").split("\n")) {
    const head = line.match(/^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) {
      current = `${head[1]} ${((parseInt(head[2], 16) - parseInt(head[1], 16)) / 1024).toFixed(0)}kB ${head[3]}`;
      kind = head[3] === "[heap]"
        ? "glibc_main_heap"
        : head[3].startsWith("/")
        ? "files"
        : head[3] !== ""
        ? "other"
        : head[1].length >= 12 && head[1].startsWith("7f")
        ? "anon_high"
        : "anon_v8";
    }
    const rss = line.match(/^Rss:\s+(\d+) kB/);
    if (rss) {
      rows.push({ name: current, rssKb: Number(rss[1]) });
      kinds.set(kind, (kinds.get(kind) ?? 0) + Number(rss[1]));
    }
  }
  const top = rows.sort((a, b) => b.rssKb - a.rssKb).slice(0, 25).map((r) => `smaps: ${r.rssKb} kB  ${r.name}`);
  const byKind = [...kinds].map(([k, kb]) => `${k}=${(kb / 1024).toFixed(1)}MB`).join(" ");
  return `${top.join("\n")}\nsmaps by kind: ${byKind}`;
}

/** glibc's own account of its heap (`mallinfo2`): what is in use and what is free but kept. */
function mallocInUse(): string {
  try {
    // Counts of blocks as they are, sizes in MB.
    const counts = new Set(["ordblks", "smblks", "hblks"]);
    const shown = (f: string, v: number) => counts.has(f) ? String(v) : `${(v / 1e6).toFixed(1)}MB`;
    return `mallinfo2: ${Object.entries(mallinfo2()).map(([f, v]) => `${f}=${shown(f, v)}`).join(" ")}`;
  } catch (err) {
    return `mallinfo2: ${err}`;
  }
}

/** Writes a heap snapshot (for bench/memory/heap_summary.ts or Chrome's DevTools) to `path`. */
async function writeHeapSnapshot(path: string): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  const encoder = new TextEncoder();
  session.on("HeapProfiler.addHeapSnapshotChunk", (m) => file.writeSync(encoder.encode(m.params.chunk)));
  try {
    await session.post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  } finally {
    session.disconnect();
    file.close();
  }
}

/** The 25 functions with the most self time in a V8 CPU profile, one per line. */
function topSelfTime(result: unknown): string {
  const p = (result as {
    profile: {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
  }).profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)
    .map(([k, us]) => `profile: ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`).join("\n");
}
