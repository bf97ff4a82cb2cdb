/**
 * @module serving/profiling
 * `/debug/pprof/`: the runtime's profiles in place of Go's pprof, from the V8 inspector
 * (`node:inspector`). `profile` is a CPU profile (Chrome `.cpuprofile` JSON); `heap` is V8's
 * sampling heap profile (Chrome `.heapprofile` JSON): allocation call stacks and sizes, like Go's
 * heap profile, and never memory contents. A heap snapshot would hand every Secret's key and the
 * controller's own credentials to whoever may read this path (on B/C's ops listener: anyone), so
 * none is ever taken. Durations are bounded and one profile runs at a time. With
 * `--contention-profiling` there is no lock to profile in a single-threaded event loop; the
 * closest measurable thing is event-loop delay, served at `/debug/pprof/eventloop`.
 */
import { Session } from "node:inspector";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pause } from "../runtime/timers.ts";

export interface ProfileReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Uint8Array;
  readonly headers?: Record<string, string>;
}

/** Longest profile (`seconds`) served: long enough to see a pattern, short enough to bound the cost. */
export const maxProfileSeconds = 60;
export const defaultCpuSeconds = 30;
export const defaultHeapSeconds = 10;
/** Bytes between heap samples (V8's default; Go samples every 512 KiB). */
const heapSamplingInterval = 32 * 1024;

type Kind = "cpu" | "heap";

const text = (status: number, body: string): ProfileReply => ({ status, contentType: "text/plain", body });

export class Profiler {
  readonly #contention: ReturnType<typeof monitorEventLoopDelay> | null;
  #busy: Kind | null = null;

  constructor(contentionProfiling: boolean) {
    this.#contention = contentionProfiling ? monitorEventLoopDelay({ resolution: 10 }) : null;
    this.#contention?.enable();
  }

  /** Paths whose answer takes the requested `seconds` (exempt from the request timeout while profiling). */
  static isLongRunning(path: string): boolean {
    return path === "/debug/pprof/profile" || path === "/debug/pprof/heap";
  }

  /** Answers a `/debug/pprof` path; `signal` (the client went away) ends a running profile early. */
  async answer(path: string, query: URLSearchParams, signal?: AbortSignal): Promise<ProfileReply | null> {
    switch (path) {
      case "/debug/pprof":
      case "/debug/pprof/":
        return { status: 200, contentType: "text/html; charset=utf-8", body: this.#index() };
      case "/debug/pprof/profile":
        return await this.#profile("cpu", query, signal);
      case "/debug/pprof/heap":
        return await this.#profile("heap", query, signal);
      case "/debug/pprof/eventloop":
        return this.#eventLoop();
      default:
        return path.startsWith("/debug/pprof/") ? text(404, "unknown profile\n") : null;
    }
  }

  #index(): string {
    const rows = [
      [
        `profile?seconds=${defaultCpuSeconds}`,
        `CPU profile (Chrome .cpuprofile JSON), 1 to ${maxProfileSeconds} seconds`,
      ],
      [
        `heap?seconds=${defaultHeapSeconds}`,
        `sampling heap profile: allocation stacks and sizes, no memory contents (Chrome .heapprofile JSON), ` +
        `1 to ${maxProfileSeconds} seconds`,
      ],
      ...(this.#contention ? [["eventloop", "event-loop delay histogram (--contention-profiling)"]] : []),
    ];
    return `<!doctype html><html><head><title>/debug/pprof/</title></head><body><h1>/debug/pprof/</h1><ul>${
      rows.map(([p, d]) => `<li><a href="${p}">${p.split("?")[0]}</a>: ${d}</li>`).join("")
    }</ul><p>One profile runs at a time.</p></body></html>\n`;
  }

  async #profile(kind: Kind, query: URLSearchParams, signal?: AbortSignal): Promise<ProfileReply> {
    const raw = query.get("seconds") ?? String(kind === "cpu" ? defaultCpuSeconds : defaultHeapSeconds);
    const seconds = Number(raw);
    if (!/^\d{1,6}$/.test(raw) || seconds < 1 || seconds > maxProfileSeconds) {
      return text(400, `seconds=${raw.slice(0, 20)}: give an integer from 1 to ${maxProfileSeconds}\n`);
    }
    if (this.#busy) return text(409, `a ${this.#busy} profile is already running; one profile runs at a time\n`);
    this.#busy = kind;
    const session = new Session();
    session.connect();
    const post = (method: string, params: Record<string, unknown> = {}) =>
      new Promise<any>((resolve, reject) =>
        session.post(method, params, (e: unknown, r: unknown) => (e ? reject(e) : resolve(r)))
      );
    try {
      if (kind === "cpu") {
        await post("Profiler.enable");
        await post("Profiler.start");
        await pause(seconds * 1000, signal);
        const { profile } = await post("Profiler.stop");
        return attachment(JSON.stringify(profile), "profile.cpuprofile");
      }
      await post("HeapProfiler.enable");
      await post("HeapProfiler.startSampling", { samplingInterval: heapSamplingInterval });
      await pause(seconds * 1000, signal);
      // Call stacks (function, script, line) and sampled sizes only: no object is ever read.
      const { profile } = await post("HeapProfiler.stopSampling");
      return attachment(JSON.stringify(profile), "heap.heapprofile");
    } finally {
      session.disconnect();
      this.#busy = null;
    }
  }

  #eventLoop(): ProfileReply {
    const h = this.#contention;
    if (!h) return text(404, "start with --contention-profiling\n");
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

function attachment(body: string, filename: string): ProfileReply {
  return {
    status: 200,
    contentType: "application/json",
    body,
    headers: { "Content-Disposition": `attachment; filename="${filename}"` },
  };
}
