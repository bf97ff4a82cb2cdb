/**
 * The Helm chart (deploy/chart) and the kubectl manifests rendered from it:
 * - values.yaml documents every `run` option of the option table, _releases.tpl holds each
 *   release's options and image tags, and deploy/manifests/ is the chart rendered: all current;
 * - `helm lint` passes, with the defaults and with the webhook and audit on;
 * - `helm template` with the defaults and with releases B and C: the controller runs with
 *   --rbac, the release's env, probes on the listener that release serves them on, a restricted
 *   securityContext; its arguments are accepted by the program's own parser (`options`);
 * - options set through values render as flags (lists repeated, integers without exponent); an
 *   option the release lacks, an unknown release and the webhook outside A fail the render;
 * - with the webhook on, the generated serving chain and the configuration's CA bundle agree with
 *   what the controller derives from the chain;
 * - least privilege: by default (shared proxies only) the proxies' objects are written in the release
 *   namespace only, and cluster-wide only the Ingresses' and Gateway API objects' status, Events, the
 *   secure port's reviews and the shared proxy's Roles and RoleBindings (any name only for `create`, which Kubernetes cannot
 *   limit); no `bind`, `escalate` or wildcard anywhere; dedicatedProxies.enabled adds the cluster-wide
 *   writes and turns the controller's `dedicated-proxies` setting on; the chart's shared proxy name
 *   and controller label are the controller's own;
 * - the Gateway API: reads of GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, Namespaces and
 *   CRDs, writes of the three kinds' status only; the optional GatewayClass names the controller's
 *   controllerName and needs the CRDs;
 * - the NetworkPolicy of the proxy pods: off by default; on, metrics only from the namespaces named;
 * - NOTES.txt names the class's one shared proxy and a kubectl command that finds the controller's
 *   objects of it, and says dedicated proxies exist only with dedicatedProxies.enabled;
 * - every object of every render is accepted by the real kube-apiserver (server-side apply, dry run),
 *   the GatewayClass once the Gateway API CRDs (v1.6.3, standard channel) are installed.
 */
import assert from "node:assert/strict";
import { x509 } from "../../../lib/pki/x509.ts";
import { caBundleOf } from "../../../lib/admission/registration.ts";
import { runTable } from "../../../lib/flags/table.ts";
import { applyManifests, type ManifestObject, parseManifests } from "../../../lib/dev/deploy/apply.ts";
import { valuesOptionsBlock } from "../../../lib/dev/deploy/chart_options.ts";
import {
  chartDir,
  helm,
  NAMESPACE,
  RELEASE_NAME,
  renderChart,
  syncGenerated,
} from "../../../lib/dev/deploy/manifests.ts";
import { CONTROLLER_HEAP_LIMIT_MB, CONTROLLER_SEMI_SPACE_MB, v8Flags } from "../../../lib/controller/v8_flags.ts";
import { startControlPlane } from "../../../lib/dev/localenv/mod.ts";
import { sharedProxyName } from "../../../lib/controller/groups.ts";
import { controllerLabelValue, desiredObjects, proxyObjects, sharedTarget } from "../../../lib/controller/objects.ts";
import { defaultSettings } from "../../../lib/controller/settings.ts";
import { GATEWAY_CONTROLLER_NAME } from "../../../lib/gateway/model_types.ts";
import { applyCrds } from "../../../lib/dev/conformance/cluster_setup.ts";
import { buildBinaries } from "../../../lib/dev/localenv/binaries.ts";
import { join } from "node:path";

const find = (objs: ManifestObject[], kind: string) => objs.filter((o) => o.kind === kind);
const one = (objs: ManifestObject[], kind: string) => {
  const found = find(objs, kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0] as any;
};
const container = (objs: ManifestObject[]) => one(objs, "Deployment").spec.template.spec.containers[0];

async function render(extra: string[] = [], name?: string): Promise<ManifestObject[]> {
  return parseManifests(await renderChart(extra, name));
}

/** Runs the program's `options` command with the rendered arguments and the release's env. */
async function parsedOptions(c: any): Promise<Record<string, unknown>> {
  const env = Object.fromEntries(c.env.filter((e: any) => "value" in e).map((e: any) => [e.name, e.value]));
  assert.equal(c.args[0], "run");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../../main.ts", import.meta.url).pathname, "options", ...c.args.slice(1)],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  assert.ok(out.success, `options ${c.args.join(" ")}: ${dec.decode(out.stderr)}`);
  return JSON.parse(dec.decode(out.stdout)).options;
}

Deno.test("chart: generated parts and deploy/manifests are current", async () => {
  assert.deepEqual(await syncGenerated(false), []);
  const block = valuesOptionsBlock();
  for (const name of Object.keys(runTable)) assert.match(block, new RegExp(`^ +# ${name} \\(`, "m"), name);
  const manifests = parseManifests(
    await Deno.readTextFile(new URL("../../../deploy/manifests/00-namespace.yaml", import.meta.url)),
  );
  assert.deepEqual(manifests.map((o) => `${o.kind}/${o.metadata.name}`), [`Namespace/${NAMESPACE}`]);
});

Deno.test("chart: helm lint passes with the defaults and with the webhook and audit on", async () => {
  await helm(["lint", "--strict", chartDir]);
  await helm(["lint", "--strict", chartDir, "--set", "webhook.enabled=true", "--set", "audit.enabled=true"]);
});

Deno.test("chart: defaults run release A with --rbac, probes on the secure port and a restricted pod", async () => {
  const objs = await render();
  assert.deepEqual(
    objs.map((o) => o.kind).sort(),
    [
      "ClusterRole",
      "ClusterRoleBinding",
      "ConfigMap",
      "Deployment",
      "IngressClass",
      "Role",
      "Role",
      "RoleBinding",
      "RoleBinding",
      "RoleBinding",
      "Service",
      "ServiceAccount",
    ],
  );
  // What the controller creates carries managed-by=ingress-controller; the chart's objects never do.
  for (const o of objs) assert.equal((o.metadata as any).labels["app.kubernetes.io/managed-by"], "Helm");
  const d = one(objs, "Deployment");
  const pod = d.spec.template.spec;
  assert.equal(pod.serviceAccountName, one(objs, "ServiceAccount").metadata.name);
  assert.deepEqual(pod.securityContext, {
    fsGroup: 65534,
    runAsGroup: 65534,
    runAsNonRoot: true,
    runAsUser: 65534,
    seccompProfile: { type: "RuntimeDefault" },
  });
  const c = container(objs);
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
    readOnlyRootFilesystem: true,
  });
  assert.equal(c.image, "docker.io/ingresscontroller/ingress-controller:9.0.0");
  assert.deepEqual(c.env.find((e: any) => e.name === "POD_NAMESPACE").valueFrom, {
    fieldRef: { fieldPath: "metadata.namespace" },
  });
  assert.equal(c.env.find((e: any) => e.name === "INGRESS_CONTROLLER_RELEASE").value, "A");
  assert.deepEqual(c.readinessProbe.httpGet, { path: "/readyz", port: 8443, scheme: "HTTPS" });
  assert.deepEqual(c.livenessProbe.httpGet, { path: "/healthz", port: 8443, scheme: "HTTPS" });
  assert.ok(c.resources.requests.cpu && c.resources.requests.memory);
  assert.deepEqual(c.volumeMounts, [{ name: "tmp", mountPath: "/tmp" }]);
  const options = await parsedOptions(c);
  assert.equal(options.rbac, true);
  assert.equal(options["secure-port"], 8443);
  assert.deepEqual(options["authorization-always-allow-paths"], ["/healthz", "/readyz", "/livez"]);
  assert.equal(options["ingress-class"], one(objs, "IngressClass").metadata.name);
  // The secure port Service is --operator-service, on the --secure-port (the webhook needs both).
  const svc = one(objs, "Service");
  assert.equal(options["operator-service"], svc.metadata.name);
  assert.deepEqual(svc.spec.ports, [{ name: "https", port: 8443, targetPort: "https", protocol: "TCP" }]);
});

for (const release of ["B", "C"]) {
  Deno.test(`chart: release ${release} probes the ops listener and passes only ${release}'s options`, async () => {
    const objs = await render(["--set", `release=${release}`]);
    const c = container(objs);
    assert.equal(c.env.find((e: any) => e.name === "INGRESS_CONTROLLER_RELEASE").value, release);
    assert.deepEqual(c.readinessProbe.httpGet, { path: "/readyz", port: 56790, scheme: "HTTP" });
    assert.deepEqual(c.ports.find((p: any) => p.name === "ops"), {
      name: "ops",
      containerPort: 56790,
      protocol: "TCP",
    });
    assert.equal(
      c.image,
      `docker.io/ingresscontroller/ingress-controller:${release === "B" ? "7.0.0-rc.2" : "6.0.0-rc.0"}`,
    );
    const options = await parsedOptions(c);
    assert.equal(options.rbac, true);
    assert.equal("authorization-always-allow-paths" in options, false);
  });
}

Deno.test("chart: controller.options become flags; options a release lacks fail the render", async () => {
  const values = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(
      values,
      [
        "controller:",
        "  options:",
        "    qps: 2000000",
        "    burst: 1.5e7",
        "    v: 3",
        "    resync-period: 1m30s",
        "    tls-cipher-suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]",
        "    ingress-class: other",
        "    rbac: false",
        "image:",
        "  registry: registry.example/ic",
        "  tag: dev",
        "  pullPolicy: Never",
      ].join("\n"),
    );
    const objs = await render(["-f", values]);
    const c = container(objs);
    assert.equal(c.image, "registry.example/ic/ingress-controller:dev");
    assert.equal(c.imagePullPolicy, "Never");
    for (
      const flag of [
        "--qps=2000000",
        "--burst=15000000",
        "--v=3",
        "--resync-period=1m30s",
        "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "--ingress-class=other",
        "--rbac=false",
        "--image-registry=registry.example/ic",
      ]
    ) assert.ok(c.args.includes(flag), `${flag} in ${c.args.join(" ")}`);
    const options = await parsedOptions(c);
    assert.equal(options.qps, 2000000);
    assert.deepEqual(options["tls-cipher-suites"], [
      "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ]);
    // Without --rbac the controller creates no ServiceAccounts, Roles or RoleBindings: not granted.
    const rules = one(objs, "ClusterRole").rules as { resources: string[] }[];
    assert.equal(rules.some((r) => r.resources.includes("roles") || r.resources.includes("serviceaccounts")), false);
  } finally {
    await Deno.remove(values);
  }
  await assert.rejects(
    render(["--set", "release=B", "--set", "controller.options.enable-validating-webhook=true"]),
    /controller\.options\.enable-validating-webhook: not an option of release B/,
  );
  await assert.rejects(render(["--set", "controller.options.no-such-option=1"]), /controller\.options\.no-such-option/);
  await assert.rejects(render(["--set", "release=D"]), /release: "D" is not a release; use one of A, B, C/);
  await assert.rejects(
    render(["--set", "release=C", "--set", "webhook.enabled=true"]),
    /webhook\.enabled: the validating webhook exists only in release A/,
  );
});

Deno.test("chart: the webhook's generated chain, Secret and configuration agree with the controller's CA bundle", async () => {
  const objs = await render(["--set", "webhook.enabled=true", "--set", "audit.enabled=true"], "edge");
  const c = container(objs);
  const svc = one(objs, "Service").metadata.name;
  const secret = one(objs, "Secret");
  const vwc = one(objs, "ValidatingWebhookConfiguration");
  assert.equal(vwc.metadata.name, `ingress-controller-${svc}`);
  const hook = vwc.webhooks[0];
  assert.deepEqual(hook.clientConfig.service, {
    namespace: NAMESPACE,
    name: svc,
    path: "/apis/admission.ingress-controller.io/v1/ingressvalidators",
    port: 8443,
  });
  const chain = atob(secret.data["tls.crt"]);
  // The controller registers the CA that follows the leaf: the same bundle as the chart's.
  assert.equal(caBundleOf(chain).trim(), atob(secret.data["ca.crt"]).trim());
  assert.equal(atob(hook.clientConfig.caBundle).trim(), atob(secret.data["ca.crt"]).trim());
  const leaf = new x509.X509Certificate(chain.slice(0, chain.indexOf("-----END CERTIFICATE-----") + 25));
  assert.match(leaf.getExtension("2.5.29.17")!.toString("text"), new RegExp(`${svc}\\.${NAMESPACE}\\.svc`));
  for (
    const flag of [
      "--enable-validating-webhook=true",
      "--tls-cert-file=/etc/ingress-controller/webhook-tls/tls.crt",
      "--tls-private-key-file=/etc/ingress-controller/webhook-tls/tls.key",
      "--audit-policy-file=/etc/ingress-controller/audit/policy.yaml",
      "--audit-log-path=-",
    ]
  ) assert.ok(c.args.includes(flag), flag);
  const rules = one(objs, "ClusterRole").rules as { resources: string[]; resourceNames?: string[] }[];
  assert.ok(
    rules.some((r) =>
      r.resources.includes("validatingwebhookconfigurations") && r.resourceNames?.[0] === vwc.metadata.name
    ),
  );
  assert.deepEqual(
    objs.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata.name).sort(),
    ["edge-ingress-controller-audit-policy", "ingress-controller"],
  );
});

Deno.test("chart: every rendered object is accepted by the real kube-apiserver (dry run)", async () => {
  await using cp = await startControlPlane();
  const fetchApi = (path: string, init?: RequestInit) => cp.adminFetch(path, init);
  await applyManifests(fetchApi, [{ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }]);
  const renders: [string, string[]][] = [
    ["defaults", []],
    ["release B", ["--set", "release=B"]],
    ["release C", ["--set", "release=C"]],
    ["webhook and audit on", ["--set", "webhook.enabled=true", "--set", "audit.enabled=true"]],
    ["dedicated proxies, ServiceMonitors and the NetworkPolicy", [
      "--set",
      "dedicatedProxies.enabled=true",
      "--set",
      "rbac.serviceMonitors=true",
      "--set",
      "networkPolicy.enabled=true",
      "--set",
      "networkPolicy.metricsNamespaces={monitoring}",
    ]],
    ["without --ingress-class", ["--set", "ingressClass.create=false"]],
    ["options and default class", [
      "--set",
      "controller.options.v=2",
      "--set",
      "ingressClass.default=true",
      "--set",
      "rbac.serviceMonitors=true",
      "--set",
      "analyticsURL=https://analytics.example/",
    ]],
  ];
  for (const [what, args] of renders) {
    const objs = await render(args);
    const answered = await applyManifests(fetchApi, objs, { dryRun: true });
    assert.equal(answered.length, objs.length, what);
  }
  // With the Gateway API CRDs the conformance run installs (v1.6.3, standard channel), the GatewayClass too.
  await applyCrds(cp, join(await buildBinaries(["gateway-crds"]), "crds/standard"));
  const withClass = await render([
    "--set",
    "gatewayAPI.enabled=true",
    "--set",
    "gatewayClass.create=true",
    "--api-versions",
    "gateway.networking.k8s.io/v1/GatewayClass",
  ]);
  assert.equal(find(withClass, "GatewayClass").length, 1);
  await applyManifests(fetchApi, withClass, { dryRun: true });
  // The committed manifests, namespace first, as kubectl would apply them.
  const committed = await Deno.readTextFile(
    new URL("../../../deploy/manifests/ingress-controller.yaml", import.meta.url),
  );
  await applyManifests(fetchApi, parseManifests(committed), { dryRun: true });
  // Dry run really checks: a bad object is refused with the server's reason.
  await assert.rejects(
    applyManifests(fetchApi, [{
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "Not_A_Name" },
      spec: { controller: "x" },
    }], { dryRun: true }),
    /IngressClass Not_A_Name: refused by the API server: 422/,
  );
});

Deno.test("chart: the controller runs with the V8 flags of lib/controller/v8_flags.ts, its heap limit from the values", async () => {
  const flags = (objs: ManifestObject[]) => container(objs).env.find((e: any) => e.name === "DENO_V8_FLAGS")?.value;
  assert.equal(flags(await render()), v8Flags(CONTROLLER_HEAP_LIMIT_MB, CONTROLLER_SEMI_SPACE_MB));
  assert.equal(flags(await render(["--set", "controller.heapLimitMB=1536"])), v8Flags(1536, CONTROLLER_SEMI_SPACE_MB));
});

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection", "*"]);
const rulesOf = (o: any): Rule[] => o.rules ?? [];

/** `resource verb` for every write a set of rules grants, `resource verb name` when limited to names. */
function writeGrants(rules: Rule[]): string[] {
  const out: string[] = [];
  for (const r of rules) {
    for (const res of r.resources) {
      for (const verb of r.verbs.filter((v) => WRITE_VERBS.has(v))) {
        if (r.resourceNames?.length) { for (const n of r.resourceNames) out.push(`${res} ${verb} ${n}`); }
        else out.push(`${res} ${verb}`);
      }
    }
  }
  return out.sort();
}

const clusterRole = (objs: ManifestObject[]) => one(objs, "ClusterRole");
const proxiesRole = (objs: ManifestObject[]) =>
  find(objs, "Role").find((o) => o.metadata.name.endsWith("-proxies")) as any;
const globalSettings = (objs: ManifestObject[]) =>
  find(objs, "ConfigMap").find((o) => o.metadata.name === "ingress-controller") as any;

Deno.test("chart: by default the proxies' objects are written in the release namespace only; cluster-wide, the least Kubernetes allows", async () => {
  const objs = await render();
  const shared = sharedProxyName("ingress-controller");
  // Everything the controller may write outside its namespace: the Ingresses' status (the Gateway
  // API's with gatewayAPI.enabled, off by default), Events, the secure port's reviews and, for the shared proxy's Secret-reading
  // Role and RoleBinding in each tenant namespace, `create` (which resourceNames cannot limit) and
  // the rest on that name only.
  assert.deepEqual(
    writeGrants(rulesOf(clusterRole(objs))),
    [
      "events create",
      "ingresses/status patch",
      `rolebindings delete ${shared}`,
      "rolebindings create",
      `rolebindings patch ${shared}`,
      `roles delete ${shared}`,
      "roles create",
      `roles patch ${shared}`,
      "subjectaccessreviews create",
      "tokenreviews create",
    ].sort(),
  );
  const named = rulesOf(clusterRole(objs)).filter((r) => r.resources.includes("roles"));
  assert.deepEqual(named.map((r) => [r.verbs, r.resourceNames ?? null]), [
    [["list", "watch", "create"], null],
    [["get", "patch", "delete"], [shared]],
  ]);
  // The proxies' own objects: in the release namespace, through a Role bound to the controller.
  const role = proxiesRole(objs);
  assert.equal(role.metadata.namespace, NAMESPACE);
  assert.deepEqual(writeGrants(rulesOf(role)), [
    "configmaps create",
    "configmaps delete",
    "configmaps patch",
    "deployments create",
    "deployments delete",
    "deployments patch",
    "poddisruptionbudgets create",
    "poddisruptionbudgets delete",
    "poddisruptionbudgets patch",
    "serviceaccounts create",
    "serviceaccounts delete",
    "serviceaccounts patch",
    "services create",
    "services delete",
    "services patch",
  ]);
  const binding = find(objs, "RoleBinding").find((o: any) => o.roleRef.name === role.metadata.name) as any;
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "ingress-controller", namespace: NAMESPACE }]);
  // Nothing that lifts Kubernetes' escalation prevention, and no wildcards.
  for (const o of [...find(objs, "ClusterRole"), ...find(objs, "Role")]) {
    for (const r of rulesOf(o)) {
      for (const v of r.verbs) {
        assert.ok(!["bind", "escalate", "impersonate", "*"].includes(v), `${v} in ${o.metadata.name}`);
      }
      assert.ok(!r.resources.includes("*") && !r.apiGroups.includes("*"), `a wildcard in ${o.metadata.name}`);
    }
  }
  // The controller is told: an Ingress asking for a dedicated proxy joins the shared one.
  assert.equal(globalSettings(objs).data["dedicated-proxies"], "false");
});

Deno.test("chart: the Gateway API: reads of its objects, writes of their status only; the GatewayClass on request", async () => {
  const gwRules = (objs: Awaited<ReturnType<typeof render>>) =>
    rulesOf(clusterRole(objs)).filter((r) => r.apiGroups.includes("gateway.networking.k8s.io"));
  assert.deepEqual(gwRules(await render()), [], "off by default, like the other controllers' charts");
  const objs = await render(["--set", "gatewayAPI.enabled=true"]);
  const rules = rulesOf(clusterRole(objs));
  const grants = (group: string, resource: string) =>
    rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs).sort();
  const gw = "gateway.networking.k8s.io";
  for (
    const res of [
      "gatewayclasses",
      "gateways",
      "httproutes",
      "grpcroutes",
      "tlsroutes",
      "backendtlspolicies",
      "referencegrants",
    ]
  ) {
    assert.deepEqual(grants(gw, res), ["get", "list", "watch"], res);
  }
  for (
    const res of [
      "gatewayclasses/status",
      "gateways/status",
      "httproutes/status",
      "grpcroutes/status",
      "tlsroutes/status",
      "backendtlspolicies/status",
    ]
  ) {
    assert.deepEqual(grants(gw, res), ["patch", "update"], res);
  }
  assert.deepEqual(grants(gw, "referencegrants/status"), []);
  // allowedRoutes namespace selectors; the CRDs are found through discovery (no right on them).
  assert.deepEqual(grants("", "namespaces"), ["get", "list", "watch"]);
  assert.deepEqual(grants("apiextensions.k8s.io", "customresourcedefinitions"), []);
  // Each Gateway's proxy reads its certificates through a Role named after it: any name.
  const roleWrites = rules.filter((r) => r.resources.includes("roles") && r.verbs.includes("patch"));
  assert.deepEqual(roleWrites.map((r) => r.resourceNames ?? []), [[]]);
  assert.deepEqual(find(objs, "GatewayClass"), [], "no GatewayClass by default");

  // On request, named as asked, with the controller's own controllerName; refused without the CRDs.
  const withClass = await render([
    "--set",
    "gatewayAPI.enabled=true",
    "--set",
    "gatewayClass.create=true",
    "--set",
    "gatewayClass.name=edge",
    "--api-versions",
    "gateway.networking.k8s.io/v1/GatewayClass",
  ]);
  const gc = one(withClass, "GatewayClass");
  assert.equal(gc.apiVersion, "gateway.networking.k8s.io/v1");
  assert.equal(gc.metadata.name, "edge");
  assert.equal(gc.spec.controllerName, GATEWAY_CONTROLLER_NAME);
  await assert.rejects(
    render(["--set", "gatewayAPI.enabled=true", "--set", "gatewayClass.create=true"]),
    /gatewayClass\.create: the Gateway API CRDs are not installed/,
  );
  await assert.rejects(
    render(["--set", "gatewayClass.create=true", "--api-versions", "gateway.networking.k8s.io/v1/GatewayClass"]),
    /gatewayClass\.create: set gatewayAPI\.enabled=true/,
  );
});

Deno.test("chart: dedicatedProxies.enabled grants the proxies' writes in every namespace and turns the setting on", async () => {
  const objs = await render(["--set", "dedicatedProxies.enabled=true", "--set", "rbac.serviceMonitors=true"]);
  const grants = writeGrants(rulesOf(clusterRole(objs)));
  for (
    const res of ["services", "configmaps", "serviceaccounts", "deployments", "poddisruptionbudgets", "servicemonitors"]
  ) {
    for (const verb of ["create", "patch", "delete"]) assert.ok(grants.includes(`${res} ${verb}`), `${res} ${verb}`);
  }
  // Dedicated proxies are named after their Ingress: their Roles cannot be limited to a name.
  for (const verb of ["create", "patch", "delete"]) assert.ok(grants.includes(`roles ${verb}`), `roles ${verb}`);
  assert.equal(globalSettings(objs).data["dedicated-proxies"], "true");
  // Without --rbac, no ServiceAccounts, Roles or RoleBindings at all.
  const plain = writeGrants(rulesOf(clusterRole(
    await render(["--set", "dedicatedProxies.enabled=true", "--set", "controller.options.rbac=false"]),
  )));
  assert.ok(plain.includes("deployments create"));
  assert.equal(plain.some((g) => /^(roles|rolebindings|serviceaccounts) /.test(g)), false, plain.join(", "));
  await assert.rejects(
    render(["--set", "globalSettings.settings.dedicated-proxies=true"]),
    /globalSettings\.settings\.dedicated-proxies: set dedicatedProxies\.enabled instead/,
  );
});

Deno.test("chart: gatewayAPI.proxiesInGatewayNamespace passes its option and grants the proxies' writes everywhere", async () => {
  const off = await render(["--set", "gatewayAPI.enabled=true"]);
  assert.ok(!container(off).args.some((a: string) => a.startsWith("--gateway-proxies-in-gateway-namespace")));
  assert.ok(!writeGrants(rulesOf(clusterRole(off))).includes("deployments create"), "off: this namespace only");
  const objs = await render([
    "--set",
    "gatewayAPI.enabled=true",
    "--set",
    "gatewayAPI.proxiesInGatewayNamespace=true",
    "--set",
    "rbac.serviceMonitors=true",
  ]);
  const c = container(objs);
  assert.ok(c.args.includes("--gateway-proxies-in-gateway-namespace=true"), c.args.join(" "));
  assert.equal((await parsedOptions(c))["gateway-proxies-in-gateway-namespace"], true);
  const grants = writeGrants(rulesOf(clusterRole(objs)));
  for (
    const res of ["services", "configmaps", "serviceaccounts", "deployments", "poddisruptionbudgets", "servicemonitors"]
  ) {
    for (const verb of ["create", "patch", "delete"]) assert.ok(grants.includes(`${res} ${verb}`), `${res} ${verb}`);
  }
  for (const verb of ["create", "patch", "delete"]) assert.ok(grants.includes(`roles ${verb}`), `roles ${verb}`);
  // Gateways only: Ingresses still may not ask for proxies of their own.
  assert.equal(globalSettings(objs).data["dedicated-proxies"], "false");
  await assert.rejects(
    render(["--set", "gatewayAPI.proxiesInGatewayNamespace=true"]),
    /gatewayAPI\.proxiesInGatewayNamespace: needs gatewayAPI\.enabled/,
  );
});

Deno.test("chart: NOTES.txt names the class's one shared proxy; dedicated proxies only with dedicatedProxies.enabled", async () => {
  // helm prints the notes of an install; even its client-side dry run asks an API server for its version.
  await using cp = await startControlPlane();
  const notes = async (args: string[] = []) => {
    const out = await helm([
      "install",
      RELEASE_NAME,
      chartDir,
      "--namespace",
      NAMESPACE,
      "--dry-run=client",
      "--kubeconfig",
      cp.adminKubeConfigPath,
      ...args,
    ]);
    const at = out.indexOf("\nNOTES:\n");
    assert.ok(at >= 0, `helm install prints the chart's notes:\n${out.slice(-2000)}`);
    return out.slice(at + "\nNOTES:\n".length).replace(/\s+/g, " ");
  };
  /** The namespace and label selector of the notes' `kubectl -n <ns> get deploy,svc,pods -l <selector>`. */
  const findCommand = (text: string) => {
    const m = text.match(/kubectl -n (\S+) get deploy,svc,pods -l (\S+)/);
    assert.ok(m, `the notes say how to find the proxies:\n${text}`);
    return { namespace: m[1], labels: Object.fromEntries(m[2].split(",").map((kv) => kv.split("="))) };
  };
  const selects = (labels: Record<string, string>, on: Record<string, string> | undefined) =>
    Object.entries(labels).every(([k, v]) => on?.[k] === v);
  const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };

  for (const cls of ["ingress-controller", "edge"]) {
    const text = await notes(
      cls === "ingress-controller" ? [] : ["--set-string", `controller.options.ingress-class=${cls}`],
    );
    const shared = sharedProxyName(cls);
    assert.match(text, new RegExp(`One shared proxy serves all of them: ${shared},`), cls);
    assert.match(text, new RegExp(`ingressClassName: ${cls} `), cls);
    // The command finds the controller's own objects of that proxy: the Deployment and its pods.
    const found = findCommand(text);
    assert.equal(found.namespace, NAMESPACE);
    const deployment = proxyObjects(sharedTarget(cls, undefined, NAMESPACE), data, [], defaultSettings)
      .find((d) => d.object.kind === "Deployment")!.object;
    assert.equal(deployment.metadata.name, shared);
    assert.ok(selects(found.labels, deployment.metadata.labels), JSON.stringify(found.labels));
    assert.ok(selects(found.labels, deployment.spec.template.metadata.labels), JSON.stringify(found.labels));
    assert.match(text, /Dedicated proxies are off \(dedicatedProxies\.enabled=false\)/);
    assert.doesNotMatch(text, /gets a proxy of its own/);
  }
  const dedicated = await notes(["--set", "dedicatedProxies.enabled=true"]);
  assert.match(dedicated, /One shared proxy serves all of them/);
  assert.match(dedicated, /ingress-controller\.io\/proxy: dedicated gets a proxy of its own instead/);
  assert.doesNotMatch(dedicated, /Dedicated proxies are off/);
  // Without --ingress-class: one shared proxy per IngressClass, found by the controller's label alone.
  const every = await notes(["--set", "ingressClass.create=false"]);
  assert.match(every, /Each IngressClass .* gets one shared proxy, haproxy-class-<class>,/);
  const found = findCommand(every);
  assert.deepEqual(found, { namespace: NAMESPACE, labels: { "app.kubernetes.io/managed-by": "ingress-controller" } });
});

Deno.test("chart: the shared proxy's name and the controller label are the controller's own, for any --ingress-class", async () => {
  for (const cls of ["ingress-controller", "edge", "my.class", "Edge_1", "x".repeat(60)]) {
    const objs = await render([
      "--set-string",
      `controller.options.ingress-class=${cls}`,
      "--set",
      "networkPolicy.enabled=true",
    ]);
    const named = rulesOf(clusterRole(objs)).find((r) => r.resourceNames && r.resources.includes("roles"))!;
    assert.deepEqual(named.resourceNames, [sharedProxyName(cls)], cls);
    const np = one(objs, "NetworkPolicy");
    assert.equal(np.spec.podSelector.matchLabels["ingress-controller.io/controller"], controllerLabelValue(cls), cls);
  }
  // Without --ingress-class the controller may run a shared proxy for any class: no name is known.
  const objs = await render(["--set", "ingressClass.create=false", "--set", "networkPolicy.enabled=true"]);
  const roles = rulesOf(clusterRole(objs)).filter((r) => r.resources.includes("roles"));
  assert.deepEqual(roles.map((r) => [r.verbs, r.resourceNames ?? null]), [
    [["list", "watch", "create"], null],
    [["get", "patch", "delete"], null],
  ]);
  assert.equal(
    one(objs, "NetworkPolicy").spec.podSelector.matchLabels["ingress-controller.io/controller"],
    controllerLabelValue("default"),
  );
});

Deno.test("chart: the proxies' NetworkPolicy is off by default; on, metrics only from the namespaces named", async () => {
  assert.deepEqual(find(await render(), "NetworkPolicy"), []);
  const objs = await render([
    "--set",
    "networkPolicy.enabled=true",
    "--set",
    "networkPolicy.metricsNamespaces={monitoring,obs}",
    "--set",
    "networkPolicy.metricsFrom[0].ipBlock.cidr=192.0.2.0/24",
  ]);
  const np = one(objs, "NetworkPolicy");
  assert.equal(np.metadata.namespace, NAMESPACE);
  assert.deepEqual(np.spec.policyTypes, ["Ingress"]);
  assert.deepEqual(np.spec.podSelector.matchLabels, {
    "app.kubernetes.io/managed-by": "ingress-controller",
    "app.kubernetes.io/name": "haproxy",
    "ingress-controller.io/controller": "ingress-controller",
  });
  const [traffic, probes, metrics] = np.spec.ingress;
  // Traffic and probes from anywhere (no `from`); the named ports of the proxy pod (lib/controller/proxy_pod.ts).
  assert.deepEqual(traffic, { ports: [{ port: "http", protocol: "TCP" }, { port: "https", protocol: "TCP" }] });
  assert.deepEqual(probes, { ports: [{ port: "health", protocol: "TCP" }] });
  assert.deepEqual(metrics, {
    from: [
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
      { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "obs" } } },
      { ipBlock: { cidr: "192.0.2.0/24" } },
    ],
    ports: [{ port: "metrics", protocol: "TCP" }],
  });
  assert.equal(np.spec.ingress.length, 3, "nothing else is admitted: no stats port");
  // Those names are the proxy pod's container ports; HAProxy's stats port is not one (loopback only).
  const ing = {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "w", namespace: "n", uid: "u" },
  };
  const data = { "haproxy.cfg": "global\n", "crt-list": "", "secrets.json": "[]" };
  const deployment = desiredObjects(ing, data, [], defaultSettings).find((d) => d.object.kind === "Deployment")!;
  const ports = deployment.object.spec.template.spec.containers.flatMap((c: any) => c.ports.map((p: any) => p.name));
  assert.deepEqual(ports.sort(), ["health", "http", "https", "metrics"]);
  // Nobody named: the metrics port admits no one.
  const closed = one(await render(["--set", "networkPolicy.enabled=true"]), "NetworkPolicy");
  assert.deepEqual(closed.spec.ingress.map((r: any) => r.ports.map((p: any) => p.port)), [["http", "https"], [
    "health",
  ]]);
});
