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

const other = ingress({ namespace: "t1", name: "other", rules: [{ host: "other.example", paths: [path("/")] }] });
const wwwShop = ingress({
  namespace: "t2",
  name: "www",
  annotations: { [`${A}www-redirect`]: "true" },
  rules: [{ host: "www.shop.example", paths: [path("/")] }],
});
// Names shop.example in a rule without paths: owns it, routes nothing there.
const holder = ingress({ namespace: "t3", name: "holder", rules: [{ host: "shop.example", paths: [] }] });

Deno.test("model delta cases: a www twin whose owner's last Ingress (a host without paths) goes", () => {
  run([[wwwShop, holder, other], [wwwShop, other]]);
});

Deno.test("model delta cases: a www twin taken by another namespace's new Ingress (a host without paths)", () => {
  run([[wwwShop, other], [wwwShop, other, holder]]);
});

Deno.test("model delta cases: the last Ingress of an exact host under another namespace's TLS wildcard goes", () => {
  const wild = ingress({
    namespace: "t1",
    name: "wild",
    created: "2026-01-02T00:00:00Z",
    rules: [{ host: "*.w.example", paths: [path("/")] }],
    tls: [{ hosts: ["*.w.example"], secretName: "tls" }],
  });
  const exact = (p: string) =>
    ingress({
      namespace: "t2",
      name: "exact",
      created: "2026-01-01T00:00:00Z",
      rules: [{ host: "a.w.example", paths: [path(p)] }],
    });
  run([[wild, exact("/x")], [wild]]);
  // A route change of the exact host that keeps its owner stays a delta.
  assert.equal(run([[wild, exact("/x")], [wild, exact("/y")]]).deltas, 1);
});

const canary = ingress({
  namespace: "t3",
  name: "canary",
  annotations: { [`${A}canary`]: "true", [`${A}canary-weight`]: "30" },
  rules: [{ host: "s.example", paths: [path("/")] }],
  tls: [{ hosts: ["s.example"], secretName: "tls" }],
});
// Another path of the host, in the canary's namespace: it claims s.example.
const main = ingress({ namespace: "t3", name: "main", rules: [{ host: "s.example", paths: [path("/docs")] }] });
const stranger = ingress({ namespace: "t2", name: "stranger", rules: [{ host: "s.example", paths: [path("/t2")] }] });

Deno.test("model delta cases: a canary's TLS host (canaries claim nothing) gets, or loses, its owner", () => {
  run([[canary, other], [canary, other, main], [canary, other], [canary, other, stranger]]);
});

Deno.test("model delta cases: another namespace's certificate is not served for a host a canary named", () => {
  // t3 owns s.example while main names it (the canary's certificate is served); then main goes and
  // t2 takes the host.
  const memo = new ModelMemo();
  buildModel({ ingresses: [canary, other, main], lookup, memo });
  buildModel({ ingresses: [canary, other], lookup, memo });
  const last = buildModel({ ingresses: [canary, other, stranger], lookup, memo });
  assert.equal(last.owners?.get("s.example"), "t2");
  assert.deepEqual(last.model.tls.map((c) => [c.file, c.hosts]), [], "t3's certificate is served for t2's host");
  // The canary's other changes, and changes of other hosts, stay deltas.
  const deltas = memo.deltas;
  const more = ingress({ namespace: "t1", name: "more", rules: [{ host: "more.example", paths: [path("/")] }] });
  buildModel({ ingresses: [canary, other, stranger, more], lookup, memo });
  assert.equal(memo.deltas, deltas + 1);
});
