/**
 * The validating webhook against the real kube-apiserver of lib/localenv, set up as the README
 * says: the API server is started with an admission configuration whose kubeconfig gives it a
 * client certificate (CN kube-apiserver-webhook-caller, signed by the cluster's client CA) for the
 * webhook's host, and that identity alone may create `ingressvalidators`. `run`'s serving part
 * with `--enable-validating-webhook` registers a ValidatingWebhookConfiguration (URL override, CA
 * of the self-signed serving certificate, failurePolicy Fail, the class matchCondition) with only
 * the RBAC the README lists. The API server's call is made as that identity (refused until it is
 * granted, with the identity named); anonymous and other callers are refused; an invalid Ingress
 * is refused with the webhook's one-line message and a valid one is stored; an ingress of another
 * class is not even sent; a classless one is ours only when our class is the default; a bad value
 * of an `ingress-controller.io/` annotation is refused with one line naming the key; the xray
 * refuses what haproxy refuses and `--bypass-validating-webhook-xray` lets it through; a restart
 * updates the registration in place.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { WEBHOOK_PATH } from "../../lib/admission/handler.ts";
import { registrations } from "../../lib/admission/metrics.ts";
import { defaultAdmissionSettings, WEBHOOK_URL_ENV } from "../../lib/admission/settings.ts";
import { createAdmissionWebhook } from "../../lib/admission/webhook.ts";
import { ClusterClient } from "../../lib/cluster/client.ts";
import { loadKubeConfig } from "../../lib/cluster/access.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { admissionMount } from "../../lib/admission/run_part.ts";
import { runServing } from "../../lib/serving/run_part.ts";
import { type ControlPlane, freePort, startControlPlane } from "../../lib/dev/localenv/mod.ts";
import { stringify } from "yaml";
import { request, tempDir } from "../serving/helpers.ts";
import { postReview } from "./helpers.ts";

const rbac = "/apis/rbac.authorization.k8s.io/v1";
const vwc = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";

async function post(cp: ControlPlane, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await cp.adminFetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function must(cp: ControlPlane, path: string, body: unknown): Promise<void> {
  const r = await post(cp, path, body);
  if (r.status !== 201 && r.status !== 409) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
}

/** The operator identity: delegated authn/authz roles and the webhook-registration role of the README. */
async function grantOperator(cp: ControlPlane, user: string): Promise<void> {
  const subjects = [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: user }];
  await createWebhookRole(cp);
  for (const role of ["ingress-controller-webhook", "system:auth-delegator"]) {
    await must(cp, `${rbac}/clusterrolebindings`, {
      metadata: { name: `admission-test-${user}-${role.replace(":", "-")}` },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects,
    });
  }
  await must(cp, `${rbac}/namespaces/kube-system/rolebindings`, {
    metadata: { name: `admission-test-${user}-auth-reader`, namespace: "kube-system" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extension-apiserver-authentication-reader" },
    subjects,
  });
}

async function createWebhookRole(cp: ControlPlane): Promise<void> {
  await must(cp, `${rbac}/clusterroles`, {
    metadata: { name: "ingress-controller-webhook" },
    rules: [
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations"],
        verbs: ["get", "create", "patch"],
      },
      { apiGroups: ["networking.k8s.io"], resources: ["ingressclasses"], verbs: ["list"] },
      // The global ConfigMap's annotation-risk-limit (the chart's ClusterRole grants configmaps too).
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
    ],
  });
}

function ingress(name: string, opts: { annotations?: Record<string, string>; className?: string } = {}) {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: "default", ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: {
      ...(opts.className ? { ingressClassName: opts.className } : {}),
      rules: [{
        host: `${name}.example.com`,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
        },
      }],
      tls: [{ hosts: [`${name}.example.com`], secretName: `${name}-tls` }],
    },
  };
}

const hostile = { "ingress.kubernetes.io/load-balance": "roundrobin\n    http-request deny\n#" };
const overflow = { "ingress.kubernetes.io/timeout-server": "999999m" };

async function metric(result: "ok" | "failed"): Promise<number> {
  const m = await registrations.get();
  return m.values.find((v) => v.labels.result === result)?.value ?? 0;
}

/** The identity the API server presents to the webhook (README: "Validating webhook"). */
const CALLER = "kube-apiserver-webhook-caller";

/**
 * kube-apiserver's `--admission-control-config-file`: the ValidatingAdmissionWebhook plugin gets a
 * kubeconfig whose user for the webhook's host:port holds the caller's client certificate. The
 * certificate files are written once the control plane (and so its client CA) exists: the API
 * server reads them when it first calls the webhook.
 */
function writeAdmissionConfig(dir: string, webhookHostPort: string) {
  const files = { cert: join(dir, "caller.crt"), key: join(dir, "caller.key") };
  const kubeconfig = join(dir, "webhook-kubeconfig.yaml");
  Deno.writeTextFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      users: [{ name: webhookHostPort, user: { "client-certificate": files.cert, "client-key": files.key } }],
    }),
  );
  const config = join(dir, "admission-config.yaml");
  Deno.writeTextFileSync(
    config,
    stringify({
      apiVersion: "apiserver.config.k8s.io/v1",
      kind: "AdmissionConfiguration",
      plugins: [{
        name: "ValidatingAdmissionWebhook",
        configuration: {
          apiVersion: "apiserver.config.k8s.io/v1",
          kind: "WebhookAdmissionConfiguration",
          kubeConfigFile: kubeconfig,
        },
      }],
    }),
  );
  return { config, files };
}

/** The README's ClusterRole for the caller, bound to it. */
async function grantCaller(cp: ControlPlane): Promise<void> {
  await must(cp, `${rbac}/clusterroles`, {
    metadata: { name: "ingress-controller-webhook-caller" },
    rules: [{ apiGroups: ["admission.ingress-controller.io"], resources: ["ingressvalidators"], verbs: ["create"] }],
  });
  await must(cp, `${rbac}/clusterrolebindings`, {
    metadata: { name: "ingress-controller-webhook-caller" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ingress-controller-webhook-caller" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: CALLER }],
  });
}

/** Runs `run`'s serving part (with the webhook mounted, as lib/app/run.ts does) until it serves. */
async function startRun(kubeconfig: string, dir: string, port: number, extra: string[]) {
  Deno.env.set(WEBHOOK_URL_ENV, `https://127.0.0.1:${port}${WEBHOOK_PATH}`);
  const config = parseRunFlags("A", [
    `--kubeconfig=${kubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    `--cert-dir=${join(dir, "certs")}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    "--authorization-always-allow-paths=/healthz,/livez",
    "--authorization-webhook-cache-unauthorized-ttl=1s",
    "--operator-service=ic-webhook-test",
    "--enable-validating-webhook",
    ...extra,
  ]);
  const stop = new AbortController();
  const running = runServing({ config, kubeConfig: loadKubeConfig(kubeconfig), signal: stop.signal }, [
    admissionMount,
  ]);
  try {
    let live = 0;
    // A fail-safe, not a speed check: start-up (serving certificate, registration) is slow under load.
    for (let i = 0; i < 600 && live !== 200; i++) {
      live = (await request({ port, path: "/livez" }).catch(() => ({ status: 0 }))).status;
      if (live !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(live, 200, "secure port serves");
  } catch (err) {
    stop.abort();
    await running;
    throw err;
  }
  return {
    port,
    async stop() {
      stop.abort();
      await running;
      Deno.env.delete(WEBHOOK_URL_ENV);
    },
  };
}

/**
 * Creates until the API server has picked up the (new) registration and the webhook answers
 * (`until`: the status to wait for, e.g. past a not-yet-expired authorization cache).
 */
async function createDenied(
  cp: ControlPlane,
  name: string,
  annotations: Record<string, string>,
  until = (status: number) => status !== 201,
) {
  let r = { status: 0, body: {} as any };
  for (let i = 0; i < 60; i++) {
    r = await post(cp, ingresses, ingress(name, { annotations }));
    if (until(r.status)) break;
    if (r.status !== 201) {
      await new Promise((res) => setTimeout(res, 250));
      continue;
    }
    // Registration not seen by the API server yet: remove and try again.
    await (await cp.adminFetch(`${ingresses}/${name}`, { method: "DELETE" })).body?.cancel();
    await new Promise((res) => setTimeout(res, 250));
  }
  return r;
}

Deno.test({
  name: "validating webhook against the real kube-apiserver",
  async fn(t) {
    using tmp = tempDir("admission-");
    const port = freePort();
    const admission = writeAdmissionConfig(tmp.dir, `127.0.0.1:${port}`);
    await using cp = await startControlPlane({
      apiServerFlags: [`--admission-control-config-file=${admission.config}`],
    });
    const caller = await cp.mintUser(CALLER);
    Deno.writeTextFileSync(admission.files.cert, caller.certPem);
    Deno.writeTextFileSync(admission.files.key, caller.keyPem, { mode: 0o600 });
    await grantOperator(cp, "ingress-controller");
    const kubeconfig = await cp.kubeConfig("ingress-controller");

    await t.step("called as the API server's client-certificate identity; invalid refused, valid stored", async () => {
      const run = await startRun(kubeconfig, tmp.dir, port, ["--ingress-class=haproxy"]);
      try {
        const ours = { ...hostile, "kubernetes.io/ingress.class": "haproxy" };
        // Registered, but the caller may not create ingressvalidators yet: failurePolicy Fail
        // refuses the write, and the answer names the identity the API server used.
        const forbidden = await createDenied(cp, "hostile", ours);
        assert.equal(forbidden.status, 500, JSON.stringify(forbidden.body));
        assert.match(
          forbidden.body.message,
          /failed calling webhook "ingresses\.validate\.ingress-controller\.io".*User "kube-apiserver-webhook-caller" cannot create resource "ingressvalidators"/,
        );

        // Anonymous callers and other identities never get a review.
        assert.equal((await postReview(run.port, "{}")).status, 401, "anonymous");
        const mallory = await cp.mintUser("mallory");
        const asMallory = { cert: mallory.certPem, key: mallory.keyPem };
        assert.equal((await postReview(run.port, "{}", asMallory)).status, 403, "mallory");

        await grantCaller(cp);
        const denied = await createDenied(cp, "hostile", ours, (status) => status === 422);
        assert.equal(denied.status, 422, JSON.stringify(denied.body));
        assert.equal(
          denied.body.message,
          'admission webhook "ingresses.validate.ingress-controller.io" denied the request: ' +
            'annotation ingress.kubernetes.io/load-balance: "roundrobin\\n    http-request deny\\n#" ' +
            "is not one of roundrobin,leastconn,source",
        );

        const valid = await post(cp, ingresses, ingress("valid", { className: "haproxy" }));
        assert.equal(valid.status, 201, JSON.stringify(valid.body));

        // The annotation table: a bad value of one of our keys is refused with one line naming it.
        const badKey = await post(
          cp,
          ingresses,
          ingress("table", {
            className: "haproxy",
            annotations: { "ingress-controller.io/hsts": "true", "ingress-controller.io/hsts-max-age": "1y" },
          }),
        );
        assert.equal(badKey.status, 422, JSON.stringify(badKey.body));
        assert.equal(
          badKey.body.message,
          'admission webhook "ingresses.validate.ingress-controller.io" denied the request: ' +
            'annotation ingress-controller.io/hsts-max-age: "1y" is not an integer 0–2147483647',
        );
        const goodKeys = await post(
          cp,
          ingresses,
          ingress("table", {
            className: "haproxy",
            annotations: {
              "ingress-controller.io/hsts": "true",
              "ingress-controller.io/allow-list": "10.0.0.0/8, ::1",
            },
          }),
        );
        assert.equal(goodKeys.status, 201, JSON.stringify(goodKeys.body));

        const other = await post(cp, ingresses, ingress("other", { annotations: hostile, className: "nginx" }));
        assert.equal(other.status, 201, "another class's ingress is not sent (matchConditions)");

        const classless = await post(cp, ingresses, ingress("classless", { annotations: hostile }));
        assert.equal(classless.status, 201, "no default IngressClass: a classless ingress is not ours");

        const xray = await post(cp, ingresses, ingress("xray", { annotations: overflow, className: "haproxy" }));
        assert.equal(xray.status, 422);
        assert.match(xray.body.message, /denied the request: haproxy refuses the configuration .*timer overflow/);

        const reg = await (await cp.adminFetch(`${vwc}/ingress-controller-ic-webhook-test`)).json();
        const hook = reg.webhooks[0];
        assert.equal(hook.clientConfig.url, `https://127.0.0.1:${run.port}${WEBHOOK_PATH}`);
        const chain = readFileSync(join(tmp.dir, "certs", "apiserver.crt"), "utf8");
        const ca = chain.slice(chain.indexOf("-----END CERTIFICATE-----") + 25).trim();
        assert.equal(atob(hook.clientConfig.caBundle).trim(), ca, "the self-signed CA from --cert-dir");
        assert.equal(hook.failurePolicy, "Fail");
        assert.equal(hook.timeoutSeconds, 10);
        assert.equal(hook.matchConditions[0].name, "ingress-class");
        assert.equal(hook.sideEffects, "None");
        assert.deepEqual(hook.admissionReviewVersions, ["v1"]);
        assert.deepEqual(hook.rules[0].operations, ["CREATE", "UPDATE"]);
        assert.deepEqual(hook.rules[0].resources, ["ingresses"]);

        // UPDATE goes through the webhook too.
        const current = await (await cp.adminFetch(`${ingresses}/valid`)).json();
        current.metadata.annotations = hostile;
        const upd = await cp.adminFetch(`${ingresses}/valid`, {
          method: "PUT",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(current),
        });
        const updBody = await upd.json();
        assert.equal(upd.status, 422, JSON.stringify(updBody));
        assert.match(updBody.message, /load-balance/);

        // Our class as the cluster default: classless ingresses are sent and judged as ours.
        await must(cp, "/apis/networking.k8s.io/v1/ingressclasses", {
          metadata: { name: "haproxy", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
          spec: { controller: "ingress-controller.io/haproxy" },
        });
        const defaulted = await post(cp, ingresses, ingress("classless2", { annotations: hostile }));
        assert.equal(defaulted.status, 422, JSON.stringify(defaulted.body));

        // The global ConfigMap's annotation-risk-limit: keys of that risk and above are refused.
        const medium = { "ingress-controller.io/force-ssl-redirect": "true" };
        assert.equal(
          (await post(cp, ingresses, ingress("risky", { annotations: medium, className: "haproxy" }))).status,
          201,
        );
        await must(cp, "/api/v1/namespaces/default/configmaps", {
          metadata: { name: "ingress-controller" },
          data: { "annotation-risk-limit": "medium" },
        });
        let risky = { status: 0, body: {} as any };
        // Read again in the background once the value is 5 s old: bounded retries, not a timing check.
        for (let i = 0; i < 100 && risky.status !== 422; i++) {
          risky = await post(cp, ingresses, ingress(`risky${i}`, { annotations: medium, className: "haproxy" }));
          if (risky.status !== 422) await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal(risky.status, 422, JSON.stringify(risky.body));
        assert.match(risky.body.message, /force-ssl-redirect is disabled: its risk is medium/);
      } finally {
        await run.stop();
      }
    });
    await t.step("registration without RBAC is retried with backoff and succeeds once granted", async () => {
      const late = await cp.kubeConfig("late-operator");
      const client = await ClusterClient.create({ kubeconfig: late, qps: 0, burst: 0 });
      const stop = new AbortController();
      try {
        const failedBefore = await metric("failed");
        const okBefore = await metric("ok");
        const webhook = await createAdmissionWebhook(
          { ...defaultAdmissionSettings, enabled: true, operatorService: "late", operatorNamespace: "ops" },
          { client },
        );
        stop.signal.addEventListener("abort", () => webhook.close());
        const chain = readFileSync(join(tmp.dir, "certs", "apiserver.crt"), "utf8");
        const registering = webhook.register(chain, stop.signal);
        for (let i = 0; i < 100 && (await metric("failed")) === failedBefore; i++) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok((await metric("failed")) > failedBefore, "forbidden without the role");
        await must(cp, `${rbac}/clusterrolebindings`, {
          metadata: { name: "admission-test-late-operator" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ingress-controller-webhook" },
          subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "late-operator" }],
        });
        const timer = setTimeout(() => stop.abort(), 20_000); // fail-safe: the assertion below then fails
        await registering;
        clearTimeout(timer);
        assert.equal(await metric("ok"), okBefore + 1, "registered after the grant, not given up");
        const reg = await (await cp.adminFetch(`${vwc}/ingress-controller-late`)).json();
        assert.deepEqual(reg.webhooks[0].clientConfig.service, {
          namespace: "ops",
          name: "late",
          port: 443,
          path: WEBHOOK_PATH,
        });
        await (await cp.adminFetch(`${vwc}/ingress-controller-late`, { method: "DELETE" })).body?.cancel();
      } finally {
        stop.abort();
        client.close();
      }
    });

    await t.step("restart with --bypass-validating-webhook-xray: registration updated, xray skipped", async () => {
      const run = await startRun(kubeconfig, tmp.dir, port, ["--bypass-validating-webhook-xray"]);
      try {
        // Wait until the API server calls the new port (the static checks still deny).
        const denied = await createDenied(cp, "hostile2", hostile);
        assert.equal(denied.status, 422, JSON.stringify(denied.body));
        const reg = await (await cp.adminFetch(`${vwc}/ingress-controller-ic-webhook-test`)).json();
        assert.equal(reg.webhooks[0].clientConfig.url, `https://127.0.0.1:${run.port}${WEBHOOK_PATH}`);
        const xray = await post(cp, ingresses, ingress("xray", { annotations: overflow }));
        assert.equal(xray.status, 201, JSON.stringify(xray.body));
      } finally {
        await run.stop();
      }
    });
  },
});
