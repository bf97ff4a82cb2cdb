/**
 * @module lib/images/main
 * `deno task images`: builds the controller, proxy, echo and pause images from nothing into
 * `dist/images/<name>.tar` (docker archives) and prints each image's name, file and size.
 */
import { buildImages } from "./build.ts";

const t0 = performance.now();
try {
  const built = await buildImages();
  console.log(`images built in ${((performance.now() - t0) / 1000).toFixed(1)} s:`);
  for (const b of built) {
    console.log(`  ${b.name.padEnd(20)} ${(b.bytes / 1048576).toFixed(1).padStart(7)} MiB  ${b.ref}  ${b.archive}`);
  }
} catch (err) {
  console.error(`images: ${(err as Error).message}`);
  Deno.exit(1);
}
