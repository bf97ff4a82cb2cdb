/**
 * @module lib/dev/images/main
 * `deno task images [--release R]`: builds the controller, proxy, echo and pause images and the
 * conformance suite's echo-basic and CoreDNS from nothing into `dist/images/<name>.tar` (docker
 * archives) and prints each image's name(s), file and size. The controller's and proxy's tags are those of release R (as `ingress-controller --release`:
 * a letter or a version; default `$INGRESS_CONTROLLER_RELEASE`, else A).
 */
import { releaseFromEnv, resolveRelease } from "../../flags/release.ts";
import { buildImages } from "./build.ts";

const t0 = performance.now();
try {
  const i = Deno.args.findIndex((a) => a === "--release" || a.startsWith("--release="));
  const value = i < 0 ? undefined : Deno.args[i].includes("=") ? Deno.args[i].split("=")[1] : Deno.args[i + 1];
  const release = value === undefined ? releaseFromEnv((n) => Deno.env.get(n)) : resolveRelease(value ?? "");
  const built = await buildImages(undefined, undefined, release);
  console.log(`images built in ${((performance.now() - t0) / 1000).toFixed(1)} s:`);
  for (const b of built) {
    console.log(
      `  ${b.name.padEnd(20)} ${(b.bytes / 1048576).toFixed(1).padStart(7)} MiB  ${
        [b.ref, ...b.moreRefs].join(" ")
      }  ${b.archive}`,
    );
  }
} catch (err) {
  console.error(`images: ${(err as Error).message}`);
  Deno.exit(1);
}
