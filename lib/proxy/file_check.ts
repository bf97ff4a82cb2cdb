/**
 * @module proxy/file_check
 * Which certificate and CA files HAProxy itself refuses to load, file by file, so that one
 * tenant's file never stops the configuration of every other (lib/proxy/left_out.ts leaves the
 * refused ones out). The judge is the proxy's own `haproxy -c` on a small configuration made of
 * the files alone: one `bind … ssl crt <file>` line per certificate and one `server … ca-file
 * <file>` line per CA bundle. It runs the same HAProxy and OpenSSL build (and OpenSSL
 * configuration: its default security level decides which keys load; HAProxy applies a
 * configuration's cipher lists only after loading its certificates) as the reload will, so it
 * refuses exactly what the reload would. A check written in Deno could only approximate OpenSSL's
 * rules (key types and sizes, signature strength, PEM quirks), and the controller's own check
 * (lib/pki/secret_checks.ts) already is that approximation. HAProxy parses every line and names
 * the file of each refused one in its alert, so one run finds them all; a failure that names no
 * file is narrowed down by halves.
 *
 * Verdicts are kept per file name and content: a configuration change checks only the files whose
 * content is new, and files HAProxy loaded in an applied configuration are known good without a run.
 */
import { join } from "node:path";
import type { CheckResult } from "./haproxy.ts";
import { CA_FILE, PEM_FILE, writeFileAtomic } from "./files.ts";

/** Runs `haproxy -c -f <configPath>` with `IC_CERT_DIR` set to `certDir`. */
export type RunCheck = (configPath: string, certDir: string) => Promise<CheckResult>;

interface Verdict {
  readonly pem: string;
  /** HAProxy's alert naming the file, or null: it loads. */
  readonly refusal: string | null;
}

/** What a check of some files found. */
export interface FileVerdicts {
  /** HAProxy's refusal by file name (the files it would not load). */
  readonly refused: ReadonlyMap<string, string>;
  /** Files neither known nor checked (`checkNew: false`). */
  readonly unchecked: number;
}

export class FileChecker {
  #known = new Map<string, Verdict>();
  #run: RunCheck;
  #dir: string;

  /** `dir`: a directory of the checker's own, emptied and removed around each run. */
  constructor(run: RunCheck, dir: string) {
    this.#run = run;
    this.#dir = dir;
  }

  /**
   * HAProxy's verdict on each certificate ({@link PEM_FILE}) and CA ({@link CA_FILE}) file of
   * `pems`. Files whose content was judged before are not checked again; new ones are checked
   * when `checkNew`, else counted as unchecked. Forgets the files `pems` no longer has.
   */
  async check(pems: ReadonlyMap<string, string>, checkNew: boolean): Promise<FileVerdicts> {
    // Runs at every configuration change (an endpoint, a route) with every file: known ones cost a lookup.
    const refused = new Map<string, string>();
    const fresh: string[] = [];
    let listed = 0;
    for (const [file, pem] of pems) {
      const verdict = this.#known.get(file);
      if (verdict) listed++;
      if (verdict?.pem === pem) {
        if (verdict.refusal !== null) refused.set(file, verdict.refusal);
      } else if (PEM_FILE.test(file) || CA_FILE.test(file)) fresh.push(file);
    }
    if (listed < this.#known.size) {
      for (const file of this.#known.keys()) if (!pems.has(file)) this.#known.delete(file);
    }
    if (!checkNew || fresh.length === 0) return { refused, unchecked: checkNew ? 0 : fresh.length };
    const found = await this.#refusedAmong(fresh, pems);
    for (const file of fresh) {
      const refusal = found.get(file) ?? null;
      this.#known.set(file, { pem: pems.get(file)!, refusal });
      if (refusal !== null) refused.set(file, refusal);
    }
    return { refused, unchecked: 0 };
  }

  /**
   * Records that HAProxy runs with these files (an applied configuration): they load. A file known
   * to be refused keeps its verdict (what runs in its place is a stand-in, lib/proxy/left_out.ts).
   */
  loaded(pems: ReadonlyMap<string, string>): void {
    for (const [file, pem] of pems) {
      const verdict = this.#known.get(file);
      if (verdict?.pem === pem || verdict?.refusal) continue;
      if (PEM_FILE.test(file) || CA_FILE.test(file)) this.#known.set(file, { pem, refusal: null });
    }
  }

  /** The files of `files` HAProxy refuses, with its alert for each. */
  async #refusedAmong(files: readonly string[], pems: ReadonlyMap<string, string>): Promise<Map<string, string>> {
    const refused = new Map<string, string>();
    let rest = [...files];
    while (rest.length > 0) {
      const out = await this.#checkFiles(rest, pems);
      if (out.ok) return refused;
      const named = rest.filter((f) => out.alerts.some((a) => names(a, out.dir, f)));
      if (named.length === 0) {
        // Nothing named: narrow it down by halves (a file alone that fails is refused, unless the
        // configuration fails without any file: then nothing here can be judged).
        if (rest.length === 1) {
          if (!(await this.#checkFiles([], pems)).ok) return refused;
          refused.set(rest[0], out.alerts.join(" ") || "haproxy -c refuses it");
          return refused;
        }
        const half = Math.ceil(rest.length / 2);
        for (const part of [rest.slice(0, half), rest.slice(half)]) {
          for (const [f, why] of await this.#refusedAmong(part, pems)) refused.set(f, why);
        }
        return refused;
      }
      for (const f of named) {
        refused.set(f, out.alerts.filter((a) => names(a, out.dir, f)).map((a) => tidy(a, out.dir)).join(" "));
      }
      // HAProxy goes on after a refused line; the others are checked again to be sure.
      rest = rest.filter((f) => !named.includes(f));
    }
    return refused;
  }

  /** One `haproxy -c` of these files; its ALERT lines. */
  async #checkFiles(
    files: readonly string[],
    pems: ReadonlyMap<string, string>,
  ): Promise<{ ok: boolean; alerts: string[]; dir: string }> {
    const dir = this.#dir;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    try {
      for (const file of files) {
        await writeFileAtomic(join(dir, file), pems.get(file)!, { mode: 0o600, durable: false, compare: false });
      }
      const config = join(dir, "check.cfg");
      await writeFileAtomic(config, checkConfig(files), { durable: false, compare: false });
      const result = await this.#run(config, dir);
      const alerts = result.output.split("\n").filter((l) => /\[ALERT\]/.test(l) && !GENERIC_ALERT.test(l));
      return { ok: result.ok, alerts, dir };
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}

/** HAProxy's closing alerts, which name no file. */
const GENERIC_ALERT = /Error\(s\) found in configuration file|Fatal errors found in configuration/;

/** Whether an alert line names `file` of `dir`. */
function names(alert: string, dir: string, file: string): boolean {
  return alert.includes(`${dir}/${file}`);
}

/** An alert without its prefix and directory: what HAProxy says about the file. */
function tidy(alert: string, dir: string): string {
  const text = alert.split(" : ").slice(-1)[0] ?? alert;
  return text.replaceAll(`${dir}/`, "").trim();
}

/** The check configuration: a listener (or HAProxy will not start), then a line per file. */
function checkConfig(files: readonly string[]): string {
  const lines = [
    "global",
    '    crt-base "${IC_CERT_DIR}"',
    '    ca-base "${IC_CERT_DIR}"',
    "defaults",
    "    mode http",
    "    timeout connect 1s",
    "    timeout client 1s",
    "    timeout server 1s",
    "frontend certificates",
    '    bind "127.0.0.1:1"',
    // haproxy -c binds nothing: every certificate may have a line of the same address
    ...files.filter((f) => PEM_FILE.test(f)).map((f) => `    bind "127.0.0.1:2" ssl crt "${f}"`),
    "backend ca_files",
    ...files.filter((f) => CA_FILE.test(f)).map((f, i) =>
      `    server ca${i} 127.0.0.1:1 ssl verify required ca-file "${f}"`
    ),
  ];
  return lines.join("\n") + "\n";
}
