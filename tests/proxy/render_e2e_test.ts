/**
 * The renderer and the proxy agree on the server-slot contract: configurations rendered by
 * lib/render from Ingress/Service/EndpointSlice objects are applied by the proxy's Applier to a
 * real HAProxy; scaling the EndpointSlice is a Runtime API change (same worker), a new path a reload.
 */
import assert from "node:assert/strict";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import type { DesiredState } from "../../lib/proxy/plan.ts";
import { type Backend, startBackend } from "../../lib/dev/localenv/backend.ts";
import { freePort } from "../../lib/dev/localenv/ports.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { get, loopbackAddress, proxyUnderTest, workerPid } from "./fixtures.ts";

/** Backends on distinct loopback addresses sharing one port (an EndpointSlice has one port). */
async function backendsOnOnePort(names: string[]): Promise<Backend[]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const addresses = names.map(() => loopbackAddress());
    const port = freePort(addresses[0]);
    const started: Backend[] = [];
    try {
      for (const [i, name] of names.entries()) started.push(await startBackend({ name, host: addresses[i], port }));
      return started;
    } catch {
      await Promise.all(started.map((b) => b.close()));
    }
  }
  throw new Error("no common free port for the backends");
}

Deno.test("rendered configs: EndpointSlice scaling is applied without a reload, a new path with one", async () => {
  const [a, b, api] = await backendsOnOnePort(["a", "b", "api"]);
  await using p = await proxyUnderTest();
  try {
    const templates = await loadTemplates(null);
    const port = a.port;
    const desired = (webAddresses: string[], withApi = false): DesiredState => {
      const paths = [{ path: "/", pathType: "Prefix", service: "web", port: 80 }];
      if (withApi) paths.push({ path: "/api", pathType: "Prefix", service: "api", port: 80 });
      const { model, problems } = buildModel({
        ingresses: [ingress({ name: "site", rules: [{ host: "site.example", paths }] })],
        lookup: lookupFromLists({
          services: [
            service("web", [{ name: "http", port: 80, targetPort: port }]),
            service("api", [{ name: "http", port: 80, targetPort: port }]),
          ],
          endpointSlices: [
            endpointSlice("web", [{ name: "http", port }], webAddresses.map((address) => ({ address }))),
            endpointSlice("api", [{ name: "http", port }], [{ address: api.address }]),
          ],
        }),
        allowLoopbackEndpoints: true, // the backends listen on the host's loopback; no API server in between
      });
      assert.deepEqual(problems, []);
      const r = render(model, templates);
      return { config: r.config, crtList: r.crtList, pems: new Map(), maps: new Map(Object.entries(r.maps)) as never };
    };

    const first = await p.applier.apply(desired([a.address]));
    assert.ok(first.ok, first.error ?? "");
    assert.equal(first.kind, "start");
    assert.equal((await get(`${p.url}/x`, "site.example")).name, "a");
    const pid = await workerPid(p.haproxy);

    const up = await p.applier.apply(desired([a.address, b.address]));
    assert.deepEqual([up.kind, up.ok], ["runtime", true], up.error ?? "");
    const seen = new Set<string | null>();
    for (let i = 0; i < 6; i++) seen.add((await get(`${p.url}/x`, "site.example")).name);
    assert.deepEqual([...seen].sort(), ["a", "b"]);

    const down = await p.applier.apply(desired([b.address]));
    assert.deepEqual([down.kind, down.ok], ["runtime", true], down.error ?? "");
    for (let i = 0; i < 4; i++) assert.equal((await get(`${p.url}/x`, "site.example")).name, "b");
    assert.equal(await workerPid(p.haproxy), pid, "scaling did not reload");

    const path = await p.applier.apply(desired([b.address], true));
    assert.deepEqual([path.kind, path.ok], ["reload", true], path.error ?? "");
    assert.equal((await get(`${p.url}/api/v1`, "site.example")).name, "api");
    assert.equal((await get(`${p.url}/x`, "site.example")).name, "b");
    assert.notEqual(await workerPid(p.haproxy), pid);
  } finally {
    await p.close();
    await Promise.all([a.close(), b.close(), api.close()]);
  }
});
