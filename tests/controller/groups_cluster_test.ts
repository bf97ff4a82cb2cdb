/**
 * Proxy groups against the real kube-apiserver (no traffic: that is
 * tests/e2e/shared_proxy_e2e_test.ts): the shared proxy of a class in the controller's
 * namespace, merging, conflicts, isolation, status, per-class parameters, a dedicated proxy
 * beside it, and moving an ingress between the two (docs/proxy-groups.md).
 */
import assert from "node:assert/strict";
import { dedicatedValue, proxyModeAnnotation, sharedProxyName } from "../../lib/controller/groups.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import { defaultValidator } from "../../lib/controller/controller.ts";
import { defaultSettings } from "../../lib/controller/settings.ts";
import { partOfLabel } from "../../lib/controller/transport.ts";
import { partRefs } from "../../lib/transport/parts.ts";
import {
  Cluster,
  controller,
  eventually,
  ingressObj,
  resources,
  serviceObj,
  setDeploymentAvailable,
  sliceObj,
} from "../../lib/dev/localenv/harness.ts";
import { type KubeObject, objectPath } from "../../lib/cluster/resources.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

const dedicated = { [proxyModeAnnotation]: dedicatedValue };
const managed = "app.kubernetes.io/managed-by=ingress-controller";

const statusIp = async (cluster: Cluster, ns: string, name: string) =>
  (await cluster.get(resources.ingresses, ns, name))?.status?.loadBalancer?.ingress?.[0]?.ip ?? null;

Deno.test("proxy groups against a real API server", async (t) => {
  const cluster = await Cluster.start();
  try {
    const ops = await cluster.namespace("ops");
    const [a, b] = [await cluster.namespace("team-a"), await cluster.namespace("team-b")];
    for (const ns of [a, b]) {
      await cluster.apply(resources.services, serviceObj(ns, "web"));
      await cluster.apply(
        resources.endpointSlices,
        sliceObj(ns, "web", [{ address: ns === a ? "10.9.0.1" : "10.9.0.2", port: 8080 } as any]),
      );
    }
    await cluster.apply(resources.ingressClasses, {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "edge" },
      spec: {
        controller: "ingress-controller.io/haproxy",
        parameters: { kind: "ConfigMap", scope: "Namespace", namespace: ops, name: "edge-params" },
      },
    });
    await cluster.apply(resources.configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "edge-params", namespace: ops },
      data: { "replicas": "many", "service-type": "ClusterIP", "service-annotations": '{"example.com/lb":"internal"}' },
    });
    const edge = { className: "edge" };
    await cluster.apply(resources.ingresses, ingressObj(a, "one", [{ host: "one.example", service: "web" }], edge));
    await cluster.apply(resources.ingresses, ingressObj(a, "two", [{ host: "two.example", service: "web" }], edge));
    await cluster.apply(resources.ingresses, ingressObj(b, "three", [{ host: "three.example", service: "web" }], edge));
    const ctl = await controller(cluster, {
      ingressClass: "edge",
      controllerId: "edge",
      operatorNamespace: ops,
      validateProxyConfig: true,
      handoverGraceMs: 300,
      catchUpMinimum: 2,
    });
    const shared = sharedProxyName("edge");
    // Routes live in the map files, backends in haproxy.cfg: look at every file.
    const config = async () =>
      Object.values((await cluster.get(resources.configMaps, ops, shared))?.data ?? {}).join("\n");
    try {
      await t.step("three ingresses of two namespaces share one proxy in the controller's namespace", async () => {
        await eventually("the shared configuration with all three hosts", async () => {
          const cfg = await config();
          return ["one.example", "two.example", "three.example"].every((h) => cfg.includes(h));
        });
        const cfg = await config();
        // Each ingress routes to the Service of its own namespace.
        assert.match(cfg, new RegExp(`be_${a}_web_80`));
        assert.match(cfg, new RegExp(`be_${b}_web_80`));
        const dep = await eventually("the shared Deployment", () => cluster.get(resources.deployments, ops, shared));
        assert.equal(dep.metadata.labels?.["app.kubernetes.io/managed-by"], "ingress-controller");
        assert.equal(dep.metadata.labels?.["app.kubernetes.io/name"], "haproxy");
        const ic = (await cluster.get(resources.ingressClasses, null, "edge"))!;
        assert.deepEqual(
          dep.metadata.ownerReferences?.map((o: any) => [o.kind, o.name, o.uid, o.controller]),
          [["IngressClass", "edge", ic.metadata.uid, true]],
        );
        for (const ns of [a, b]) {
          assert.deepEqual(await cluster.list(resources.configMaps, ns, managed), [], `no proxy objects in ${ns}`);
          assert.deepEqual(await cluster.list(resources.deployments, ns, managed), [], `no proxy in ${ns}`);
        }
      });

      await t.step("per-class parameters: good keys apply, a bad one gets an Event and its default", async () => {
        const svc = await eventually("the shared Service", () => cluster.get(resources.services, ops, shared));
        assert.equal(svc.spec.type, "ClusterIP");
        assert.equal(svc.metadata.annotations?.["example.com/lb"], "internal");
        assert.equal((await cluster.get(resources.deployments, ops, shared))!.spec.replicas, 1);
        const ev = await eventually(
          "an InvalidParameters Event on the IngressClass",
          async () => (await cluster.events("default", "edge")).find((e) => e.reason === "InvalidParameters"),
        );
        assert.match(ev.message, /replicas: "many" is not a whole number/);
        await cluster.apply(resources.configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "edge-params", namespace: ops },
          data: {
            "replicas": "2",
            "service-type": "ClusterIP",
            "resources.requests.cpu": "250m",
            "resources.limits.cpu": "1500m",
            "node-selector": '{"kubernetes.io/os":"linux"}',
          },
        });
        const dep = await eventually("the Deployment rewritten", async () => {
          const d = await cluster.get(resources.deployments, ops, shared);
          return d?.spec.replicas === 2 && d;
        });
        const haproxy = dep.spec.template.spec.containers.find((c: { name: string }) => c.name === "haproxy");
        assert.equal(haproxy.resources.requests.cpu, "250m");
        assert.deepEqual(dep.spec.template.spec.nodeSelector, { "kubernetes.io/os": "linux" });
        assert.equal(haproxy.resources.limits.cpu, "1500m");
        // HAProxy runs as many threads as the CPU limit allows, not one per CPU of the node.
        await eventually("nbthread 2 in the configuration", async () => /^ {4}nbthread 2$/m.test(await config()));
      });

      await t.step("every served ingress shows the shared Service's address", async () => {
        const svc = (await cluster.get(resources.services, ops, shared))!;
        for (const [ns, name] of [[a, "one"], [a, "two"], [b, "three"]]) {
          await eventually(
            `status of ${ns}/${name}`,
            async () => (await statusIp(cluster, ns, name)) === svc.spec.clusterIP,
          );
        }
      });

      await t.step("once idle after the status writes, the class is built once more, and only once", async () => {
        // The status writes replaced every member object: the next change's model must start from
        // the objects the cache holds now (lib/render/model_delta.ts compares objects).
        // (the status writes' watch events may still be on their way when the last status shows)
        await eventually("a catch-up build", () => ctl.stats().catchUps >= 1);
        await ctl.idle();
        const caught = ctl.stats();
        await new Promise((r) => setTimeout(r, 300));
        await ctl.idle();
        assert.deepEqual(
          [ctl.stats().catchUps, ctl.stats().reconciles, ctl.stats().writes],
          [caught.catchUps, caught.reconciles, caught.writes],
          "no more builds and no writes while nothing changes",
        );
      });

      await t.step("a status someone else changed is written back, the others are left alone", async () => {
        const svc = (await cluster.get(resources.services, ops, shared))!;
        const before = (await cluster.get(resources.ingresses, a, "one"))!.metadata.resourceVersion;
        await cluster.client.request("PATCH", objectPath(resources.ingresses, b, "three", "status"), {
          body: { status: { loadBalancer: { ingress: [{ ip: "192.0.2.99" }] } } },
          contentType: "application/merge-patch+json",
        });
        await eventually(
          "status of three back",
          async () => (await statusIp(cluster, b, "three")) === svc.spec.clusterIP,
        );
        assert.equal((await cluster.get(resources.ingresses, a, "one"))!.metadata.resourceVersion, before);
      });

      await t.step("another namespace's rule on an owned host: not served, an Event naming the owner", async () => {
        await cluster.apply(
          resources.ingresses,
          ingressObj(
            b,
            "late",
            [{ host: "one.example", service: "web" }, { host: "late.example", service: "web" }],
            edge,
          ),
        );
        const ev = await eventually(
          "a HostAlreadyClaimed Event on the later ingress",
          async () => (await cluster.events(b, "late")).find((e) => e.reason === "HostAlreadyClaimed"),
        );
        assert.equal(ev.type, "Warning");
        assert.match(ev.message, new RegExp(`^host one\\.example belongs to namespace ${a};`));
        await eventually(
          "the later ingress's other host served",
          async () => (await config()).includes("late.example"),
        );
        assert.equal((await cluster.events(a, "one")).filter((e) => e.type === "Warning").length, 0);
      });

      await t.step("a bad Secret in one ingress leaves the others' routes alone", async () => {
        await cluster.apply(
          resources.ingresses,
          ingressObj(b, "late", [{ host: "late.example", service: "web" }], {
            ...edge,
            tls: [{ hosts: ["late.example"], secretName: "missing" }],
          }),
        );
        await eventually(
          "a SecretNotFound Event on that ingress",
          async () => (await cluster.events(b, "late")).some((e) => e.reason === "SecretNotFound"),
        );
        await ctl.idle();
        const cfg = await config();
        for (const h of ["one.example", "two.example", "three.example", "late.example"]) assert.ok(cfg.includes(h), h);
        await cluster.remove(resources.ingresses, b, "late");
        await eventually("late.example gone", async () => !(await config()).includes("late.example"));
      });

      await t.step("a dedicated ingress beside the shared proxy has its own objects and address", async () => {
        await cluster.apply(
          resources.ingresses,
          ingressObj(b, "own", [{ host: "own.example", service: "web" }], { ...edge, annotations: dedicated }),
        );
        const svc = await eventually("its Service", () => cluster.get(resources.services, b, proxyName("own")));
        const dep = (await cluster.get(resources.deployments, b, proxyName("own")))!;
        assert.equal(dep.metadata.ownerReferences?.[0]?.kind, "Ingress");
        assert.equal(dep.metadata.labels?.["app.kubernetes.io/managed-by"], "ingress-controller");
        assert.equal(dep.metadata.labels?.["app.kubernetes.io/name"], "haproxy");
        await eventually("its status", async () => (await statusIp(cluster, b, "own")) === svc.spec.clusterIP);
        assert.ok(!(await config()).includes("own.example"));
      });

      await t.step("shared → dedicated: the old proxy serves until the new one is available", async () => {
        const sharedIp = (await cluster.get(resources.services, ops, shared))!.spec.clusterIP;
        await cluster.apply(
          resources.ingresses,
          ingressObj(a, "two", [{ host: "two.example", service: "web" }], { ...edge, annotations: dedicated }),
        );
        const dep = await eventually(
          "the dedicated Deployment",
          () => cluster.get(resources.deployments, a, proxyName("two")),
        );
        await eventually("its ConfigMap", () => cluster.get(resources.configMaps, a, proxyName("two")));
        await ctl.idle();
        assert.ok((await config()).includes("two.example"), "still in the shared configuration");
        assert.equal(await statusIp(cluster, a, "two"), sharedIp, "still the shared address");
        await setDeploymentAvailable(cluster, a, dep.metadata.name, 1);
        const ownIp = (await cluster.get(resources.services, a, proxyName("two")))!.spec.clusterIP;
        await eventually("the status moves", async () => (await statusIp(cluster, a, "two")) === ownIp);
        await eventually(
          "then the shared configuration drops it",
          async () => !(await config()).includes("two.example"),
        );
      });

      await t.step(
        "dedicated → shared: back once the shared proxy is available; the dedicated objects go",
        async () => {
          const sharedIp = (await cluster.get(resources.services, ops, shared))!.spec.clusterIP;
          await setDeploymentAvailable(cluster, ops, shared, 2);
          await cluster.apply(
            resources.ingresses,
            ingressObj(a, "two", [{ host: "two.example", service: "web" }], edge),
          );
          await eventually("the status moves back", async () => (await statusIp(cluster, a, "two")) === sharedIp);
          assert.ok((await config()).includes("two.example"));
          await eventually(
            "the dedicated objects removed",
            async () =>
              (await cluster.get(resources.deployments, a, proxyName("two"))) === null &&
              (await cluster.get(resources.configMaps, a, proxyName("two"))) === null,
          );
        },
      );

      await t.step("an ingress no longer handled leaves the configuration and loses its status", async () => {
        await cluster.apply(
          resources.ingresses,
          ingressObj(a, "one", [{ host: "one.example", service: "web" }], { className: "other" }),
        );
        await eventually("one.example gone", async () => !(await config()).includes("one.example"));
        await eventually("its status cleared", async () => (await statusIp(cluster, a, "one")) === null);
      });

      await t.step("the last ingress of the class gone: the shared objects go", async () => {
        await cluster.remove(resources.ingresses, a, "two");
        await cluster.remove(resources.ingresses, b, "three");
        for (const r of [resources.configMaps, resources.deployments, resources.services]) {
          await eventually(`the shared ${r.kind} removed`, async () => (await cluster.get(r, ops, shared)) === null);
        }
      });
    } finally {
      await ctl.stop();
    }

    await t.step(
      "with --rbac, the shared proxy may read the Secrets of each namespace it serves, and only those",
      async () => {
        for (const ns of [a, b]) {
          await cluster.apply(
            resources.ingresses,
            ingressObj(ns, "tls", [{ host: `${ns}.example`, service: "web" }], {
              ...edge,
              tls: [{ hosts: [`${ns}.example`], secretName: `${ns}-cert` }],
            }),
          );
          await cluster.apply(resources.secrets, await tlsSecret(ns, `${ns}-cert`, `${ns}.example`));
        }
        const c = await controller(cluster, {
          ingressClass: "edge",
          controllerId: "edge",
          operatorNamespace: ops,
          rbac: true,
          validateProxyConfig: false,
        });
        try {
          for (const ns of [a, b]) {
            const role = await eventually(`the Role in ${ns}`, () => cluster.get(resources.roles, ns, shared));
            assert.deepEqual(role.rules, [{
              apiGroups: [""],
              resources: ["secrets"],
              resourceNames: [`${ns}-cert`],
              verbs: ["get", "list", "watch"],
            }]);
            const binding = await eventually(
              `the RoleBinding in ${ns}`,
              () => cluster.get(resources.roleBindings, ns, shared),
            );
            assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: shared, namespace: ops }]);
          }
          const own = await eventually(
            "the Role in the controller's namespace",
            () => cluster.get(resources.roles, ops, shared),
          );
          assert.deepEqual(
            own.rules.map((r: { resources: string[] }) => r.resources),
            [["configmaps"]],
          );
          await cluster.remove(resources.ingresses, b, "tls");
          await eventually(
            "the Role for team-b's Secrets removed",
            async () => (await cluster.get(resources.roles, b, shared)) === null,
          );
        } finally {
          await c.stop();
        }
      },
    );

    await t.step(
      "a value haproxy -c refuses leaves out only its ingress; the others' changes are published",
      async () => {
        const dir = await brokenOnPathTemplates();
        const check = { className: "check" };
        const c = await controller(cluster, {
          ingressClass: "check",
          controllerId: "check",
          operatorNamespace: ops,
          customTemplates: `${dir}/*.eta`,
          validateProxyConfig: true,
        });
        const name = sharedProxyName("check");
        const cfg = async () =>
          Object.values((await cluster.get(resources.configMaps, ops, name))?.data ?? {}).join("\n");
        try {
          await cluster.apply(
            resources.ingresses,
            ingressObj(a, "fine", [{ host: "fine.example", service: "web" }], check),
          );
          await eventually("the shared configuration", async () => (await cfg()).includes("fine.example"));
          await cluster.apply(
            resources.ingresses,
            ingressObj(b, "bad", [{ host: "bad.example", path: "/broken", service: "web" }], check),
          );
          const ev = await eventually(
            "a ValidationFailed Event on the refused ingress",
            async () => (await cluster.events(b, "bad")).find((e) => e.reason === "ValidationFailed"),
          );
          assert.match(ev.message, /no-such-keyword/);
          await cluster.apply(
            resources.ingresses,
            ingressObj(
              a,
              "fine",
              [{ host: "fine.example", service: "web" }, { host: "more.example", service: "web" }],
              check,
            ),
          );
          await eventually("the other ingress's change published", async () => (await cfg()).includes("more.example"));
          assert.doesNotMatch(await cfg(), /broken|no-such-keyword/);
          assert.equal((await cluster.events(a, "fine")).filter((e) => e.reason === "ValidationFailed").length, 0);
        } finally {
          await c.stop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    );

    await t.step(
      "a configuration whose haproxy -c runs past the time limit leaves out only its ingress, once",
      async () => {
        const dir = await costlyOnPathTemplates();
        const costly = { className: "costly" };
        const check = defaultValidator({
          ...defaultSettings,
          customTemplates: `${dir}/*.eta`,
          validateTimeoutMs: 1_500,
        });
        /** The checks (the real haproxy -c, with its limit) of a configuration holding the costly userlist. */
        let costlyChecks = 0;
        const c = await controller(cluster, {
          ingressClass: "costly",
          controllerId: "costly",
          operatorNamespace: ops,
          customTemplates: `${dir}/*.eta`,
          validateProxyConfig: true,
          validateTimeoutMs: 1_500,
        }, {
          validate: (rendered) => {
            if (rendered.config.includes("userlist costly_check")) costlyChecks++;
            return check(rendered);
          },
        });
        const name = sharedProxyName("costly");
        const cfg = async () =>
          Object.values((await cluster.get(resources.configMaps, ops, name))?.data ?? {}).join("\n");
        try {
          await cluster.apply(
            resources.ingresses,
            ingressObj(a, "steady", [{ host: "steady.example", service: "web" }], costly),
          );
          await eventually("the shared configuration", async () => (await cfg()).includes("steady.example"));
          await cluster.apply(
            resources.ingresses,
            ingressObj(b, "slow", [{ host: "slow.example", path: "/costly", service: "web" }], costly),
          );
          const ev = await eventually(
            "a ValidationFailed Event on the ingress whose check timed out",
            async () => (await cluster.events(b, "slow")).find((e) => e.reason === "ValidationFailed"),
          );
          assert.match(ev.message, /^haproxy -c timed out on the rendered configuration and it is treated as refused/);
          assert.match(ev.message, /did not finish within 1500 ms/);
          const checked = costlyChecks;
          assert.ok(checked >= 2, `the merged configuration and the ingress alone: ${checked}`);
          await cluster.apply(
            resources.ingresses,
            ingressObj(
              a,
              "steady",
              [{ host: "steady.example", service: "web" }, { host: "more.example", service: "web" }],
              costly,
            ),
          );
          await eventually("the other ingress's change published", async () => (await cfg()).includes("more.example"));
          assert.doesNotMatch(await cfg(), /slow\.example|costly_check/);
          assert.equal(costlyChecks, checked, "the ingress that timed out is left out without another check");
          assert.equal((await cluster.events(a, "steady")).filter((e) => e.reason === "ValidationFailed").length, 0);
          assert.deepEqual(await haproxyChecksRunning("userlist costly_check"), [], "no haproxy -c is left running");
        } finally {
          await c.stop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    );

    await t.step(
      "a large configuration's new parts are created while haproxy -c checks it; a refused one's are named by no head and go with the next publish",
      async () => {
        const dir = await brokenOnPathTemplates();
        // Small split limits: 20 backends travel in parts (none carried by the head).
        const configSplit = { inline: 4096, fileInline: 512, targetPart: 1024, carry: 0 };
        const services = Array.from({ length: 20 }, (_, i) => `big-${i}`);
        for (const [i, svc] of services.entries()) {
          await cluster.apply(resources.services, serviceObj(a, svc));
          await cluster.apply(
            resources.endpointSlices,
            sliceObj(a, svc, [{ address: `10.9.1.${i}`, port: 8080 } as any]),
          );
        }
        const big = (broken: boolean) =>
          ingressObj(
            a,
            "big",
            services.map((svc, i) => ({
              host: `${svc}.example`,
              service: svc,
              path: broken && i === 0 ? "/broken" : "/",
            })),
            { className: "big" },
          );
        const name = sharedProxyName("big");
        const parts = async () =>
          (await cluster.list(resources.configMaps, ops, `${partOfLabel}=${name}`)).map((c) => c.metadata.name);
        const check = defaultValidator(defaultSettings);
        let checks = 0;
        const c = await controller(cluster, {
          ingressClass: "big",
          customTemplates: `${dir}/*.eta`,
          configSplit,
          controllerId: "big",
          operatorNamespace: ops,
          validateProxyConfig: true,
        }, {
          // The real haproxy -c, once parts exist: they are created while it runs, or never before it ends.
          validate: async (rendered) => {
            await eventually(
              "part ConfigMaps created while haproxy -c runs",
              async () => (await parts()).length > 0,
              10_000,
            );
            checks++;
            return await check(rendered);
          },
        });
        try {
          await cluster.apply(resources.ingresses, big(true));
          const ev = await eventually(
            "the refused configuration's Event",
            async () => (await cluster.events(a, "big")).find((e) => e.reason === "ValidationFailed"),
          );
          assert.match(ev.message, /no-such-keyword/);
          assert.equal(await cluster.get(resources.configMaps, ops, name), null, "no head for a refused configuration");
          assert.ok((await parts()).length > 0);

          await cluster.apply(resources.ingresses, big(false));
          const head = await eventually("the head", () => cluster.get(resources.configMaps, ops, name));
          const named = new Set([...partRefs(name, head.data).values()].flat().map((r) => r.name));
          assert.ok(named.size > 0, "the configuration travels in parts");
          await eventually("only the parts the head names are left", async () => {
            const left = await parts();
            return left.length === named.size && left.every((p) => named.has(p));
          });
          assert.ok(checks >= 2, `checks: ${checks}`);
        } finally {
          await c.stop();
          await Deno.remove(dir, { recursive: true });
        }
      },
    );

    await t.step(
      "a large configuration's new parts are looked up in one list: someone else's ConfigMap at a part's name blocks the group",
      async () => {
        const configSplit = { inline: 2048, fileInline: 256, targetPart: 512, carry: 0 };
        const services = Array.from({ length: 30 }, (_, i) => `many-${i}`);
        for (const [i, svc] of services.entries()) {
          await cluster.apply(resources.services, serviceObj(a, svc));
          await cluster.apply(
            resources.endpointSlices,
            sliceObj(a, svc, [{ address: `10.9.2.${i}`, port: 8080 } as any]),
          );
        }
        const name = sharedProxyName("many");
        // Not the controller's: no labels, no owner.
        const foreign = await cluster.apply(resources.configMaps, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: `${name}-part-0`, namespace: ops },
          data: { mine: "yes" },
        });
        const c = await controller(cluster, {
          ingressClass: "many",
          configSplit,
          controllerId: "many",
          operatorNamespace: ops,
        });
        try {
          await cluster.apply(
            resources.ingresses,
            ingressObj(a, "many", services.map((svc) => ({ host: `${svc}.example`, service: svc })), {
              className: "many",
            }),
          );
          const ev = await eventually(
            "the OwnershipConflict Event",
            async () => (await cluster.events(a, "many")).find((e) => e.reason === "OwnershipConflict"),
          );
          assert.match(ev.message, new RegExp(`ConfigMap ${ops}/${name}-part-0 already exists`));
          assert.equal(await cluster.get(resources.configMaps, ops, name), null, "no head");
          const left = await cluster.get(resources.configMaps, ops, `${name}-part-0`);
          assert.deepEqual(left?.data, { mine: "yes" }, "someone else's ConfigMap is left as it was");
          assert.equal(left?.metadata.uid, foreign.metadata.uid);
        } finally {
          await c.stop();
        }
      },
    );
  } finally {
    await cluster.stop();
  }
});

/**
 * A directory of custom templates valid for every model except one with the path /broken, where
 * the defaults section gets an unknown keyword (so `haproxy -c` refuses it).
 */
async function brokenOnPathTemplates(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ic-groups-templates-" });
  const builtin = await Deno.readTextFile(new URL("../../templates/defaults.eta", import.meta.url));
  await Deno.writeTextFile(
    `${dir}/defaults.eta`,
    builtin + '<% if (it.model.routes.some((r) => r.path === "/broken")) { %>    no-such-keyword on\n<% } %>',
  );
  return dir;
}

/** A valid kubernetes.io/tls Secret for `host`. */
async function tlsSecret(ns: string, name: string, host: string): Promise<KubeObject> {
  const ca = await createCA({ commonName: "groups test CA" });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns },
    type: "kubernetes.io/tls",
    stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
  };
}

/**
 * Custom templates valid for every model; with the path /costly, the configuration gets a userlist
 * whose bcrypt cost 31 HAProxy checks while it parses: `haproxy -c` would run for days.
 */
async function costlyOnPathTemplates(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ic-groups-templates-" });
  const builtin = await Deno.readTextFile(new URL("../../templates/defaults.eta", import.meta.url));
  const userlist = `userlist costly_check\n    user a password '$2b$31$${"a".repeat(53)}'\n`;
  await Deno.writeTextFile(
    `${dir}/defaults.eta`,
    builtin + `<% if (it.model.routes.some((r) => r.path === "/costly")) { %>${userlist}<% } %>`,
  );
  return dir;
}

/**
 * Pids of the `haproxy -c` processes this test process started that are still running, of a
 * configuration holding `marker` or whose files are gone.
 */
async function haproxyChecksRunning(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
    const stat = await Deno.readTextFile(`/proc/${e.name}/stat`).catch(() => "");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (!/^[^\0]*haproxy\0-c\0/.test(cmd) || Number(ppid) !== Deno.pid || state === "Z") continue;
    // Test files running beside this one in the same process (--parallel) have checks of their own, whose
    // files are there without the marker. A check whose files are gone is counted: it outlived its clean-up.
    const args = cmd.split("\0");
    const files = args.filter((_, i) => args[i - 1] === "-f");
    const texts = await Promise.all(files.map((f) => Deno.readTextFile(f).catch(() => null)));
    if (texts.some((t) => t === null || t.includes(marker))) pids.push(Number(e.name));
  }
  return pids;
}
