/**
 * @module render/validate
 * `--validate-proxy-config`: checks a rendered configuration with `haproxy -c` before it is
 * published. The check runs in a fresh temporary directory that plays the proxy's work dir: the
 * IC_* variables point into it, and every certificate file the crt-list names is a throwaway
 * self-signed PEM (made once per process; its certificate alone for CA bundles), and each htpasswd
 * Secret gets an empty `userlist` in a second `-f` file, as the proxy's `userlists.cfg`, so no real
 * secret is ever read or written. The check runs in a process group of its own, killed whole when
 * {@link CHECK_TIME_LIMIT_MS} (or the caller's limit) expires: a configuration whose check does not
 * end in time is refused (`timedOut`), and no child is left behind. The directory is always removed.
 *
 * A configuration whose structure already passed (same skeleton, crt-list and certificate files,
 * same binary) passes again without running haproxy: it differs only in endpoint addresses (slot
 * lines of validated IPs) and map file lines (checked against MAP_LINE when rendered), neither of
 * which can make `haproxy -c` fail. So route-only and endpoint-only changes publish without the
 * ~100 ms check. For the same reason the controller checks each backend with its first slot line
 * only, and one backend of each shape (`slots: "first"`, lib/render/slots.ts's `checkedForm`): the
 * other slots differ from the first only in number and address, and a backend left out is the text
 * of one checked up to its name and addresses (a class of 100,000 Ingresses of one Service each is
 * a few backends to HAProxy's check, not 100,000). And a configuration that is one that passed
 * minus whole backends that nothing in it names (lib/render/dropped_backends.ts: its other sections
 * as they were, up to slot addresses) passes without running haproxy: what HAProxy reads of it was
 * all read in the larger one, and no line left refers to what went (an Ingress moved to a Service
 * that has a backend already is then a map change, also in the check).
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Rendered } from "./render.ts";
import { checkedForm, skeleton } from "./slots.ts";
import { sameSkeleton, sectionList, unreferencedDrops } from "./dropped_backends.ts";
import { luaDirOf, writeLuaFiles } from "./lua.ts";
import { userlistName, userlistSection } from "./secret_content.ts";

/**
 * How long `haproxy -c` may run on one configuration (the controller's and the webhook's checks).
 * The check of a merged configuration of 10,000 Ingresses took 2–2.5 s on the reference machine
 * (1,000: 0.4 s; one Ingress: ~0.1 s), so 10 s leaves room for a busy node while a configuration
 * that makes haproxy work without end (a costly value a tenant wrote) is refused in bounded time.
 */
export const CHECK_TIME_LIMIT_MS = 10_000;

/** The size of `haproxy.cfg` a base time limit is for: about 10,000 Ingresses of one backend each. */
export const CHECK_LIMIT_BASE_BYTES = 2_000_000;

/**
 * The time limit of a check of `configBytes` of `haproxy.cfg`: `baseMs` up to
 * {@link CHECK_LIMIT_BASE_BYTES}, then in proportion. `haproxy -c`'s time grows with the backends and
 * servers it parses: a fixed 10 s refused a class of 100,000 Ingresses (~20 MB) for its size alone,
 * and isolating the members of a refused class then checked each of them alone.
 */
export function checkTimeLimit(baseMs: number, configBytes: number): number {
  return Math.round(baseMs * Math.max(1, configBytes / CHECK_LIMIT_BASE_BYTES));
}

export interface ValidateOptions {
  /** The haproxy binary (`--haproxy` of the proxy command; default `haproxy`). */
  haproxy?: string;
  /** Kill the check after this long; default {@link CHECK_TIME_LIMIT_MS}. */
  timeoutMs?: number;
  /** Parent of the temporary directory; default the system's. */
  tmpDir?: string;
  /** Reuse the verdict of a structurally identical configuration that passed (default true). */
  reuse?: boolean;
  /**
   * "first": check each backend with its first slot line only, and one backend of each shape
   * (`checkedForm`, for the built-in templates); "all" (default): every line as rendered.
   */
  slots?: "first" | "all";
}

export interface ValidationResult {
  ok: boolean;
  /** The lines explaining the failure (haproxy's ALERT lines, else all its output); empty when ok. */
  errors: string[];
  /** haproxy's WARNING lines of a configuration that passed (none when a passed structure was reused). */
  warnings: string[];
  /** The check did not finish within its time limit (then `ok` is false). */
  timedOut: boolean;
  /** Wall time of the check. */
  ms: number;
}

const SAFE_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,250}$/;

let throwaway: Promise<string> | null = null;

/** sha256 of the structures that passed `haproxy -c`, most recent last (bounded; a digest, not the
 * megabytes of text, is what a 10,000-backend structure costs to remember). */
const passed = new Set<string>();
const PASSED_KEPT = 32;

/**
 * The configuration that passed last (checked or reused) and what else its check read (`rest`:
 * binary, slot form, crt-list, files, userlists): a later one that is it minus unreferenced
 * backends passes too. Only the last one: it is the text the controller keeps anyway as its
 * group's validated configuration (lib/controller/group_validation.ts), so holding it costs no
 * memory, where an older one would hold megabytes at 10,000 backends.
 */
let lastPassed: { readonly rest: string; readonly config: string } | null = null;

/** True when `rendered` is the configuration that passed last, with the same `rest`, minus backends nothing in it names. */
function passedMinusBackends(rest: string, rendered: Rendered): boolean {
  if (lastPassed === null || lastPassed.rest !== rest) return false;
  const texts = [rendered.config, ...Object.values(rendered.maps)];
  const dropped = unreferencedDrops(sectionList(lastPassed.config), sectionList(rendered.config), texts, sameSkeleton);
  return dropped !== null && dropped.length > 0;
}

/**
 * One self-signed certificate + key PEM per process, used for every file name in a crt-list. The
 * certificate maker (@peculiar/x509, about 7 MB of a process's memory once loaded) is loaded by
 * the first check that needs it: a class without TLS never does.
 */
export function throwawayPem(): Promise<string> {
  throwaway ??= import("../pki/certs.ts").then(({ createCA }) =>
    createCA({ commonName: "ingress-controller config check", validityDays: 3650 })
  ).then((c) => `${c.certPem.trimEnd()}\n${c.keyPem.trimEnd()}\n`);
  return throwaway;
}

/** The certificate file names a crt-list refers to (first word of each line). */
export function crtListFiles(crtList: string): string[] {
  return crtList.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#")).map((l) =>
    l.split(/\s+/)[0]
  );
}

/** Runs `haproxy -c` on the rendered configuration in an isolated temporary directory. */
export async function validateConfig(rendered: Rendered, opts: ValidateOptions = {}): Promise<ValidationResult> {
  const started = performance.now();
  const limitMs = opts.timeoutMs ?? CHECK_TIME_LIMIT_MS;
  const result = (ok: boolean, errors: string[], warnings: string[] = [], timedOut = false) => ({
    ok,
    errors,
    warnings,
    timedOut,
    ms: performance.now() - started,
  });
  const files = new Set([
    ...crtListFiles(rendered.crtList),
    ...rendered.secrets.flatMap((s) => s.file === undefined ? [] : [s.file]),
  ]);
  const userlists = rendered.secrets.filter((s) => s.kind === "htpasswd").map((s) =>
    userlistSection(userlistName(s.namespace, s.name), [])
  ).join("");
  for (const f of files) {
    if (!SAFE_FILE.test(f)) return result(false, [`crt-list names an unsafe file ${JSON.stringify(f)}`]);
  }
  // Each text length-prefixed, not JSON.stringify'd together: V8's JSON stringifier takes a zone of
  // ~5 bytes per character (10 MB for a 2 MB configuration) from the C heap.
  const digest = (texts: string[]) => {
    const hash = createHash("sha256");
    for (const text of texts) hash.update(`${text.length}:`).update(text);
    return hash.digest("base64");
  };
  const rest = digest([opts.haproxy ?? "haproxy", opts.slots ?? "all", rendered.crtList, ...files, userlists]);
  const structure = digest([rest, skeleton(rendered.config)]);
  const pass = () => {
    passed.delete(structure);
    passed.add(structure);
    if (passed.size > PASSED_KEPT) passed.delete(passed.values().next().value!);
    if (opts.reuse !== false) lastPassed = { rest, config: rendered.config };
  };
  if (opts.reuse !== false && (passed.has(structure) || passedMinusBackends(rest, rendered))) {
    pass();
    return result(true, []);
  }
  const pem = files.size > 0 ? await throwawayPem() : "";
  const dir = await Deno.makeTempDir({ prefix: "ic-validate-", dir: opts.tmpDir });
  try {
    const certDir = join(dir, "certs");
    await Deno.mkdir(certDir);
    const cfg = join(dir, "haproxy.cfg");
    await Deno.writeTextFile(cfg, opts.slots === "first" ? checkedForm(rendered.config) : rendered.config);
    await Deno.writeTextFile(join(certDir, "crt-list"), rendered.crtList);
    for (const [file, text] of Object.entries(rendered.maps)) await Deno.writeTextFile(join(certDir, file), text);
    const caOnly = pem.slice(0, pem.indexOf("-----END CERTIFICATE-----") + 26);
    for (const f of files) {
      await Deno.writeTextFile(join(certDir, f), f.endsWith("_ca.pem") ? caOnly : pem, { mode: 0o600 });
    }
    const userlistsFile = join(dir, "userlists.cfg");
    await Deno.writeTextFile(userlistsFile, userlists);
    await writeLuaFiles(luaDirOf(dir));

    const child = new Deno.Command(opts.haproxy ?? "haproxy", {
      args: ["-c", "-f", cfg, "-f", userlistsFile],
      cwd: dir,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/sbin:/usr/bin:/sbin:/bin",
        IC_BIND_ADDR: "127.0.0.1",
        IC_HTTP_PORT: "8080",
        IC_HTTPS_PORT: "8443",
        IC_STATS_PORT: "56789",
        IC_RUNTIME_SOCKET: join(dir, "runtime.sock"),
        IC_CERT_DIR: certDir,
        IC_LUA_DIR: luaDirOf(dir),
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      // A session and so a process group of its own: a timeout kills whatever the binary started
      // too (a wrapper's children would otherwise hold the pipes open and outlive the check).
      detached: true,
    }).spawn();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* already gone */ }
    }, limitMs);
    let out: Deno.CommandOutput;
    try {
      out = await child.output();
    } finally {
      clearTimeout(timer);
    }
    if (timedOut) return result(false, [`haproxy -c did not finish within ${limitMs} ms`], [], true);
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    const lines = text.split("\n").map((l) => l.trimEnd()).filter((l) => l !== "").map((l) =>
      l.replaceAll(dir, "<tmp>")
    );
    if (out.success) {
      pass();
      return result(true, [], lines.filter((l) => l.includes("[WARNING]")));
    }
    const alerts = lines.filter((l) => l.includes("[ALERT]"));
    return result(
      false,
      alerts.length > 0 ? alerts : lines.length > 0 ? lines : [`haproxy -c exited with ${out.code}`],
    );
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      return result(false, [`haproxy binary ${JSON.stringify(opts.haproxy ?? "haproxy")} not found`]);
    }
    throw err;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
