/**
 * @module lib/dev/localenv/binaries
 * Where the kube-apiserver and etcd binaries are: `$KUBEBUILDER_ASSETS` when set, otherwise the
 * cache that `build.sh` fills by building them from the Go modules pinned in `lib/dev/localenv/go/`
 * (the first build takes minutes and prints its progress; later calls reuse the cache).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Binaries {
  /** Directory holding both binaries. */
  dir: string;
  kubeApiserver: string;
  etcd: string;
}

/** The build script; run it directly (`lib/dev/localenv/build.sh`) to build ahead of the tests. */
export const buildScript = join(dirname(fileURLToPath(import.meta.url)), "build.sh");

let cached: Promise<Binaries> | null = null;

/** Builds the binaries when missing (progress on stderr) and returns their paths. */
export function ensureBinaries(): Promise<Binaries> {
  cached ??= locate().catch((err) => {
    cached = null;
    throw err;
  });
  return cached;
}

async function locate(): Promise<Binaries> {
  const dir = await buildBinaries([]);
  return { dir, kubeApiserver: join(dir, "kube-apiserver"), etcd: join(dir, "etcd") };
}

/**
 * Builds the named binaries of `build.sh` when missing (none: kube-apiserver and etcd, or
 * `$KUBEBUILDER_ASSETS`) and returns the directory holding them. Progress goes to stderr.
 */
export async function buildBinaries(names: readonly string[]): Promise<string> {
  const out = await new Deno.Command("bash", { args: [buildScript, ...names], stdout: "piped", stderr: "inherit" })
    .output();
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  const dir = lines[lines.length - 1];
  if (!out.success || !dir) {
    throw new Error(`${buildScript} ${names.join(" ")} failed (exit ${out.code}); its messages are above`);
  }
  return dir;
}
