/**
 * The event recorder's pacing, with a plain object standing in for the writer (what reaches the
 * API server is covered by the controller's cluster tests): a burst goes out two at a time, each
 * Event once, and past 1,000 waiting the rest are dropped and counted, not queued.
 */
import assert from "node:assert/strict";
import { EventRecorder } from "../../lib/controller/events.ts";
import type { Writer } from "../../lib/controller/leader.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { log, textSink } from "../../lib/log/logger.ts";

/** A writer whose calls finish when `release()` is called; it records the most under way at once. */
function heldWriter() {
  let active = 0;
  const state = { mostActive: 0, bodies: [] as any[], releases: [] as (() => void)[] };
  const writer: Writer = {
    request<T>(_method: string, _path: string, opts: { body?: unknown } = {}): Promise<T> {
      active++;
      state.mostActive = Math.max(state.mostActive, active);
      state.bodies.push(opts.body);
      return new Promise<T>((resolve) => {
        state.releases.push(() => {
          active--;
          resolve(undefined as T);
        });
      });
    },
  };
  /** Lets every call made so far finish, and the next ones start. */
  const release = async () => {
    const now = state.releases.splice(0);
    for (const r of now) r();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { writer, state, release };
}

const ingress = (i: number): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: `ing-${i}`, namespace: "shop", uid: `u-${i}` },
});

Deno.test("events: a burst goes out two at a time, each once, and the rest past 1,000 waiting are dropped", async () => {
  const warnings: string[] = [];
  log.configure({ level: "warn", sink: { write: (_level, msg) => warnings.push(msg) } });
  try {
    const { writer, state, release } = heldWriter();
    const recorder = new EventRecorder(writer);
    const sent = Array.from({ length: 1_050 }, (_, i) => recorder.record(ingress(i), "Warning", "Burst", "m"));
    // The same Event again is not sent twice.
    sent.push(recorder.record(ingress(0), "Warning", "Burst", "m"));
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(state.bodies.length, 2);
    // Two under way, 1,000 waiting: the other 48 are dropped.
    assert.equal(recorder.dropped, 48);
    // Every Event is logged; the drops once (per 1,000 dropped).
    assert.equal(warnings.filter((m) => m === "event Burst").length, 1_050);
    assert.equal(warnings.filter((m) => m.startsWith("events dropped")).length, 1);
    while (state.releases.length > 0) await release();
    await Promise.all(sent);
    assert.equal(state.mostActive, 2);
    assert.equal(state.bodies.length, 1_002);
    assert.deepEqual(
      state.bodies.slice(0, 3).map((b) => b.involvedObject.name),
      ["ing-0", "ing-1", "ing-2"],
    );
    // A dropped Event is not remembered as sent: it is recorded when it happens again.
    const again = recorder.record(ingress(1_049), "Warning", "Burst", "m");
    await new Promise((r) => setTimeout(r, 0));
    assert.equal(state.bodies.at(-1).involvedObject.name, "ing-1049");
    await release();
    await again;
  } finally {
    log.configure({ level: "info", sink: textSink() });
  }
});
