/**
 * The model and render memos (lib/render/ingress_reading.ts's ModelMemo, lib/render/render.ts's
 * RenderMemo) must never change an outcome: through a sequence of replaced Ingresses, Services,
 * EndpointSlices and Secrets, every model and configuration built with them equals the one built
 * from scratch.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Ingress, V1Secret, V1Service } from "@kubernetes/client-node";
import { buildModel, type ClusterLookup, ModelMemo } from "../../lib/render/model.ts";
import { configMapData, loadTemplates, render, RenderMemo } from "../../lib/render/render.ts";
import { endpointSlice, ingress, service, tlsSecret } from "./fixtures.ts";

/**
 * A lookup over maps whose objects the test replaces (never changes in place), as the controller's
 * caches do; with `generation`, it counts every replacement as the controller counts its cache events.
 */
function world(generation = false) {
  let count = 0;
  const counted = <K, V>(m: Map<K, V>): Map<K, V> => {
    const set = m.set.bind(m);
    const del = m.delete.bind(m);
    m.set = (k, v) => (count++, set(k, v));
    m.delete = (k) => (count++, del(k));
    return m;
  };
  const services = counted(new Map<string, V1Service>());
  const slices = counted(new Map<string, V1EndpointSlice[]>());
  const secrets = counted(new Map<string, V1Secret>());
  const lookup: ClusterLookup = {
    service: (ns, n) => services.get(`${ns}/${n}`),
    endpointSlices: (ns, n) => slices.get(`${ns}/${n}`) ?? [],
    secret: (ns, n) => secrets.get(`${ns}/${n}`),
    ...(generation ? { generation: () => count } : {}),
  };
  return { services, slices, secrets, lookup };
}

for (const generation of [false, true]) {
  Deno.test(`model and render memos${generation ? ", with the lookup's generation" : ""}: 200 replaced objects later, every outcome equals a build from scratch`, async () => {
    const templates = await loadTemplates(null);
    const w = world(generation);
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const svcNames = ["a", "b", "c", "d"];
    const setService = (name: string) => {
      const port = rand(3) === 0 ? 81 : 80;
      w.services.set(`default/${name}`, service(name, [{ name: "http", port, targetPort: 8080 }]));
    };
    const setSlices = (name: string) => {
      const n = rand(4);
      w.slices.set(`default/${name}`, [
        endpointSlice(
          name,
          [{ name: "http", port: 8080 }],
          Array.from({ length: n }, (_, k) => ({
            address: `10.0.${svcNames.indexOf(name)}.${k + rand(3) + 1}`,
            ready: rand(5) !== 0,
          })),
        ),
      ]);
    };
    const setSecret = () => {
      if (rand(3) === 0) w.secrets.delete("default/tls");
      else w.secrets.set("default/tls", tlsSecret("tls", "default", rand(4) === 0 ? "Opaque" : "kubernetes.io/tls"));
    };
    const annotationSets: Record<string, string>[] = [
      {},
      { "ingress-controller.io/load-balance": "leastconn" },
      { "ingress-controller.io/canary": "true", "ingress-controller.io/canary-weight": "30" },
      { "ingress-controller.io/www-redirect": "true" },
      { "ingress-controller.io/ssl-redirect": "false" },
      { "ingress-controller.io/timeout-server": "not-a-duration" },
    ];
    const makeIngress = (i: number): V1Ingress =>
      ingress({
        name: `ing-${i}`,
        created: `2026-01-0${1 + (i % 5)}T00:00:00Z`,
        annotations: annotationSets[rand(annotationSets.length)],
        rules: [{
          host: rand(4) === 0 ? "shared.example.com" : `h${rand(6)}.example.com`,
          paths: [
            {
              path: rand(2) ? "/" : "/api",
              pathType: rand(3) === 0 ? "Exact" : "Prefix",
              service: svcNames[rand(5) % 4],
              port: 80,
            },
            ...(rand(3) === 0 ? [{ path: "/x", pathType: "Prefix", service: "missing", port: 80 }] : []),
          ],
        }],
        tls: rand(2) ? [{ hosts: ["shared.example.com", `h${rand(6)}.example.com`], secretName: "tls" }] : undefined,
        defaultBackend: rand(5) === 0 ? { service: svcNames[rand(4)], port: 80 } : undefined,
      });
    for (const s of svcNames) {
      setService(s);
      setSlices(s);
    }
    setSecret();
    const ingresses = Array.from({ length: 12 }, (_, i) => makeIngress(i));
    const memo = new ModelMemo();
    const renderMemo = new RenderMemo();
    let hits = 0;
    let lastConfig = "";
    for (let step = 0; step < 200; step++) {
      const what = rand(5);
      if (what <= 1) {
        const i = rand(ingresses.length);
        ingresses[i] = makeIngress(i);
      } else if (what === 2) setService(svcNames[rand(4)]);
      else if (what === 3) setSlices(svcNames[rand(4)]);
      else setSecret();
      const input = { ingresses, lookup: w.lookup, allowLoopbackEndpoints: false };
      const fresh = buildModel(input);
      const kept = buildModel({ ...input, memo });
      assert.deepEqual(kept, fresh, `step ${step}`);
      const want = render(fresh.model, templates);
      const got = render(kept.model, templates, undefined, renderMemo);
      assert.deepEqual(configMapData(got), configMapData(want), `step ${step}`);
      if (got.config === lastConfig) hits++;
      lastConfig = got.config;
    }
    // The sequence does reuse configurations (route-only and no-op changes), so the memo was exercised.
    assert.ok(hits > 0, "no configuration was reused");
  });
}

Deno.test("render memo: a route-only change hands back the very same configuration text", async () => {
  const templates = await loadTemplates(null);
  const w = world();
  w.services.set("default/a", service("a", [{ name: "http", port: 80, targetPort: 8080 }]));
  w.slices.set("default/a", [endpointSlice("a", [{ name: "http", port: 8080 }], [{ address: "10.0.0.1" }])]);
  const memo = new ModelMemo();
  const renderMemo = new RenderMemo();
  const one = (host: string) =>
    ingress({ name: "one", rules: [{ host, paths: [{ path: "/", pathType: "Prefix", service: "a", port: 80 }] }] });
  const two = ingress({ name: "two", rules: [{ host: "two.example.com", paths: [{ service: "a", port: 80 }] }] });
  const build = (list: V1Ingress[]) =>
    render(buildModel({ ingresses: list, lookup: w.lookup, memo }).model, templates, undefined, renderMemo);
  const before = build([one("a.example.com"), two]);
  const oneB = one("b.example.com");
  const after = build([oneB, two]);
  assert.equal(after.config, before.config);
  assert.notEqual(after.maps["routes-prefix.map"], before.maps["routes-prefix.map"]);
  // The same backends, but TLS now: the configuration changes (the HTTPS frontend reads the crt-list).
  w.secrets.set("default/tls", tlsSecret("tls"));
  const tls = ingress({
    name: "two",
    rules: [{ host: "two.example.com", paths: [{ service: "a", port: 80 }] }],
    tls: [{ hosts: ["two.example.com"], secretName: "tls" }],
  });
  const secured = build([oneB, tls]);
  assert.notEqual(secured.config, after.config);
  assert.equal(
    secured.config,
    render(buildModel({ ingresses: [oneB, tls], lookup: w.lookup }).model, templates).config,
  );
  // A changed backend renders again.
  w.slices.set("default/a", [endpointSlice("a", [{ name: "http", port: 8080 }], [{ address: "10.0.0.2" }])]);
  const moved = build([oneB, tls]);
  assert.match(moved.config, /10\.0\.0\.2:8080/);
});
