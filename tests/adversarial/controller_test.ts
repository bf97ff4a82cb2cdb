/**
 * Red-team regressions of the controller against the real kube-apiserver:
 * - an Ingress author cannot make the controller modify, adopt or delete an object it did not
 *   create (one namespace per kind of proxy object, each with a foreign object of that name),
 *   nor show a foreign Service's address in the Ingress status;
 * - the controller's Secret cache holds no private key material, yet TLS still renders, follows
 *   Secret changes and reports invalid Secrets.
 */
import assert from "node:assert/strict";
import { proxyName, statsServiceName } from "../../lib/controller/objects.ts";
import type { ControllerHandle } from "../../lib/controller/controller.ts";
import type { KubeObject, ResourceType } from "../../lib/cluster/resources.ts";
import { collectionPath, objectPath } from "../../lib/cluster/resources.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj as ingressObj,
  eventually,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { createCA, issueCertificate } from "../../lib/pki/certs.ts";

interface ForeignCase {
  ns: string;
  resource: ResourceType;
  object: KubeObject;
}

const name = proxyName("app");
const foreignLbIp = "203.0.113.66";

/** One namespace per kind, each with an object the controller would want to own, made by someone else. */
function foreignCases(): ForeignCase[] {
  const meta = (ns: string, n = name) => ({ name: n, namespace: ns, labels: { owner: "someone-else" } });
  return [
    { ns: "adv-cm", resource: resources.configMaps, object: { metadata: meta("adv-cm"), data: { important: "data" } } },
    {
      ns: "adv-deploy",
      resource: resources.deployments,
      object: {
        metadata: meta("adv-deploy"),
        spec: {
          selector: { matchLabels: { app: "mine" } },
          template: {
            metadata: { labels: { app: "mine" } },
            spec: { containers: [{ name: "main", image: "registry.example/mine:1" }] },
          },
        },
      },
    },
    {
      // The proxy's own ports and type: a server-side apply would merge into it without a conflict.
      ns: "adv-svc",
      resource: resources.services,
      object: {
        metadata: meta("adv-svc"),
        spec: {
          type: "LoadBalancer",
          selector: { app: "mine" },
          ports: [
            { name: "http", port: 80, targetPort: "http", protocol: "TCP" },
            { name: "https", port: 443, targetPort: "https", protocol: "TCP" },
          ],
        },
      },
    },
    {
      ns: "adv-stats",
      resource: resources.services,
      object: {
        metadata: meta("adv-stats", statsServiceName("app")),
        spec: { selector: { app: "mine" }, ports: [{ name: "web", port: 8080, protocol: "TCP" }] },
      },
    },
    { ns: "adv-sa", resource: resources.serviceAccounts, object: { metadata: meta("adv-sa") } },
    {
      ns: "adv-role",
      resource: resources.roles,
      object: { metadata: meta("adv-role"), rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] },
    },
    {
      ns: "adv-rb",
      resource: resources.roleBindings,
      object: {
        metadata: meta("adv-rb"),
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "mine" },
        subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" }],
      },
    },
  ];
}

/** What `kubectl create` does: a plain POST by another field manager. */
async function createForeign(cluster: Cluster, c: ForeignCase): Promise<void> {
  await cluster.client.request("POST", collectionPath(c.resource, c.ns), {
    query: { fieldManager: "kubectl-create" },
    body: { apiVersion: c.resource.group ? `${c.resource.group}/v1` : "v1", kind: c.resource.kind, ...c.object },
  });
  if (c.ns === "adv-svc") {
    await cluster.client.request("PATCH", `${objectPath(c.resource, c.ns, c.object.metadata.name)}/status`, {
      body: { status: { loadBalancer: { ingress: [{ ip: foreignLbIp }] } } },
      contentType: "application/merge-patch+json",
    });
  }
}

async function snapshot(cluster: Cluster, c: ForeignCase): Promise<string> {
  const o = await cluster.get(c.resource, c.ns, c.object.metadata.name);
  assert.ok(o, `${c.resource.kind} ${c.ns}/${c.object.metadata.name} exists`);
  return JSON.stringify(o);
}

/** Asserts that every foreign object is exactly as it was (lists all that are not). */
async function assertUnchanged(cluster: Cluster, cases: ForeignCase[], before: Map<string, string>): Promise<void> {
  const changed: string[] = [];
  for (const c of cases) {
    const o = await cluster.get(c.resource, c.ns, c.object.metadata.name);
    const what = `${c.resource.kind} ${c.ns}/${c.object.metadata.name}`;
    if (!o) changed.push(`${what} deleted`);
    else if (JSON.stringify(o) !== before.get(c.ns)) changed.push(`${what} modified`);
  }
  assert.deepEqual(changed, []);
}

async function conflictsCounted(kind: string): Promise<number> {
  const m = registry.getSingleMetric("ingress_controller_ownership_conflicts_total");
  const values = m ? (await m.get()).values : [];
  return values.filter((v) => v.labels.kind === kind).reduce((n, v) => n + v.value, 0);
}

Deno.test("adversarial: foreign objects with the proxy's names are never modified, adopted or deleted", async (t) => {
  const cluster = await Cluster.start();
  const cases = foreignCases();
  const before = new Map<string, string>();
  let ctl: ControllerHandle | null = null;
  try {
    for (const c of cases) {
      await cluster.namespace(c.ns);
      await cluster.apply(resources.services, serviceObj(c.ns, "web"));
      await createForeign(cluster, c);
      before.set(c.ns, await snapshot(cluster, c));
    }
    ctl = await controller(cluster, { rbac: true, validateProxyConfig: false });
    await ctl.synced;

    for (const c of cases) {
      const what = `${c.resource.kind} ${c.ns}/${c.object.metadata.name}`;
      await t.step(`${what}: a Warning Event names it and nothing is published through it`, async () => {
        await cluster.apply(resources.ingresses, ingressObj(c.ns, "app", [{ host: "app.example", service: "web" }]));
        const ev = await eventually(
          `an OwnershipConflict Event naming ${what}`,
          async () =>
            (await cluster.events(c.ns, "app")).find((e) =>
              e.type === "Warning" && e.reason === "OwnershipConflict" && e.message.startsWith(`${what} `)
            ),
        );
        assert.match(ev.message, /left untouched/);
        assert.ok(await conflictsCounted(c.resource.kind) > 0, `conflict counted for ${c.resource.kind}`);
        assert.equal(await snapshot(cluster, c), before.get(c.ns), `${what} unchanged while the ingress exists`);
        // Not served through a foreign object: no proxy ConfigMap (the proxy would read it), no status.
        if (c.resource !== resources.configMaps) {
          assert.equal(await cluster.get(resources.configMaps, c.ns, name), null, "no proxy ConfigMap published");
        }
        const status = (await cluster.get(resources.ingresses, c.ns, "app"))?.status?.loadBalancer?.ingress ?? [];
        assert.deepEqual(status, [], "the ingress shows no address");
      });
    }

    await t.step("deleting the ingresses leaves every foreign object byte-for-byte unchanged", async () => {
      for (const c of cases) await cluster.remove(resources.ingresses, c.ns, "app");
      // Seen by the controller (its cache drops them as it queues them), then handled.
      await eventually(
        "the controller saw the deletions",
        () => !ctl!.cached(resources.ingresses).some((i) => i.metadata.name === "app"),
      );
      await ctl!.idle();
      await assertUnchanged(cluster, cases, before);
    });

    await t.step("a restarted controller deletes none of them as orphans", async () => {
      await ctl!.stop();
      ctl = await controller(cluster, { rbac: true, validateProxyConfig: false });
      await ctl.idle();
      await assertUnchanged(cluster, cases, before);
    });

    await t.step("the public Service's address reaches the status only from our own Service", async () => {
      // Once the foreign public Service is gone, the ingress gets its own proxy and address.
      const c = cases.find((x) => x.ns === "adv-svc")!;
      await cluster.remove(resources.services, c.ns, name);
      await cluster.apply(resources.ingresses, ingressObj(c.ns, "app", [{ host: "app.example", service: "web" }]));
      const svc = await eventually("our proxy Service", async () => {
        const s = await cluster.get(resources.services, c.ns, name);
        return s?.metadata.labels?.["app.kubernetes.io/managed-by"] === "ingress-controller" && s;
      });
      const status = await eventually("the status", async () => {
        const lb = (await cluster.get(resources.ingresses, c.ns, "app"))?.status?.loadBalancer?.ingress;
        return lb?.length ? lb : null;
      });
      assert.deepEqual(status, [{ ip: svc.spec.clusterIP }]);
      assert.ok(!JSON.stringify(status).includes(foreignLbIp));
    });
  } finally {
    await ctl?.stop();
    await cluster.stop();
  }
});

Deno.test("adversarial: the Secret cache holds no key material; TLS still renders and follows changes", async (t) => {
  const cluster = await Cluster.start();
  let ctl: ControllerHandle | null = null;
  try {
    const ns = await cluster.namespace("adv-tls");
    await cluster.apply(resources.services, serviceObj(ns, "web"));
    const ca = await createCA({ commonName: "adversarial CA" });
    const leaf = () =>
      issueCertificate(ca, { commonName: "site.example", dnsNames: ["site.example"], usages: ["serverAuth"] });
    const first = await leaf();
    const secret = (crt: string, key: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {
        name: "site-tls",
        namespace: ns,
        // What `kubectl apply` leaves: the whole Secret again, key included.
        annotations: {
          "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ data: { "tls.key": btoa(key) } }),
        },
      },
      type: "kubernetes.io/tls",
      data: { "tls.crt": btoa(crt), "tls.key": btoa(key) },
    });
    await cluster.apply(resources.secrets, secret(first.certPem, first.keyPem));
    await cluster.apply(
      resources.ingresses,
      ingressObj(ns, "site", [{ host: "site.example", service: "web" }], {
        tls: [{ hosts: ["site.example"], secretName: "site-tls" }],
      }),
    );
    ctl = await controller(cluster, { validateProxyConfig: true });
    const crtList = async () => (await cluster.get(resources.configMaps, ns, proxyName("site")))?.data["crt-list"];
    const cached = () => ctl!.cached(resources.secrets).find((s) => s.metadata.name === "site-tls");
    /** No trace of the key: neither its PEM body, nor its base64, nor the field itself. */
    const assertNoKey = (key: string) => {
      const text = JSON.stringify(ctl!.cached(resources.secrets));
      const body = key.split("\n").filter((l) => l && !l.startsWith("-----")).join("");
      assert.ok(body.length > 40);
      for (const needle of [btoa(key), body, body.slice(0, 40), "tls.key", "PRIVATE KEY"]) {
        assert.ok(!text.includes(needle), `the Secret cache holds ${needle.slice(0, 20)}…`);
      }
      assert.equal(cached()?.data, undefined);
    };

    await t.step("after the sync the cache holds a verdict and a hash, the ConfigMap serves the Secret", async () => {
      await eventually("the crt-list", async () => (await crtList()) === `${ns}_site-tls.pem site.example\n`);
      assertNoKey(first.keyPem);
      const s = cached()!;
      assert.equal(s.tlsSummary.valid, true);
      assert.match(s.tlsSummary.sha256, /^[0-9a-f]{64}$/);
      assert.deepEqual(Object.keys(s.metadata).sort(), ["name", "namespace", "resourceVersion", "uid"]);
    });

    await t.step("a rotated Secret changes the hash and renders again, still without key material", async () => {
      await ctl!.idle();
      const { resourceVersion } = cached()!.metadata;
      const sha256 = cached()!.tlsSummary?.sha256;
      const renders = ctl!.stats().renders;
      const second = await leaf();
      await cluster.apply(resources.secrets, secret(second.certPem, second.keyPem));
      await eventually("the rotated Secret cached", () => cached()?.metadata.resourceVersion !== resourceVersion);
      assertNoKey(second.keyPem);
      assertNoKey(first.keyPem);
      assert.notEqual(cached()!.tlsSummary.sha256, sha256);
      await eventually("a new render", () => ctl!.stats().renders > renders);
    });

    await t.step("an invalid Secret gets its Event and drops TLS; a fixed one brings it back", async () => {
      const third = await leaf();
      await cluster.apply(resources.secrets, secret("not a certificate", third.keyPem));
      const ev = await eventually(
        "an InvalidSecret Event",
        async () => (await cluster.events(ns, "site")).find((e) => e.reason === "InvalidSecret"),
      );
      assert.match(ev.message, /site-tls/);
      await eventually("TLS dropped", async () => (await crtList()) === "");
      assertNoKey(third.keyPem);
      assert.equal(cached()!.tlsSummary.valid, false);
      await cluster.apply(resources.secrets, secret(third.certPem, third.keyPem));
      await eventually("TLS back", async () => (await crtList()) === `${ns}_site-tls.pem site.example\n`);
      assertNoKey(third.keyPem);
    });
  } finally {
    await ctl?.stop();
    await cluster.stop();
  }
});
