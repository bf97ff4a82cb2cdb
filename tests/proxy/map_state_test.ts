/**
 * The proxy's incremental map handling (lib/proxy/map_state.ts) and the Applier with
 * configurations that travelled in parts (docs/config-transport.md): the lines found changed
 * from the changed parts alone are exactly those of a whole-text comparison, whatever was
 * committed before, also for two maps that were empty before one apply; a bad line in a new part is refused with its line number in the file; and
 * against a real HAProxy 2.6, a route change that arrives in parts is applied through the Runtime
 * API, and the map HAProxy runs (`show map`) and the file on disk are both the new text.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CheckedMap } from "../../lib/proxy/map_state.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import { MAP_FILES, type MapFile } from "../../lib/render/maps.ts";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import { assembleConfig, readPart, splitConfig } from "../../lib/transport/parts.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { get, loopbackAddress, proxyUnderTest, workerPid } from "./fixtures.ts";

const FILE: MapFile = "routes-prefix.map";
/** Small parts, so that a few hundred lines travel in many of them. */
const SMALL = { inline: 0, fileInline: 0, targetPart: 400 };

/** `files` as the proxy gets them when each one travels in parts: joined texts and their parts. */
function viaParts(files: Record<string, string>, previous = new Map<string, string>()) {
  const split = splitConfig("p", files, previous, SMALL);
  const out = assembleConfig("p", split.head, new Map(split.parts.map((p) => [p.name, readPart(p.content)])));
  if (!("files" in out)) throw new Error("parts missing");
  return { ...out, previous: new Map(split.parts.map((p) => [p.name, p.sha256])) };
}

const text = (lines: Iterable<string>) => [...lines].sort().map((l) => `${l}\n`).join("");

/** A deterministic pseudo-random sequence (xorshift), so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
}

Deno.test("a map in parts: the changed lines are those of a whole-text comparison, committed or not, counted ahead or not", () => {
  const rnd = random(12345);
  const entries = new Map(Array.from({ length: 400 }, (_, i) => [`h${i}.example/`, `be_${i % 9}`]));
  const linesOf = () => [...entries].map(([k, v]) => `${k} ${v}`);
  let previous = new Map<string, string>();
  let running = { lines: new Set(linesOf()), map: CheckedMap.EMPTY };
  {
    const first = viaParts({ [FILE]: text(running.lines) });
    running.map = CheckedMap.of(FILE, first.files[FILE], first.parts.get(FILE), null);
    CheckedMap.EMPTY.diff(running.map).commit();
    previous = first.previous;
  }
  let committed = 0;
  let prepared = 0;
  for (let step = 0; step < 150; step++) {
    // a few routes added, removed or moved to another backend
    for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) {
      const key = `h${Math.floor(rnd() * 500)}.example/`;
      const what = rnd();
      if (what < 0.4) entries.delete(key);
      else entries.set(key, `be_${Math.floor(rnd() * 9)}${what < 0.7 ? "" : "x"}`);
    }
    const next = viaParts({ [FILE]: text(linesOf()) }, previous);
    const map = CheckedMap.of(FILE, next.files[FILE], next.parts.get(FILE), running.map);
    assert.deepEqual(map.lines(), next.files[FILE].slice(0, -1).split("\n"));
    const diff = running.map.diff(map);
    const want = new Set(linesOf());
    assert.deepEqual(
      { added: [...diff.added].sort(), removed: [...diff.removed].sort() },
      {
        added: [...want].filter((l) => !running.lines.has(l)).sort(),
        removed: [...running.lines].filter((l) => !want.has(l)).sort(),
      },
      `step ${step}`,
    );
    // an apply that failed (no commit) leaves the running map as it was
    if (rnd() < 0.7) {
      diff.commit();
      committed++;
      running = { lines: want, map };
      previous = next.previous;
      if (rnd() < 0.2) {
        // As after a reload: the same lines read anew, counted while idle (prepare) or by the next diff.
        running.map = CheckedMap.of(FILE, next.files[FILE], next.parts.get(FILE), null);
        if (rnd() < 0.5) running.map.prepare();
        prepared++;
      }
    }
  }
  assert.ok(prepared > 5, `${prepared} maps read anew`);
  assert.ok(committed > 50 && committed < 150, `${committed} commits`);
});

Deno.test("a map in parts: a bad line in a new part is refused with its line number in the file", () => {
  const good = Array.from({ length: 300 }, (_, i) => `h${String(i).padStart(3, "0")}.example/ be_web`);
  const first = viaParts({ [FILE]: text(good) });
  const known = CheckedMap.of(FILE, first.files[FILE], first.parts.get(FILE), null);
  const bad = [...good];
  bad[200] = "h200.example/ be_web extra";
  const next = viaParts({ [FILE]: text(bad) }, first.previous);
  assert.ok(next.parts.get(FILE)!.length > 5, "the map travels in many parts");
  assert.throws(
    () => CheckedMap.of(FILE, next.files[FILE], next.parts.get(FILE), known),
    /^Error: routes-prefix\.map: line 201 is not "<key> <backend>": "h200\.example\/ be_web extra"$/,
  );
  // parts that do not end at line ends (not what the split writes) are checked as one text
  const content = text(good);
  const cut = [readPart(content.slice(0, 1001)), readPart(content.slice(1001))];
  assert.deepEqual(CheckedMap.of(FILE, content, cut, known).lines(), good);
  assert.throws(() => CheckedMap.of(FILE, "a/ b", undefined, null), /does not end with a line break/);
});

Deno.test("a route change that arrives in parts is applied through the Runtime API: HAProxy's map and the file are the new text", async () => {
  const templates = await loadTemplates(null);
  const web = await startBackend({ name: "web", host: loopbackAddress() });
  const api = await startBackend({ name: "api", host: loopbackAddress() });
  await using p = await proxyUnderTest();
  try {
    const lookup = lookupFromLists({
      services: [service("web", [{ port: 80 }]), service("api", [{ port: 80 }])],
      endpointSlices: [web, api].map((b) =>
        endpointSlice(b.name, [{ name: "", port: b.port }], [{ address: b.address }])
      ),
    });
    let previous = new Map<string, string>();
    /** The desired state of `hosts` (host → service), every file in parts as the proxy joins them. */
    const desired = (hosts: [string, string][]): DesiredState => {
      const rules = hosts.map(([host, svc]) => ({ host, paths: [{ path: "/", service: svc, port: 80 }] }));
      const { model, problems } = buildModel({
        ingresses: [ingress({ name: "many", rules })],
        lookup,
        allowLoopbackEndpoints: true,
      });
      assert.deepEqual(problems, []);
      const r = render(model, templates);
      const joined = viaParts({ "haproxy.cfg": r.config, ...r.maps }, previous);
      previous = joined.previous;
      const maps = new Map(MAP_FILES.map((f) => [f, joined.files[f]]));
      return { config: joined.files["haproxy.cfg"], crtList: r.crtList, pems: new Map(), maps, parts: joined.parts };
    };
    const hosts = new Map(Array.from({ length: 300 }, (_, i) => [`h${i}.example`, i % 2 ? "web" : "api"]));
    const start = await p.applier.apply(desired([...hosts]));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    const pid = await workerPid(p.haproxy);
    const shown = async () =>
      (await p.haproxy.runtime(`show map ${join(p.certDir, FILE)}`)).trim().split("\n").map((l) =>
        l.replace(/^0x[0-9a-f]+ /, "")
      ).sort();
    const onDisk = async () => (await Deno.readTextFile(join(p.certDir, FILE))).trimEnd().split("\n").sort();

    for (
      const change of [
        () => hosts.set("new.example", "web"),
        () => hosts.delete("h10.example"),
        () => hosts.set("h11.example", "api").set("h150.example", "api").delete("h299.example"),
        () => hosts.set("h0.example", "web"),
      ]
    ) {
      change();
      const next = desired([...hosts]);
      const r = await p.applier.apply(next);
      assert.deepEqual([r.kind, r.ok, r.mapsChanged], ["runtime", true, 1], r.error ?? "");
      const want = next.maps!.get(FILE)!.trimEnd().split("\n").sort();
      assert.deepEqual(await shown(), want, "HAProxy runs the new map");
      assert.deepEqual(await onDisk(), want, "the file agrees with what runs");
    }
    assert.equal((await get(`${p.url}/`, "new.example")).name, "web");
    assert.equal((await get(`${p.url}/`, "h0.example")).name, "web");
    assert.equal((await get(`${p.url}/`, "h10.example")).status, 404);
    assert.equal(await workerPid(p.haproxy), pid, "no reload");

    // the same texts cut at other places (other split limits): a change that changes nothing
    const good = desired([...hosts]);
    const recut = splitConfig("p", { "haproxy.cfg": good.config, [FILE]: good.maps!.get(FILE)! }, new Map(), {
      ...SMALL,
      targetPart: 250,
    });
    const rejoined = assembleConfig("p", recut.head, new Map(recut.parts.map((x) => [x.name, readPart(x.content)])));
    assert.ok("files" in rejoined);
    assert.notDeepEqual(rejoined.parts.get(FILE)!.map((x) => x.sha256), good.parts!.get(FILE)!.map((x) => x.sha256));
    const same = await p.applier.apply({ ...good, parts: rejoined.parts });
    assert.deepEqual([same.kind, same.ok, same.serversChanged], ["runtime", true, 0], same.error ?? "");
    assert.deepEqual(await shown(), good.maps!.get(FILE)!.trimEnd().split("\n").sort());
    assert.equal(await workerPid(p.haproxy), pid, "no reload");

    // a bad line in a changed part: refused before anything reaches HAProxy
    const maps = new Map(good.maps);
    const parts = new Map(good.parts);
    const list = [...parts.get(FILE)!];
    list[1] = readPart(list[1].content.replace(" be_", "\tbe_"));
    parts.set(FILE, list);
    maps.set(FILE, list.map((x) => x.content).join(""));
    const refused = await p.applier.apply({ ...good, maps, parts });
    assert.deepEqual([refused.ok, refused.stage], [false, "input"]);
    assert.match(refused.error ?? "", /routes-prefix\.map: line \d+ is not/);
    assert.deepEqual(await shown(), good.maps!.get(FILE)!.trimEnd().split("\n").sort());
  } finally {
    await p.close();
    await web.close();
    await api.close();
  }
});

Deno.test("two empty maps that change in one apply keep line counts of their own", () => {
  // the same line in two maps (an Exact and a Prefix key can be the same text)
  const lines = Array.from({ length: 60 }, (_, i) => `h${i}.example/x/ be_${i}`);
  const first = viaParts({ "routes-exact.map": text(lines), [FILE]: text(lines) });
  const exact = CheckedMap.of(
    "routes-exact.map",
    first.files["routes-exact.map"],
    first.parts.get("routes-exact.map"),
    null,
  );
  const prefix = CheckedMap.of(FILE, first.files[FILE], first.parts.get(FILE), null);
  const toExact = CheckedMap.EMPTY.diff(exact);
  const toPrefix = CheckedMap.EMPTY.diff(prefix);
  assert.deepEqual([toExact.added.length, toPrefix.added.length], [60, 60]);
  toExact.commit();
  toPrefix.commit();
  // one line removed from the Exact map only
  const next = viaParts({ "routes-exact.map": text(lines.slice(1)), [FILE]: text(lines) }, first.previous);
  const exact2 = CheckedMap.of(
    "routes-exact.map",
    next.files["routes-exact.map"],
    next.parts.get("routes-exact.map"),
    exact,
  );
  const { added, removed } = exact.diff(exact2);
  assert.deepEqual({ added, removed }, { added: [], removed: [lines[0]] });
});
