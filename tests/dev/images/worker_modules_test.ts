/**
 * Every module the program starts as a Web Worker is staged into the image: a worker's module is not in
 * main.ts's static graph, and an image without it fails only when the worker starts (the admission
 * review worker: at the first AdmissionReview).
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { programGraph, repoRoot, WORKER_MODULES } from "../../../lib/dev/images/build.ts";

Deno.test("the image's program graph holds every worker module and what it imports", async () => {
  const graph = await programGraph();
  const files = new Set(
    graph.modules.map((m) => m.specifier).filter((s) => s.startsWith("file:")).map((s) =>
      relative(repoRoot, fileURLToPath(s))
    ),
  );
  // Each `new Worker(new URL("./x.ts", import.meta.url))` target, found in the program's own modules.
  const workers: string[] = [];
  for (const file of files) {
    if (!file.startsWith("lib/")) continue;
    const text = await Deno.readTextFile(join(repoRoot, file));
    if (!/new Worker\(/.test(text)) continue;
    for (const m of text.matchAll(/new URL\("(\.{1,2}\/[^"]+\.ts)", import\.meta\.url\)/g)) {
      workers.push(relative(repoRoot, join(repoRoot, file, "..", m[1])));
    }
  }
  assert.ok(workers.length > 0, "the admission queue starts a worker");
  for (const w of workers) {
    assert.ok(WORKER_MODULES.includes(w), `${w} is started as a worker but not in WORKER_MODULES`);
    assert.ok(files.has(w), `${w} is not staged`);
  }
  assert.ok(files.has("lib/admission/review.ts"), "what the worker imports is staged too");
});
