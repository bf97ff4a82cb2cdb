/**
 * End to end, the configuration in parts (docs/config-transport.md): the controller against the
 * real kube-apiserver publishes a shared proxy's configuration as a head ConfigMap and part
 * ConfigMaps (small split sizes, so 40 ingresses are enough to need parts); the real proxy
 * command joins them and its haproxy serves every host; one Ingress change rewrites at most two
 * parts and is served; parts no longer named are deleted. Runs inside a private network
 * namespace (lib/dev/localenv/netns.ts); outside one, the single test below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import { sharedProxyName } from "../../lib/controller/groups.ts";
import { CONTROLLER_NAME } from "../../lib/controller/class.ts";
import { partOfLabel } from "../../lib/controller/transport.ts";
import { PART_SHA_ANNOTATION, partRefs, PARTS_KEY } from "../../lib/transport/parts.ts";
import {
  backends,
  Cluster,
  controller,
  eventually,
  httpGet,
  ingressObj,
  resources,
  serviceObj,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";

const HOSTS = 40;

if (!inPrivateNetwork()) {
  Deno.test("config parts end-to-end tests (run in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the end-to-end tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("a configuration in parts is joined by the proxy, and one change rewrites one part", async (t) => {
    const cluster = await Cluster.start();
    let proxy: ProxyRun | null = null;
    const [alpha, beta] = await backends(["alpha", "beta"], 40);
    try {
      const ops = await cluster.namespace("ops");
      const app = await cluster.namespace("app");
      await cluster.apply(resources.ingressClasses, {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "web" },
        spec: { controller: CONTROLLER_NAME },
      });
      for (let i = 0; i < HOSTS; i++) {
        await cluster.apply(resources.services, serviceObj(app, `svc-${i}`));
        await cluster.apply(resources.endpointSlices, sliceObj(app, `svc-${i}`, [alpha]));
        await cluster.apply(
          resources.ingresses,
          ingressObj(app, `ing-${i}`, [{ host: `h${i}.example`, service: `svc-${i}` }], { className: "web" }),
        );
      }
      await cluster.apply(resources.services, serviceObj(app, "svc-beta"));
      await cluster.apply(resources.endpointSlices, sliceObj(app, "svc-beta", [beta]));
      const ctl = await controller(cluster, {
        operatorNamespace: ops,
        configSplit: { inline: 4096, fileInline: 512, targetPart: 600 },
      });
      const name = sharedProxyName("web");
      const parts = async () => {
        const list = await cluster.list(resources.configMaps, ops, `${partOfLabel}=${name}`);
        return new Map(list.map((cm) => [cm.metadata.name, cm]));
      };
      const headOf = async () => (await cluster.get(resources.configMaps, ops, name))?.data ?? null;
      try {
        await t.step("the head lists its parts; every named part exists with its digest", async () => {
          const head = await eventually("a head with parts", async () => {
            const data = await headOf();
            return data?.[PARTS_KEY] && partRefs(name, data).get("haproxy.cfg")?.length ? data : undefined;
          });
          await ctl.idle();
          const stored = await parts();
          const named = [...partRefs(name, head).values()].flat();
          assert.ok(named.length >= 3, `${named.length} parts`);
          for (const ref of named) {
            assert.equal(stored.get(ref.name)?.metadata.annotations?.[PART_SHA_ANNOTATION], ref.sha256, ref.name);
          }
          assert.equal(head["haproxy.cfg"], undefined, "the large file is not inline");
        });

        proxy = await startProxy(cluster, ops, name);
        const served = proxy;
        await t.step("the proxy joins the parts: every host is served", async () => {
          for (let i = 0; i < HOSTS; i++) {
            await eventually(
              `h${i}.example → alpha`,
              async () => (await httpGet(served.httpPort, `h${i}.example`)).backend === "alpha",
            );
          }
        });

        await t.step(
          "one Ingress moved to another Service: only the parts holding what changed are rewritten, and it is served",
          async () => {
            const headBefore = (await headOf())!;
            const before = new Map([...await parts()].map(([n, cm]) => [n, cm.metadata.resourceVersion]));
            await cluster.apply(
              resources.ingresses,
              ingressObj(app, "ing-17", [{ host: "h17.example", service: "svc-beta" }], { className: "web" }),
            );
            await eventually(
              "h17.example → beta",
              async () => (await httpGet(served.httpPort, "h17.example")).backend === "beta",
            );
            await ctl.idle();
            const oldRefs = partRefs(name, headBefore);
            const newRefs = partRefs(name, (await headOf())!);
            // The change: haproxy.cfg loses svc-17's backend and gains svc-beta's (two units), a
            // route map changes one line (one unit). A changed unit rewrites its part and at most the
            // part before it (when it was a boundary), never any other.
            let total = 0;
            let changedAll = 0;
            for (const [file, refs] of newRefs) {
              const had = new Set((oldRefs.get(file) ?? []).map((r) => r.sha256));
              const changed = refs.filter((r) => !had.has(r.sha256)).length;
              const units = file === "haproxy.cfg" ? 2 : 1;
              assert.ok(changed <= 2 * units, `${file}: ${changed} of ${refs.length} parts changed`);
              total += refs.length;
              changedAll += changed;
            }
            assert.ok(total >= 10, `${total} parts in all`);
            const written = [...await parts()].filter(([n, cm]) => before.get(n) !== cm.metadata.resourceVersion);
            assert.ok(
              written.length >= 1 && written.length <= changedAll,
              `${written.length} of ${total} parts written`,
            );
            for (let i = 0; i < HOSTS; i += 7) {
              if (i !== 17) assert.equal((await httpGet(served.httpPort, `h${i}.example`)).backend, "alpha");
            }
          },
        );

        await t.step("most ingresses removed: the parts no longer named are deleted", async () => {
          for (let i = 5; i < HOSTS; i++) await cluster.remove(resources.ingresses, app, `ing-${i}`);
          await eventually(
            "h30.example gone from the proxy",
            async () => (await httpGet(served.httpPort, "h30.example")).status === 404,
          );
          await ctl.idle();
          const head = (await headOf())!;
          const named = new Set([...partRefs(name, head).values()].flat().map((r) => r.name));
          assert.deepEqual([...(await parts()).keys()].sort(), [...named].sort());
          assert.equal((await httpGet(served.httpPort, "h3.example")).backend, "alpha");
        });
      } finally {
        await proxy?.stop();
        await ctl.stop();
      }
    } finally {
      for (const b of [alpha, beta]) await b.close();
      await cluster.stop();
    }
  });
}
