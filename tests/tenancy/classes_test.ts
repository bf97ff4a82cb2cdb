/**
 * Tenancy, ingress classes: with `--ingress-class` unset every Ingress is handled (the spec: "if
 * empty, all ingresses are handled"), but a class name a tenant writes into its Ingress
 * (`kubernetes.io/ingress.class`, or a `spec.ingressClassName` naming no IngressClass, or another
 * controller's class) must not make the controller create a proxy Deployment and a LoadBalancer
 * Service in its own namespace. Against the real kube-apiserver, the real controller and a real
 * haproxy run by the proxy command, with real traffic:
 * - only our IngressClass's proxy and the class-less proxy exist, whatever the tenants write;
 * - an Ingress naming an invented class is served by the class-less proxy;
 * - it gets one Warning Event, not one per resync;
 * - an IngressClass of ours made later for that name gives it a proxy of its own;
 * - with `--ingress-class` set, the named class gets its proxy as before.
 * Runs inside a private network namespace (lib/dev/localenv/netns.ts); outside one, the single test
 * below re-runs this file there.
 */
import assert from "node:assert/strict";
import { inPrivateNetwork, testInPrivateNetwork } from "../../lib/dev/localenv/netns.ts";
import type { ControllerHandle } from "../../lib/controller/controller.ts";
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
  setDeploymentAvailable,
} from "../../lib/dev/localenv/harness.ts";
import { type ProxyRun, startProxy } from "../../lib/dev/localenv/proxy_run.ts";

/** Written out, not imported: this file must also run against code that lacks it. */
const CONTROLLER_NAME = "ingress-controller.io/ingress-controller";
const managed = "app.kubernetes.io/managed-by=ingress-controller";
const CLASSLESS = "haproxy-shared";

const names = (list: { metadata: { name: string } }[]) => list.map((o) => o.metadata.name).sort();

if (!inPrivateNetwork()) {
  Deno.test("tenancy: classes (runs in a private network namespace)", async () => {
    const code = await testInPrivateNetwork(new URL(import.meta.url).pathname);
    assert.equal(code, 0, "the tenancy tests failed inside the private network namespace: see their output above");
  });
} else {
  Deno.test("tenancy: a class name an Ingress invents creates no proxy", async (t) => {
    const cluster = await Cluster.start();
    const servers = await backends(["alpha", "beta", "gamma"], 50);
    const [alpha, beta, gamma] = servers;
    const proxies: ProxyRun[] = [];
    let ctl: ControllerHandle | null = null;
    try {
      const ops = await cluster.namespace("ops");
      const [a, b] = [await cluster.namespace("tenant-a"), await cluster.namespace("tenant-b")];
      await serveBackends(cluster, [[a, "svc-a", alpha], [b, "svc-b", beta], [b, "svc-c", gamma]]);
      for (const [name, controllerName] of [["web", CONTROLLER_NAME], ["other", "example.com/other-controller"]]) {
        await cluster.apply(resources.ingressClasses, {
          apiVersion: "networking.k8s.io/v1",
          kind: "IngressClass",
          metadata: { name },
          spec: { controller: controllerName },
        });
      }
      await cluster.apply(
        resources.ingresses,
        ingressObj(a, "site", [{ host: "a.example", service: "svc-a" }], { className: "web" }),
      );
      // What a tenant may write: a class of its own by annotation or by field, another controller's class.
      const invented = {
        "made-up": ingressObj(b, "made-up", [{ host: "b.example", service: "svc-b" }], {
          annotations: { "kubernetes.io/ingress.class": "my-own-lb" },
        }),
        "by-field": ingressObj(b, "by-field", [{ host: "c.example", service: "svc-c" }], { className: "another-one" }),
        "foreign": ingressObj(b, "foreign", [{ host: "d.example", service: "svc-c" }], { className: "other" }),
      };
      for (const ing of Object.values(invented)) await cluster.apply(resources.ingresses, ing);
      await cluster.apply(resources.ingresses, ingressObj(b, "classless", [{ host: "e.example", service: "svc-b" }]));
      ctl = await controller(cluster, { operatorNamespace: ops, resyncPeriodMs: 1_000, handoverGraceMs: 300 });
      const config = async (name: string) =>
        Object.values((await cluster.get(resources.configMaps, ops, name))?.data ?? {}).join("\n");

      await t.step(
        "only our IngressClass's proxy and the class-less proxy exist, whatever the tenants write",
        async () => {
          await eventually("every host published", async () => {
            const [web, classless] = [await config("haproxy-class-web"), await config(CLASSLESS)];
            return web.includes("a.example") &&
              ["b.example", "c.example", "d.example", "e.example"].every((h) => classless.includes(h));
          });
          await ctl!.idle();
          assert.deepEqual(names(await cluster.list(resources.deployments, ops, managed)), [
            "haproxy-class-web",
            CLASSLESS,
          ]);
          assert.deepEqual(names(await cluster.list(resources.services, ops, managed)), [
            "haproxy-class-web",
            "haproxy-class-web-stats",
            CLASSLESS,
            `${CLASSLESS}-stats`,
          ]);
          assert.deepEqual(names(await cluster.list(resources.configMaps, ops, managed)), [
            "haproxy-class-web",
            CLASSLESS,
          ]);
          for (const ns of [a, b]) {
            assert.deepEqual(await cluster.list(resources.deployments, ns, managed), [], `no proxy in ${ns}`);
          }
        },
      );

      await t.step("an Ingress naming an invented or foreign class is served by the class-less proxy", async () => {
        const proxy = await startProxy(cluster, ops, CLASSLESS);
        proxies.push(proxy);
        await eventually("b.example through the class-less proxy", async () => {
          return (await httpGet(proxy.httpPort, "b.example")).backend === "beta";
        });
        assert.equal((await httpGet(proxy.httpPort, "c.example")).backend, "gamma");
        assert.equal((await httpGet(proxy.httpPort, "d.example")).backend, "gamma");
        assert.equal((await httpGet(proxy.httpPort, "e.example")).backend, "beta");
        assert.equal((await httpGet(proxy.httpPort, "a.example")).status, 404, "our class's host is not here");
        const svc = (await cluster.get(resources.services, ops, CLASSLESS))!;
        await eventually("the made-up Ingress shows the class-less proxy's address", async () => {
          const ing = await cluster.get(resources.ingresses, b, "made-up");
          return ing?.status?.loadBalancer?.ingress?.[0]?.ip === svc.spec.clusterIP;
        });
      });

      await t.step("each gets one Warning Event, not one per resync", async () => {
        const warnings = async (name: string) =>
          (await cluster.events(b, name)).filter((e) => e.reason === "UnknownIngressClass");
        for (const [name, cls] of [["made-up", "my-own-lb"], ["by-field", "another-one"], ["foreign", "other"]]) {
          const [ev] = await eventually(`the Warning on ${name}`, async () => {
            const list = await warnings(name);
            return list.length > 0 && list;
          });
          assert.equal(ev.type, "Warning");
          assert.match(ev.message, new RegExp(`^ingress class "${cls}" gets no proxy of its own: `));
          assert.match(ev.message, /served by the shared proxy of ingresses without a class \(haproxy-shared\)$/);
        }
        // Each resync lists the Ingresses again and re-files every one of them.
        const listed = ctl!.stats().lists.ingresses;
        await eventually("three more resyncs", () => ctl!.stats().lists.ingresses >= listed + 3, 20_000);
        await ctl!.idle();
        for (const name of ["made-up", "by-field", "foreign"]) {
          assert.equal((await warnings(name)).length, 1, `one Warning on ${name}`);
        }
        assert.deepEqual(await warnings("classless"), []);
        assert.deepEqual((await cluster.events(a, "site")).filter((e) => e.reason === "UnknownIngressClass"), []);
      });

      await t.step(
        "an IngressClass of ours made later for that name gives that Ingress a proxy of its own",
        async () => {
          await cluster.apply(resources.ingressClasses, ingressClassObj("another-one"));
          await eventually(
            "its class's proxy",
            async () => (await config("haproxy-class-another-one")).includes("c.example"),
          );
          await eventually(
            "its Deployment",
            () => cluster.get(resources.deployments, ops, "haproxy-class-another-one"),
          );
          await setDeploymentAvailable(cluster, ops, "haproxy-class-another-one");
          await eventually(
            "the class-less proxy drops it",
            async () => !(await config(CLASSLESS)).includes("c.example"),
          );
          assert.ok((await config(CLASSLESS)).includes("b.example"));
        },
      );

      await t.step("with --ingress-class set, the class it names gets its proxy as before", async () => {
        await ctl!.stop();
        ctl = await controller(cluster, { operatorNamespace: ops, ingressClass: "my-own-lb" });
        await eventually(
          "the proxy of the chosen class",
          async () => (await config("haproxy-class-my-own-lb")).includes("b.example"),
        );
        await ctl.idle();
        const warned = (await cluster.events(b, "made-up")).filter((e) => e.reason === "UnknownIngressClass");
        assert.equal(warned.length, 1, "no new Warning: the admin chose that class");
      });
    } finally {
      await ctl?.stop();
      for (const p of proxies) await p.stop();
      for (const s of servers) await s.close();
      await cluster.stop();
    }
  });
}
