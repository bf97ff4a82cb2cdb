/**
 * lib/controller/status.ts: whether an Ingress already shows the wanted addresses, whichever
 * objects hold them (the cache shares one status tree between Ingresses; a wanted list is new).
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { statusMatches } from "../../lib/controller/status.ts";

const ingress = (addresses?: unknown): KubeObject => ({
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { namespace: "apps", name: `i${Math.random()}` },
  ...(addresses === undefined ? {} : { status: { loadBalancer: { ingress: addresses } } }),
});

Deno.test("statusMatches: the same addresses in other objects match, other addresses or order do not", () => {
  const shared = Object.freeze([Object.freeze({ ip: "10.0.0.1" })]);
  const a = ingress(shared);
  const b = ingress(shared);
  assert.ok(statusMatches(a, [{ ip: "10.0.0.1" }]));
  assert.ok(statusMatches(b, [{ ip: "10.0.0.1", hostname: "" }]));
  assert.ok(!statusMatches(a, [{ ip: "10.0.0.2" }]));
  assert.ok(!statusMatches(a, []));
  assert.ok(!statusMatches(a, [{ ip: "10.0.0.1" }, { hostname: "lb.example.com" }]));
  const two = [{ ip: "10.0.0.1" }, { hostname: "lb.example.com" }];
  assert.ok(statusMatches(ingress([{ ip: "10.0.0.1" }, { hostname: "lb.example.com" }]), two));
  assert.ok(!statusMatches(ingress([two[1], two[0]]), two));
});

Deno.test("statusMatches: no status, an empty list and an empty load balancer all show nothing", () => {
  assert.ok(statusMatches(ingress(), []));
  assert.ok(statusMatches(ingress([]), []));
  assert.ok(statusMatches({ ...ingress(), status: { loadBalancer: {} } }, []));
  assert.ok(!statusMatches(ingress(), [{ ip: "10.0.0.1" }]));
});

Deno.test("statusMatches: a new object of the same Ingress with other addresses is compared anew", () => {
  const want = [{ ip: "10.0.0.9" }];
  const before = ingress([{ ip: "10.0.0.1" }]);
  assert.ok(!statusMatches(before, want));
  const after = { ...before, status: { loadBalancer: { ingress: [{ ip: "10.0.0.9" }] } } };
  assert.ok(statusMatches(after, want));
  assert.ok(!statusMatches(before, want));
});
