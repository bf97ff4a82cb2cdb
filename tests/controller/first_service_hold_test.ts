import assert from "node:assert/strict";
import { FIRST_SERVICE_HOLD_MS, FirstServiceHold, HOLD_FROM_MEMBERS } from "../../lib/controller/first_service_hold.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";

/** A lane that counts its holds, a clock and Deployments set by the test. */
function setup() {
  let holds = 0;
  const lane = { hold: () => void holds++, release: () => void holds-- };
  const clock = { now: 0 };
  const deployments = new Map<string, KubeObject>();
  const hold = new FirstServiceHold({
    lane,
    deployment: (namespace, name) => deployments.get(`${namespace}/${name}`) ?? null,
    now: () => clock.now,
    lookEveryMs: 1,
  });
  const available = (namespace: string, name: string, replicas: number) =>
    deployments.set(`${namespace}/${name}`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { namespace, name },
      status: { availableReplicas: replicas },
    });
  return { hold, clock, available, held: () => holds };
}

const turn = () => new Promise((r) => setTimeout(r, 5));

Deno.test("first service hold: the writes wait until the proxy Deployment has an available pod", async () => {
  const { hold, available, held } = setup();
  available("ops", "p", 0);
  hold.published("ops", "p", HOLD_FROM_MEMBERS, 500_000);
  assert.equal(held(), 1);
  assert.equal(hold.holding, true);
  await turn();
  assert.equal(held(), 1, "no pod available yet");
  available("ops", "p", 1);
  await turn();
  assert.equal(held(), 0);
  assert.equal(hold.holding, false);
  // Released once: a later first publish (another proxy) never holds the writes again.
  hold.published("ops", "q", HOLD_FROM_MEMBERS, 500_000);
  assert.equal(held(), 0);
  hold.stop();
});

Deno.test("first service hold: a proxy that never becomes available is waited for a bounded time, longer when larger", async () => {
  const { hold, clock, held } = setup();
  hold.published("ops", "small", 2_000, 1_000_000);
  hold.published("ops", "large", 100_000, 8_000_000); // four times the base size: four times the wait
  assert.equal(held(), 1, "one hold for both");
  clock.now = FIRST_SERVICE_HOLD_MS;
  await turn();
  assert.equal(held(), 1, "the larger proxy's wait is not over");
  clock.now = 4 * FIRST_SERVICE_HOLD_MS - 1;
  await turn();
  assert.equal(held(), 1);
  clock.now = 4 * FIRST_SERVICE_HOLD_MS;
  await turn();
  assert.equal(held(), 0);
  hold.stop();
});

Deno.test("first service hold: no wait for a proxy already serving, a small class, or after the first idle moment", () => {
  const { hold, available, held } = setup();
  available("ops", "serving", 2);
  hold.published("ops", "serving", 50_000, 4_000_000);
  hold.published("ops", "small", HOLD_FROM_MEMBERS - 1, 100_000);
  assert.equal(held(), 0);
  hold.close();
  hold.published("ops", "late", 50_000, 4_000_000);
  assert.equal(held(), 0);
  hold.stop();
});

Deno.test("first service hold: stopping releases the writes and its timer", () => {
  const { hold, held } = setup();
  hold.published("ops", "p", HOLD_FROM_MEMBERS, 100_000);
  assert.equal(held(), 1);
  hold.stop();
  assert.equal(held(), 0);
  hold.stop();
  assert.equal(held(), 0);
});
