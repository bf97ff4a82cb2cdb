/**
 * lib/render/dropped_backends.ts: sections, backends left out in order, and names as tokens.
 */
import assert from "node:assert/strict";
import {
  alignSections,
  backendOf,
  droppedSections,
  namesToken,
  sameSkeleton,
  sectionList,
  sectionTexts,
  unreferencedDrops,
} from "../../lib/render/dropped_backends.ts";

const config = (...backends: string[]) =>
  [
    "# generated",
    "global",
    "    maxconn 100",
    "",
    "frontend http",
    "    bind :80",
    "# a comment at column 0 stays in its section",
    "    use_backend %[var(txn.route)]",
    "",
    ...backends.flatMap((b) => [`backend ${b}`, "    server s1 10.0.0.1:80", ""]),
  ].join("\n");

Deno.test("sections start at column 0; comments and blank lines stay in the section before", () => {
  const s = sectionTexts(config("a", "b"));
  assert.deepEqual(s.map((x) => x.split("\n")[0]), [
    "# generated",
    "global",
    "frontend http",
    "backend a",
    "backend b",
  ]);
  assert.ok(s[2].includes("# a comment"));
  assert.equal(s.join("\n"), config("a", "b"));
  assert.deepEqual(s.map(backendOf), [null, null, null, "a", "b"]);
  assert.equal(backendOf("backend\tx_y.z:1-2 # comment\n"), "x_y.z:1-2");
  assert.equal(backendOf("backends x\n"), null);
});

Deno.test("droppedSections: the backends left out, in order; anything else is null", () => {
  const all = sectionList(config("a", "b", "c"));
  assert.deepEqual(droppedSections(all, all), []);
  assert.deepEqual(droppedSections(all, sectionList(config("a", "c"))), ["b"]);
  assert.deepEqual(droppedSections(all, sectionList(config("c"))), ["a", "b"]);
  assert.deepEqual(droppedSections(all, sectionList(config())), ["a", "b", "c"]);
  assert.equal(droppedSections(all, sectionList(config("a", "b", "c", "d"))), null, "added");
  assert.equal(droppedSections(all, sectionList(config("b", "a"))), null, "moved");
  assert.equal(droppedSections(sectionList(config("a")), sectionList(config("b"))), null, "replaced");
  const changed = sectionList(config("a", "b").replace("maxconn 100", "maxconn 200"));
  assert.equal(droppedSections(all, changed), null, "global changed");
  const noFrontend = sectionList(config("a", "b", "c").replace(/frontend http\n(.*\n)*?\n/, ""));
  assert.equal(noFrontend.keys.length, 5);
  assert.equal(droppedSections(all, noFrontend), null, "a frontend is not a backend");
  const inner = sectionList(config("a", "b", "c").replace("backend b\n    server s1 10.0.0.1:80", "backend b\n"));
  assert.equal(droppedSections(all, inner), null, "a backend's lines changed");
  // blank lines mean nothing: the last backend before another part may end with more of them
  const blank = sectionList(config("a", "b", "c").replace("backend c", "backend d\n\n\nbackend c"));
  assert.deepEqual(droppedSections(blank, sectionList(config("a", "b", "c"))), ["d"]);
  // with another sameness (the controller's: up to slot addresses)
  const moved = sectionList(
    config("a", "c").replace("backend c\n    server s1 10.0.0.1", "backend c\n    server s1 10.0.0.9"),
  );
  assert.equal(droppedSections(all, moved), null);
  assert.deepEqual(
    droppedSections(all, moved, (x, y) => x.replace(/10\.0\.0\.\d/, "") === y.replace(/10\.0\.0\.\d/, "")),
    [
      "b",
    ],
  );
});

Deno.test("droppedSections: a backend whose text HAProxy reads as more than that backend is not dropped", () => {
  // `    backend hidden` starts a backend for HAProxy, which `next` would drop unseen with b
  const hidden = config("a", "b", "c").replace("backend b\n", "backend b\n    backend hidden\n");
  assert.equal(droppedSections(sectionList(hidden), sectionList(config("a", "c"))), null);
  // a conditional block opened in it and closed elsewhere
  const block = config("a", "b", "c").replace("backend b\n", "backend b\n    .if 1\n");
  assert.equal(droppedSections(sectionList(block), sectionList(config("a", "c"))), null);
  assert.deepEqual(droppedSections(sectionList(config("a", "b", "c")), sectionList(config("a", "c"))), ["b"]);
});

Deno.test("namesToken: the name between characters a proxy name cannot hold", () => {
  assert.ok(namesToken("use_backend api if x", "api"));
  assert.ok(namesToken("a.test api\n", "api"));
  assert.ok(namesToken("a.test api", "api"));
  assert.ok(namesToken("api", "api"));
  assert.ok(namesToken("server s1 track api/s1", "api"));
  assert.ok(namesToken("str(api),x", "api"));
  assert.ok(namesToken("backend_api api", "api"), "a later occurrence");
  assert.equal(namesToken("use_backend api2 if x", "api"), false);
  assert.equal(namesToken("use_backend my-api", "api"), false);
  assert.equal(namesToken("ns_api_80 ns.api:80 api_1", "api"), false);
  assert.equal(namesToken("", "api"), false);
});

Deno.test("unreferencedDrops: null when the configuration or a map still names a dropped backend", () => {
  const all = sectionList(config("a", "b", "c"));
  const next = config("a", "c");
  assert.deepEqual(unreferencedDrops(all, sectionList(next), [next, "h.test a\n"]), ["b"]);
  assert.equal(unreferencedDrops(all, sectionList(next), [next, "h.test a\ni.test b\n"]), null);
  const naming = next.replace("    use_backend %[var(txn.route)]", "    use_backend b if { path /b }");
  assert.equal(unreferencedDrops(all, sectionList(naming), [naming]), null);
  assert.equal(unreferencedDrops(all, sectionList(config("b", "a")), [config("b", "a")]), null);
});

Deno.test("alignSections: the sections dropped, and the pairs that differ in slot addresses only", () => {
  const all = sectionList(config("a", "b", "c"));
  const next = sectionList(
    config("a", "c").replace("backend c\n    server s1 10.0.0.1:80", "backend c\n    server s1 10.0.0.7:80"),
  );
  assert.deepEqual(alignSections(all, next, sameSkeleton), { dropped: [4], changed: [[5, 4]] });
  assert.deepEqual(alignSections(all, all, sameSkeleton), { dropped: [], changed: [] });
  const param = sectionList(
    config("a", "b", "c").replace("backend c\n    server s1 10.0.0.1:80", "backend c\n    server s1 10.0.0.1:80 check"),
  );
  assert.equal(alignSections(all, param, sameSkeleton), null, "a slot's parameters are structure");
  assert.ok(sameSkeleton("backend x\n    server s1 10.0.0.1:80 disabled", "backend x\n    server s1 10.0.0.2:81"));
  assert.equal(sameSkeleton("backend x\n    server s1 10.0.0.1:80", "backend x\n    server s2 10.0.0.1:80"), false);
});
