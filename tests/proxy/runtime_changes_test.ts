/**
 * Route-only and certificate changes reach a real HAProxy 2.6 through the Runtime API, without a
 * reload: configurations rendered by lib/render from Ingress objects are applied by the proxy's
 * Applier; reloads are counted by the master (`show proc`) and by the applies metric, and the
 * worker must stay the same. A route to a new backend still reloads, once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { V1Ingress } from "@kubernetes/client-node";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import { type DesiredState, mapEdits } from "../../lib/proxy/plan.ts";
import { MAP_FILES, type MapFile } from "../../lib/render/maps.ts";
import { chunkLines, mapEditCommands } from "../../lib/proxy/runtime_changes.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { type Backend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import {
  get,
  httpsGet,
  loopbackAddress,
  type ProxyUnderTest,
  proxyUnderTest,
  testCertificate,
  workerPid,
} from "./fixtures.ts";

const templates = await loadTemplates(null);

async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return Number(v?.value ?? 0);
}

/** Reloads so far: the master's own count, and the proxy's applies of kind reload. */
async function reloads(p: ProxyUnderTest): Promise<{ master: number; applies: number }> {
  return {
    master: (await p.haproxy.showProc()).master.reloads,
    applies: await counter("ingress_controller_proxy_applies_total", { kind: "reload" }),
  };
}

interface Site {
  backends: Backend[];
  desired(ingresses: V1Ingress[], pems?: Map<string, string>, secrets?: unknown[]): DesiredState;
}

async function site(names: string[]): Promise<Site> {
  const backends = await Promise.all(names.map((name) => startBackend({ name, host: loopbackAddress() })));
  return {
    backends,
    desired(ingresses, pems = new Map(), secrets = []) {
      const { model, problems } = buildModel({
        ingresses,
        lookup: lookupFromLists({
          services: names.map((n) => service(n, [{ port: 80 }])),
          endpointSlices: backends.map((b, i) =>
            endpointSlice(names[i], [{ name: "", port: b.port }], [{ address: b.address }])
          ),
          secrets: secrets as never[],
        }),
        allowLoopbackEndpoints: true,
      });
      assert.deepEqual(problems, []);
      const r = render(model, templates);
      return {
        config: r.config,
        crtList: r.crtList,
        pems,
        maps: new Map(Object.entries(r.maps)) as Map<MapFile, string>,
      };
    },
  };
}

type Cert = { certPem: string; keyPem: string };
const secret = (name: string, c: Cert) => ({
  apiVersion: "v1",
  kind: "Secret",
  type: "kubernetes.io/tls",
  metadata: { namespace: "default", name },
  data: { "tls.crt": btoa(c.certPem), "tls.key": btoa(c.keyPem) },
});
const pemOf = (c: Cert) => `${c.certPem.trimEnd()}\n${c.keyPem.trimEnd()}\n`;

const paths = (...ps: [string, string, string?][]) =>
  ps.map(([path, svc, pathType]) => ({ path, service: svc, port: 80, pathType: pathType ?? "Prefix" }));

Deno.test("route-only changes are applied through the Runtime API: no reload, the new routes are served", async () => {
  const s = await site(["web", "api", "other"]);
  await using p = await proxyUnderTest();
  try {
    const ing = (rules: { host?: string; paths: ReturnType<typeof paths> }[]) => [ingress({ name: "site", rules })];
    // every backend is referenced from the start: the later changes only move routes between them; and every kind
    // of lookup (Exact and Prefix paths of a host, a wildcard host, host-less paths) is there from the start: the
    // first route of a new kind adds its lookup to haproxy.cfg (docs/routing-maps.md)
    const start = await p.applier.apply(s.desired(ing([
      { host: "a.example", paths: paths(["/", "web"], ["/api", "api"], ["/exact0", "api", "Exact"]) },
      { host: "*.old.example", paths: paths(["/", "other"]) },
      { paths: paths(["/other", "other"]) },
    ])));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    const pid = await workerPid(p.haproxy);
    const before = await reloads(p);
    const url = (path: string) => `${p.url}${path}`;
    assert.equal((await get(url("/api/x"), "a.example")).name, "api");
    assert.equal((await get(url("/x"), "b.example")).status, 404);

    // added host, added Exact path, a path moved to another existing backend, a removed path
    const moved = await p.applier.apply(s.desired(ing([
      { host: "a.example", paths: paths(["/", "web"], ["/api", "other"], ["/exact", "api", "Exact"]) },
      { host: "b.example", paths: paths(["/", "api"]) },
      { host: "*.wild.example", paths: paths(["/", "other"]) },
      { paths: paths(["/keep", "web"]) },
    ])));
    assert.deepEqual([moved.kind, moved.ok], ["runtime", true], moved.error ?? "");
    assert.ok((moved.mapsChanged ?? 0) >= 2);
    assert.equal((await get(url("/api/x"), "a.example")).name, "other");
    assert.equal((await get(url("/exact"), "a.example")).name, "api");
    assert.equal((await get(url("/exact/x"), "a.example")).name, "web");
    assert.equal((await get(url("/x"), "b.example")).name, "api");
    assert.equal((await get(url("/x"), "c.wild.example")).name, "other");
    assert.equal((await get(url("/other"), "c.example")).status, 404, "the removed host-less route is gone");
    assert.deepEqual(await reloads(p), before, "no reload");
    assert.equal(await workerPid(p.haproxy), pid);
    // the files agree with what runs, so a later reload keeps the routes
    const exact = await Deno.readTextFile(join(p.certDir, "routes-exact.map"));
    assert.equal(exact, "a.example/exact be_default_api_80\n");

    // many routes: the map is sent in several payloads and still replaced at once
    const many = Array.from({ length: 600 }, (_, i) => ({ host: `h${i}.example`, paths: paths(["/", "api"]) }));
    const big = await p.applier.apply(s.desired(ing([
      { host: "a.example", paths: paths(["/", "web"], ["/api", "other"], ["/exact", "api", "Exact"]) },
      { host: "*.wild.example", paths: paths(["/", "other"]) },
      { paths: paths(["/other", "other"]) },
      ...many,
    ])));
    assert.deepEqual([big.kind, big.ok], ["runtime", true], big.error ?? "");
    const prefix = await Deno.readTextFile(join(p.certDir, "routes-prefix.map"));
    assert.ok(chunkLines(prefix.trimEnd().split("\n")).length > 1, "more than one payload");
    for (const i of [0, 299, 599]) assert.equal((await get(url("/"), `h${i}.example`)).name, "api");
    assert.equal((await get(url("/other"), "c.example")).name, "other");
    assert.deepEqual(await reloads(p), before, "no reload");

    // a route to a backend that does not exist yet is structural: one reload
    const s2 = await site(["web", "api", "other", "new"]);
    try {
      const r = await p.applier.apply(s2.desired(ing([
        { host: "a.example", paths: paths(["/", "web"], ["/api", "other"]) },
        { paths: paths(["/other", "other"], ["/new", "new"]) },
        ...many,
      ])));
      assert.deepEqual([r.kind, r.ok], ["reload", true], r.error ?? "");
      assert.equal((await get(url("/new"), "z.example")).name, "new");
      assert.equal((await get(url("/"), "h5.example")).name, "api");
      const after = await reloads(p);
      assert.deepEqual(after, { master: before.master + 1, applies: before.applies + 1 }, "exactly one reload");
    } finally {
      await Promise.all(s2.backends.map((b) => b.close()));
    }
  } finally {
    await p.close();
    await Promise.all(s.backends.map((b) => b.close()));
  }
});

Deno.test("regex routes change through the Runtime API in their order, with their backslashes, without reload", async () => {
  const s = await site(["web", "api", "other"]);
  await using p = await proxyUnderTest();
  try {
    const ing = (regexes: [string, string][]) => [ingress({
      name: "re",
      annotations: { "ingress-controller.io/path-regex": "true" },
      rules: [{
        host: "a.example",
        paths: [
          ...paths(["/", "api"]),
          ...paths(...regexes.map(([re, svc]) => [re, svc, "ImplementationSpecific"] as [string, string, string])),
        ],
      }],
    })];
    const start = await p.applier.apply(s.desired(ing([["/v[0-9]+/.*", "web"], ["/o", "other"]])));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    const pid = await workerPid(p.haproxy);
    const before = await reloads(p);
    assert.equal((await get(`${p.url}/v2/items/x`, "a.example")).name, "web");

    // a longer regex that also matches: it must come first in the map_reg list, and keep its \d
    const r = await p.applier.apply(s.desired(ing([["/v[0-9]+/.*", "web"], ["/v\\d+/items/.*", "other"]])));
    assert.deepEqual([r.kind, r.ok], ["runtime", true], r.error ?? "");
    assert.equal((await get(`${p.url}/v2/items/x`, "a.example")).name, "other");
    assert.equal((await get(`${p.url}/V2/ITEMS/x`, "a.example")).name, "other", "case-insensitive as ingress-nginx");
    assert.equal((await get(`${p.url}/v2/other`, "a.example")).name, "web");
    assert.equal((await get(`${p.url}/o`, "a.example")).name, "api", "the removed regex is gone");
    assert.deepEqual(await reloads(p), before, "no reload");
    assert.equal(await workerPid(p.haproxy), pid);
    assert.equal(
      await Deno.readTextFile(join(p.certDir, "routes-regex.map")),
      "^a[.]example(?=/)(?i:/v\\d+/items/.*) be_default_other_80\n^a[.]example(?=/)(?i:/v[0-9]+/.*) be_default_web_80\n",
    );
  } finally {
    await p.close();
    await Promise.all(s.backends.map((b) => b.close()));
  }
});

Deno.test("a certificate change is applied through the Runtime API: no reload, SNI serves the new certificate", async () => {
  const s = await site(["web"]);
  await using p = await proxyUnderTest();
  try {
    const ings = [ingress({
      name: "tls",
      tls: [{ hosts: ["web.test"], secretName: "web-tls" }],
      rules: [{ host: "web.test", paths: paths(["/", "web"]) }],
    })];
    const desired = (c: Cert) => s.desired(ings, new Map([["default_web-tls.pem", pemOf(c)]]), [secret("web-tls", c)]);
    const one = await testCertificate("web.test");
    const start = await p.applier.apply(desired(one));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", one.caPem), /"name":"web"/);
    const pid = await workerPid(p.haproxy);
    const before = await reloads(p);

    const two = await testCertificate("web.test");
    const r = await p.applier.apply(desired(two));
    assert.deepEqual([r.kind, r.ok, r.certsChanged], ["runtime", true, 1], r.error ?? "");
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", two.caPem), /"name":"web"/);
    await assert.rejects(
      httpsGet(p.bind, p.httpsPort, "web.test", one.caPem),
      /invalid peer certificate/,
    );
    assert.deepEqual(await reloads(p), before, "no reload");
    assert.equal(await workerPid(p.haproxy), pid);
    const file = join(p.certDir, "default_web-tls.pem");
    assert.equal(await Deno.readTextFile(file), `${two.certPem.trimEnd()}\n${two.keyPem.trimEnd()}\n`);
    assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);

    // a key that does not match its certificate is refused by HAProxy: the running one stays, then a reload's check refuses it too
    const bad = await p.applier.apply(
      s.desired(ings, new Map([["default_web-tls.pem", `${two.certPem}${one.keyPem}`]]), [
        secret("web-tls", two),
      ]),
    );
    assert.equal(bad.ok, false);
    assert.equal(bad.stage, "check");
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", two.caPem), /"name":"web"/);
  } finally {
    await p.close();
    await Promise.all(s.backends.map((b) => b.close()));
  }
});

Deno.test("map files that are not <key> <backend> lines are refused before anything is applied", async () => {
  const s = await site(["web"]);
  await using p = await proxyUnderTest();
  try {
    const good = s.desired([ingress({ name: "x", rules: [{ host: "a.example", paths: paths(["/", "web"]) }] })]);
    assert.ok((await p.applier.apply(good)).ok);
    for (
      const text of [
        "a.example/ be_default_web_80 extra\n",
        "a.example/\tbe_default_web_80\n",
        "a.example/ be_default_web_80\n\nb.example/ be_default_web_80\n",
        "#a.example/ be_default_web_80\n",
        "a.example/ be_default_web_80",
        "a.example/ be\u2028x\n",
      ]
    ) {
      const maps = new Map(good.maps);
      maps.set(MAP_FILES[1], text);
      const r = await p.applier.apply({ ...good, maps });
      assert.deepEqual([r.ok, r.stage], [false, "input"], JSON.stringify(text));
      assert.match(r.error ?? "", /routes-prefix\.map/);
    }
    assert.equal((await get(`${p.url}/`, "a.example")).name, "web");
  } finally {
    await p.close();
    await Promise.all(s.backends.map((b) => b.close()));
  }
});

Deno.test("chunkLines: whole lines, at most the limit per payload, nothing lost", () => {
  const lines = Array.from({ length: 50 }, (_, i) => `k${i} v`);
  const chunks = chunkLines(lines, 40);
  assert.ok(chunks.every((c) => c.length <= 40));
  assert.deepEqual(chunks.join("\n").split("\n"), lines);
  assert.deepEqual(chunkLines([]), []);
});

Deno.test("a new TLS host and its certificate are added and removed through the Runtime API: no reload", async () => {
  const s = await site(["web"]);
  await using p = await proxyUnderTest();
  try {
    const tlsIngress = (name: string, host: string) =>
      ingress({
        name,
        tls: [{ hosts: [host], secretName: `${name}-tls` }],
        rules: [{ host, paths: paths(["/", "web"]) }],
      });
    const web = await testCertificate("web.test");
    const api = await testCertificate("api.test");
    const webOnly = s.desired([tlsIngress("web", "web.test")], new Map([["default_web-tls.pem", pemOf(web)]]), [
      secret("web-tls", web),
    ]);
    const both = s.desired(
      [tlsIngress("web", "web.test"), tlsIngress("api", "api.test")],
      new Map([["default_api-tls.pem", pemOf(api)], ["default_web-tls.pem", pemOf(web)]]),
      [secret("web-tls", web), secret("api-tls", api)],
    );
    assert.equal(both.config, webOnly.config, "the new host is a crt-list, map and PEM change only");
    const start = await p.applier.apply(webOnly);
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    const before = await reloads(p);
    const plain = (host: string) => get(`${p.url}/x`, host);
    assert.equal((await plain("api.test")).status, 404, "no route before");

    const added = await p.applier.apply(both);
    assert.deepEqual([added.kind, added.ok, added.certsChanged], ["runtime", true, 1], added.error ?? "");
    assert.match(await httpsGet(p.bind, p.httpsPort, "api.test", api.caPem), /"name":"web"/);
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", web.caPem), /"name":"web"/);
    assert.equal((await plain("api.test")).status, 308, "redirected to HTTPS");
    assert.equal(await Deno.readTextFile(join(p.certDir, "crt-list")), both.crtList);
    assert.deepEqual(await reloads(p), before, "no reload");

    const removed = await p.applier.apply(webOnly);
    assert.deepEqual([removed.kind, removed.ok, removed.certsChanged], ["runtime", true, 1], removed.error ?? "");
    // (strict-sni: no certificate of another host is shown for it, the handshake is refused)
    await assert.rejects(
      httpsGet(p.bind, p.httpsPort, "api.test", api.caPem),
      /UnrecognisedName|invalid peer certificate/,
    );
    assert.equal((await plain("api.test")).status, 404, "no longer routed nor redirected");
    await assert.rejects(Deno.stat(join(p.certDir, "default_api-tls.pem")), Deno.errors.NotFound);
    assert.deepEqual(await reloads(p), before, "no reload");

    // the files agree with what runs: a reload now serves the same
    assert.ok((await p.applier.apply(both)).ok);
    assert.ok((await p.haproxy.reload()).ok);
    assert.match(await httpsGet(p.bind, p.httpsPort, "api.test", api.caPem), /"name":"web"/);
    assert.equal((await plain("api.test")).status, 308);
  } finally {
    await p.close();
    await Promise.all(s.backends.map((b) => b.close()));
  }
});

Deno.test("mapEditCommands: adds and value changes before removals, nothing for unchanged entries", () => {
  assert.deepEqual(
    mapEditCommands("/m", mapEdits({ removed: ["a/ x", "b/ y"], added: ["b/ y2", "d/ w"] })),
    ["set map /m b/ y2", "add map /m d/ w", "del map /m a/"],
  );
  assert.deepEqual(mapEditCommands("/m", mapEdits({ removed: [], added: [] })), []);
});
