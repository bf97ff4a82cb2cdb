/**
 * Minimal sequences where a build with a ModelMemo (a delta, lib/render/model_delta.ts, and maps
 * edited in place, lib/render/maps.ts) differed from a build from scratch; found by
 * tests/render/model_delta_property_test.ts.
 */
import assert from "node:assert/strict";
import type { V1Ingress } from "@kubernetes/client-node";
import { buildModel, lookupFromLists, ModelMemo } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render, RenderMemo } from "../../lib/render/render.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

const A = "ingress-controller.io/";
const nss = ["t1", "t2", "t3"];
const lookup = lookupFromLists({
  services: nss.flatMap((ns) => ["a", "b"].map((n) => service(n, [{ name: "http", port: 80, targetPort: 8080 }], ns))),
  endpointSlices: nss.flatMap((ns) =>
    ["a", "b"].map((n, k) =>
      endpointSlice(n, [{ name: "http", port: 8080 }], [{ address: `10.0.${k}.1` }], { namespace: ns, name: `${n}-x` })
    )
  ),
  secrets: nss.map((ns) => tlsSecret("tls", ns)),
});
const templates = await loadTemplates(null);

/** Builds each state with one memo and from scratch (with the previous owners): both equal, rendered too. */
function run(states: V1Ingress[][]): ModelMemo {
  const memo = new ModelMemo();
  const renderMemo = new RenderMemo();
  let previous: ReadonlyMap<string, string> | null = null;
  states.forEach((ingresses, step) => {
    const input = { ingresses, lookup };
    const fresh = buildModel({ ...input, previousOwners: previous });
    const deltasBefore = memo.deltas;
    const kept = buildModel({ ...input, memo });
    const how = memo.deltas > deltasBefore ? "delta" : "full";
    assert.deepEqual(kept, fresh, `step ${step} (${how})`);
    previous = kept.owners && new Map(kept.owners);
    assert.deepEqual(
      configMapData(render(kept.model, templates, undefined, renderMemo)),
      configMapData(render(fresh.model, templates)),
      `step ${step} (${how}): rendered`,
    );
  });
  return memo;
}

const path = (p: string, pathType = "Prefix", svc = "a") => ({ path: p, pathType, service: svc, port: 80 });

Deno.test("model delta cases: two regex routes with one routes-regex.map key, and another regex route changes", () => {
  const regexAll = { [`${A}path-regex`]: "all" };
  // Prefix /x and ImplementationSpecific /x of one host: two routes, one routes-regex.map key.
  const two = ingress({
    namespace: "t1",
    name: "two",
    annotations: regexAll,
    rules: [{ host: "r.example", paths: [path("/x", "Prefix", "a"), path("/x", "ImplementationSpecific", "b")] }],
  });
  const re = (p: string) =>
    ingress({
      namespace: "t1",
      name: "re",
      annotations: { [`${A}path-regex`]: "true" },
      rules: [{ host: "s.example", paths: [path(p, "ImplementationSpecific")] }],
    });
  const memo = run([[two, re("/v1")], [two, re("/v2")]]);
  assert.equal(memo.deltas, 1, "a regex route's change stays a delta");
});
