/**
 * Phases (lib/dev/conformance/phases.ts): each is announced and timed, a failed one too (and its
 * error passes through); the table lists them in order with the total.
 */
import assert from "node:assert/strict";
import { Phases } from "../../../lib/dev/conformance/phases.ts";

Deno.test("phases are announced, timed, failed ones marked, and tabled with the total", async () => {
  const lines: string[] = [];
  const p = new Phases((l) => lines.push(l));
  assert.equal(await p.run("builds", () => Promise.resolve(7)), 7);
  await assert.rejects(p.run("cluster start", () => Promise.reject(new Error("no node"))), /no node/);
  assert.deepEqual(lines.filter((l) => l.startsWith("\n===")), ["\n=== builds", "\n=== cluster start"]);
  assert.match(lines.find((l) => l.startsWith("=== builds:"))!, /^=== builds: \d+\.\d s$/);
  assert.match(lines.find((l) => l.startsWith("=== cluster start:"))!, /\(failed\)$/);
  const table = p.table();
  assert.equal(table[0], "phase timings:");
  assert.match(table[1], /^ {2}builds +\d+\.\d s$/);
  assert.match(table[2], /^ {2}cluster start +\d+\.\d s {2}\(failed\)$/);
  assert.match(table[3], /^ {2}total +\d+\.\d s$/);
  assert.deepEqual(p.done.map((x) => [x.name, x.ok]), [["builds", true], ["cluster start", false]]);
});
