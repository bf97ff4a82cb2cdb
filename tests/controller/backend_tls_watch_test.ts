/**
 * BackendTLSPolicy status and cache shapes (lib/controller/backend_tls_watch.ts,
 * lib/controller/gateway_status.ts mergedAncestors): only this controller's entry for the Gateway
 * at hand is replaced, others are kept, transition times kept while the status holds, and the
 * API's 16 entries never exceeded; of a ConfigMap only `ca.crt` is kept.
 */
import assert from "node:assert/strict";
import { mergedAncestors, type PolicyAncestorStatus } from "../../lib/controller/gateway_status.ts";
import { caConfigMapShape } from "../../lib/controller/backend_tls_watch.ts";
import type { BackendTLSPolicy } from "../../lib/gateway/backend_tls.ts";
import { GATEWAY_CONTROLLER_NAME } from "../../lib/gateway/model_types.ts";

const ref = (namespace: string | undefined, name: string) => ({
  group: "gateway.networking.k8s.io",
  kind: "Gateway",
  ...(namespace ? { namespace } : {}),
  name,
});
const cond = (status: "True" | "False", reason: string, time = "2026-01-01T00:00:00Z") => ({
  type: "Accepted",
  status,
  reason,
  message: reason,
  observedGeneration: 1,
  lastTransitionTime: time,
});
const entry = (
  controllerName: string,
  r: ReturnType<typeof ref>,
  c = cond("True", "Accepted"),
): PolicyAncestorStatus => ({
  ancestorRef: r,
  controllerName,
  conditions: [c],
});

function policy(ancestors: PolicyAncestorStatus[]): BackendTLSPolicy {
  return { metadata: { namespace: "apps", name: "p" }, status: { ancestors } };
}

Deno.test("mergedAncestors: this Gateway's entry of this controller replaced or removed, every other kept", () => {
  const other = entry("example.com/other", ref("apps", "gw"));
  const otherGw = entry(GATEWAY_CONTROLLER_NAME, ref("apps", "gw2"));
  // the policy's namespace is the ancestorRef's default
  const mine = entry(GATEWAY_CONTROLLER_NAME, ref(undefined, "gw"));
  const p = policy([other, mine, otherGw]);
  const now = "2026-02-02T00:00:00Z";
  const same = mergedAncestors(p, "apps/gw", entry(GATEWAY_CONTROLLER_NAME, ref("apps", "gw")), now);
  assert.deepEqual(same.slice(0, 2), [other, otherGw]);
  assert.equal(same[2].conditions[0].lastTransitionTime, "2026-01-01T00:00:00Z", "status held: time kept");
  const flipped = mergedAncestors(
    p,
    "apps/gw",
    entry(GATEWAY_CONTROLLER_NAME, ref("apps", "gw"), cond("False", "Conflicted")),
    now,
  );
  assert.equal(flipped[2].conditions[0].lastTransitionTime, now);
  assert.deepEqual(mergedAncestors(p, "apps/gw", null, now), [other, otherGw]);
  // a Gateway of the same name elsewhere is another ancestor
  assert.equal(mergedAncestors(p, "ops/gw", null, now).length, 3);
});

Deno.test("mergedAncestors: never more than the API's 16 entries", () => {
  const full = Array.from({ length: 16 }, (_, i) => entry("example.com/other", ref("apps", `gw${i}`)));
  const out = mergedAncestors(policy(full), "apps/gw", entry(GATEWAY_CONTROLLER_NAME, ref("apps", "gw")), "now");
  assert.equal(out.length, 16);
  assert.ok(out.every((a) => a.controllerName === "example.com/other"));
});

Deno.test("caConfigMapShape: only ca.crt, and not past 1 MiB", () => {
  const cm = {
    metadata: { name: "ca", namespace: "apps", uid: "u", resourceVersion: "7", labels: { a: "b" } },
    data: { "ca.crt": "PEM", other: "x".repeat(100) },
  };
  assert.deepEqual(caConfigMapShape(cm), {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "ca", namespace: "apps", uid: "u", resourceVersion: "7" },
    data: { "ca.crt": "PEM" },
  });
  assert.deepEqual(caConfigMapShape({ ...cm, data: { "ca.crt": "x".repeat((1 << 20) + 1) } }).data, {});
  assert.deepEqual(caConfigMapShape({ metadata: cm.metadata }).data, {});
});
