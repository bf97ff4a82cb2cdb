/**
 * Moves of members between groups, with a plain route source standing in for the Ingress one (the
 * cluster tests cover moves through the real API server): the old group serves a moving member
 * until its status moved to the new group and a grace period passed; the status moves only once
 * the new group's Deployment is available and has had the grace period; a member no group handles
 * loses its status once its old group published without it.
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { GroupIndex, type GroupKey } from "../../lib/controller/groups.ts";
import { Handovers } from "../../lib/controller/handover.ts";
import type { RouteSource } from "../../lib/controller/route_source.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";

const GRACE_MS = 40;

/** Members filed by hand; what the handovers do not use throws. */
class PlainSource implements Partial<RouteSource> {
  readonly index = new GroupIndex();
  readonly objects = new Map<string, KubeObject>();

  file(name: string, group: GroupKey | null): { key: string; before: GroupKey | null; member: KubeObject } {
    const key = `shop/${name}`;
    const member = this.objects.get(key) ?? { metadata: { name, namespace: "shop", uid: `uid-${name}` } };
    this.objects.set(key, member);
    return { key, before: this.index.set(key, group), member };
  }

  keyOf = (m: KubeObject) => `${m.metadata.namespace}/${m.metadata.name}`;
  get = (key: string) => this.objects.get(key);
  groupOf = (key: string) => this.index.groupOf(key);
  members = (group: GroupKey) => this.index.members(group);
  version = (group: GroupKey) => this.index.version(group);
}

function setup() {
  const source = new PlainSource();
  const state = { available: new Set<string>(), queued: [] as GroupKey[], later: [] as [GroupKey, number][] };
  const lost: string[] = [];
  const handovers = new Handovers({
    settings: { ...defaultSettings, operatorNamespace: "ops", handoverGraceMs: GRACE_MS },
    deployment: (namespace, name) =>
      state.available.has(`${namespace}/${name}`) ? { metadata: { name }, status: { availableReplicas: 1 } } : null,
    queue: (g) => state.queued.push(g),
    later: (g, ms) => state.later.push([g, ms]),
    lost: (_source, key) => lost.push(key),
  });
  return { source, rs: source as unknown as RouteSource, handovers, state, lost };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("handover: a member moving to another group is served by the old one until its status moved and the grace passed", async () => {
  const { source, rs, handovers, state } = setup();
  const first = source.file("web", "class:a");
  assert.deepEqual([...handovers.filed(first.key, first.before, "class:a")], ["class:a"]);
  handovers.published("class:a", rs, [first.member], false);
  assert.equal(handovers.moving(first.key), false);

  // Filed in class:b: both groups are looked at, and class:a still serves it.
  const moved = source.file("web", "class:b");
  assert.deepEqual([...handovers.filed(moved.key, moved.before, "class:b")], ["class:a", "class:b"]);
  assert.equal(handovers.moving(moved.key), true);
  assert.deepEqual([...handovers.involving("class:b")], [moved.key]);
  assert.deepEqual(handovers.serving("class:a", rs), { members: [], leaving: [moved.member] });
  assert.deepEqual(handovers.serving("class:b", rs), { members: [moved.member], leaving: [] });

  // The status waits for an available replica of class:b's Deployment (haproxy-class-b in ops), even
  // past the grace period...
  let shown = 0;
  const show = () => (shown++, Promise.resolve());
  await handovers.settle(moved.key, "class:b", show);
  await sleep(GRACE_MS + 5);
  await handovers.settle(moved.key, "class:b", show);
  assert.equal(shown, 0);
  // ... then moves at once.
  state.available.add("ops/haproxy-class-b");
  await handovers.settle(moved.key, "class:b", show);
  assert.equal(shown, 1);
  assert.deepEqual(state.queued, ["class:a"]);

  // class:a keeps it for another grace period, then drops it and releases the move.
  assert.deepEqual(handovers.serving("class:a", rs).leaving, [moved.member]);
  await sleep(GRACE_MS + 5);
  assert.deepEqual(handovers.serving("class:a", rs).leaving, []);
  handovers.published("class:a", rs, [], false);
  assert.equal(handovers.moving(moved.key), false);
  assert.deepEqual(state.queued, ["class:a", "class:b"]);
});

Deno.test("handover: a member no group handles loses its status once its old group published without it", () => {
  const { source, rs, handovers, lost } = setup();
  const first = source.file("web", "class:a");
  handovers.filed(first.key, first.before, "class:a");
  handovers.published("class:a", rs, [first.member], false);
  const gone = source.file("web", null);
  assert.deepEqual([...handovers.filed(gone.key, gone.before, null)], ["class:a"]);
  assert.equal(handovers.moving(gone.key), false);
  assert.deepEqual(lost, []);
  handovers.published("class:a", rs, [], false);
  assert.deepEqual(lost, [gone.key]);
  assert.deepEqual(handovers.servedGroups(), []);
});

Deno.test("handover: a member not moving shows its group's address at once", async () => {
  const { source, rs, handovers } = setup();
  const m = source.file("web", "class:a");
  handovers.filed(m.key, m.before, "class:a");
  let shown = 0;
  await handovers.settle(m.key, "class:a", () => (shown++, Promise.resolve()));
  assert.equal(shown, 1);
  assert.deepEqual(handovers.servedGroups(), ["class:a"]);
  assert.deepEqual(handovers.serving("class:a", rs), { members: [m.member], leaving: [] });
});

Deno.test("handover: with the new Deployment available, the status still waits the grace period since the new group served it", async () => {
  const { source, handovers, state } = setup();
  const first = source.file("web", "class:a");
  handovers.filed(first.key, first.before, "class:a");
  handovers.settle(first.key, "class:a", () => Promise.resolve());
  const moved = source.file("web", "class:b");
  handovers.filed(moved.key, moved.before, "class:b");
  state.available.add("ops/haproxy-class-b");
  let shown = 0;
  const show = () => (shown++, Promise.resolve());
  await handovers.settle(moved.key, "class:b", show);
  assert.equal(shown, 0);
  const [group, ms] = state.later.at(-1)!;
  assert.equal(group, "class:b");
  assert.ok(ms > 0 && ms <= GRACE_MS, `looked at again in ${ms} ms`);
  await sleep(GRACE_MS + 5);
  await handovers.settle(moved.key, "class:b", show);
  assert.equal(shown, 1);
});
