/**
 * Tenancy, the objects the controller makes: two tenant namespaces served by one shared proxy
 * (with `--rbac`: a Role and RoleBinding in each tenant namespace let the proxy read that
 * namespace's TLS Secret) and a dedicated proxy in one of them, against the real kube-apiserver,
 * the real controller and real haproxy processes run by the proxy command. Each tenant is a user
 * who administers its own namespace only, as namespace admins do:
 * - a tenant empties the Role the controller made in its namespace: the controller restores it at
 *   once, with a Warning Event on the Role, and a shared proxy started as its own ServiceAccount
 *   meanwhile reads both tenants' Secrets and serves both certificates (it waited on a 403 for ever);
 * - a tenant edits its dedicated proxy's ConfigMap (a value, a key more): restored, with an Event;
 * - a tenant strips the controller's labels from that Role: still the controller's, restored;
 * - a tenant deletes it: created again, with an Event;
 * - a tenant that keeps emptying the Role meets restores that slow down: a bounded write rate;
 * - a Role a third tenant made under the shared proxy's name leaves only that tenant out: the
 *   other tenants' changes are still published;
 * - a ConfigMap edited without the controller's digest is refused by a real proxy, which keeps
 *   serving what it had.
 * No traffic to backends is needed (the TLS handshakes and the proxies' applies are what is
 * looked at), so this runs on loopback.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { type KubeObject, objectPath } from "../../lib/cluster/resources.ts";
import type { ControllerHandle } from "../../lib/controller/controller.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj,
  eventually,
  ingressObj,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { runProxy } from "../../lib/proxy/command.ts";
import { httpsGet, localProxySettings } from "../proxy/fixtures.ts";

/** Written out, not imported: this file must also run against code that lacks them. */
const CONTROLLER_NAME = "ingress-controller.io/ingress-controller";
const SHARED = "haproxy-class-web";
const DEDICATED = "own-haproxy";

/** A TLS Secret for `host` and the CA that signed it. */
async function tlsSecret(ns: string, name: string, host: string): Promise<{ secret: KubeObject; caPem: string }> {
  const ca = await createCA({ commonName: `${ns} CA` });
  const leaf = await issueCertificate(ca, { commonName: host, dnsNames: [host], usages: ["serverAuth"] });
  return {
    secret: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": leaf.certPem, "tls.key": leaf.keyPem },
    },
    caPem: ca.certPem,
  };
}

/**
 * A user who administers `ns` only, and its client. Kubernetes' `admin` ClusterRole is filled by the
 * controller manager's aggregation, which this API server runs without: the ClusterRole
 * `tenant-admin` grants what `admin` grants a namespace admin over the kinds played here.
 */
async function tenant(cluster: Cluster, ns: string, user: string): Promise<ClusterClient> {
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  const exists = await cluster.client.request("GET", `${rbac}/clusterroles/tenant-admin`).then(() => true, () => false);
  if (!exists) {
    await cluster.client.request("POST", `${rbac}/clusterroles`, {
      body: {
        metadata: { name: "tenant-admin" },
        rules: [
          { apiGroups: [""], resources: ["configmaps", "secrets", "services"], verbs: ["*"] },
          { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: ["*"] },
          { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles", "rolebindings"], verbs: ["*"] },
        ],
      },
    });
  }
  await cluster.client.request("POST", `${rbac}/namespaces/${ns}/rolebindings`, {
    body: {
      metadata: { name: `${user}-admin`, namespace: ns },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "tenant-admin" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
    },
  });
  return await ClusterClient.create({ kubeconfig: await cluster.cp.kubeConfig(user), qps: 0, burst: 1 });
}

const mergePatch = (client: ClusterClient, path: string, body: unknown) =>
  client.request("PATCH", path, { body, contentType: "application/merge-patch+json" });

/** Sum of a counter's values whose labels include `labels` (0 when the metric does not exist). */
async function counted(name: string, labels: Record<string, string>): Promise<number> {
  const m = registry.getSingleMetric(name);
  const values = m ? (await m.get()).values : [];
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

/** The Events of `reason` about the object `kind ns/name`. */
async function eventsOf(cluster: Cluster, ns: string, kind: string, name: string, reason: string) {
  return (await cluster.list(resources.events, ns)).filter((e) =>
    e.involvedObject?.kind === kind && e.involvedObject?.name === name && e.reason === reason
  );
}

interface LocalProxy {
  results: ApplyResult[];
  problems: string[];
  workDir: string;
  httpsPort: number;
  bind: string;
  stop(): Promise<void>;
}

/** The proxy command and a real haproxy on a loopback address, reading `ns/configmap` as `kubeconfig`'s user. */
async function localProxy(kubeconfig: string, ns: string, configmap: string): Promise<LocalProxy> {
  const workDir = await Deno.makeTempDir({ prefix: "ic-tenancy-" });
  const settings = localProxySettings({
    kubeconfig,
    namespace: ns,
    configmap,
    haproxy: await ensureHaproxy(),
    workDir,
  });
  const results: ApplyResult[] = [];
  const problems: string[] = [];
  const abort = new AbortController();
  const done = runProxy(settings, abort.signal, {
    onApply: (r) => results.push(r),
    onProblem: (m) => problems.push(m),
  }).catch((err) => problems.push(`runProxy failed: ${err}`));
  return {
    results,
    problems,
    workDir,
    httpsPort: settings.httpsPort,
    bind: settings.bindAddress,
    stop: async () => {
      abort.abort();
      await done;
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
    },
  };
}

Deno.test("tenancy: what the controller made stays as it made it", async (t) => {
  const cluster = await Cluster.start();
  const clients: ClusterClient[] = [];
  const proxies: LocalProxy[] = [];
  let ctl: ControllerHandle | null = null;
  try {
    const ops = await cluster.namespace("ops");
    const [a, b] = [await cluster.namespace("tenant-a"), await cluster.namespace("tenant-b")];
    await cluster.apply(resources.ingressClasses, {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "web" },
      spec: { controller: CONTROLLER_NAME },
    });
    const cas = new Map<string, string>();
    for (const ns of [a, b]) {
      await cluster.apply(resources.services, serviceObj(ns, "web"));
      const { secret, caPem } = await tlsSecret(ns, "site-tls", `${ns}.example`);
      await cluster.apply(resources.secrets, secret);
      cas.set(ns, caPem);
      await cluster.apply(
        resources.ingresses,
        ingressObj(ns, "site", [{ host: `${ns}.example`, service: "web" }], {
          className: "web",
          tls: [{ hosts: [`${ns}.example`], secretName: "site-tls" }],
        }),
      );
    }
    await cluster.apply(
      resources.ingresses,
      dedicatedIngressObj(b, "own", [{ host: "own.example", service: "web" }], { className: "web" }),
    );
    const alice = await tenant(cluster, a, "alice");
    const bob = await tenant(cluster, b, "bob");
    clients.push(alice, bob);
    ctl = await controller(cluster, { operatorNamespace: ops, rbac: true, validateProxyConfig: false });
    const rolePath = objectPath(resources.roles, a, SHARED);
    const secretRule = [{
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["site-tls"],
      verbs: ["get", "list", "watch"],
    }];
    await eventually("the shared proxy's Role in each tenant namespace", async () => {
      for (const ns of [a, b]) {
        if (!isDeepStrictEqual((await cluster.get(resources.roles, ns, SHARED))?.rules, secretRule)) {
          return false;
        }
      }
      return (await cluster.get(resources.configMaps, b, DEDICATED)) !== null;
    });
    await ctl.idle();

    await t.step(
      "a tenant empties the Role in its namespace: restored at once, with a Warning Event on it",
      async () => {
        const before = await counted("ingress_controller_owned_object_restores_total", { kind: "Role" });
        await mergePatch(alice, rolePath, { rules: [] });
        // A shared proxy starts meanwhile, as its own ServiceAccount: it must read both tenants' Secrets.
        const asProxy = await cluster.cp.kubeConfig(`system:serviceaccount:${ops}:${SHARED}`, [
          "system:serviceaccounts",
          `system:serviceaccounts:${ops}`,
        ]);
        const proxy = await localProxy(asProxy, ops, SHARED);
        proxies.push(proxy);
        const role = await eventually(
          "the Role restored",
          async () => {
            const r = await cluster.get(resources.roles, a, SHARED);
            return isDeepStrictEqual(r?.rules, secretRule) && r;
          },
          15_000,
        );
        assert.equal(role.metadata.labels?.["app.kubernetes.io/managed-by"], "ingress-controller");
        const [ev] = await eventually(
          "an OwnedObjectRestored Event on the Role",
          async () =>
            (await eventsOf(cluster, a, "Role", SHARED, "OwnedObjectRestored")).length > 0 &&
            eventsOf(cluster, a, "Role", SHARED, "OwnedObjectRestored"),
        );
        assert.equal(ev.type, "Warning");
        assert.match(
          ev.message,
          /^Role tenant-a\/haproxy-class-web was changed by someone other than the controller \(rules\)/,
        );
        assert.ok((await counted("ingress_controller_owned_object_restores_total", { kind: "Role" })) > before);
        assert.deepEqual(await eventsOf(cluster, b, "Role", SHARED, "OwnedObjectRestored"), [], "nothing in tenant-b");
        // The freshly started proxy serves both tenants' certificates: it was never stuck on a 403.
        await eventually(
          "the proxy's first start",
          () => proxy.results.some((r) => r.kind === "start" && r.ok),
          60_000,
        );
        for (const ns of [a, b]) {
          const answer = await httpsGet(proxy.bind, proxy.httpsPort, `${ns}.example`, cas.get(ns)!);
          assert.match(answer, /^HTTP\/1\.1 \d{3}/, `${ns}.example over TLS with ${ns}'s own certificate`);
        }
      },
    );

    await t.step("a tenant edits its dedicated proxy's ConfigMap: a value and a key more, both undone", async () => {
      const path = objectPath(resources.configMaps, b, DEDICATED);
      const original = (await cluster.get(resources.configMaps, b, DEDICATED))!;
      const cfg = original.data["haproxy.cfg"] as string;
      await mergePatch(bob, path, { data: { "haproxy.cfg": `${cfg}\nfrontend extra\n    bind :1\n` } });
      await eventually("the ConfigMap restored", async () => {
        const cm = await cluster.get(resources.configMaps, b, DEDICATED);
        return isDeepStrictEqual(cm?.data, original.data);
      }, 15_000);
      const [ev] = await eventually(
        "an OwnedObjectRestored Event on the ConfigMap",
        async () => {
          const list = await eventsOf(cluster, b, "ConfigMap", DEDICATED, "OwnedObjectRestored");
          return list.length > 0 && list;
        },
      );
      assert.match(ev.message, /\(data\)/);
      assert.ok(!("userlists.cfg" in original.data));
      await mergePatch(bob, path, { data: { "userlists.cfg": "userlist ul_x\n    user x insecure-password x\n" } });
      await eventually("the key added by the tenant removed", async () => {
        const cm = await cluster.get(resources.configMaps, b, DEDICATED);
        return cm !== null && isDeepStrictEqual(cm.data, original.data);
      }, 15_000);
    });

    await t.step(
      "a tenant strips the controller's labels from the Role: it is still the controller's, restored",
      async () => {
        const role = (await cluster.get(resources.roles, a, SHARED))!;
        await mergePatch(alice, rolePath, {
          metadata: { labels: { "app.kubernetes.io/managed-by": null, "ingress-controller.io/controller": null } },
        });
        const back = await eventually("the labels back", async () => {
          const r = await cluster.get(resources.roles, a, SHARED);
          return r?.metadata.labels?.["app.kubernetes.io/managed-by"] === "ingress-controller" && r;
        }, 15_000);
        assert.equal(back.metadata.uid, role.metadata.uid, "the same object, not a new one");
      },
    );

    await t.step("a tenant deletes the Role in its namespace: created again, with a Warning Event", async () => {
      const role = (await cluster.get(resources.roles, b, SHARED))!;
      await bob.request("DELETE", objectPath(resources.roles, b, SHARED));
      const again = await eventually("the Role created again", async () => {
        const r = await cluster.get(resources.roles, b, SHARED);
        return r && r.metadata.uid !== role.metadata.uid && isDeepStrictEqual(r.rules, secretRule) && r;
      }, 15_000);
      const [ev] = await eventually("an OwnedObjectRestored Event on it", async () => {
        const list = (await eventsOf(cluster, b, "Role", SHARED, "OwnedObjectRestored"))
          .filter((e) => e.involvedObject.uid === again.metadata.uid);
        return list.length > 0 && list;
      });
      assert.match(ev.message, /^Role tenant-b\/haproxy-class-web was deleted by someone other than the controller;/);
    });

    await t.step("a tenant that keeps emptying the Role meets restores that slow down", async () => {
      await ctl!.idle();
      const before = await counted("ingress_controller_owned_object_restores_total", { kind: "Role" });
      // A bounded fight: 40 edits, one every 100 ms.
      for (let i = 0; i < 40; i++) {
        await mergePatch(alice, rolePath, { rules: [] });
        await new Promise((r) => setTimeout(r, 100));
      }
      const during = (await counted("ingress_controller_owned_object_restores_total", { kind: "Role" })) - before;
      // Immediate, then after at least 0.5, 1 and 2 s: at most 4-5 restores in 4 s, against 40 edits.
      assert.ok(during >= 1 && during <= 6, `${during} restores during 40 edits`);
      await eventually(
        "the Role restored once the tenant stops",
        async () => isDeepStrictEqual((await cluster.get(resources.roles, a, SHARED))?.rules, secretRule),
        30_000,
      );
    });

    await t.step(
      "a Role a third tenant made under the proxy's name leaves only that tenant's ingresses out",
      async () => {
        const c = await cluster.namespace("tenant-c");
        await cluster.apply(resources.roles, {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: SHARED, namespace: c },
          rules: [],
        });
        await cluster.apply(resources.services, serviceObj(c, "web"));
        await cluster.apply(resources.secrets, (await tlsSecret(c, "site-tls", `${c}.example`)).secret);
        await cluster.apply(
          resources.ingresses,
          ingressObj(c, "site", [{ host: `${c}.example`, service: "web" }], {
            className: "web",
            tls: [{ hosts: [`${c}.example`], secretName: "site-tls" }],
          }),
        );
        await eventually(
          "an OwnershipConflict Event on tenant-c's Ingress",
          async () => (await cluster.events(c, "site")).some((e) => e.reason === "OwnershipConflict"),
        );
        // Another tenant's change is still published.
        await cluster.apply(
          resources.ingresses,
          ingressObj(a, "site", [{ host: `${a}.example`, service: "web" }, {
            host: `new.${a}.example`,
            service: "web",
          }], {
            className: "web",
            tls: [{ hosts: [`${a}.example`], secretName: "site-tls" }],
          }),
        );
        const config = async () =>
          Object.values((await cluster.get(resources.configMaps, ops, SHARED))?.data ?? {}).join("\n");
        await eventually("tenant-a's new host published", async () => (await config()).includes(`new.${a}.example`));
        assert.ok(!(await config()).includes(`${c}.example`), "tenant-c's host is left out");
        const foreign = (await cluster.get(resources.roles, c, SHARED))!;
        assert.deepEqual(foreign.rules ?? [], [], "the tenant's own Role is left untouched");
      },
    );

    await t.step("a ConfigMap edited without the controller's digest is refused by a real proxy", async () => {
      const proxy = await localProxy(cluster.kubeconfig, b, DEDICATED);
      proxies.push(proxy);
      await eventually(
        "the dedicated proxy's first start",
        () => proxy.results.some((r) => r.kind === "start" && r.ok),
      );
      // The controller is away (an upgrade, a crash): nobody restores the edit.
      await ctl!.stop();
      ctl = null;
      const applied = proxy.results.length;
      const cm = (await cluster.get(resources.configMaps, b, DEDICATED))!;
      await mergePatch(cluster.client, objectPath(resources.configMaps, b, DEDICATED), {
        data: { "haproxy.cfg": `${cm.data["haproxy.cfg"]}\n# edited by hand\n` },
      });
      await eventually("the refusal", () => proxy.problems.some((m) => /does not match its/.test(m)));
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(proxy.results.length, applied, "nothing applied from the edited ConfigMap");
      assert.ok(!(await Deno.readTextFile(join(proxy.workDir, "haproxy.cfg"))).includes("edited by hand"));
    });
  } finally {
    await ctl?.stop();
    for (const p of proxies) await p.stop();
    for (const c of clients) c.close();
    await cluster.stop();
  }
});
