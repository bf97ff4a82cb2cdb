/**
 * @module lib/dev/localenv/helm
 * The helm binary of the chart tests and `deno task manifests`: built by `build.sh helm` from the
 * Go module pinned in `lib/dev/localenv/go/helm/` (the first build takes minutes and prints its
 * progress; later calls reuse the cache). Nothing prebuilt is downloaded.
 */
import { join } from "node:path";
import { buildBinaries } from "./binaries.ts";

let cached: Promise<string> | null = null;

/** Builds helm when missing (progress on stderr) and returns its path. */
export function ensureHelm(): Promise<string> {
  cached ??= buildBinaries(["helm"]).then((dir) => join(dir, "helm")).catch((err) => {
    cached = null;
    throw err;
  });
  return cached;
}
