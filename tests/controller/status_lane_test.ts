import assert from "node:assert/strict";
import { StatusLane } from "../../lib/controller/status_lane.ts";

/** A job that records its start and finishes when released. */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => release = r);
  return { done, release };
}

Deno.test("status lane: at most `limit` writes run, never two of one ingress, the latest pending write wins", async () => {
  const started: string[] = [];
  let running = 0, peak = 0;
  const gates = new Map<string, ReturnType<typeof gate>>();
  const job = (name: string) => async () => {
    started.push(name);
    running++;
    peak = Math.max(peak, running);
    const g = gate();
    gates.set(name, g);
    await g.done;
    running--;
  };
  let idles = 0;
  const lane = new StatusLane({ limit: 2, onFailure: () => {}, onIdle: () => idles++ });
  lane.add("a", job("a1"));
  lane.add("b", job("b1"));
  lane.add("c", job("c1"));
  lane.add("a", job("a2")); // a1 runs: waits for it
  lane.add("c", job("c2")); // replaces c1, which has not started
  assert.deepEqual(started, ["a1", "b1"]);
  assert.equal(lane.idle, false);
  gates.get("a1")!.release();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(started, ["a1", "b1", "a2"]); // a2 waited for a1; c2 re-queued last
  gates.get("b1")!.release();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(started, ["a1", "b1", "a2", "c2"]);
  gates.get("c2")!.release();
  gates.get("a2")!.release();
  await lane.drained();
  assert.equal(peak, 2);
  assert.equal(lane.idle, true);
  assert.ok(idles >= 1);
});

Deno.test("status lane: a failed write is reported with its key; clear drops what has not started", async () => {
  const failures: [string, string][] = [];
  const lane = new StatusLane({
    limit: 1,
    onFailure: (key, err) => failures.push([key, (err as Error).message]),
    onIdle: () => {},
  });
  const g = gate();
  let ranB = false;
  lane.add("a", async () => {
    await g.done;
    throw new Error("409 Conflict");
  });
  lane.add("b", () => {
    ranB = true;
    return Promise.resolve();
  });
  lane.clear();
  g.release();
  await lane.drained();
  assert.deepEqual(failures, [["a", "409 Conflict"]]);
  assert.equal(ranB, false);
});

Deno.test("status lane: 20,000 writes of 5,000 ingresses run in the order they came, one at a time per ingress", async () => {
  const started: string[] = [];
  const runningKeys = new Set<string>();
  const lane = new StatusLane({ limit: 2, onFailure: (k, e) => assert.fail(`${k}: ${e}`), onIdle: () => {} });
  const job = (key: string, name: string) => async () => {
    assert.ok(!runningKeys.has(key), `two writes of ${key} at once`);
    runningKeys.add(key);
    started.push(name);
    await new Promise((r) => setTimeout(r, 0));
    runningKeys.delete(key);
  };
  // Each round re-adds every ingress: a pending write is replaced and moves last, a running one's next waits.
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 5_000; i++) lane.add(`k${i}`, job(`k${i}`, `k${i}.${round}`));
    await new Promise((r) => setTimeout(r, 0));
  }
  await lane.drained();
  // Every ingress's last write ran, after any earlier one of it that had started.
  const last = new Map(started.map((s) => [s.slice(0, s.indexOf(".")), s]));
  for (let i = 0; i < 5_000; i++) assert.equal(last.get(`k${i}`), `k${i}.3`);
  assert.equal(lane.idle, true);
});

Deno.test("status lane: while held no write starts and the lane is not idle; released, they run", async () => {
  const started: string[] = [];
  const lane = new StatusLane({ limit: 2, onFailure: () => {}, onIdle: () => {} });
  lane.hold();
  lane.hold();
  lane.add("a", () => (started.push("a"), Promise.resolve()));
  lane.add("b", () => (started.push("b"), Promise.resolve()));
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(started.length, 0);
  assert.equal(lane.idle, false);
  lane.release();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(started.length, 0, "one hold is left");
  lane.release();
  lane.release(); // more releases than holds change nothing
  await lane.drained();
  assert.deepEqual(started, ["a", "b"]);
  lane.add("c", () => (started.push("c"), Promise.resolve()));
  await lane.drained();
  assert.deepEqual(started, ["a", "b", "c"], "not held once every hold is released");
});
