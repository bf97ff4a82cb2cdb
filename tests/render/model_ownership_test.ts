/**
 * lib/render/model.ts with host ownership (lib/render/host_ownership.ts): what one namespace's
 * Ingresses can no longer do to another's host in a shared proxy, and what still merges inside one
 * namespace. The same cases through a real haproxy: tests/render/ownership_traffic_test.ts; through
 * the controller and the API server: tests/tenancy/hosts_test.ts.
 */
import assert from "node:assert/strict";
import type { V1Ingress } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, type ModelInput, ModelMemo, PASS_TERMINATE } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render } from "../../lib/render/render.ts";
import type { OwnershipPolicy } from "../../lib/render/host_ownership.ts";
import { endpointSlice, ingress, type PathSpec, service } from "./fixtures.ts";

const A = "ingress-controller.io/";
const templates = await loadTemplates(null);
const NAMESPACES = ["bank", "evil", "edge"];

/** Services `web` and `other` in every namespace, one endpoint each; TLS Secrets `tls` and `tls2` everywhere. */
const lookup: ClusterLookup = {
  service: (
    ns,
    n,
  ) => (NAMESPACES.includes(ns) && ["web", "other"].includes(n) ? service(n, [{ port: 80 }], ns) : undefined),
  endpointSlices: (ns, n) =>
    NAMESPACES.includes(ns) && ["web", "other"].includes(n)
      ? [endpointSlice(n, [{ port: 8080 }], [{ address: `10.0.${NAMESPACES.indexOf(ns)}.${n === "web" ? 1 : 2}` }], {
        namespace: ns,
      })]
      : [],
  secret: (ns, n) =>
    ["tls", "tls2", "ca"].includes(n)
      ? {
        metadata: { namespace: ns, name: n },
        type: "kubernetes.io/tls",
        tlsSummary: { valid: true, sha256: n, ca: true },
      }
      : undefined,
};

let minute = 0;
/** An Ingress created a minute after the one before. */
function ing(
  namespace: string,
  name: string,
  rules: { host?: string; paths: PathSpec[] }[],
  more: {
    annotations?: Record<string, string>;
    tls?: { hosts?: string[]; secretName?: string }[];
    defaultBackend?: { service: string; port: number };
  } = {},
): V1Ingress {
  minute++;
  return ingress({
    namespace,
    name,
    created: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
    rules,
    ...more,
  });
}
const path = (p: string, pathType = "Prefix", svc = "web"): PathSpec => ({ path: p, pathType, service: svc, port: 80 });

function build(ingresses: V1Ingress[], extra: Partial<ModelInput> = {}) {
  return buildModel({ ingresses, lookup, ...extra });
}
const reasons = (r: ReturnType<typeof build>, object: string) =>
  r.problems.filter((p) => p.object === object).map((p) => p.reason);

Deno.test("ownership: another namespace's paths on an owned host are not served, with one Warning naming the owner", () => {
  const bank = ing("bank", "login", [{ host: "login.bank.test", paths: [path("/login")] }]);
  const evil = ing("evil", "takeover", [
    {
      host: "login.bank.test",
      paths: [path("/", "Exact"), path("/login/admin"), path("/.well-known/acme-challenge/", "Prefix")],
    },
    { host: "evil.test", paths: [path("/")] },
  ]);
  const r = build([evil, bank]);
  assert.deepEqual(
    r.model.routes.filter((x) => x.host === "login.bank.test").map((x) => `${x.path} ${x.ingress}`),
    ["/login bank/login"],
  );
  const claimed = r.problems.filter((p) => p.reason === "HostAlreadyClaimed");
  assert.equal(claimed.length, 1);
  assert.equal(claimed[0].object, "evil/takeover");
  assert.match(claimed[0].message, /^host login\.bank\.test belongs to namespace bank;/);
  assert.deepEqual(r.model.ingresses, ["bank/login", "evil/takeover"], "evil still serves its own host");
  // Several Ingresses of the owner's namespace still merge on the host.
  const more = ing("bank", "api", [{ host: "login.bank.test", paths: [path("/api")] }]);
  assert.deepEqual(
    build([bank, evil, more]).model.routes.filter((x) => x.host === "login.bank.test").map((x) => x.path),
    ["/login", "/api"],
  );
});

Deno.test("ownership: an Ingress that owns none of its hosts is not served and shows no address", () => {
  const bank = ing("bank", "site", [{ host: "www.bank.test", paths: [path("/")] }]);
  const evil = ing("evil", "copy", [{ host: "www.bank.test", paths: [path("/other")] }]);
  const r = build([bank, evil]);
  assert.deepEqual(r.model.ingresses, ["bank/site"]);
  assert.deepEqual(r.model.unserved, ["evil/copy"]);
});

Deno.test("ownership: canaries join only a route of their own namespace", () => {
  const main = ing("bank", "login", [{ host: "login.bank.test", paths: [path("/login")] }]);
  const hijack = ing("evil", "canary", [{ host: "login.bank.test", paths: [path("/login", "Prefix", "other")] }], {
    annotations: { [`${A}canary`]: "true", [`${A}canary-weight`]: "100" },
  });
  const own = ing("bank", "canary", [{ host: "login.bank.test", paths: [path("/login", "Prefix", "other")] }], {
    annotations: { [`${A}canary`]: "true", [`${A}canary-weight`]: "10" },
  });
  const r = build([main, hijack]);
  assert.deepEqual(r.model.canaries, []);
  assert.deepEqual(reasons(r, "evil/canary"), ["CanaryWithoutMain"]);
  assert.match(r.problems.find((p) => p.object === "evil/canary")!.message, /namespace evil/);
  assert.deepEqual(r.model.backends.map((b) => b.name).filter((n) => n.includes("evil")), []);
  // Also with inter-namespace merging.
  const merged = build([main, hijack], { ownership: { mode: "InterNamespaceAllowed", pins: [] } });
  assert.deepEqual(merged.model.canaries, []);
  const same = build([main, hijack, own]);
  assert.deepEqual(same.model.canaries?.map((c) => [c.canary, c.weight]), [["be_bank_other_80", 10]]);
});

Deno.test("ownership: wildcards, the oldest claim decides and a wildcard never covers an older host of another namespace", () => {
  const old = ing("bank", "api", [{ host: "api.bank.test", paths: [path("/")] }]);
  const wild = ing("evil", "wild", [{ host: "*.bank.test", paths: [path("/")] }]);
  const young = ing("bank", "young", [{ host: "young.bank.test", paths: [path("/")] }]);
  const r = build([old, wild, young]);
  const hosts = r.model.routes.map((x) => `${x.host} ${x.ingress}`);
  assert.deepEqual(hosts, ["api.bank.test bank/api", "*.bank.test evil/wild"]);
  assert.match(
    r.problems.find((p) => p.object === "bank/young")!.message,
    /belongs to namespace evil \(its wildcard \*\.bank\.test\)/,
  );
  // api.bank.test's unmatched requests skip evil's wildcard (no catch-all: the built-in 404).
  assert.deepEqual(r.model.stops, [{ host: "api.bank.test", stop: "404" }]);
  const catchAll = ing("edge", "default", [], { defaultBackend: { service: "web", port: 80 } });
  const withCatchAll = build([catchAll, old, wild, young]);
  assert.deepEqual(withCatchAll.model.stops, [
    { host: "*.bank.test", stop: "404" },
    { host: "api.bank.test", stop: "404" },
  ]);
});

Deno.test("ownership: the catch-all (host-less rules, default backend) belongs to the oldest, not to every namespace", () => {
  const edge = ing("edge", "default", [], { defaultBackend: { service: "web", port: 80 } });
  const evil = ing("evil", "grab", [{ paths: [path("/")] }], { defaultBackend: { service: "other", port: 80 } });
  const bank = ing("bank", "site", [{ host: "bank.test", paths: [path("/app")] }]);
  const r = build([evil, edge, bank]);
  assert.equal(r.model.defaultBackend, "be_edge_web_80");
  assert.deepEqual(r.model.routes.filter((x) => x.host === "").map((x) => x.ingress), []);
  assert.deepEqual(reasons(r, "evil/grab"), ["HostAlreadyClaimed"]);
  assert.match(
    r.problems.find((p) => p.object === "evil/grab")!.message,
    /^the catch-all .* belongs to namespace edge/,
  );
  // bank.test/other must not reach edge's default backend: the built-in 404.
  assert.deepEqual(r.model.stops, [{ host: "bank.test", stop: "404" }]);
});

Deno.test("ownership: certificates only for owned hosts, never without SNI names", () => {
  const bank = ing("bank", "login", [{ host: "login.bank.test", paths: [path("/")] }], {
    tls: [{ hosts: ["login.bank.test"], secretName: "tls" }],
  });
  // No hosts: the Ingress's own rule hosts (not a default certificate); B's host: not served.
  const evil = ing("evil", "certs", [{ host: "evil.test", paths: [path("/")] }], {
    tls: [{ secretName: "tls" }, { hosts: ["login.bank.test"], secretName: "tls2" }],
  });
  const r = build([bank, evil]);
  assert.deepEqual(r.model.tls.map((c) => [c.file, c.hosts]), [
    ["bank_tls.pem", ["login.bank.test"]],
    ["evil_tls.pem", ["evil.test"]],
  ]);
  assert.ok(reasons(r, "evil/certs").includes("TLSNotServed"));
  const crtList = render(r.model, templates).crtList;
  assert.equal(crtList, "bank_tls.pem login.bank.test\nevil_tls.pem evil.test\n");
  const hostless = build([ing("evil", "hostless", [{ paths: [path("/")] }], { tls: [{ secretName: "tls" }] })]);
  assert.deepEqual(hostless.model.tls, []);
  assert.deepEqual(reasons(hostless, "evil/hostless"), ["TLSWithoutHosts"]);
});

Deno.test("ownership: a wildcard certificate is not served for a host under it that another namespace owns", () => {
  const bank = ing("bank", "api", [{ host: "api.bank.test", paths: [path("/")] }]);
  const wild = ing("evil", "wild", [{ host: "*.bank.test", paths: [path("/")] }], {
    tls: [{ hosts: ["*.bank.test"], secretName: "tls" }],
  });
  const r = build([bank, wild]);
  assert.deepEqual(r.model.tls.map((c) => [c.hosts, c.excluded]), [[["*.bank.test"], ["api.bank.test"]]]);
  assert.equal(render(r.model, templates).crtList, "evil_tls.pem *.bank.test !api.bank.test\n");
});

Deno.test("ownership: redirects and passthrough of another namespace do not reach an owned host", () => {
  const bank = ing("bank", "api", [{ host: "api.bank.test", paths: [path("/")] }]);
  const evil = ing("evil", "redirect", [{ host: "api.bank.test", paths: [path("/x")] }], {
    annotations: { [`${A}force-ssl-redirect`]: "true", [`${A}ssl-passthrough`]: "true" },
    tls: [{ hosts: ["api.bank.test"], secretName: "tls" }],
  });
  const r = build([bank, evil]);
  assert.deepEqual(r.model.redirectHosts, []);
  assert.deepEqual(r.model.passthrough, []);
  assert.deepEqual(r.model.tls, []);
  // A passthrough wildcard: hosts another namespace serves under it keep TLS termination.
  const wild = ing("evil", "wild", [{ host: "*.bank.test", paths: [path("/")] }], {
    annotations: { [`${A}ssl-passthrough`]: "true" },
  });
  const p = build([bank, wild]);
  assert.deepEqual(p.model.passthrough, [
    { host: "*.bank.test", backend: "be_evil_web_80_tcp" },
    { host: "api.bank.test", backend: PASS_TERMINATE },
  ]);
  // ...also when merging between namespaces is allowed.
  const merged = build([bank, wild], { ownership: { mode: "InterNamespaceAllowed", pins: [] } });
  assert.deepEqual(merged.model.passthrough, p.model.passthrough);
});

Deno.test("ownership: www twins are taken only while no other namespace owns them", () => {
  const bank = ing("bank", "www", [{ host: "www.bank.test", paths: [path("/")] }], {
    tls: [{ hosts: ["www.bank.test"], secretName: "tls" }],
  });
  const twin = ing("evil", "apex", [{ host: "bank.test", paths: [path("/x")] }], {
    annotations: { [`${A}www-redirect`]: "true" },
  });
  const r = build([bank, twin]);
  assert.deepEqual(r.model.routes.filter((x) => x.host === "www.bank.test").map((x) => x.ingress), ["bank/www"]);
});

Deno.test("ownership: pins decide whatever the age; InterNamespaceAllowed merges as before", () => {
  const evil = ing("evil", "early", [{ host: "login.bank.test", paths: [path("/")] }]);
  const bank = ing("bank", "late", [{ host: "login.bank.test", paths: [path("/")] }]);
  const pinned: OwnershipPolicy = { mode: "Strict", pins: [{ host: "login.bank.test", namespace: "bank" }] };
  assert.deepEqual(build([evil, bank], { ownership: pinned }).model.routes.map((x) => x.ingress), ["bank/late"]);
  assert.match(
    build([evil, bank], { ownership: pinned }).problems.find((p) => p.object === "evil/early")!.message,
    /pinned by the administrator/,
  );
  const merged = build([evil, bank, ing("evil", "more", [{ host: "login.bank.test", paths: [path("/more")] }])], {
    ownership: { mode: "InterNamespaceAllowed", pins: [] },
  });
  assert.deepEqual(merged.model.routes.map((x) => `${x.path} ${x.ingress}`), ["/more evil/more", "/ evil/early"]);
  assert.deepEqual(reasons(merged, "bank/late"), ["RouteConflict"]);
  assert.deepEqual(merged.model.stops, []);
});

Deno.test("ownership: sticky through the memo, a host stays with its owner while the owner names it", () => {
  const memo = new ModelMemo();
  const first = ing("bank", "first", [{ host: "login.bank.test", paths: [path("/")] }]);
  const squat = ing("evil", "squat", [{ host: "login.bank.test", paths: [path("/x")] }]);
  const second = ing("bank", "second", [{ host: "login.bank.test", paths: [path("/y")] }]);
  assert.equal(build([first, squat, second], { memo }).owners?.get("login.bank.test"), "bank");
  // bank's oldest Ingress goes; evil's is now older than bank's remaining one: bank keeps the host.
  const r = build([squat, second], { memo });
  assert.equal(r.owners?.get("login.bank.test"), "bank");
  assert.deepEqual(r.model.routes.map((x) => x.ingress), ["bank/second"]);
  assert.deepEqual(build([squat, second], { previousOwners: r.owners }).model, r.model);
  // Without history (a restart), the oldest Ingress decides.
  assert.equal(build([squat, second]).owners?.get("login.bank.test"), "evil");
  // Once bank names it no more, it moves.
  assert.equal(build([squat], { memo }).owners?.get("login.bank.test"), "evil");
});

Deno.test("ownership: no stops without owners in each other's way", () => {
  const r = build([ing("bank", "x", [{ host: "x.bank.test", paths: [path("/")] }])]);
  assert.equal(configMapData(render(r.model, templates))["owned-hosts.map"], "");
});
