/**
 * The sidecar contract end to end: the exporter container the controller puts in every proxy
 * Deployment parses as an `exporter` command line, and with those settings the exporter reads the
 * stats listener of a configuration rendered by lib/render and applied by the proxy's Applier to a
 * real HAProxy, exporting the server slots of the rendered backend.
 */
import type { MapFile } from "../../lib/render/maps.ts";
import assert from "node:assert/strict";
import { desiredObjects, exporterPort, statsPort } from "../../lib/controller/objects.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { startExporter } from "../../lib/exporter/command.ts";
import { type ExporterSettings, parseExporterFlags } from "../../lib/flags/exporter_settings.ts";
import { parseListenAddress } from "../../lib/exporter/listen_address.ts";
import { buildModel, loadTemplates, lookupFromLists, render } from "../../lib/render/mod.ts";
import { startBackend } from "../../lib/dev/localenv/backend.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";
import { get, proxyUnderTest } from "../proxy/fixtures.ts";
import { readExposition } from "./helpers.ts";

const ing = {
  apiVersion: "networking.k8s.io/v1",
  kind: "Ingress",
  metadata: { name: "site", namespace: "default", uid: "u-1" },
};

function sidecarSettings(): ExporterSettings {
  const settings = { ...defaultSettings, proxyServerMetricFields: "4,7,17", proxyTimeoutMs: 1500 };
  const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
  const deployment = desiredObjects(ing, data, [], settings).find((d) => d.object.kind === "Deployment")!;
  const containers = deployment.object.spec.template.spec.containers;
  const exporter = containers.find((c: { name: string }) => c.name === "exporter");
  assert.equal(exporter.args[0], "exporter");
  const parsed = parseExporterFlags(exporter.args.slice(1));
  assert.notEqual(parsed, "help");
  const s = parsed as ExporterSettings;
  // The container port is where the exporter listens by default; it scrapes the proxy's stats port.
  assert.equal(exporter.ports[0].name, "metrics");
  assert.equal(exporter.ports[0].containerPort, exporterPort);
  assert.equal(parseListenAddress(s.listenAddress).port, exporterPort);
  assert.equal(s.scrapeUri, `http://127.0.0.1:${statsPort}/;csv`);
  const proxy = containers.find((c: { args?: string[] }) => c.args?.[0] === "proxy");
  assert.ok(proxy.args.includes(`--stats-port=${statsPort}`));
  assert.deepEqual(s.serverMetricFields, [4, 7, 17]);
  assert.equal(s.timeoutMs, 1500);
  return s;
}

Deno.test("sidecar: the controller's exporter container scrapes the stats listener of a rendered config", async () => {
  const settings = sidecarSettings();
  const web = await startBackend({ name: "web" });
  await using p = await proxyUnderTest();
  try {
    const templates = await loadTemplates(null);
    const { model, problems } = buildModel({
      ingresses: [ingress({
        name: "site",
        rules: [{ host: "site.example", paths: [{ path: "/", pathType: "Prefix", service: "web", port: 80 }] }],
      })],
      lookup: lookupFromLists({
        services: [service("web", [{ name: "http", port: 80, targetPort: web.port }])],
        endpointSlices: [endpointSlice("web", [{ name: "http", port: web.port }], [{ address: web.address }])],
      }),
      allowLoopbackEndpoints: true, // the backend listens on the host's loopback; no API server in between
    });
    assert.deepEqual(problems, []);
    const r = render(model, templates);
    const applied = await p.applier.apply({
      config: r.config,
      crtList: r.crtList,
      pems: new Map(),
      maps: new Map(Object.entries(r.maps)) as Map<MapFile, string>,
    });
    assert.ok(applied.ok, applied.error ?? "");
    for (let i = 0; i < 3; i++) assert.equal((await get(`${p.url}/x`, "site.example")).name, "web");

    // In the pod both containers share 127.0.0.1; here the proxy listens on its own loopback address.
    const scrapeUri = settings.scrapeUri.replace(`127.0.0.1:${statsPort}`, `${p.bind}:${p.statsPort}`);
    await using exporter = startExporter({ ...settings, scrapeUri, listenAddress: "127.0.0.1:0" });
    const samples = readExposition(await (await fetch(exporter.url)).text());
    assert.equal(samples.get("haproxy_up"), 1);
    const backend = model.backends[0].name;
    const slot1 = `backend="${backend}",server="s1"`;
    assert.equal(samples.get(`haproxy_server_sessions_total{${slot1}}`), 3);
    assert.equal(samples.get(`haproxy_server_up{${slot1}}`), 1);
    // A roundrobin backend has one slot per endpoint (lib/render/slots.ts): no unused slot to export.
    assert.equal(samples.get(`haproxy_server_up{backend="${backend}",server="s2"}`), undefined);
    assert.equal(samples.get(`haproxy_backend_sessions_total{backend="${backend}"}`), 3);
    const serverFamilies = new Set(
      [...samples.keys()].filter((k) => k.startsWith("haproxy_server_")).map((k) => k.replace(/\{.*/, "")),
    );
    assert.deepEqual(
      [...serverFamilies].sort(),
      ["haproxy_server_current_sessions", "haproxy_server_sessions_total", "haproxy_server_up"],
    );
  } finally {
    await p.close();
    await web.close();
  }
});
