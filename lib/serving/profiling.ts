/**
 * @module serving/profiling
 * `/debug/pprof/`: the runtime's profiles in place of Go's pprof. CPU profiles come from the V8
 * inspector (`node:inspector`, Chrome `.cpuprofile` JSON, open in Chrome DevTools or speedscope),
 * heap snapshots from `node:v8` (`.heapsnapshot`). With `--contention-profiling` there is no lock
 * to profile in a single-threaded event loop; the closest measurable thing is event-loop delay,
 * so its histogram (perf_hooks.monitorEventLoopDelay) is served at `/debug/pprof/eventloop`.
 */
import { Session } from "node:inspector";
import { monitorEventLoopDelay } from "node:perf_hooks";
import v8 from "node:v8";

export interface ProfileReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Record<string, string>;
}

const maxSeconds = 300;

export class Profiler {
  readonly #contention: ReturnType<typeof monitorEventLoopDelay> | null;
  #cpuBusy = false;

  constructor(contentionProfiling: boolean) {
    this.#contention = contentionProfiling ? monitorEventLoopDelay({ resolution: 10 }) : null;
    this.#contention?.enable();
  }

  /** Whether a path is served here (the CPU profile is long-running). */
  static isLongRunning(path: string): boolean {
    return path === "/debug/pprof/profile";
  }

  async answer(path: string, query: URLSearchParams): Promise<ProfileReply | null> {
    switch (path) {
      case "/debug/pprof":
      case "/debug/pprof/":
        return { status: 200, contentType: "text/html; charset=utf-8", body: this.#index() };
      case "/debug/pprof/profile":
        return await this.#cpu(query);
      case "/debug/pprof/heap":
        return await this.#heap();
      case "/debug/pprof/eventloop":
        return this.#eventLoop();
      default:
        return path.startsWith("/debug/pprof/")
          ? { status: 404, contentType: "text/plain", body: "unknown profile\n" }
          : null;
    }
  }

  #index(): string {
    const rows = [
      ["profile?seconds=30", "CPU profile of the given duration (Chrome .cpuprofile JSON)"],
      ["heap", "V8 heap snapshot (.heapsnapshot)"],
      ...(this.#contention ? [["eventloop", "event-loop delay histogram (--contention-profiling)"]] : []),
    ];
    return `<!doctype html><html><head><title>/debug/pprof/</title></head><body><h1>/debug/pprof/</h1><ul>${
      rows.map(([p, d]) => `<li><a href="${p}">${p.split("?")[0]}</a>: ${d}</li>`).join("")
    }</ul></body></html>\n`;
  }

  async #cpu(query: URLSearchParams): Promise<ProfileReply> {
    const raw = query.get("seconds") ?? "30";
    const seconds = Number(raw);
    if (!/^\d+$/.test(raw) || seconds < 1 || seconds > maxSeconds) {
      return { status: 400, contentType: "text/plain", body: `seconds must be an integer from 1 to ${maxSeconds}\n` };
    }
    if (this.#cpuBusy) return { status: 409, contentType: "text/plain", body: "a CPU profile is already running\n" };
    this.#cpuBusy = true;
    const session = new Session();
    session.connect();
    const post = (method: string) =>
      new Promise<any>((resolve, reject) =>
        session.post(method, {}, (e: unknown, r: unknown) => (e ? reject(e) : resolve(r)))
      );
    try {
      await post("Profiler.enable");
      await post("Profiler.start");
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const { profile } = await post("Profiler.stop");
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify(profile),
        headers: { "Content-Disposition": 'attachment; filename="profile.cpuprofile"' },
      };
    } finally {
      session.disconnect();
      this.#cpuBusy = false;
    }
  }

  async #heap(): Promise<ProfileReply> {
    const chunks: Uint8Array[] = [];
    for await (const c of v8.getHeapSnapshot()) chunks.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
    const body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      body.set(c, at);
      at += c.length;
    }
    return {
      status: 200,
      contentType: "application/json",
      body,
      headers: { "Content-Disposition": 'attachment; filename="heap.heapsnapshot"' },
    };
  }

  #eventLoop(): ProfileReply {
    const h = this.#contention;
    if (!h) return { status: 404, contentType: "text/plain", body: "start with --contention-profiling\n" };
    const ms = (ns: number) => Math.round(ns / 1000) / 1000;
    const body = {
      description: "event-loop delay since start (the runtime's closest analogue of lock contention), milliseconds",
      count: h.count,
      min: ms(h.min),
      mean: ms(h.mean),
      max: ms(h.max),
      stddev: ms(h.stddev),
      percentiles: Object.fromEntries([50, 90, 99, 99.9].map((p) => [String(p), ms(h.percentile(p))])),
    };
    return { status: 200, contentType: "application/json", body: JSON.stringify(body, null, 2) + "\n" };
  }

  close(): void {
    this.#contention?.disable();
  }
}
