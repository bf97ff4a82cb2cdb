/**
 * Tenancy, the shared proxy's statistics: HAProxy's stats page (and its own /metrics) lists every
 * tenant's namespaces, Services, endpoint addresses and traffic, so no tenant may read it. Two
 * tenant namespaces share one proxy, with the real kube-apiserver, the real controller and a real
 * haproxy run by the proxy command, seen as tenant B's pod would:
 * - the shared proxy's `-stats` Service offers only the exporter's `metrics`, and the proxy
 *   Deployment declares no stats port;
 * - the proxy listens on a non-loopback address (as on its pod IP): B's client reaches its own host
 *   there, but a connection to the stats port on that address is refused;
 * - the exporter sidecar, started with the arguments of the controller's own Deployment, still reads
 *   the stats page on 127.0.0.1 and exports both tenants' backends.
 * Runs inside a private network namespace (lib/dev/localenv/netns.ts); outside one, the single test
 * below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, privateAddress, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { exporterPort, statsPort } from "../../lib/controller/objects.ts";
import { startExporter } from "../../lib/exporter/command.ts";
import { type ExporterSettings, parseExporterFlags } from "../../lib/flags/exporter_settings.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  ingressClassObj,
  ingressObj,
  resources,
  serveBackends,
} from "../../lib/dev/localenv/harness.ts";
import { startProxy } from "../../lib/dev/localenv/proxy_run.ts";
import { readExposition } from "../exporter/helpers.ts";

/** Opens a TCP connection to `address:port`; the error code when refused (null: it connected). */
async function connectError(address: string, port: number): Promise<string | null> {
  try {
    const conn = await Deno.connect({ hostname: address, port });
    conn.close();
    return null;
  } catch (err) {
    return err instanceof Deno.errors.ConnectionRefused ? "ECONNREFUSED" : String(err);
  }
}

if (!inPrivateNetwork()) {
  Deno.test("tenancy: stats (runs in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenancy: a tenant sees neither the shared proxy's stats page nor a Service port for it", async (t) => {
    const cluster = await Cluster.start();
    const [alpha, beta] = await backends(["alpha", "beta"], 30);
    try {
      const ops = await cluster.namespace("ops");
      const a = await cluster.namespace("tenant-a");
      const b = await cluster.namespace("tenant-b");
      await serveBackends(cluster, [[a, "shop", alpha], [b, "blog", beta]]);
      await cluster.apply(resources.ingressClasses, ingressClassObj("web"));
      const web = { className: "web" };
      await cluster.apply(resources.ingresses, ingressObj(a, "shop", [{ host: "shop.example", service: "shop" }], web));
      await cluster.apply(resources.ingresses, ingressObj(b, "blog", [{ host: "blog.example", service: "blog" }], web));
      const ctl = await controller(cluster, { operatorNamespace: ops });
      const shared = sharedProxyName("web");
      try {
        await t.step(
          "the -stats Service offers only the exporter's metrics; the pod declares no stats port",
          async () => {
            const svc = await eventually(
              "the -stats Service",
              () => cluster.get(resources.services, ops, `${shared}-stats`),
            );
            assert.deepEqual(
              svc.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]),
              [["metrics", exporterPort]],
            );
            const deployment = (await cluster.get(resources.deployments, ops, shared))!;
            const ports = deployment.spec.template.spec.containers.flatMap((
              c: { ports: { containerPort: number }[] },
            ) => c.ports.map((p) => p.containerPort));
            assert.ok(!ports.includes(statsPort), `container ports ${ports}`);
          },
        );

        // The proxy pod: the traffic listeners on its (non-loopback) address, as on a pod IP.
        const podIp = privateAddress(20);
        await eventually("the shared ConfigMap", () => cluster.get(resources.configMaps, ops, shared));
        const proxy = await startProxy(cluster, ops, shared, { bindAddress: podIp });
        try {
          await t.step("tenant B reaches its host on the proxy's address, not the stats port there", async () => {
            await eventually("tenant B's host served", async () => {
              const r = await httpGet(proxy.httpPort, "blog.example", "/", podIp);
              return r.status === 200 && r.backend === "beta";
            }, 60_000);
            assert.equal(await connectError(podIp, proxy.statsPort), "ECONNREFUSED");
          });

          await t.step("the exporter, as the controller runs it, reads the stats on the loopback", async () => {
            const deployment = (await cluster.get(resources.deployments, ops, shared))!;
            const container = deployment.spec.template.spec.containers.find((c: { name: string }) =>
              c.name === "exporter"
            );
            const parsed = parseExporterFlags(container.args.slice(1));
            assert.notEqual(parsed, "help");
            const settings = parsed as ExporterSettings;
            assert.equal(settings.scrapeUri, `http://127.0.0.1:${statsPort}/;csv`);
            // The test's proxy has a free port of its own instead of 56789: same address, that port.
            const scrapeUri = settings.scrapeUri.replace(`:${statsPort}/`, `:${proxy.statsPort}/`);
            await using exporter = startExporter({ ...settings, scrapeUri, listenAddress: "127.0.0.1:0" });
            const samples = readExposition(await (await fetch(exporter.url)).text());
            assert.equal(samples.get("haproxy_up"), 1);
            const backendsSeen = [...samples.keys()].filter((k) => k.startsWith("haproxy_backend_"));
            for (const ns of [a, b]) assert.ok(backendsSeen.some((k) => k.includes(ns)), `${ns} in ${backendsSeen}`);
          });
        } finally {
          await proxy.stop();
        }
      } finally {
        await ctl.stop();
      }
    } finally {
      for (const be of [alpha, beta]) await be.close();
      await cluster.stop();
    }
  });
}
