/**
 * The controller and the Secrets annotations name (basic auth, backend CA), against the real
 * kube-apiserver: such Secrets are usually Opaque, the controller sees them (as summaries) and
 * lists them in `secrets.json` with their kind for the proxy, never their content; a missing one
 * or an `$apr1$` line is a Warning on the Ingress, and creating the Secret re-renders.
 */
import assert from "node:assert/strict";
import { GLOBAL_CONFIGMAP } from "../../lib/controller/global_settings.ts";
import { proxyName } from "../../lib/controller/objects.ts";
import { createCA } from "../../lib/pki/certs.ts";
import {
  Cluster,
  controller,
  dedicatedIngressObj as ingressObj,
  eventually,
  resources,
  serviceObj,
} from "../../lib/dev/localenv/harness.ts";

const A = "ingress-controller.io/";

Deno.test("annotation Secrets: Opaque htpasswd and CA Secrets reach secrets.json by kind; problems are Warnings", async () => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("auth");
    await cluster.apply(resources.services, serviceObj(ns, "svc"));
    const opaque = (name: string, data: Record<string, string>) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns },
      type: "Opaque",
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, btoa(v)])),
    });
    const annotations = {
      [`${A}auth-basic-secret`]: "users",
      [`${A}backend-protocol`]: "h1-tls",
      [`${A}backend-ca-secret`]: "backend-ca",
    };
    await cluster.apply(
      resources.ingresses,
      ingressObj(ns, "web", [{ host: "web.example", service: "svc" }], {
        annotations,
      }),
    );
    const ctl = await controller(cluster, { validateProxyConfig: true });
    try {
      const warnings = () => ctl.events.recent.filter((e) => e.object === `${ns}/web` && e.type === "Warning");
      const cm = () => cluster.get(resources.configMaps, ns, proxyName("web"));
      // Neither Secret exists yet: fail closed (401 and 503 rendered), with a Warning each.
      await eventually("the Warnings", () => warnings().length >= 2 || undefined);
      assert.match(warnings().map((e) => e.message).join("\n"), /auth-basic-secret: Secret auth\/users not found/);
      assert.match(warnings().map((e) => e.message).join("\n"), /backend-ca-secret: Secret auth\/backend-ca not found/);
      const first = await eventually("the ConfigMap", cm);
      assert.deepEqual(JSON.parse(first.data["secrets.json"]), [{ kind: "htpasswd", namespace: ns, name: "users" }]);
      assert.match(first.data["haproxy.cfg"], /http-request deny deny_status 503/);

      // Both created (Opaque) once the controller is idle, so that only their own events can bring
      // the re-render: the CA file joins secrets.json, the config verifies with it; an $apr1$ line
      // is named in a Warning, its hash is in no object the controller writes.
      await ctl.idle();
      const ca = (await createCA({ commonName: "backend CA" })).certPem;
      await cluster.apply(resources.secrets, opaque("backend-ca", { "ca.crt": ca }));
      await cluster.apply(resources.secrets, opaque("users", { auth: "eve:$apr1$abcdefgh$0123456789012345678901\n" }));
      const second = await eventually("the CA in the ConfigMap", async () => {
        const c = await cm();
        return c?.data["secrets.json"].includes('"kind":"ca"') ? c : undefined;
      });
      assert.deepEqual(JSON.parse(second.data["secrets.json"]), [
        { kind: "ca", file: `${ns}_backend-ca_ca.pem`, namespace: ns, name: "backend-ca" },
        { kind: "htpasswd", namespace: ns, name: "users" },
      ]);
      assert.match(second.data["haproxy.cfg"], new RegExp(`verify required ca-file ${ns}_backend-ca_ca\\.pem`));
      await eventually("the $apr1$ Warning", () => warnings().find((e) => /user eve: \$apr1\$/.test(e.message)));
      for (const text of Object.values(second.data as Record<string, string>)) {
        assert.ok(!text.includes("0123456789012345678901") && !text.includes(ca.split("\n")[1]), "no Secret content");
      }
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});

Deno.test("annotation Secrets: a CA Secret named by a Service's annotations re-renders its ingresses when created", async () => {
  const cluster = await Cluster.start();
  try {
    const ns = await cluster.namespace("svc-ca");
    const svc = serviceObj(ns, "svc");
    svc.metadata.annotations = { [`${A}backend-protocol`]: "h1-tls", [`${A}backend-ca-secret`]: "upstream-ca" };
    await cluster.apply(resources.services, svc);
    await cluster.apply(resources.ingresses, ingressObj(ns, "web", [{ host: "web.example", service: "svc" }]));
    const ctl = await controller(cluster, { validateProxyConfig: true });
    try {
      const cm = () => cluster.get(resources.configMaps, ns, proxyName("web"));
      const first = await eventually("the ConfigMap", cm);
      assert.deepEqual(JSON.parse(first.data["secrets.json"]), []);
      await createdCaRerenders(cluster, ctl, ns);
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});

Deno.test("annotation Secrets: a Secret named by the global ConfigMap's settings re-renders when created", async () => {
  const cluster = await Cluster.start();
  try {
    const ops = await cluster.namespace("ops");
    const ns = await cluster.namespace("global-ca");
    // Every Ingress's backends verify with the CA Secret `upstream-ca` of its own namespace.
    await cluster.apply(resources.configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: GLOBAL_CONFIGMAP, namespace: ops },
      data: { "backend-protocol": "h1-tls", "backend-ca-secret": "upstream-ca" },
    });
    await cluster.apply(resources.services, serviceObj(ns, "svc"));
    await cluster.apply(resources.ingresses, ingressObj(ns, "web", [{ host: "web.example", service: "svc" }]));
    const ctl = await controller(cluster, { validateProxyConfig: true, operatorNamespace: ops });
    try {
      const cm = () => cluster.get(resources.configMaps, ns, proxyName("web"));
      const first = await eventually("the ConfigMap", cm);
      assert.match(first.data["haproxy.cfg"], /http-request deny deny_status 503/, "fails closed without the CA");
      await createdCaRerenders(cluster, ctl, ns);
    } finally {
      await ctl.stop();
    }
  } finally {
    await cluster.stop();
  }
});

/**
 * Once the controller is idle (so that only the Secret's own event can bring the re-render), the
 * Opaque CA Secret `upstream-ca` is created in `ns`: the proxy `web`'s configuration verifies with it.
 */
async function createdCaRerenders(cluster: Cluster, ctl: { idle(): Promise<void> }, ns: string): Promise<void> {
  await ctl.idle();
  await cluster.apply(resources.secrets, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "upstream-ca", namespace: ns },
    type: "Opaque",
    data: { "ca.crt": btoa((await createCA({ commonName: "upstream CA" })).certPem) },
  });
  const second = await eventually("the CA in the ConfigMap", async () => {
    const c = await cluster.get(resources.configMaps, ns, proxyName("web"));
    return c?.data["secrets.json"].includes('"kind":"ca"') ? c : undefined;
  });
  assert.match(second.data["haproxy.cfg"], new RegExp(`verify required ca-file ${ns}_upstream-ca_ca\\.pem`));
}
