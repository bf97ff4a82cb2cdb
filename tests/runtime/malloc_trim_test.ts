import assert from "node:assert/strict";
import { IdleTrimmer, mallocTrim } from "../../lib/runtime/malloc_trim.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssAnonKb = () => Number(Deno.readTextFileSync("/proc/self/status").match(/^RssAnon:\s+(\d+) kB/m)![1]);

Deno.test({
  name: "mallocTrim hands freed C heap pages back: RssAnon falls after a fragmented free",
  ignore: Deno.build.os !== "linux",
  fn() {
    const libc = Deno.dlopen("libc.so.6", {
      malloc: { parameters: ["usize"], result: "pointer" },
      free: { parameters: ["pointer"], result: "void" },
      memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
    });
    try {
      // 3,000 blocks of 40 KB (below the mmap threshold: glibc's heap), each touched; every tenth
      // stays allocated, so the freed ones sit between live blocks where free() never trims.
      const blocks = Array.from({ length: 3000 }, () => {
        const p = libc.symbols.malloc(40_000n)!;
        libc.symbols.memset(p, 1, 40_000n);
        return p;
      });
      blocks.forEach((p, i) => i % 10 !== 0 && libc.symbols.free(p));
      const before = rssAnonKb();
      assert.equal(mallocTrim(), true);
      const after = rssAnonKb();
      for (let i = 0; i < blocks.length; i += 10) libc.symbols.free(blocks[i]);
      assert.ok(before - after > 50_000, `RssAnon ${before} → ${after} kB: less than 50 MB given back`);
    } finally {
      libc.close();
    }
  },
});

Deno.test("IdleTrimmer: trims after the quiet time, not while busy, at most once per interval", async () => {
  let calls = 0;
  const t = new IdleTrimmer({ afterIdleMs: 20, minIntervalMs: 400, trim: () => (calls++, true) });
  try {
    t.idle();
    t.idle(); // a timer already set is kept
    await sleep(80);
    assert.equal(calls, 1);
    assert.equal(t.trims, 1);
    t.idle();
    t.busy(); // work came: no trim
    await sleep(80);
    assert.equal(calls, 1);
    t.idle(); // within the interval of the last trim: waits for its end
    await sleep(60);
    assert.equal(calls, 1, "not before the interval has passed");
    await sleep(400);
    assert.equal(calls, 2);
  } finally {
    t.stop();
  }
});

Deno.test("IdleTrimmer: a trim that cannot run is not counted; stop cancels a pending one", async () => {
  let calls = 0;
  const t = new IdleTrimmer({ afterIdleMs: 10, minIntervalMs: 0, trim: () => (calls++, false) });
  t.idle();
  await sleep(50);
  assert.equal(calls, 1);
  assert.equal(t.trims, 0);
  t.idle();
  t.stop();
  t.idle();
  await sleep(50);
  assert.equal(calls, 1);
});
