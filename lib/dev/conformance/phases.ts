/**
 * @module lib/dev/conformance/phases
 * Named phases with their wall time, printed as they start and end (`=== name` / `=== name: 12.3 s`)
 * and as a table at the end, as `.ci/run` prints its own.
 */

export interface Phase {
  name: string;
  seconds: number;
  ok: boolean;
}

export class Phases {
  readonly done: Phase[] = [];
  readonly #t0 = performance.now();
  constructor(private readonly say: (line: string) => void = (l) => console.log(l)) {}

  /** Runs `fn` as the phase `name`; its time is recorded whether it succeeds or throws. */
  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.say(`\n=== ${name}`);
    const t0 = performance.now();
    let ok = false;
    try {
      const out = await fn();
      ok = true;
      return out;
    } finally {
      const seconds = (performance.now() - t0) / 1000;
      this.done.push({ name, seconds, ok });
      this.say(`=== ${name}: ${seconds.toFixed(1)} s${ok ? "" : " (failed)"}`);
    }
  }

  /** The table of phase times and the total. */
  table(): string[] {
    const width = Math.max(5, ...this.done.map((p) => p.name.length));
    const row = (name: string, s: number, note = "") => `  ${name.padEnd(width)} ${s.toFixed(1).padStart(7)} s${note}`;
    return [
      "phase timings:",
      ...this.done.map((p) => row(p.name, p.seconds, p.ok ? "" : "  (failed)")),
      row("total", (performance.now() - this.#t0) / 1000),
    ];
  }
}
