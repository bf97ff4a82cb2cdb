import assert from "node:assert/strict";
import { AppliedHashes } from "../../lib/controller/applied.ts";

Deno.test("applied: the event of a write is ours whether it comes before or after the answer", () => {
  const a = new AppliedHashes();
  assert.equal(a.classify("cm/x", "h1"), "other", "nothing written yet");
  a.writing("cm/x", "h1");
  assert.equal(a.classify("cm/x", "h1"), "echo");
  assert.equal(a.classify("cm/x", "h0"), "other", "another hash");
  assert.equal(a.classify("cm/x", undefined), "other", "no hash");
});

Deno.test("applied: once its write's event is seen, the hash it should have is 'expected' (fields may differ)", () => {
  const a = new AppliedHashes();
  a.writing("cm/x", "h1");
  assert.equal(a.classify("cm/x", "h1"), "echo");
  assert.equal(a.classify("cm/x", "h1"), "expected", "a later event with our hash: someone may have changed a field");
});

Deno.test("applied: two writes in a row, the first one's event after both answers is an echo", () => {
  const a = new AppliedHashes();
  a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  assert.equal(a.classify("cm/x", "h1"), "echo", "late event of the first write");
  assert.equal(a.classify("cm/x", "h2"), "echo");
  // Each late event is taken once: seen again later, the old hash means someone put it back.
  assert.equal(a.classify("cm/x", "h1"), "other");
  assert.equal(a.get("cm/x"), "h2");
});

Deno.test("applied: a late event settles the writes before it; a failed write is undone", () => {
  const a = new AppliedHashes();
  a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  a.writing("cm/x", "h3");
  assert.equal(a.classify("cm/x", "h2"), "echo");
  assert.equal(a.classify("cm/x", "h1"), "other", "events come in write order: h1's is past");
  const undo = a.writing("cm/x", "h4");
  undo();
  assert.equal(a.get("cm/x"), "h3");
  assert.equal(a.classify("cm/x", "h4"), "other", "a write that failed has no event");
  assert.equal(a.classify("cm/x", "h3"), "echo");
});

Deno.test("applied: found, delete and clear", () => {
  const a = new AppliedHashes();
  a.found("cm/x", "h1");
  assert.equal(a.classify("cm/x", "h1"), "expected");
  a.writing("cm/y", "h2");
  a.delete("cm/y");
  assert.equal(a.classify("cm/y", "h2"), "other");
  a.writing("cm/z", "h3");
  a.clear();
  assert.equal(a.classify("cm/x", "h1"), "other");
  assert.equal(a.classify("cm/z", "h3"), "other");
});

Deno.test("applied: an undo after a later write leaves the later hash", () => {
  const a = new AppliedHashes();
  const undo = a.writing("cm/x", "h1");
  a.writing("cm/x", "h2");
  undo();
  assert.equal(a.get("cm/x"), "h2");
  assert.equal(a.classify("cm/x", "h1"), "other");
});
