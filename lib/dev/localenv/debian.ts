/**
 * @module lib/dev/localenv/debian
 * Tools the local stack takes from the machine's Debian packages (haproxy, umoci, skopeo,
 * containerd, runc, the CNI plugins…). `ensureTools` finds each command; the missing ones are
 * installed with apt-get when running as root, otherwise it stops with one line naming the
 * packages to install. The README's two commands and `.ci/run` rely on it, so that a fresh
 * machine needs nothing else.
 */
import { join } from "node:path";

/** A command (or an absolute file) and the Debian package that provides it. */
export interface Tool {
  command: string;
  package: string;
}

/** Where `command` is (PATH, then the sbin directories), or null. Absolute paths are checked as they are. */
export async function which(command: string): Promise<string | null> {
  const candidates = command.startsWith("/")
    ? [command]
    : [...(Deno.env.get("PATH") ?? "").split(":"), "/usr/sbin", "/sbin", "/usr/bin"].filter((d) => d).map((d) =>
      join(d, command)
    );
  for (const path of candidates) {
    try {
      const st = await Deno.stat(path);
      if (st.isFile && (st.mode ?? 0o111) & 0o111) return path;
    } catch {
      // not here
    }
  }
  return null;
}

let aptUpdated = false;
let installing: Promise<unknown> = Promise.resolve();

/**
 * Paths of the tools, in order, after installing the missing ones (root with apt-get); throws an
 * Error whose message is one line naming what to install otherwise.
 */
export async function ensureTools(tools: readonly Tool[], purpose: string): Promise<string[]> {
  const missing = async () => {
    const out: Tool[] = [];
    for (const t of tools) if (!(await which(t.command))) out.push(t);
    return out;
  };
  let absent = await missing();
  if (absent.length > 0) {
    // One apt-get at a time in this process (several callers may ask at once).
    const run = installing.then(async () => {
      absent = await missing();
      if (absent.length > 0) await aptInstall([...new Set(absent.map((t) => t.package))], purpose);
    });
    installing = run.catch(() => {});
    await run;
  }
  const paths: string[] = [];
  for (const t of tools) {
    const path = await which(t.command);
    if (!path) throw new Error(`${t.command} is still missing after installing ${t.package}; install it by hand`);
    paths.push(path);
  }
  return paths;
}

async function aptInstall(packages: string[], purpose: string): Promise<void> {
  const line = `apt-get install -y ${packages.join(" ")}`;
  if (Deno.uid?.() !== 0 || !(await which("apt-get"))) {
    throw new Error(`${purpose} needs Debian packages that are missing: install them (sudo ${line}) and retry`);
  }
  console.error(`[localenv] ${purpose}: ${line}`);
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  const steps = [["install", "-y", "-qq", "--no-install-recommends", ...packages]];
  if (!aptUpdated) steps.unshift(["update", "-qq"]);
  for (const args of steps) {
    const { success, code } = await new Deno.Command("apt-get", {
      args,
      env,
      stdin: "null",
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!success) throw new Error(`apt-get ${args.join(" ")} failed (exit ${code}); run \`${line}\` by hand and retry`);
  }
  aptUpdated = true;
}
