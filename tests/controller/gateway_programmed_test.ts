import { strict as assert } from "node:assert";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { ProgrammedCheck } from "../../lib/controller/gateway_programmed.ts";
import type { GroupKey } from "../../lib/controller/groups.ts";
import { lookupFromLists } from "../../lib/render/mod.ts";

const group = "gateway:app/edge" as GroupKey;
const service: KubeObject = {
  metadata: { namespace: "ops", name: "gw-edge" },
  spec: { clusterIP: "10.0.0.9", ports: [{ port: 443 }] },
};
const slice = (ready: boolean) => ({
  metadata: { namespace: "ops", name: "gw-edge-1", labels: { "kubernetes.io/service-name": "gw-edge" } },
  addressType: "IPv4",
  endpoints: [{ addresses: ["10.1.0.4"], conditions: { ready } }],
});

function world(available: boolean, ready: boolean | null, answers: boolean) {
  const later: [string, number][] = [];
  const check = new ProgrammedCheck({
    lookup: lookupFromLists({ endpointSlices: ready === null ? [] : [slice(ready)] as never }),
    deployment: () => ({ metadata: { name: "gw-edge" }, status: { availableReplicas: available ? 1 : 0 } }),
    later: (g, ms) => later.push([g, ms]),
    dial: () => Promise.resolve(answers),
  });
  return { check, later };
}

Deno.test("Programmed waits for the pod, then the Service's ready endpoint, then the address answering", async () => {
  const noPod = world(false, null, true);
  assert.match(noPod.check.pending(group, "ops", "gw-edge", service, 1)!, /proxy pods/);
  assert.deepEqual(noPod.later, [[group, 1_000]], "looked at again");

  const notRouted = world(true, false, true);
  assert.match(notRouted.check.pending(group, "ops", "gw-edge", service, 1)!, /route to the Gateway's proxy pods/);

  const noAddress = world(true, true, true);
  assert.match(noAddress.check.pending(group, "ops", "gw-edge", service, 0)!, /route to/);
  assert.deepEqual(noAddress.later, [], "an address arriving changes the Service, which queues the Gateway");

  const ready = world(true, true, true);
  assert.match(ready.check.pending(group, "ops", "gw-edge", service, 1)!, /accept connections/);
  await Promise.resolve();
  assert.deepEqual(ready.later, [[group, 1_000], [group, 0]], "the answer queues the Gateway at once");
  assert.equal(ready.check.pending(group, "ops", "gw-edge", service, 1), null);
});

Deno.test("Programmed outside a pod: no probe, the ready endpoint is enough", () => {
  const check = new ProgrammedCheck({
    lookup: lookupFromLists({ endpointSlices: [slice(true)] as never }),
    deployment: () => ({ metadata: { name: "gw-edge" }, status: { availableReplicas: 1 } }),
    later: () => {},
    dial: null,
  });
  assert.equal(check.pending(group, "ops", "gw-edge", service, 1), null);
});
