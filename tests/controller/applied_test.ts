import assert from "node:assert/strict";
import { AppliedHashes } from "../../lib/controller/applied.ts";

Deno.test("applied: the event of a write is ours whether it comes before or after the answer", () => {
  const a = new AppliedHashes();
  assert.equal(a.isOwn("cm/x", "h1"), false, "nothing written yet: drift");
  a.writing("cm/x", "h1");
  assert.equal(a.isOwn("cm/x", "h1"), true);
  assert.equal(a.isOwn("cm/x", "h0"), false, "another hash is drift");
  assert.equal(a.isOwn("cm/x", undefined), false, "no hash is drift");
});

Deno.test("applied: two writes in a row, the first one's event after both answers is no drift", () => {
  const a = new AppliedHashes();
  a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  assert.equal(a.isOwn("cm/x", "h1"), true, "late event of the first write");
  assert.equal(a.isOwn("cm/x", "h2"), true);
  // Each late event is taken once: seen again later, the old hash means someone put it back.
  assert.equal(a.isOwn("cm/x", "h1"), false);
  assert.equal(a.get("cm/x"), "h2");
});

Deno.test("applied: a late event settles the writes before it; a failed write is undone", () => {
  const a = new AppliedHashes();
  a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  a.writing("cm/x", "h3");
  assert.equal(a.isOwn("cm/x", "h2"), true);
  assert.equal(a.isOwn("cm/x", "h1"), false, "events come in write order: h1's is past");
  const undo = a.writing("cm/x", "h4");
  undo();
  assert.equal(a.get("cm/x"), "h3");
  assert.equal(a.isOwn("cm/x", "h4"), false, "a write that failed has no event");
  assert.equal(a.isOwn("cm/x", "h3"), true);
});

Deno.test("applied: found, delete and clear", () => {
  const a = new AppliedHashes();
  a.found("cm/x", "h1");
  assert.equal(a.isOwn("cm/x", "h1"), true);
  a.writing("cm/y", "h2");
  a.delete("cm/y");
  assert.equal(a.isOwn("cm/y", "h2"), false);
  a.writing("cm/z", "h3");
  a.clear();
  assert.equal(a.isOwn("cm/x", "h1"), false);
  assert.equal(a.isOwn("cm/z", "h3"), false);
});

Deno.test("applied: an undo after a later write leaves the later hash", () => {
  const a = new AppliedHashes();
  const undo = a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  undo();
  assert.equal(a.get("cm/x"), "h2");
  assert.equal(a.isOwn("cm/x", "h1"), false);
});
