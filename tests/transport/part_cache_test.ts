/**
 * The proxy's part cache says which reads are a part's first for its digest: those a start or a
 * change makes (the proxy lets them past its client's rate limit), and not a read made again for
 * the same digest after the part was missing or held other content (a retry, which waits for it).
 */
import assert from "node:assert/strict";
import { PartCache } from "../../lib/transport/part_cache.ts";
import { splitConfig, type SplitResult } from "../../lib/transport/parts.ts";

function backends(n: number, changed = -1): string {
  return Array.from({ length: n }, (_, i) => `backend be_${i}\n    server s1 10.0.0.${i === changed ? 2 : 1}:80\n\n`)
    .join("");
}

/** Small parts, and none carried by the head (a carried part is never read). */
const LIMITS = { inline: 4096, fileInline: 512, targetPart: 600, carry: 0 };

function previousOf(r: SplitResult): Map<string, string> {
  return new Map(r.parts.map((p) => [p.name, p.sha256]));
}

Deno.test("part cache: a part's first read for its digest is marked first; a retry for the same digest is not", async () => {
  const store = new Map<string, string>();
  const reads: { name: string; first: boolean }[] = [];
  const cache = new PartCache("p", (name, first) => {
    reads.push({ name, first });
    return Promise.resolve(store.get(name) ?? null);
  });
  const one = splitConfig("p", { "haproxy.cfg": backends(200) }, new Map(), LIMITS);
  assert.ok(one.parts.length > 10, `${one.parts.length} parts`);
  // One part not written yet: every part is read once, all as first reads, and the result is missing.
  const late = one.parts[3];
  for (const p of one.parts) if (p !== late) store.set(p.name, p.content);
  const missing = await cache.assemble(one.head);
  assert.ok("missing" in missing && missing.missing.map((m) => m.name).includes(late.name));
  assert.equal(reads.length, one.parts.length);
  assert.ok(reads.every((r) => r.first));

  // The retry reads the missing part alone, again for the same digest: not first.
  reads.length = 0;
  store.set(late.name, late.content);
  assert.ok(!("missing" in await cache.assemble(one.head)));
  assert.deepEqual(reads, [{ name: late.name, first: false }]);

  // A change gives a slot new content: its read is first again; unchanged parts are not read.
  reads.length = 0;
  const two = splitConfig("p", { "haproxy.cfg": backends(200, 100) }, previousOf(one), LIMITS);
  for (const p of two.parts) store.set(p.name, p.content);
  assert.ok(!("missing" in await cache.assemble(two.head)));
  assert.ok(reads.length >= 1 && reads.length <= 2, `${reads.length} reads`);
  assert.ok(reads.every((r) => r.first));
});

Deno.test("part cache: each read asks for a version not older than the head it serves", async () => {
  const store = new Map<string, string>();
  const versions = new Set<string | undefined>();
  const cache = new PartCache("p", (name, _first, notOlderThan) => {
    versions.add(notOlderThan);
    return Promise.resolve(store.get(name) ?? null);
  });
  const one = splitConfig("p", { "haproxy.cfg": backends(200) }, new Map(), LIMITS);
  for (const p of one.parts) store.set(p.name, p.content);
  assert.ok(!("missing" in await cache.assemble(one.head, "4711")));
  assert.deepEqual([...versions], ["4711"]);
});

Deno.test("part cache: a carried part that does not inflate is read as a part instead; one that does is not read", async () => {
  const store = new Map<string, string>();
  const reads: string[] = [];
  const fetch = (name: string) => {
    reads.push(name);
    return Promise.resolve(store.get(name) ?? null);
  };
  const limits = { ...LIMITS, carry: undefined };
  const one = splitConfig("p", { "haproxy.cfg": backends(200) }, new Map(), limits);
  for (const p of one.parts) store.set(p.name, p.content);
  // Two proxies that hold the first configuration.
  const [a, b] = [new PartCache("p", fetch), new PartCache("p", fetch)];
  for (const cache of [a, b]) await cache.assemble(one.head, undefined, one.headBinary);
  const data = { "haproxy.cfg": backends(200, 150) };
  const two = splitConfig("p", data, previousOf(one), limits);
  const carried = two.parts.filter((p) => p.carried);
  assert.ok(carried.length === 1 && carried[0].deflated !== null, "one part carried deflated");
  for (const p of two.parts) store.set(p.name, p.content);
  // A corrupted carried form: that part alone is read from its ConfigMap, and the files are right.
  reads.length = 0;
  const key = Object.keys(two.headBinary)[0];
  const bad = await a.assemble(two.head, undefined, { [key]: "bm90IGRlZmxhdGU=" });
  assert.ok("files" in bad && bad.files["haproxy.cfg"] === data["haproxy.cfg"]);
  assert.deepEqual(reads, [carried[0].name]);
  // The carried form as written: nothing read.
  reads.length = 0;
  const good = await b.assemble(two.head, undefined, two.headBinary);
  assert.ok("files" in good && good.files["haproxy.cfg"] === data["haproxy.cfg"]);
  assert.deepEqual(reads, []);
});
