import assert from "node:assert/strict";
import { moduleLevel, parseVModule } from "../../lib/log/vmodule.ts";

const FILE = "file:///work/main/lib/cluster/informer.ts";

Deno.test("--vmodule matching table: base name, globs, path patterns, first match wins", () => {
  const cases: [spec: string, path: string, want: number | undefined][] = [
    ["informer=4", FILE, 4],
    ["informer.ts=4", FILE, 4], // a `.ts` in the pattern is dropped, like the file's
    ["inform=4", FILE, undefined], // literal: the whole base name
    ["inform*=3", FILE, 3],
    ["*former=3", FILE, 3],
    ["inf?rmer=2", FILE, 2],
    ["inf?mer=2", FILE, undefined],
    ["*=1", FILE, 1],
    ["lib/cluster/*=5", FILE, 5], // slash: a trailing part of the path
    ["cluster/informer=5", FILE, 5],
    ["/work/main/lib/cluster/informer=6", FILE, 6], // slash: the full path
    ["lib/*=5", FILE, undefined], // `*` does not cross a slash
    ["luster/informer=5", FILE, undefined], // a suffix starts after a slash
    ["lib/cluster=5", FILE, undefined],
    ["other=1,inform*=2,informer=9", FILE, 2], // first match wins
    ["lib/cluster/*=7,informer=1", FILE, 7],
    ["other=1,,x?=2", FILE, undefined],
    ["informer=4", "/abs/path/informer.ts", 4],
    ["informer=4", "/abs/path/informer_test.ts", undefined],
    ["main=3", "file:///work/main/main.ts", 3],
  ];
  for (const [spec, path, want] of cases) {
    assert.equal(moduleLevel(parseVModule(spec), path), want, `${spec} against ${path}`);
  }
});

Deno.test("parseVModule: empty and null mean no patterns; levels are numbers", () => {
  assert.deepEqual(parseVModule(null), []);
  assert.deepEqual(parseVModule(""), []);
  assert.deepEqual(parseVModule("a=1,b/c*=02").map((p) => [p.pattern, p.level, p.full, p.literal]), [
    ["a", 1, false, true],
    ["b/c*", 2, true, false],
  ]);
});
