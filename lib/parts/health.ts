/**
 * @module health
 * `/healthz`, `/livez`, `/readyz` in Kubernetes' format: `ok` when every check passes, otherwise
 * 500 with one `[+]name ok` / `[-]name failed: reason withheld` line per check; `?verbose` always
 * lists them, `?exclude=name` skips one, `/readyz/<name>` runs a single check. As in Kubernetes,
 * a failing check's reason is not sent to the (often anonymous) prober but logged, once each
 * time it changes. Other modules register checks (the controller: "informers-synced"; the
 * proxy: "serving-config").
 */
import { log } from "../log/logger.ts";

export type Check = () => void | Promise<void>;
export type Probe = "healthz" | "livez" | "readyz";

interface Registered {
  readonly name: string;
  readonly check: Check;
  readonly probes: ReadonlySet<Probe>;
}

export interface ProbeReply {
  readonly status: number;
  readonly body: string;
}

export class HealthChecks {
  readonly #checks: Registered[] = [{ name: "ping", check: () => {}, probes: new Set(["healthz", "livez", "readyz"]) }];
  /** The reason last logged per failing check, so that a probe every few seconds logs a change once. */
  readonly #failing = new Map<string, string>();

  /**
   * Adds a check; it throws (or rejects) with the reason when unhealthy. By default it counts for
   * readiness and `/healthz`; pass `live: true` for checks whose failure should restart the
   * process. Returns a function that removes the check again.
   */
  register(name: string, check: Check, opts: { live?: boolean } = {}): () => void {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
      throw new Error(`health check name "${name}" must be lower-case words with -`);
    }
    if (this.#checks.some((c) => c.name === name)) throw new Error(`health check "${name}" is already registered`);
    const probes = new Set<Probe>(["healthz", "readyz"]);
    if (opts.live) probes.add("livez");
    const entry = { name, check, probes };
    this.#checks.push(entry);
    return () => {
      const i = this.#checks.indexOf(entry);
      if (i >= 0) this.#checks.splice(i, 1);
      this.#failing.delete(name);
    };
  }

  /** Answers `/{probe}` or `/{probe}/{name}`; null when the path is not a probe path. */
  async answer(path: string, query: URLSearchParams): Promise<ProbeReply | null> {
    const m = /^\/(healthz|livez|readyz)(?:\/([a-z0-9-]+))?\/?$/.exec(path);
    if (!m) return null;
    const probe = m[1] as Probe;
    const only = m[2];
    const excluded = new Set(query.getAll("exclude"));
    const selected = this.#checks.filter((c) =>
      c.probes.has(probe) && (only ? c.name === only : !excluded.has(c.name))
    );
    if (only && selected.length === 0) return { status: 404, body: `no ${probe} check named "${only}"\n` };
    const lines: string[] = [];
    let failed = false;
    for (const c of selected) {
      try {
        await c.check();
        lines.push(`[+]${c.name} ok`);
        this.#passed(c.name);
      } catch (err) {
        failed = true;
        lines.push(`[-]${c.name} failed: reason withheld`);
        this.#failed(c.name, probe, err);
      }
    }
    if (failed) return { status: 500, body: `${lines.join("\n")}\n${probe} check failed\n` };
    if (query.has("verbose")) return { status: 200, body: `${lines.join("\n")}\n${probe} check passed\n` };
    return { status: 200, body: "ok" };
  }

  #failed(name: string, probe: Probe, err: unknown): void {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
    if (this.#failing.get(name) === reason) return;
    this.#failing.set(name, reason);
    log.warn("health check failed", { check: name, probe, reason });
  }

  #passed(name: string): void {
    if (this.#failing.delete(name)) log.info("health check passes again", { check: name });
  }
}

/**
 * The checks of this process: parts of `run` register here (e.g. the controller's "informers
 * synced"), and the secure port and the ops listener answer from it.
 */
export const processHealth = new HealthChecks();
