/**
 * The controller loop against the real kube-apiserver (no traffic: that is tests/e2e): owned
 * objects, steady state without writes, coalescing, the reverse index, drift repair, removal.
 * Every ingress here asks for a dedicated proxy (its own objects, named after it, in its
 * namespace): the per-ingress behaviour; shared proxies are tests/controller/groups_test.ts.
 */
import assert from "node:assert/strict";
import {
  desiredObjects,
  exporterPort,
  fieldManager,
  hashAnnotation,
  proxyName,
  statsPort,
  statsServiceName,
} from "../../lib/controller/objects.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj as ingressObj,
  eventually,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";

type Port = { name: string; port: number; nodePort?: number };

const slice = (ns: string, svc: string, ips: string[]) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `${svc}-1`, namespace: ns, labels: { "kubernetes.io/service-name": svc } },
  addressType: "IPv4",
  endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
  ports: [{ name: "http", port: 8080, protocol: "TCP" }],
});

Deno.test("controller loop against a real API server", async (t) => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("loop");
    await cluster.apply(resources.services, serviceObj(ns, "svc-a"));
    await cluster.apply(resources.services, serviceObj(ns, "svc-b"));
    await cluster.apply(resources.endpointSlices, slice(ns, "svc-a", ["10.1.0.1"]));
    await cluster.apply(resources.ingresses, ingressObj(ns, "one", [{ host: "one.example", service: "svc-a" }]));
    await cluster.apply(resources.ingresses, ingressObj(ns, "two", [{ host: "two.example", service: "svc-b" }]));
    const ctl = await controller(cluster, { validateProxyConfig: true });
    try {
      await t.step("publishes the owned objects of every ingress, with validation", async () => {
        for (const name of ["one", "two"]) {
          const cm = await eventually(
            `ConfigMap of ${name}`,
            () => cluster.get(resources.configMaps, ns, proxyName(name)),
          );
          assert.match(cm.data["haproxy.cfg"], /^frontend /m);
        }
        const cfg = (await cluster.get(resources.configMaps, ns, proxyName("one")))!.data["haproxy.cfg"];
        assert.match(cfg, /server s1 10\.1\.0\.1:8080/);
        assert.ok(ctl.stats().validations >= 2);
      });

      await t.step(
        "the public Service has only http/https; a ClusterIP stats Service has only the exporter's metrics",
        async () => {
          const ing = (await cluster.get(resources.ingresses, ns, "one"))!;
          const pub = await eventually(
            "the public Service",
            () => cluster.get(resources.services, ns, proxyName("one")),
          );
          const stats = await eventually(
            "the stats Service",
            () => cluster.get(resources.services, ns, statsServiceName("one")),
          );
          assert.equal(stats.metadata.name, "one-haproxy-stats");
          assert.equal(pub.spec.type, "LoadBalancer");
          assert.deepEqual(pub.spec.ports.map((p: Port) => [p.name, p.port]), [["http", 80], ["https", 443]]);
          assert.equal(stats.spec.type, "ClusterIP");
          assert.deepEqual(stats.spec.ports.map((p: Port) => [p.name, p.port]), [["metrics", exporterPort]]);
          assert.ok(stats.spec.ports.every((p: Port) => p.nodePort === undefined), "no node port for stats");
          assert.deepEqual(
            stats.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
            [["Ingress", "one", ing.metadata.uid, true]],
          );
          assert.deepEqual(stats.spec.selector, pub.spec.selector);
        },
      );

      await t.step("steady state makes no writes, even when both ingresses are reconciled again", async () => {
        await ctl.idle();
        const before = ctl.stats();
        // A change that matters to nothing rendered (an annotation on each backend Service) makes
        // the controller reconcile both ingresses: their objects are up to date, so nothing is written.
        for (const svc of ["svc-a", "svc-b"]) {
          const touched = serviceObj(ns, svc);
          touched.metadata.annotations = { "test.example/touched": "1" };
          await cluster.apply(resources.services, touched);
        }
        await eventually("both ingresses reconciled again", () => ctl.stats().reconciles >= before.reconciles + 2);
        // Both touches seen by the informer before idle(): no event of this step is left over for the next.
        await eventually(
          "both touches in the informer",
          () =>
            ctl.cached(resources.services).filter((s) =>
              s.metadata.namespace === ns && s.metadata.annotations?.["test.example/touched"] === "1"
            ).length === 2,
        );
        await ctl.idle();
        assert.equal(ctl.stats().writes, before.writes);
        // One member per proxy: its next change compares one object anyway, no build to catch up.
        assert.equal(ctl.stats().catchUps, 0);
      });

      await t.step(
        "an EndpointSlice change re-renders only the ingresses using its service, once per burst",
        async () => {
          await ctl.idle();
          const before = ctl.stats();
          for (let i = 2; i <= 6; i++) {
            await cluster.apply(
              resources.endpointSlices,
              slice(
                ns,
                "svc-a",
                Array.from({ length: i }, (_, k) => `10.1.0.${k + 1}`),
              ),
            );
          }
          await eventually("the last endpoint set published", async () => {
            const cm = await cluster.get(resources.configMaps, ns, proxyName("one"));
            return /server s5 10\.1\.0\.5:8080/.test(cm?.data["haproxy.cfg"] ?? "") &&
              /server s6 10\.1\.0\.6:8080/.test(cm?.data["haproxy.cfg"] ?? "");
          });
          await ctl.idle();
          const after = ctl.stats();
          // Five changes to svc-a's slice: ingress "one" only, and fewer renders than changes is allowed
          // (coalesced); "two" is never rendered for them.
          assert.ok(after.renders - before.renders <= 5, `${after.renders - before.renders} renders for 5 changes`);
          const two = await cluster.get(resources.configMaps, ns, proxyName("two"));
          assert.doesNotMatch(two!.data["haproxy.cfg"], /10\.1\.0\./);
        },
      );

      await t.step("status.loadBalancer follows the proxy Service", async () => {
        const svcName = proxyName("one");
        const svc = await eventually("the proxy Service", () => cluster.get(resources.services, ns, svcName));
        await eventually(
          "status from the cluster IP",
          async () =>
            (await cluster.get(resources.ingresses, ns, "one"))?.status?.loadBalancer?.ingress?.[0]?.ip ===
              svc.spec.clusterIP,
        );
        // Not the stats Service's address: the ingress shows the public Service only.
        const stats = (await cluster.get(resources.services, ns, statsServiceName("one")))!;
        assert.notEqual(stats.spec.clusterIP, svc.spec.clusterIP);
        await ctl.idle();
        assert.deepEqual((await cluster.get(resources.ingresses, ns, "one"))?.status?.loadBalancer?.ingress, [
          { ip: svc.spec.clusterIP },
        ]);
        await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/services/${svcName}/status`, {
          body: { status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }, { hostname: "lb.example" }] } } },
          contentType: "application/merge-patch+json",
        });
        await eventually("status from the Service's load balancer", async () => {
          const lb = (await cluster.get(resources.ingresses, ns, "one"))?.status?.loadBalancer?.ingress;
          return JSON.stringify(lb) === JSON.stringify([{ ip: "192.0.2.10" }, { hostname: "lb.example" }]);
        });
      });

      await t.step("a deleted owned object is recreated", async () => {
        await cluster.remove(resources.configMaps, ns, proxyName("two"));
        await eventually("ConfigMap recreated", () => cluster.get(resources.configMaps, ns, proxyName("two")));
        await cluster.remove(resources.services, ns, statsServiceName("two"));
        const again = await eventually(
          "stats Service recreated",
          () => cluster.get(resources.services, ns, statsServiceName("two")),
        );
        assert.equal(again.spec.type, "ClusterIP");
      });

      await t.step("a changed stats Service is put back", async () => {
        const name = statsServiceName("two");
        // Someone drops the metrics port (and the hash no longer matches what was applied).
        await cluster.client.request("PATCH", `/api/v1/namespaces/${ns}/services/${name}`, {
          body: {
            metadata: { annotations: { "ingress-controller.io/hash": "tampered" } },
            spec: { ports: [{ name: "other", port: 1234, targetPort: 1234, protocol: "TCP" }] },
          },
          contentType: "application/merge-patch+json",
        });
        const back = await eventually("the stats Service restored", async () => {
          const svc = await cluster.get(resources.services, ns, name);
          return svc?.metadata.annotations?.["ingress-controller.io/hash"] !== "tampered" &&
            svc?.spec.ports.some((p: Port) => p.name === "metrics") && svc;
        });
        assert.ok(back.spec.ports.some((p: Port) => p.port === exporterPort));
      });

      await t.step("a dedicated proxy takes its Ingress's frontend annotations; a bad one is a Warning", async () => {
        const A = "ingress-controller.io/";
        await cluster.apply(
          resources.ingresses,
          ingressObj(ns, "fe", [{ host: "fe.example", service: "svc-b" }], {
            annotations: {
              [`${A}timeout-http-request`]: "7s",
              [`${A}accept-proxy-protocol`]: "10.0.0.0/8",
              [`${A}timeout-client`]: "soon",
            },
          }),
        );
        const cm = await eventually("ConfigMap of fe", () => cluster.get(resources.configMaps, ns, proxyName("fe")));
        const cfg: string = cm.data["haproxy.cfg"];
        assert.match(cfg, /^ {4}timeout http-request 7s$/m);
        assert.match(cfg, /^ {4}timeout client 60s$/m, "the bad value leaves the global one");
        assert.match(cfg, /^ {4}acl ic_proxy_trusted src 10\.0\.0\.0\/8$/m);
        const ev = await eventually(
          "an InvalidAnnotation Event",
          async () => (await cluster.events(ns, "fe")).find((e) => e.reason === "InvalidAnnotation"),
        );
        assert.match(
          ev.message,
          /^annotation ingress-controller\.io\/timeout-client: "soon" .*the global value applies$/,
        );
        const one = (await cluster.get(resources.configMaps, ns, proxyName("one")))!.data["haproxy.cfg"];
        assert.doesNotMatch(one, /expect-proxy|timeout http-request 7s/, "another Ingress's proxy keeps its settings");
        await cluster.remove(resources.ingresses, ns, "fe");
        await eventually(
          "the objects of fe removed",
          async () => (await cluster.get(resources.configMaps, ns, proxyName("fe"))) === null,
        );
        await ctl.idle();
      });

      await t.step("deleting the ingress removes its objects", async () => {
        await cluster.remove(resources.ingresses, ns, "two");
        for (const r of [resources.configMaps, resources.deployments, resources.services]) {
          await eventually(
            `${r.kind} of two removed`,
            async () => (await cluster.get(r, ns, proxyName("two"))) === null,
          );
        }
        await eventually(
          "stats Service of two removed",
          async () => (await cluster.get(resources.services, ns, statsServiceName("two"))) === null,
        );
        assert.ok(await cluster.get(resources.configMaps, ns, proxyName("one")));
      });
    } finally {
      await ctl.stop();
    }

    await t.step("a periodic resync (--resync-period) relists everything and writes nothing", async () => {
      const c = await controller(cluster, { resyncPeriodMs: 300, validateProxyConfig: false });
      try {
        await c.idle();
        const before = c.stats();
        await eventually("two resyncs", () => Object.values(c.stats().lists).every((n) => n >= 3), 10_000);
        await c.idle();
        const after = c.stats();
        assert.ok(after.reconciles > before.reconciles, "a resync reconciles the ingresses again");
        assert.equal(after.writes, before.writes, "and writes nothing when nothing changed");
      } finally {
        await c.stop();
      }
    });

    await t.step("a configuration haproxy -c refuses is never published; the last good one stays", async () => {
      const vns = await cluster.namespace("validate");
      const dir = await Deno.makeTempDir({ prefix: "ic-validate-templates-" });
      const builtin = await Deno.readTextFile(new URL("../../templates/defaults.eta", import.meta.url));
      // Valid for every model except one with the path /broken, where it adds an unknown keyword.
      await Deno.writeTextFile(
        `${dir}/defaults.eta`,
        builtin + '<% if (it.model.routes.some((r) => r.path === "/broken")) { %>    no-such-keyword on\n<% } %>',
      );
      await cluster.apply(resources.services, serviceObj(vns, "svc"));
      const c = await controller(cluster, {
        customTemplates: `${dir}/*.eta`,
        restrictToOperatorNamespace: true,
        operatorNamespace: vns,
        controllerId: "validate",
        validateProxyConfig: true,
      });
      try {
        const name = proxyName("site");
        await cluster.apply(
          resources.ingresses,
          ingressObj(vns, "site", [{ host: "v.example", path: "/ok", service: "svc" }]),
        );
        await eventually(
          "the good configuration",
          async () =>
            /\/ok/.test((await cluster.get(resources.configMaps, vns, name))?.data["routes-prefix.map"] ?? ""),
        );
        await cluster.apply(
          resources.ingresses,
          ingressObj(vns, "site", [{ host: "v.example", path: "/broken", service: "svc" }]),
        );
        const ev = await eventually(
          "a ValidationFailed Event",
          async () => (await cluster.events(vns, "site")).find((e) => e.reason === "ValidationFailed"),
        );
        assert.match(ev.message, /no-such-keyword/);
        const data = (await cluster.get(resources.configMaps, vns, name))!.data;
        assert.match(data["routes-prefix.map"], /\/ok/);
        assert.doesNotMatch(data["haproxy.cfg"] + data["routes-prefix.map"], /broken|no-such-keyword/);
        await cluster.apply(
          resources.ingresses,
          ingressObj(vns, "site", [{ host: "v.example", path: "/fine", service: "svc" }]),
        );
        await eventually(
          "the fixed configuration",
          async () =>
            /\/fine/.test((await cluster.get(resources.configMaps, vns, name))?.data["routes-prefix.map"] ?? ""),
        );
      } finally {
        await c.stop();
        await Deno.remove(dir, { recursive: true });
      }
    });

    await t.step("a restarted controller removes objects of ingresses deleted while it was down", async () => {
      await cluster.remove(resources.ingresses, ns, "one");
      const again = await controller(cluster, { validateProxyConfig: false });
      try {
        await eventually(
          "orphans removed",
          async () => (await cluster.get(resources.configMaps, ns, proxyName("one"))) === null,
        );
        await eventually(
          "orphan stats Service removed",
          async () => (await cluster.get(resources.services, ns, statsServiceName("one"))) === null,
        );
      } finally {
        await again.stop();
      }
    });

    await t.step(
      "an Ingress recreated under the same name while the controller was down takes over its objects",
      async () => {
        const rules = [{ host: "again.example", service: "svc-a" }];
        await cluster.apply(resources.ingresses, ingressObj(ns, "again", rules));
        const first = await controller(cluster, { validateProxyConfig: false });
        try {
          await eventually("the ConfigMap", () => cluster.get(resources.configMaps, ns, proxyName("again")));
          await first.idle();
        } finally {
          await first.stop();
        }
        await cluster.remove(resources.ingresses, ns, "again");
        const uid = (await cluster.apply(resources.ingresses, ingressObj(ns, "again", rules))).metadata.uid;
        const second = await controller(cluster, { validateProxyConfig: false });
        try {
          for (
            const [r, name] of [
              [resources.configMaps, proxyName("again")],
              [resources.deployments, proxyName("again")],
              [resources.services, proxyName("again")],
              [resources.services, statsServiceName("again")],
            ] as const
          ) {
            await eventually(
              `${r.kind} ${name} owned by the new Ingress`,
              async () => (await cluster.get(r, ns, name))?.metadata.ownerReferences?.[0]?.uid === uid,
            );
          }
          assert.ok(!second.events.recent.some((e) => e.reason === "OwnershipConflict" && e.object === `${ns}/again`));
        } finally {
          await second.stop();
        }
      },
    );

    await t.step(
      "with --rbac, a ServiceAccount, Role and RoleBinding limited to the ConfigMap and Secrets",
      async () => {
        const ctl2 = await controller(cluster, { rbac: true, validateProxyConfig: false, controllerId: "rbac" });
        try {
          await cluster.apply(resources.ingresses, ingressObj(ns, "secure", [{ host: "s.example", service: "svc-a" }]));
          const role = await eventually("the Role", () => cluster.get(resources.roles, ns, proxyName("secure")));
          assert.deepEqual(role.rules, [{
            apiGroups: [""],
            resources: ["configmaps"],
            resourceNames: [proxyName("secure")],
            verbs: ["get", "list", "watch"],
          }]);
          // Each object is its own write: wait for each rather than assume the Role came last.
          const name = proxyName("secure");
          await eventually("the ServiceAccount", () => cluster.get(resources.serviceAccounts, ns, name));
          await eventually("the RoleBinding", () => cluster.get(resources.roleBindings, ns, name));
          const dep = await eventually("the Deployment", () => cluster.get(resources.deployments, ns, name));
          assert.equal(dep.spec.template.spec.serviceAccountName, name);
        } finally {
          await ctl2.stop();
        }
      },
    );

    await t.step(
      "Services left by an older version with the stats port (and metrics on the public one) lose them",
      async () => {
        const uns = await cluster.namespace("upgrade");
        await cluster.apply(resources.services, serviceObj(uns, "svc"));
        await cluster.apply(resources.ingresses, ingressObj(uns, "old", [{ host: "old.example", service: "svc" }]));
        const ing = (await cluster.get(resources.ingresses, uns, "old"))!;
        // What the earlier version applied: the public Service with 56789 (and 56790) on it.
        const data = { "haproxy.cfg": "", "crt-list": "", "secrets.json": "[]" };
        const legacy = desiredObjects(ing, data, [], { ...defaultSettings, controllerId: "default" })
          .find((d) => d.object.kind === "Service" && d.object.metadata.name === proxyName("old"))!.object;
        legacy.metadata.annotations![hashAnnotation] = "pre-fix";
        legacy.spec.ports.push(
          { name: "stats", port: statsPort, targetPort: "stats", protocol: "TCP" },
          { name: "metrics", port: exporterPort, targetPort: "metrics", protocol: "TCP" },
        );
        // And a stats Service that still had HAProxy's stats page on it.
        const legacyStats = desiredObjects(ing, data, [], { ...defaultSettings, controllerId: "default" })
          .find((d) => d.object.kind === "Service" && d.object.metadata.name === statsServiceName("old"))!.object;
        legacyStats.metadata.annotations![hashAnnotation] = "pre-fix";
        legacyStats.spec.ports.unshift({ name: "stats", port: statsPort, targetPort: "stats", protocol: "TCP" });
        for (const svc of [legacy, legacyStats]) {
          await cluster.client.request("PATCH", `/api/v1/namespaces/${uns}/services/${svc.metadata.name}`, {
            query: { fieldManager, force: "true" },
            body: svc,
            contentType: "application/apply-patch+yaml",
          });
        }
        const c = await controller(cluster, { validateProxyConfig: false });
        try {
          await eventually("the public Service without stats and metrics", async () => {
            const svc = await cluster.get(resources.services, uns, proxyName("old"));
            return JSON.stringify(svc?.spec.ports.map((p: Port) => p.port)) === "[80,443]";
          });
          await eventually("the stats Service without the stats port", async () => {
            const svc = await cluster.get(resources.services, uns, statsServiceName("old"));
            return JSON.stringify(svc?.spec.ports.map((p: Port) => p.port)) === `[${exporterPort}]`;
          });
        } finally {
          await c.stop();
        }
      },
    );
  } finally {
    await cluster.stop();
  }
});
