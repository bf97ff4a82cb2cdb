/**
 * readFragments (lib/render/model.ts): fragments read in slices ahead of a build must give the very
 * build a build from scratch gives (model, problems), and the build must take them as kept.
 */
import assert from "node:assert/strict";
import { buildModel, lookupFromLists, ModelMemo, readFragments } from "../../lib/render/model.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

Deno.test("readFragments: a build after slices read ahead equals a build from scratch and reads nothing again", () => {
  const n = 50;
  const ingresses = Array.from({ length: n }, (_, i) =>
    ingress({
      name: `i${i}`,
      created: `2026-01-01T00:00:${String(i % 60).padStart(2, "0")}Z`,
      annotations: i % 7 === 0 ? { "ingress.kubernetes.io/timeout-server": `${i}s` } : undefined,
      rules: [{
        // Every tenth claims the host of the one before: a conflict decided by age.
        host: `h${i % 10 === 9 ? i - 1 : i}.example`,
        paths: [{ path: "/", service: `s${i % 20}`, port: 80 }],
      }],
      tls: i % 11 === 0 ? [{ hosts: [`h${i}.example`], secretName: i % 22 === 0 ? "tls" : "missing" }] : undefined,
    }));
  const lookup = lookupFromLists({
    services: Array.from({ length: 20 }, (_, i) => service(`s${i}`, [{ name: "http", port: 80, targetPort: 8080 }])),
    endpointSlices: Array.from({ length: 20 }, (_, i) =>
      // One slice with an endpoint the model drops (a problem on the EndpointSlice).
      endpointSlice(`s${i}`, [{ name: "http", port: 8080 }], [{ address: i === 3 ? "127.0.0.1" : `10.0.0.${i + 1}` }])),
    secrets: [tlsSecret("tls")],
  });
  const scratch = buildModel({ ingresses, lookup });
  const memo = new ModelMemo();
  for (let i = 0; i < n; i += 16) readFragments({ ingresses, lookup, memo }, i, Math.min(n, i + 16));
  assert.equal(memo.latest.size, n);
  const kept = [...memo.latest.values()].map((l) => l.fragment);
  const built = buildModel({ ingresses, lookup, memo });
  assert.deepEqual(built.model, scratch.model);
  assert.deepEqual(built.problems, scratch.problems);
  assert.ok(built.problems.some((p) => p.kind === "EndpointSlice"), "the slice's problem is there");
  // The build read nothing again: every fragment is the one read ahead.
  assert.deepEqual([...memo.latest.values()].map((l) => l.fragment), kept);
  // With other settings (another env), fragments read ahead are not taken.
  const other = buildModel({ ingresses, lookup, memo, namespace: "default" });
  assert.deepEqual(other.model, buildModel({ ingresses, lookup, namespace: "default" }).model);
});
