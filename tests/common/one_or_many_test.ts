import assert from "node:assert/strict";
import { addMember, membersOf, type OneOrMany, removeMember } from "../../lib/common/one_or_many.ts";

Deno.test("one member is held as itself, several in a Set, and back as members leave", () => {
  const m = new Map<string, OneOrMany>();
  addMember(m, "k", "a");
  addMember(m, "k", "a");
  assert.equal(m.get("k"), "a");
  addMember(m, "k", "b");
  addMember(m, "k", "c");
  assert.deepEqual([...membersOf(m.get("k"))], ["a", "b", "c"]);
  removeMember(m, "k", "a");
  removeMember(m, "k", "c");
  assert.equal(m.get("k"), "b", "the one left, as itself");
  removeMember(m, "k", "x");
  assert.equal(m.get("k"), "b", "a member never added changes nothing");
  removeMember(m, "k", "b");
  assert.equal(m.has("k"), false);
  assert.deepEqual([...membersOf(m.get("k"))], []);
});
