/**
 * The layering rules, checked on the source: no module under lib/ (nor main.ts, nor bench/)
 * imports tests/; no package of lib/ imports one that imports it back (a package is a directory
 * under lib/; a file directly in lib/ is a package of its own); and no file of lib/ imports one
 * that imports it back, types included (inside a package too: a circle of files is one module
 * split in pieces); and nothing of the product imports the development tooling under lib/dev/
 * (the local stack the demo, the tests and the benchmarks share).
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const IMPORT = /(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(root, dir))) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...tsFiles(path));
    else if (e.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

function importsOf(file: string): string[] {
  const text = Deno.readTextFileSync(join(root, file));
  return [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(file), m[1])));
}

function packageOf(file: string): string {
  const parts = relative("lib", file).split("/");
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.ts$/, "");
}

/** Package → packages it imports, with one example import per edge. */
export function packageGraph(files: readonly string[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const f of files) {
    const from = packageOf(f);
    for (const target of importsOf(f)) {
      if (!target.startsWith("lib/")) continue;
      const to = packageOf(target);
      if (to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, `${f} -> ${target}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Edges a→b where b reaches a again. */
export function cycleEdges(graph: Map<string, Map<string, string>>): string[] {
  const reaches = (start: string, goal: string): boolean => {
    const seen = new Set<string>();
    const todo = [start];
    while (todo.length > 0) {
      const n = todo.pop()!;
      if (n === goal) return true;
      for (const next of graph.get(n)?.keys() ?? []) if (!seen.has(next)) (seen.add(next), todo.push(next));
    }
    return false;
  };
  const found: string[] = [];
  for (const [from, edges] of graph) {
    for (const [to, example] of edges) if (reaches(to, from)) found.push(`${from} -> ${to} (${example})`);
  }
  return found.sort();
}

Deno.test("layering: no package of lib/ imports one that imports it back", () => {
  assert.deepEqual(cycleEdges(packageGraph(tsFiles("lib"))), []);
});

Deno.test("layering: the cycle check finds a cycle when there is one", () => {
  const g = new Map([["a", new Map([["b", "a.ts -> b.ts"]])], ["b", new Map([["c", "b.ts -> c.ts"]])], [
    "c",
    new Map([["a", "c.ts -> a.ts"]]),
  ]]);
  assert.equal(cycleEdges(g).length, 3);
  g.get("c")!.delete("a");
  assert.deepEqual(cycleEdges(g), []);
});

Deno.test("layering: product code and benchmarks never import tests/", () => {
  const offenders = [...tsFiles("lib"), ...tsFiles("bench"), "main.ts"]
    .flatMap((f) => importsOf(f).filter((t) => t.startsWith("tests/")).map((t) => `${f} -> ${t}`));
  assert.deepEqual(offenders, []);
});

/** File → the files of lib/ it imports (`import type` included). */
function fileGraph(files: readonly string[]): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const f of files) {
    const edges = new Map<string, string>();
    for (const target of importsOf(f)) {
      if (target.startsWith("lib/") && target !== f) edges.set(target, `${f} -> ${target}`);
    }
    graph.set(f, edges);
  }
  return graph;
}

Deno.test("layering: no file of lib/ imports one that imports it back", () => {
  assert.deepEqual(cycleEdges(fileGraph(tsFiles("lib"))), []);
});

Deno.test("layering: the product never imports the development tooling (lib/dev/)", () => {
  const product = [...tsFiles("lib").filter((f) => !f.startsWith("lib/dev/")), "main.ts"];
  const offenders = product.flatMap((f) =>
    importsOf(f).filter((t) => t.startsWith("lib/dev/")).map((t) => `${f} -> ${t}`)
  );
  assert.deepEqual(offenders, []);
});
