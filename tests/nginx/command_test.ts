/**
 * `ingress-controller nginx-check` through main.ts as a subprocess, as a platform team runs it:
 * on files (YAML documents, a JSON List, other kinds skipped) with `--output json` and as a text
 * table; on the cluster of a real kube-apiserver (lib/localenv) with a kubeconfig whose user may
 * only list Ingresses, across namespaces or in one; exit 0 whatever the verdicts, one-line errors
 * and exit 1 for input it cannot read (missing file, bad YAML, a cluster that refuses).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { startControlPlane } from "../../lib/dev/localenv/mod.ts";
import type { ReportRow } from "../../lib/nginx/translate.ts";
import { nginxCheck } from "./nginx_check_run.ts";

const fixtures = new URL("./fixtures/", import.meta.url).pathname;

const KEYS = ["namespace", "ingress", "annotation", "verdict", "note"];

Deno.test("file mode: a JSON array of {namespace, ingress, annotation, verdict, note}, exit 0", async () => {
  const r = await nginxCheck(["-f", `${fixtures}shop.yaml`, "--output", "json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const rows = JSON.parse(r.stdout) as ReportRow[];
  assert.equal(rows.length, 23);
  for (const row of rows) assert.deepEqual(Object.keys(row), KEYS);
  const redirect = rows.find((x) => x.annotation.endsWith("/ssl-redirect"))!;
  assert.deepEqual([redirect.namespace, redirect.ingress, redirect.annotation, redirect.verdict], [
    "shop",
    "shop-api",
    "nginx.ingress.kubernetes.io/ssl-redirect",
    "translated",
  ]);
  assert.match(
    redirect.note,
    /^308 to HTTPS for TLS hosts, .*a \/ ending the path is dropped \(GET \/ → https:\/\/<host>\) unless preserve-trailing-slash is true/,
  );
  assert.equal(rows.find((x) => x.annotation.endsWith("/configuration-snippet"))?.verdict, "refused");

  const list = await nginxCheck(["--filename=" + `${fixtures}internal.json`, "-o", "json", "-n", "monitoring"]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual([...new Set((JSON.parse(list.stdout) as ReportRow[]).map((x) => x.ingress))], ["grafana"]);
});

Deno.test("file mode: the text table with a count per verdict", async () => {
  const r = await nginxCheck(["-f", `${fixtures}grpc-canary.yaml`]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.match(lines[0], /^NAMESPACE\s+INGRESS\s+ANNOTATION\s+VERDICT\s+NOTE$/);
  assert.match(r.stdout, /^grpc\s+greeter\s+nginx\.ingress\.kubernetes\.io\/ssl-redirect\s+translated\s+308 to HTTPS/m);
  assert.match(
    r.stdout,
    /^default\s+legacy\s+nginx\.ingress\.kubernetes\.io\/proxy-body-size\s+refused\s+invalid value "10 MB"/m,
  );
  assert.equal(
    lines.at(-1),
    "3 Ingress(es), 28 nginx annotation(s): 15 supported, 8 translated, 3 unsupported, 2 refused",
  );
});

Deno.test("unreadable input: one line on stderr, exit 1; bad flags exit 2", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const missing = await nginxCheck(["-f", `${tmp}/nope.yaml`, "--output", "json"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, "");
    assert.match(missing.stderr, /^error: --filename ".*nope\.yaml": no such file; [^\n]*\n$/);

    await Deno.writeTextFile(`${tmp}/bad.yaml`, "kind: Ingress\nmetadata: {name: [unclosed\n");
    const bad = await nginxCheck(["-f", `${tmp}/bad.yaml`, "--output", "json"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^error: -f .*bad\.yaml: document 1 is not valid YAML or JSON: [^\n]*\n$/);

    await Deno.writeTextFile(`${tmp}/empty.yaml`, "# nothing here\n");
    const empty = await nginxCheck(["-f", `${tmp}/empty.yaml`, "--output", "json"]);
    assert.deepEqual([empty.code, empty.stdout], [0, "[]\n"]);

    const flag = await nginxCheck(["-f", `${tmp}/empty.yaml`, "--output", "yaml"]);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /^error: .*--output.*\n$/);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("cluster mode: lists every namespace's Ingresses with a user that may only list them", async () => {
  await using cp = await startControlPlane();
  const post = async (path: string, body: unknown) => {
    const res = await cp.adminFetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    await res.body?.cancel();
  };
  const docs = Deno.readTextFileSync(`${fixtures}shop.yaml`).split(/^---$/m).map((d) => parse(d));
  for (const ns of ["shop", "tenant-b"]) await post("/api/v1/namespaces", { metadata: { name: ns } });
  for (const d of docs.filter((d) => d.kind === "Ingress")) {
    await post("/apis/networking.k8s.io/v1/namespaces/shop/ingresses", d);
  }
  for (const i of [1, 2, 3]) {
    await post("/apis/networking.k8s.io/v1/namespaces/tenant-b/ingresses", {
      metadata: {
        name: `app-${i}`,
        annotations: { "nginx.ingress.kubernetes.io/server-snippet": "return 200;", "other/key": "x" },
      },
      spec: { defaultBackend: { service: { name: "app", port: { number: 80 } } } },
    });
  }
  await post("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    metadata: { name: "ingress-reader" },
    rules: [{ apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: ["list"] }],
  });
  await post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: "ingress-reader" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "ingress-reader" },
    subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "migration" }],
  });
  const kubeconfig = await cp.kubeConfig("migration");

  const r = await nginxCheck(["--kubeconfig", kubeconfig, "--output", "json"]);
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as ReportRow[];
  const fromFile = JSON.parse((await nginxCheck(["-f", `${fixtures}shop.yaml`, "--output", "json"])).stdout);
  assert.deepEqual(rows.filter((x) => x.namespace === "shop"), fromFile, "the cluster's report equals the file's");
  assert.deepEqual(rows.filter((x) => x.namespace === "tenant-b").map((x) => `${x.ingress} ${x.verdict}`), [
    "app-1 refused",
    "app-2 refused",
    "app-3 refused",
  ]);

  const one = await nginxCheck(["--kubeconfig", kubeconfig, "-n", "tenant-b", "-o", "json"]);
  assert.equal(one.code, 0, one.stderr);
  assert.equal((JSON.parse(one.stdout) as ReportRow[]).length, 3);

  const stranger = await cp.kubeConfig("stranger");
  const refused = await nginxCheck(["--kubeconfig", stranger, "--output", "json"]);
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, "");
  assert.match(refused.stderr, /^error: cannot list the cluster's Ingresses: .*403 Forbidden[^\n]*\n$/);
});
