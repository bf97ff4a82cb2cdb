/**
 * lib/render/model_delta.ts: a model built as a delta of the last one must equal the model built
 * from scratch, whatever changed. Hundreds of Ingresses with hosts of their own (the case deltas
 * are for), and among the random changes everything a delta must refuse: shared hosts (conflicts),
 * TLS, default backends, canaries, www twins, passthrough, fallbacks, missing Services, removed
 * and re-added Ingresses, equal creation times.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Ingress, V1Service } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, ModelMemo } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render, RenderMemo } from "../../lib/render/render.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

for (const counted of [false, true]) {
  Deno.test(`model deltas: 400 random changes of 300 Ingresses, every model and configuration equals a build from scratch${counted ? ", with the lookup's generation" : ""}`, async () => {
    const templates = await loadTemplates(null);
    let seed = 11;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const svcNames = ["a", "b", "c", "d", "e"];
    const services = new Map<string, V1Service>();
    const slices = new Map<string, V1EndpointSlice[]>();
    let generation = 0;
    const setBackend = (name: string) => {
      generation++;
      services.set(name, service(name, [{ name: "http", port: 80, targetPort: 8080 }]));
      slices.set(name, [
        endpointSlice(name, [{ name: "http", port: 8080 }], [{
          address: `10.0.${svcNames.indexOf(name)}.${rand(9) + 1}`,
        }]),
      ]);
    };
    for (const s of svcNames) setBackend(s);
    const secret = tlsSecret("tls");
    const lookup: ClusterLookup = {
      service: (_ns, n) => services.get(n),
      endpointSlices: (_ns, n) => slices.get(n) ?? [],
      secret: (_ns, n) => (n === "tls" ? secret : undefined),
      // With a generation, a delta compares its input with the last one's (KeptMerge's in-place walk).
      ...(counted ? { generation: () => generation } : {}),
    };
    // Mostly what deltas are for; sometimes what they must refuse.
    const rare: Record<string, string>[] = [
      { "ingress-controller.io/canary": "true", "ingress-controller.io/canary-weight": "30" },
      { "ingress-controller.io/www-redirect": "true" },
      { "ingress-controller.io/ssl-passthrough": "true" },
      { "ingress-controller.io/default-backend": "e" },
      { "ingress-controller.io/load-balance": "leastconn" },
    ];
    // Shared hosts (and their www twins) make conflicts, joined canaries and twins routed by others.
    const sharedHost = () => `${rand(2) ? "www." : ""}h${rand(10)}.example.com`;
    const makeIngress = (i: number): V1Ingress => {
      const odd = rand(12) === 0;
      const host = rand(odd ? 2 : 15) === 0 ? sharedHost() : `own${i}-${rand(1000)}.example.com`;
      return ingress({
        name: `ing-${i}`,
        created: `2026-01-0${1 + rand(9)}T00:00:00Z`,
        annotations: odd ? rare[rand(rare.length)] : {},
        rules: [{
          host,
          paths: [
            {
              path: rand(3) ? "/" : "/api",
              pathType: ["Exact", "Prefix", "Prefix", "ImplementationSpecific"][rand(4)],
              service: svcNames[rand(4)],
              port: 80,
            },
            ...(rand(6) === 0
              ? [{ path: "/x", pathType: "Prefix", service: rand(2) ? "missing" : "a", port: 80 }]
              : []),
            ...(rand(30) === 0 ? [{ path: "/", pathType: "Prefix", service: "b", port: 80 }] : []),
          ],
        }],
        tls: rand(25) === 0 ? [{ hosts: [host], secretName: rand(3) ? "tls" : "none" }] : undefined,
        defaultBackend: rand(40) === 0 ? { service: svcNames[rand(4)], port: 80 } : undefined,
      });
    };
    const ingresses: (V1Ingress | null)[] = Array.from({ length: 300 }, (_, i) => makeIngress(i));
    const memo = new ModelMemo();
    const renderMemo = new RenderMemo();
    const steps = 400;
    let last: { model: unknown; copy: unknown } | null = null;
    for (let step = 0; step < steps; step++) {
      const what = rand(40);
      const i = rand(ingresses.length);
      if (what === 0) setBackend(svcNames[rand(svcNames.length)]);
      else if (what < 4) ingresses[i] = ingresses[i] ? null : makeIngress(i);
      else {
        // one to three Ingresses at once, as a coalesced burst of events brings them
        for (let k = rand(3); k >= 0; k--) {
          const j = rand(ingresses.length);
          ingresses[j] = makeIngress(j);
        }
      }
      const input = { ingresses: ingresses.filter((x) => x !== null), lookup, allowLoopbackEndpoints: false };
      const fresh = buildModel(input);
      const kept = buildModel({ ...input, memo });
      assert.deepEqual(kept, fresh, `step ${step}`);
      // A model handed out is never changed by the deltas that follow it.
      if (last) assert.deepEqual(last.model, last.copy, `step ${step}: the model of the step before changed`);
      last = { model: kept.model, copy: structuredClone(kept.model) };
      const want = configMapData(render(fresh.model, templates));
      assert.deepEqual(configMapData(render(kept.model, templates, undefined, renderMemo)), want, `step ${step}`);
    }
    // Most changes went through deltas, and some did not: both ways were compared.
    assert.ok(memo.deltas > steps / 3, `only ${memo.deltas} of ${steps} builds were deltas`);
    assert.ok(memo.deltas < steps, "every build was a delta: the refusals were never exercised");
    // The render followed the deltas' route changes (route_changes.ts) rather than walking every route.
    assert.ok(renderMemo.followed > steps / 4, `the routing kinds followed ${renderMemo.followed} changes`);
    assert.ok(renderMemo.maps.followed > steps / 4, `the map tables followed ${renderMemo.maps.followed} changes`);
    if (counted) assert.ok(memo.inPlaceDeltas > steps / 10, `only ${memo.inPlaceDeltas} deltas compared in place`);
    else assert.equal(memo.inPlaceDeltas, 0);
  });
}

Deno.test("model deltas: what the passes after the replay looked at is left to a full build", () => {
  const services = new Map(["a", "b", "c"].map((n) => [n, service(n, [{ name: "http", port: 80, targetPort: 8080 }])]));
  const slices = new Map(
    ["a", "b", "c"].map((
      n,
      k,
    ) => [n, [endpointSlice(n, [{ name: "http", port: 8080 }], [{ address: `10.0.0.${k + 1}` }])]]),
  );
  const lookup: ClusterLookup = {
    service: (_ns, n) => services.get(n),
    endpointSlices: (_ns, n) => slices.get(n) ?? [],
    secret: () => undefined,
  };
  const memo = new ModelMemo();
  const same = (list: V1Ingress[]) => {
    const kept = buildModel({ ingresses: list, lookup, memo });
    assert.deepEqual(kept, buildModel({ ingresses: list, lookup }));
    return kept;
  };
  const route = (name: string, host: string, svc: string, annotations: Record<string, string> = {}, path = "/") =>
    ingress({ name, annotations, rules: [{ host, paths: [{ path, pathType: "Prefix", service: svc, port: 80 }] }] });
  const canary = route("canary", "main.example.com", "c", {
    "ingress-controller.io/canary": "true",
    "ingress-controller.io/canary-weight": "50",
  });
  const www = route("www", "site.example.com", "a", { "ingress-controller.io/www-redirect": "true" });
  const other = route("other", "other.example.com", "a");
  same([route("main", "main.example.com", "b"), canary, www, other]);
  // The canary's main route moves to another Service: the join must follow (a full build).
  let deltas = memo.deltas;
  assert.equal(same([route("main", "main.example.com", "a"), canary, www, other]).model.canaries?.length, 1);
  assert.equal(memo.deltas, deltas);
  // The main route goes: the canary is left without one, and its backend c with no route is gone.
  same([canary, www, other]);
  same([route("main", "main.example.com", "c", {}, "/elsewhere"), canary, www, other]);
  // Someone routes the www twin itself: the twin's redirect route makes way.
  const twin = same([route("main", "main.example.com", "b"), canary, www, route("other", "www.site.example.com", "b")]);
  assert.equal(twin.model.routes.find((r) => r.host === "www.site.example.com")?.backend, "be_default_b_80");
  // An unrelated route-only change is a delta, and the canary's backend stays used without a route of its own.
  const main = route("main", "main.example.com", "b");
  same([main, canary, www, route("other", "y.example.com", "a")]);
  deltas = memo.deltas;
  const delta = same([main, canary, www, route("other", "x.example.com", "a")]);
  assert.equal(memo.deltas, deltas + 1);
  assert.ok(delta.model.backends.some((b) => b.name === "be_default_c_80"));
  // The last route to the canary's backend comes and goes: the canary still uses it.
  const x = route("other", "x.example.com", "a");
  same([main, canary, www, x, route("extra", "extra.example.com", "c")]);
  const gone = same([main, canary, www, x]);
  assert.ok(gone.model.backends.some((b) => b.name === "be_default_c_80"));
  // A route with a fallback (`default-backend`) comes and goes: so does the fallback's backend.
  const fallback = route("fb", "fb.example.com", "a", { "ingress-controller.io/default-backend": "b" });
  same([canary, www, x]);
  const withFallback = same([canary, www, x, fallback]);
  assert.ok(withFallback.model.backends.some((b) => b.fallback === "be_default_b_80"));
  same([canary, www, x]);
  // path-regex all makes every path of its host a regex, other Ingresses' too: their changes are full builds
  const regexAll = route("re", "re.example.com", "a", { "ingress-controller.io/path-regex": "all" }, "/api/.+");
  const matches = (r: ReturnType<typeof same>) =>
    r.model.routes.filter((r) => r.host === "re.example.com").map((r) => [r.path, r.match]);
  assert.deepEqual(matches(same([canary, x, regexAll, route("plain", "re.example.com", "b", {}, "/docs")])), [
    ["/api/.+", "regex"],
    ["/docs", "regex"],
  ]);
  deltas = memo.deltas;
  assert.deepEqual(matches(same([canary, x, regexAll, route("plain", "re.example.com", "b", {}, "/help")])), [
    ["/api/.+", "regex"],
    ["/help", "regex"],
  ]);
  assert.deepEqual(matches(same([canary, x, route("plain", "re.example.com", "b", {}, "/help")])), [[
    "/help",
    "prefix",
  ]]);
  assert.equal(memo.deltas, deltas);
});

Deno.test("model memo: a new object of an Ingress that reads the same (a status write) keeps its fragment; a spec change does not", () => {
  const services = new Map([["a", service("a", [{ name: "http", port: 80, targetPort: 8080 }])]]);
  const slices = new Map([["a", [endpointSlice("a", [{ name: "http", port: 8080 }], [{ address: "10.0.0.1" }])]]]);
  const lookup: ClusterLookup = {
    service: (_ns, n) => services.get(n),
    endpointSlices: (_ns, n) => slices.get(n) ?? [],
    secret: () => undefined,
  };
  const memo = new ModelMemo();
  const make = (host: string, extra: Partial<V1Ingress> = {}): V1Ingress => {
    const i = ingress({
      name: "one",
      rules: [{ host, paths: [{ path: "/", pathType: "Prefix", service: "a", port: 80 }] }],
    });
    i.metadata!.uid = "u1";
    return { ...i, ...extra };
  };
  const first = buildModel({ ingresses: [make("a.example.com")], lookup, memo });
  const route = first.model.routes[0];
  // Its status written: a new object, the same reading: the same route object, nothing read again.
  const withStatus = make("a.example.com", { status: { loadBalancer: { ingress: [{ ip: "10.9.9.9" }] } } });
  const again = buildModel({ ingresses: [withStatus], lookup, memo });
  assert.equal(again.model.routes[0], route);
  assert.deepEqual(again, buildModel({ ingresses: [withStatus], lookup }));
  // A deep copy (new nested objects, as the cache's decoding makes them) reads the same too; a
  // nested value changed (a path, an annotation) is read again.
  assert.equal(buildModel({ ingresses: [structuredClone(withStatus)], lookup, memo }).model.routes[0], route);
  // Adopted as its status write comes back: kept before the next build asks for it.
  const written = structuredClone(withStatus);
  memo.adopt(written);
  assert.ok(memo.kept.has(written));
  const deeper = structuredClone(withStatus);
  deeper.spec!.rules![0].http!.paths[0].path = "/x";
  memo.adopt(deeper);
  assert.ok(!memo.kept.has(deeper), "another spec is not adopted");
  assert.equal(buildModel({ ingresses: [deeper], lookup, memo }).model.routes[0].path, "/x");
  const annotated = structuredClone(withStatus);
  annotated.metadata!.annotations = { "ingress-controller.io/ssl-redirect": "false" };
  assert.notEqual(buildModel({ ingresses: [annotated], lookup, memo }).model.routes[0], route);
  // A changed host, a re-created Ingress (another uid) or another creation time: read again.
  const moved = buildModel({ ingresses: [make("b.example.com")], lookup, memo });
  assert.equal(moved.model.routes[0].host, "b.example.com");
  const recreated = make("b.example.com");
  recreated.metadata = { ...recreated.metadata, uid: "u2", creationTimestamp: new Date("2026-02-01T00:00:00Z") };
  const later = buildModel({ ingresses: [recreated], lookup, memo });
  assert.notEqual(later.model.routes[0], moved.model.routes[0]);
  assert.deepEqual(later, buildModel({ ingresses: [recreated], lookup }));
  // Without uids (objects made by hand): a creation time of its own still reads again, as it
  // changes which of two Ingresses routing the same host wins.
  const other = ingress({
    name: "other",
    created: "2026-01-05T00:00:00Z",
    rules: [{ host: "c.example.com", paths: [{ path: "/", pathType: "Prefix", service: "a", port: 80 }] }],
  });
  const at = (created: string) =>
    ingress({
      name: "one",
      created,
      rules: [{ host: "c.example.com", paths: [{ path: "/", pathType: "Prefix", service: "a", port: 80 }] }],
    });
  buildModel({ ingresses: [at("2026-01-09T00:00:00Z"), other], lookup, memo });
  const older = buildModel({ ingresses: [at("2026-01-01T00:00:00Z"), other], lookup, memo });
  assert.equal(older.model.routes[0].ingress, "default/one");
  assert.deepEqual(older, buildModel({ ingresses: [at("2026-01-01T00:00:00Z"), other], lookup }));
});

Deno.test("model deltas with host ownership: 400 random changes in three namespaces, every model equals a full build with the same previous owners", async () => {
  const templates = await loadTemplates(null);
  let seed = 23;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const namespaces = ["t1", "t2", "t3"];
  // One object per Service and slice, as the controller's caches hand them out (kept fragments stay).
  const services = new Map(
    namespaces.map((ns) => [ns, service("svc", [{ name: "http", port: 80, targetPort: 8080 }], ns)]),
  );
  const slices = new Map(namespaces.map((ns, k) => [ns, [
    endpointSlice("svc", [{ name: "http", port: 8080 }], [{ address: `10.0.${k + 1}.1` }], { namespace: ns }),
  ]]));
  const lookup: ClusterLookup = {
    service: (ns) => services.get(ns),
    endpointSlices: (ns) => slices.get(ns) ?? [],
    secret: () => undefined,
  };
  // Hosts of their own (deltas), hosts two namespaces name (ownership), wildcards, host-less rules.
  const hostOf = (i: number) => {
    const r = rand(20);
    if (r === 0) return `*.w${rand(3)}.example.com`;
    if (r === 1) return "";
    if (r < 5) return `${["a", "b", "c"][rand(3)]}.w${rand(3)}.example.com`;
    return `own${i}-${rand(1000)}.example.com`;
  };
  const makeIngress = (i: number): V1Ingress =>
    ingress({
      namespace: namespaces[rand(3)],
      name: `ing-${i}`,
      created: `2026-01-0${1 + rand(9)}T00:00:0${rand(10)}Z`,
      rules: [{
        host: hostOf(i) || undefined,
        paths: [{ path: rand(2) ? "/" : `/p${rand(3)}`, pathType: "Prefix", service: "svc", port: 80 }],
      }],
      defaultBackend: rand(60) === 0 ? { service: "svc", port: 80 } : undefined,
    });
  const ingresses: (V1Ingress | null)[] = Array.from({ length: 200 }, (_, i) => makeIngress(i));
  const memo = new ModelMemo();
  const renderMemo = new RenderMemo();
  const policies = [
    { mode: "Strict" as const, pins: [] },
    { mode: "Strict" as const, pins: [{ host: "a.w1.example.com", namespace: "t2" }] },
  ];
  let previous: ReadonlyMap<string, string> | null = null;
  let moved = 0;
  for (let step = 0; step < 400; step++) {
    const what = rand(40);
    const i = rand(ingresses.length);
    if (what < 4) ingresses[i] = ingresses[i] ? null : makeIngress(i);
    else {
      for (let k = rand(3); k >= 0; k--) {
        const j = rand(ingresses.length);
        ingresses[j] = makeIngress(j);
      }
    }
    const ownership = policies[step < 300 ? 0 : 1];
    const input = { ingresses: ingresses.filter((x) => x !== null), lookup, ownership };
    const fresh = buildModel({ ...input, previousOwners: previous });
    const kept = buildModel({ ...input, memo });
    assert.deepEqual(kept, fresh, `step ${step}`);
    // The owners the model was built with are what the next one keeps.
    if (previous && [...previous].some(([h, ns]) => fresh.owners?.get(h) !== undefined && fresh.owners.get(h) !== ns)) {
      moved++;
    }
    previous = kept.owners === null ? null : new Map(kept.owners);
    const want = configMapData(render(fresh.model, templates));
    assert.deepEqual(configMapData(render(kept.model, templates, undefined, renderMemo)), want, `step ${step}`);
  }
  assert.ok(memo.deltas > 100, `only ${memo.deltas} of 400 builds were deltas`);
  assert.ok(memo.deltas < 400, "every build was a delta: the refusals were never exercised");
  assert.ok(moved > 0, "no host ever changed owner: the sticky rule was never exercised");
});

Deno.test("model deltas: a route change hands on the same backends and references, and the render reuses its views of them", async () => {
  const templates = await loadTemplates(null);
  const names = ["a", "b", "c"];
  const services = new Map(names.map((n) => [n, service(n, [{ name: "http", port: 80, targetPort: 8080 }])]));
  const slices = new Map(
    names.map((n, i) => [n, [endpointSlice(n, [{ name: "http", port: 8080 }], [{ address: `10.0.0.${i + 1}` }])]]),
  );
  const lookup: ClusterLookup = {
    service: (_ns, n) => services.get(n),
    endpointSlices: (_ns, n) => slices.get(n) ?? [],
    secret: () => undefined,
  };
  const one = (i: number, hosts: string[], svc = names[i % 3]) =>
    ingress({
      name: `ing-${i}`,
      created: `2026-01-0${1 + (i % 9)}T00:00:00Z`,
      rules: hosts.map((host) => ({ host, paths: [{ path: "/", pathType: "Prefix", service: svc, port: 80 }] })),
    });
  const ingresses = Array.from({ length: 30 }, (_, i) => one(i, [`h${i}.example.com`]));
  const memo = new ModelMemo();
  const renderMemo = new RenderMemo();
  const first = buildModel({ ingresses, lookup, memo }).model;
  render(first, templates, undefined, renderMemo);
  const views = renderMemo.lastViews!.views;
  // A host added to an Ingress: it is read again into new Backend objects that read the same.
  ingresses[4] = one(4, ["h4.example.com", "new.example.com"]);
  const changed = buildModel({ ingresses, lookup, memo });
  assert.equal(memo.deltas, 1);
  assert.deepEqual(changed, buildModel({ ingresses, lookup }));
  assert.notEqual(changed.model.routes, first.routes);
  assert.equal(changed.model.backends, first.backends);
  assert.equal(changed.model.refs.services, first.refs.services);
  assert.equal(changed.model.refs.secrets, first.refs.secrets);
  const rendered = render(changed.model, templates, undefined, renderMemo);
  assert.equal(renderMemo.lastViews!.views, views);
  assert.deepEqual(configMapData(rendered), configMapData(render(changed.model, templates)));
  // Moved to a Service no other Ingress uses any more: a new backends array, the old one unchanged.
  const before = changed.model.backends.map((b) => b.name);
  ingresses[4] = one(4, ["h4.example.com"], "c");
  ingresses[1] = one(1, ["h1.example.com"], "c");
  ingresses[7] = one(7, ["h7.example.com"], "c");
  for (const i of [10, 13, 16, 19, 22, 25, 28]) ingresses[i] = one(i, [`h${i}.example.com`], "c");
  const moved = buildModel({ ingresses, lookup, memo });
  assert.equal(memo.deltas, 2);
  assert.deepEqual(moved, buildModel({ ingresses, lookup }));
  assert.notEqual(moved.model.backends, changed.model.backends);
  assert.deepEqual(changed.model.backends.map((b) => b.name), before);
  assert.deepEqual(moved.model.backends.map((b) => b.name), ["be_default_a_80", "be_default_c_80"]);
  assert.deepEqual(moved.model.refs.services, ["default/a", "default/c"]);
  assert.deepEqual(
    configMapData(render(moved.model, templates, undefined, renderMemo)),
    configMapData(render(moved.model, templates)),
  );
});
