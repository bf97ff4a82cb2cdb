import assert from "node:assert/strict";
import {
  assembleConfig,
  CARRIED_PREFIX,
  chunks,
  configDigest,
  INLINE_LIMIT,
  LARGE_FILE_DOWN,
  LARGE_FILE_TARGETS,
  MAX_PART_BYTES,
  memoizedSplits,
  partRefs,
  PARTS_KEY,
  partTargetOf,
  type ReadPart,
  readPart,
  rechunk,
  sha256Hex,
  splitConfig,
  type SplitLimits,
  type SplitResult,
  TARGET_PART_BYTES,
  TARGET_SCALES,
  units,
} from "../../lib/transport/parts.ts";
import { inflatedText } from "../../lib/transport/part_encoding.ts";

function backends(n: number, changed = -1): string {
  let out = "global\n    maxconn 1000\n\nfrontend http\n    bind :80\n";
  for (let i = 0; i < n; i++) {
    out += `backend be_ns${i % 7}_svc${i}_80\n    balance ${i === changed ? "leastconn" : "roundrobin"}\n`;
    for (let s = 1; s <= 4; s++) out += `    server s${s} 10.0.${i % 250}.${s}:8080 check\n`;
    out += "\n";
  }
  return out;
}

function mapLines(n: number): string {
  let out = "";
  for (let i = 0; i < n; i++) out += `host${i}.example.com/ be_ns${i % 7}_svc${i}_80\n`;
  return out;
}

function previousOf(r: SplitResult): Map<string, string> {
  return new Map(r.parts.map((p) => [p.name, p.sha256]));
}

/** The joined files of an assembly (its parts are checked by the tests that look at them). */
function filesOf(out: ReturnType<typeof assembleConfig>): unknown {
  return "files" in out ? { files: out.files } : out;
}

function partsMap(r: SplitResult): Map<string, ReadPart> {
  return new Map(r.parts.map((p) => [p.name, readPart(p.content)]));
}

Deno.test("units and chunks keep every byte", () => {
  for (const text of ["", "a", "a\n", "  lead\nx\n  y\n\n\nz", backends(50), "x".repeat(MAX_PART_BYTES * 2 + 5)]) {
    assert.equal(units(text).join(""), text);
    assert.equal(chunks(text).join(""), text);
    for (const c of chunks(text)) assert.ok(c.length <= MAX_PART_BYTES);
  }
  assert.deepEqual(units("backend a\n    x\n\nbackend b\n  y\n"), ["backend a\n    x\n\n", "backend b\n  y\n"]);
});

Deno.test("haproxy.cfg is cut at TARGET_SCALES times the target, a map file (what a route change rewrites) at the target", () => {
  const map = Array.from({ length: 40_000 }, (_, i) => `h${i}.example/ be_apps_s${i}_80\n`).join("");
  const r = splitConfig("scales", { "haproxy.cfg": backends(10_000), "routes-prefix.map": map });
  const refs = partRefs("scales", r.head);
  const mean = (file: string) => {
    const names = new Set(refs.get(file)!.map((ref) => ref.name));
    const parts = r.parts.filter((p) => names.has(p.name));
    return parts.reduce((n, p) => n + p.content.length, 0) / parts.length;
  };
  assert.equal(TARGET_SCALES["haproxy.cfg"], 8);
  assert.ok(mean("haproxy.cfg") > 4 * TARGET_PART_BYTES, `haproxy.cfg parts of ${mean("haproxy.cfg")}`);
  assert.ok(mean("routes-prefix.map") < 2 * TARGET_PART_BYTES, `map parts of ${mean("routes-prefix.map")}`);
});

Deno.test("a small configuration stays inline, as contracts §4 describes", () => {
  const files = { "haproxy.cfg": backends(10), "crt-list": "", "secrets.json": "[]" };
  const r = splitConfig("p", files);
  assert.deepEqual(r, { head: files, headBinary: {}, parts: [] });
  assert.deepEqual(assembleConfig("p", r.head, new Map()), { files, parts: new Map() });
});

Deno.test("10,000 backends: no object near 1 MiB, joined back byte for byte", () => {
  const files = { "haproxy.cfg": backends(10_000), "routes.map": mapLines(10_000), "crt-list": "" };
  assert.ok(files["haproxy.cfg"].length > INLINE_LIMIT * 2, `${files["haproxy.cfg"].length}`);
  const r = splitConfig("shared-haproxy", files);
  assert.ok(r.parts.length > 10, `${r.parts.length} parts`);
  assert.ok(JSON.stringify(r.head).length < 64 * 1024, "the head is small");
  for (const p of r.parts) assert.ok(p.content.length <= MAX_PART_BYTES, `${p.name}: ${p.content.length}`);
  assert.equal(r.head["crt-list"], "");
  const out = assembleConfig("shared-haproxy", r.head, partsMap(r));
  assert.deepEqual(filesOf(out), { files });
  // each split file with the parts it was joined from, in order (the proxy compares and diffs by them)
  assert.ok("parts" in out);
  assert.deepEqual([...out.parts.keys()].sort(), ["haproxy.cfg", "routes.map"]);
  for (const [file, parts] of out.parts) {
    assert.deepEqual(
      parts.map((p) => p.sha256),
      partRefs("shared-haproxy", r.head).get(file)!.map((ref) => ref.sha256),
    );
    assert.equal(parts.map((p) => p.content).join(""), files[file as keyof typeof files]);
  }
});

Deno.test("a file above LARGE_FILE_TARGETS targets is cut at twice the target, back below LARGE_FILE_DOWN only", () => {
  const base = 16 * 1024;
  assert.equal(partTargetOf(LARGE_FILE_TARGETS * base, base), base);
  assert.equal(partTargetOf(LARGE_FILE_TARGETS * base + 1, base), 2 * base);
  // Once cut large, a file shrinking a little stays large (no full rewrite at each crossing).
  assert.equal(partTargetOf(LARGE_FILE_TARGETS * base - 1, base, 2 * base), 2 * base);
  assert.equal(partTargetOf(LARGE_FILE_DOWN * base, base, 2 * base), 2 * base);
  assert.equal(partTargetOf(LARGE_FILE_DOWN * base - 1, base, 2 * base), base);
  assert.equal(partTargetOf(LARGE_FILE_DOWN * base, base, base), base);

  // Split for real: half as many parts above the limit as the same text cut at the target.
  const big = backends(30_000);
  assert.ok(big.length > LARGE_FILE_TARGETS * base, `${big.length}`);
  const r = splitConfig("large", { "haproxy.cfg": big });
  const cutAtBase = chunks(big, base).length;
  assert.ok(r.parts.length < cutAtBase * 0.7, `${r.parts.length} parts, ${cutAtBase} at the base target`);
  assert.deepEqual(filesOf(assembleConfig("large", r.head, partsMap(r))), { files: { "haproxy.cfg": big } });
  // One backend changed: still one or two parts rewritten.
  const after = splitConfig("large", { "haproxy.cfg": backends(30_000, 17_000) }, previousOf(r));
  const old = previousOf(r);
  const changed = after.parts.filter((p) => old.get(p.name) !== p.sha256);
  assert.ok(changed.length >= 1 && changed.length <= 2, `${changed.length} parts changed`);
});

Deno.test("one backend changed: one part is rewritten, every other keeps its name and content", () => {
  const before = splitConfig("p", { "haproxy.cfg": backends(10_000) });
  const after = splitConfig("p", { "haproxy.cfg": backends(10_000, 4321) }, previousOf(before));
  const old = previousOf(before);
  const changed = after.parts.filter((p) => old.get(p.name) !== p.sha256);
  assert.ok(changed.length >= 1 && changed.length <= 2, `${changed.length} parts changed`);
  assert.equal(after.parts.length, before.parts.length);
  const joined = assembleConfig("p", after.head, partsMap(after));
  assert.deepEqual(filesOf(joined), { files: { "haproxy.cfg": backends(10_000, 4321) } });
});

Deno.test("a backend added in the middle moves no other part to another slot", () => {
  const before = splitConfig("p", { "haproxy.cfg": backends(5_000) });
  const text = backends(5_000).replace(
    "backend be_ns3_svc2500_80\n",
    "backend be_new\n    balance source\n\nbackend be_ns3_svc2500_80\n",
  );
  const after = splitConfig("p", { "haproxy.cfg": text }, previousOf(before));
  const old = previousOf(before);
  const rewritten = after.parts.filter((p) => old.get(p.name) !== p.sha256);
  assert.ok(rewritten.length <= 2, `${rewritten.length} parts rewritten`);
});

Deno.test("a missing part or a part holding newer content is reported, never joined", () => {
  const r = splitConfig("p", { "haproxy.cfg": backends(10_000) });
  const parts = partsMap(r);
  const [first, second] = r.parts;
  parts.delete(first.name);
  parts.set(second.name, readPart(second.content + "# newer\n"));
  const out = assembleConfig("p", r.head, parts);
  assert.ok("missing" in out);
  assert.deepEqual(out.missing.map((m) => m.name).sort(), [first.name, second.name].sort());
});

Deno.test("a hostile parts.json is refused: names outside the proxy's parts, bad digests", () => {
  for (
    const bad of [
      "[]",
      `{"haproxy.cfg": "x"}`,
      `{"haproxy.cfg": [{"name": "other-part-1", "sha256": "${"a".repeat(64)}"}]}`,
      `{"haproxy.cfg": [{"name": "p-part-01", "sha256": "${"a".repeat(64)}"}]}`,
      `{"haproxy.cfg": [{"name": "p-part-1", "sha256": "zz"}]}`,
    ]
  ) {
    assert.throws(() => partRefs("p", { [PARTS_KEY]: bad }), /parts\.json/, bad);
  }
  assert.throws(() => splitConfig("p", { [PARTS_KEY]: "x" }), /reserved/);
});

Deno.test("the proxy's cache reads only parts it does not hold, and reports racing writes", async () => {
  const { PartCache } = await import("../../lib/transport/part_cache.ts");
  const store = new Map<string, string>();
  const publish = (r: SplitResult) => {
    for (const p of r.parts) store.set(p.name, p.content);
  };
  const cache = new PartCache("p", (name) => Promise.resolve(store.get(name) ?? null));
  const first = splitConfig("p", { "haproxy.cfg": backends(10_000) });
  publish(first);
  assert.deepEqual(filesOf(await cache.assemble(first.head)), { files: { "haproxy.cfg": backends(10_000) } });
  assert.equal(cache.fetched, first.parts.length);

  const second = splitConfig("p", { "haproxy.cfg": backends(10_000, 77) }, previousOf(first));
  publish(second);
  const before = cache.fetched;
  assert.deepEqual(filesOf(await cache.assemble(second.head)), { files: { "haproxy.cfg": backends(10_000, 77) } });
  assert.ok(cache.fetched - before <= 2, `${cache.fetched - before} parts read for one change`);

  // A proxy that starts while a head older than the stored parts is current: the overwritten
  // slot does not match the head's digest, so nothing is joined.
  const third = splitConfig("p", { "haproxy.cfg": backends(10_000, 9000) }, previousOf(second));
  publish(third);
  const fresh = new PartCache("p", (name) => Promise.resolve(store.get(name) ?? null));
  const stale = await fresh.assemble(second.head);
  assert.ok("missing" in stale && stale.missing.length >= 1);
  assert.deepEqual(filesOf(await fresh.assemble(third.head)), { files: { "haproxy.cfg": backends(10_000, 9000) } });
});

Deno.test("rechunk: an edit at the line that ends a chunk's first unit cuts the chunk before it again", () => {
  const target = 1024;
  const text = Array.from({ length: 400 }, (_, i) => `backend be_${i}\n    server s1 10.0.0.${i % 250}:80\n\n`).join(
    "",
  );
  const old = chunks(text, target).map((content) => ({ content, sha256: sha256Hex(content) }));
  assert.ok(old.length > 10);
  let at = 0;
  for (const c of old.slice(0, -1)) {
    at += c.content.length;
    // The first unit of the next chunk ends at `end`; a space there makes the line after it part of it.
    const end = at + units(text.slice(at))[0].length;
    const edited = `${text.slice(0, end)} ${text.slice(end)}`;
    assert.deepEqual(rechunk(text, old, edited, target).map((c) => c.content), chunks(edited, target), `cut at ${at}`);
  }
});

Deno.test("rechunk: after random edits of a map and of a configuration, the same chunks as cutting the whole text", () => {
  // A deterministic generator: the same edits each run.
  let seed = 12345;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const mapLines = Array.from({ length: 3000 }, (_, i) => `h${i}.example/ be_apps_s${i}_80\n`);
  const config = Array.from(
    { length: 600 },
    (_, i) => `backend be_${i}\n    balance roundrobin\n    server s1 0.0.0.0:0 disabled\n\n`,
  );
  for (const [lines, target] of [[mapLines, 4096], [config, 2048]] as const) {
    const items = [...lines];
    let before = items.join("");
    let old = chunks(before, target).map((content) => ({ content, sha256: sha256Hex(content) }));
    for (let e = 0; e < 150; e++) {
      const at = rand(items.length);
      const kind = rand(4);
      if (kind === 0) items.splice(at, 1);
      else if (kind === 1) items.splice(at, 0, `n${e}.example/ be_apps_new_${e}\n`);
      else if (kind === 2) items[at] = items[at].replace(/be_/, "be_x");
      else items.splice(at, 3, ...items.slice(at, at + 3).reverse());
      const text = items.join("");
      const got = rechunk(before, old, text, target);
      const want = chunks(text, target);
      assert.deepEqual(got.map((c) => c.content), want, `edit ${e} (${kind} at ${at})`);
      for (const c of got) assert.equal(c.sha256, sha256Hex(c.content));
      [before, old] = [text, got];
    }
  }
});

Deno.test("a change's few new parts ride in the head: written after it, never read by the proxy", async () => {
  const { PartCache } = await import("../../lib/transport/part_cache.ts");
  const { configObjects } = await import("../../lib/controller/transport.ts");
  const store = new Map<string, string>();
  const cache = new PartCache("p", (name) => Promise.resolve(store.get(name) ?? null));
  // A first publish: every part is new, none rides in the head; all are written before it.
  const first = splitConfig("p", { "haproxy.cfg": backends(10_000) });
  assert.ok(first.parts.every((p) => !p.carried));
  assert.ok(!Object.keys(first.head).some((k) => k.startsWith(CARRIED_PREFIX)));
  for (const p of first.parts) store.set(p.name, p.content);
  await cache.assemble(first.head);
  // One backend changed: its new part rides in the head, the proxy reads no part at all.
  const data = { "haproxy.cfg": backends(10_000, 4321) };
  const second = splitConfig("p", data, previousOf(first));
  const carried = second.parts.filter((p) => p.carried);
  assert.ok(carried.length >= 1 && carried.length <= 2, `${carried.length} parts carried`);
  // Deflated in the head's binaryData (backends compress well), the text where that is not smaller.
  for (const p of carried) {
    if (p.deflated === null) assert.equal(second.head[`${CARRIED_PREFIX}${p.sha256}`], p.content);
    else assert.equal(inflatedText(second.headBinary[`${CARRIED_PREFIX}${p.sha256}.deflate`]), p.content);
  }
  assert.ok(carried.some((p) => p.deflated !== null), "a carried part of backends travels deflated");
  const before = cache.fetched;
  assert.deepEqual(filesOf(await cache.assemble(second.head, undefined, second.headBinary)), { files: data });
  assert.equal(cache.fetched, before, "no part read for a change the head carries");
  // The controller writes the carried parts after the head (the next heads name them only).
  const objects = configObjects("p", data, previousOf(first));
  const head = objects.findIndex((o) => o.name === "p");
  for (const p of carried) assert.ok(objects.findIndex((o) => o.name === p.name) > head, p.name);
  const third = splitConfig("p", data, previousOf(second));
  assert.ok(third.parts.every((p) => !p.carried), "stored parts are not carried again");
});

Deno.test("a head's digest covers every key and value, and nothing else gives it", () => {
  const data = { "haproxy.cfg": "global\n", "crt-list": "", "parts.json": "{}" };
  const d = configDigest(data);
  assert.match(d, /^[0-9a-f]{64}$/);
  assert.equal(configDigest({ "parts.json": "{}", "crt-list": "", "haproxy.cfg": "global\n" }), d, "key order");
  assert.notEqual(configDigest({ ...data, "crt-list": "x" }), d);
  assert.notEqual(configDigest({ ...data, extra: "" }), d);
  assert.notEqual(configDigest({ "haproxy.cfg": "global\n" }), configDigest({ "haproxy.cf": "gglobal\n" }));
  assert.equal(configDigest(undefined), configDigest({}));
});

Deno.test("an oversized unit of non-BMP text is cut between code points: every part survives UTF-8", () => {
  const big = "backend huge\n    # " + "😀".repeat(MAX_PART_BYTES / 2 + 10) + "\n";
  const text = "global\n" + big + "backend b\n    x\n";
  const parts = chunks(text);
  assert.equal(parts.join(""), text);
  assert.ok(parts.length >= 3);
  for (const p of parts) {
    // A ConfigMap value is UTF-8: a lone surrogate would come back as U+FFFD, with the same digest.
    assert.ok(p.isWellFormed(), `a part of ${p.length} units holds a lone surrogate`);
  }
  // An edit at the unit's end goes on joining back, through the memo (rechunk) and from scratch.
  const files = (tail: string) => ({ "haproxy.cfg": text.replace("\nbackend b", `${tail}\nbackend b`) });
  const one = splitConfig("p", files(""), new Map(), { inline: 4096, fileInline: 512, targetPart: 600 }, "ns");
  const two = splitConfig("p", files(" edited"), previousOf(one), {
    inline: 4096,
    fileInline: 512,
    targetPart: 600,
  }, "ns");
  const byName = new Map([...one.parts, ...two.parts].map((p) => [p.name, readPart(p.content)]));
  const joined = assembleConfig("p", two.head, byName);
  assert.ok(!("missing" in joined));
  assert.equal(joined.files["haproxy.cfg"], files(" edited")["haproxy.cfg"]);
});

Deno.test("the chunk memo: kept per namespace and proxy, and let go of once a proxy's files are inline", () => {
  const limits = { inline: 4096, fileInline: 512, targetPart: 600 };
  const mine = (ns: string) => memoizedSplits().filter((k) => k.startsWith(`${ns}/web\0`));
  splitConfig("web", { "haproxy.cfg": backends(300) }, new Map(), limits, "team-a");
  splitConfig("web", { "haproxy.cfg": backends(300, 5) }, new Map(), limits, "team-b");
  assert.deepEqual(mine("team-a"), ["team-a/web\0haproxy.cfg"]);
  assert.deepEqual(mine("team-b"), ["team-b/web\0haproxy.cfg"]);
  // A file that is inline now, then a configuration small enough to be inline whole.
  splitConfig("web", { "haproxy.cfg": backends(300), "crt-list": "x".repeat(600) }, new Map(), limits, "team-a");
  assert.deepEqual(mine("team-a").sort(), ["team-a/web\0crt-list", "team-a/web\0haproxy.cfg"]);
  splitConfig("web", { "haproxy.cfg": backends(300), "crt-list": "" }, new Map(), limits, "team-a");
  assert.deepEqual(mine("team-a"), ["team-a/web\0haproxy.cfg"]);
  splitConfig("web", { "haproxy.cfg": "global\n" }, new Map(), limits, "team-a");
  assert.deepEqual(mine("team-a"), []);
  assert.deepEqual(mine("team-b"), ["team-b/web\0haproxy.cfg"]);
});

Deno.test("a file between the two part sizes with no memo of its last cut keeps the cut its parts have", () => {
  const limits: SplitLimits = { inline: 2000, fileInline: 500, targetPart: 256 };
  const text = (n: number, edited = -1) =>
    "global\n" +
    Array.from({ length: n }, (_, i) => `backend be_${i}\n${i === edited ? "    balance leastconn\n" : ""}    x\n\n`)
      .join("");
  // Cut at twice the target above LARGE_FILE_TARGETS targets, then shrunk into the band: still twice.
  const one = splitConfig("band", { "haproxy.cfg": text(3300) }, new Map(), limits, "ns");
  const two = splitConfig("band", { "haproxy.cfg": text(2600) }, previousOf(one), limits, "ns");
  const mean = (r: SplitResult) => r.parts.reduce((n, p) => n + p.content.length, 0) / r.parts.length;
  assert.ok(text(3300).length > LARGE_FILE_TARGETS * 256 && text(2600).length < LARGE_FILE_TARGETS * 256);
  assert.ok(text(2600).length > LARGE_FILE_DOWN * 256);
  assert.ok(mean(two) > 400, `parts of ${mean(two)} characters: cut at the larger size`);
  // The memo moves on (other proxies' files, or a restart of the controller).
  for (let i = 0; i < 70; i++) splitConfig(`other${i}`, { "haproxy.cfg": text(120) }, new Map(), limits, "ns");
  assert.ok(!memoizedSplits().some((k) => k.startsWith("ns/band\0")));
  const three = splitConfig("band", { "haproxy.cfg": text(2600, 900) }, previousOf(two), limits, "ns");
  const rewritten = three.parts.filter((p) => previousOf(two).get(p.name) !== p.sha256).length;
  assert.ok(rewritten <= 2, `${rewritten} of ${three.parts.length} parts rewritten for a one-line edit`);
});
