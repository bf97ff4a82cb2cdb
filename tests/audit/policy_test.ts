import assert from "node:assert/strict";
import { evaluatePolicy, loadPolicyFile, parsePolicy, type PolicyAttributes } from "../../lib/audit/policy.ts";
import { SetupError } from "../../lib/common/errors.ts";
import type { UserInfo } from "../../lib/auth/types.ts";

const policyYaml = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  # 0: nothing for the health checker
  - level: None
    users: ["system:kube-probe"]
  # 1: secrets only as metadata
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets"]
  # 2: one named configmap with bodies
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["configmaps"]
        resourceNames: ["controller-config"]
  # 3: status subresources of any resource
  - level: Request
    resources:
      - group: ""
        resources: ["*/status"]
  # 4: deployments and all their subresources, in namespace prod
  - level: RequestResponse
    namespaces: ["prod"]
    resources:
      - group: apps
        resources: ["deployments/*"]
  # 5: ingresses by members of admins, writes only
  - level: Request
    userGroups: ["admins"]
    verbs: ["create", "update", "patch", "delete"]
    resources:
      - group: networking.k8s.io
  # 6: metrics paths by prefix, and one exact path
  - level: Metadata
    nonResourceURLs: ["/metrics*", "/healthz"]
    omitStages: [ResponseStarted]
  # 7: anything else in kube-system
  - level: Metadata
    namespaces: ["kube-system"]
`;

const user = (name: string, groups: string[] = []): UserInfo => ({ name, groups, extra: {} });
const res = (
  resource: string,
  more: { apiGroup?: string; subresource?: string; namespace?: string; name?: string } = {},
): PolicyAttributes["resource"] => ({ apiGroup: "", apiVersion: "v1", resource, ...more });

Deno.test("policy: the first matching rule decides, no match is None", () => {
  const policy = parsePolicy(policyYaml, "test");
  const cases: [string, PolicyAttributes, string][] = [
    ["probe user on anything", { user: user("system:kube-probe"), verb: "get", path: "/healthz" }, "None"],
    [
      "secret read",
      { user: user("bob"), verb: "get", path: "/api/v1/namespaces/a/secrets/x", resource: res("secrets") },
      "Metadata",
    ],
    [
      "named configmap",
      {
        user: user("bob"),
        verb: "get",
        path: "/p",
        resource: res("configmaps", { name: "controller-config", namespace: "a" }),
      },
      "RequestResponse",
    ],
    [
      "other configmap",
      { user: user("bob"), verb: "get", path: "/p", resource: res("configmaps", { name: "other", namespace: "a" }) },
      "None",
    ],
    [
      "pods/status via */status",
      { user: user("bob"), verb: "update", path: "/p", resource: res("pods", { subresource: "status" }) },
      "Request",
    ],
    ["pods without subresource", { user: user("bob"), verb: "update", path: "/p", resource: res("pods") }, "None"],
    [
      "deployments/* matches the resource itself in prod",
      {
        user: user("bob"),
        verb: "get",
        path: "/p",
        resource: res("deployments", { apiGroup: "apps", namespace: "prod" }),
      },
      "RequestResponse",
    ],
    [
      "deployments/* matches scale in prod",
      {
        user: user("bob"),
        verb: "get",
        path: "/p",
        resource: res("deployments", { apiGroup: "apps", namespace: "prod", subresource: "scale" }),
      },
      "RequestResponse",
    ],
    [
      "deployments outside prod",
      {
        user: user("bob"),
        verb: "get",
        path: "/p",
        resource: res("deployments", { apiGroup: "apps", namespace: "x" }),
      },
      "None",
    ],
    [
      "ingress write by an admin",
      {
        user: user("carol", ["admins"]),
        verb: "patch",
        path: "/p",
        resource: res("ingresses", { apiGroup: "networking.k8s.io", namespace: "x" }),
      },
      "Request",
    ],
    [
      "ingress read by an admin",
      {
        user: user("carol", ["admins"]),
        verb: "get",
        path: "/p",
        resource: res("ingresses", { apiGroup: "networking.k8s.io" }),
      },
      "None",
    ],
    [
      "ingress write by a non-admin",
      {
        user: user("dave", ["devs"]),
        verb: "patch",
        path: "/p",
        resource: res("ingresses", { apiGroup: "networking.k8s.io" }),
      },
      "None",
    ],
    ["/metrics prefix", { user: user("bob"), verb: "get", path: "/metrics" }, "Metadata"],
    ["/metrics/cadvisor prefix", { user: user("bob"), verb: "get", path: "/metrics/cadvisor" }, "Metadata"],
    ["/healthz exact", { user: user("bob"), verb: "get", path: "/healthz" }, "Metadata"],
    ["/healthz/ready is not exact", { user: user("bob"), verb: "get", path: "/healthz/ready" }, "None"],
    [
      "nonResourceURLs never match resource requests",
      { user: user("bob"), verb: "get", path: "/metrics", resource: res("nodes") },
      "None",
    ],
    [
      "namespace rule on a kube-system resource",
      { user: user("bob"), verb: "list", path: "/p", resource: res("pods", { namespace: "kube-system" }) },
      "Metadata",
    ],
    ["namespace rule never matches a non-resource path", { user: user("bob"), verb: "get", path: "/x" }, "None"],
  ];
  for (const [name, attrs, level] of cases) {
    assert.equal(evaluatePolicy(policy, attrs).level, level, name);
  }
});

Deno.test("policy: omitStages is the union of policy and rule", () => {
  const policy = parsePolicy(policyYaml, "test");
  const metrics = evaluatePolicy(policy, { user: user("bob"), verb: "get", path: "/metrics" });
  assert.deepEqual([...metrics.omitStages].sort(), ["RequestReceived", "ResponseStarted"]);
  const secrets = evaluatePolicy(policy, { user: user("bob"), verb: "get", path: "/p", resource: res("secrets") });
  assert.deepEqual([...secrets.omitStages], ["RequestReceived"]);
});

Deno.test("policy: JSON and v1beta1 are accepted, a wildcard nonResourceURL and group-less resources", () => {
  const policy = parsePolicy(
    JSON.stringify({
      apiVersion: "audit.k8s.io/v1beta1",
      kind: "Policy",
      rules: [{ level: "Request", nonResourceURLs: ["*"] }, { level: "Metadata", resources: [{ group: "" }] }],
    }),
    "json",
  );
  assert.equal(policy.apiVersion, "audit.k8s.io/v1beta1");
  assert.equal(evaluatePolicy(policy, { user: user("x"), verb: "get", path: "/anything" }).level, "Request");
  assert.equal(
    evaluatePolicy(policy, { user: user("x"), verb: "get", path: "/p", resource: res("pods") }).level,
    "Metadata",
  );
});

Deno.test("policy: a cluster-scoped resource has the empty namespace", () => {
  const policy = parsePolicy(
    `{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata","namespaces":[""]}]}`,
    "t",
  );
  assert.equal(
    evaluatePolicy(policy, { user: user("x"), verb: "get", path: "/p", resource: res("nodes") }).level,
    "Metadata",
  );
  assert.equal(
    evaluatePolicy(policy, { user: user("x"), verb: "get", path: "/p", resource: res("pods", { namespace: "a" }) })
      .level,
    "None",
  );
});

Deno.test("policy: invalid policies are SetupErrors naming the rule and the fault", () => {
  const head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
  const cases: [string, RegExp][] = [
    [head + "rules:\n- level: Everything\n", /rules\[0\]: level "Everything" is not one of None, Metadata/],
    [head + "rules:\n- level: None\n- users: [a]\n", /rules\[1\]: level is required/],
    [
      head + "rules:\n- level: None\n  nonResourceURLs: [metrics]\n",
      /rules\[0\]: nonResourceURLs\[0\] "metrics" must begin with "\/"/,
    ],
    [head + "rules:\n- level: None\n  nonResourceURLs: [/a*b]\n", /rules\[0\].*wildcard "\*" may only be the last/],
    [
      head + "rules:\n- level: None\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n",
      /rules\[1\]: a rule cannot apply to both regular resources/,
    ],
    [head + "rules:\n- level: None\n  omitStages: [Finished]\n", /rules\[0\]: omitStages: "Finished" is not one of/],
    [
      head + 'rules:\n- level: None\n  resources:\n  - group: ""\n    resourceNames: [a]\n',
      /rules\[0\]: resources\[0\]: resourceNames needs/,
    ],
    [
      head + "rules:\n- level: None\n  resources:\n  - group: Bad_Group\n",
      /rules\[0\]: resources\[0\]: group "Bad_Group"/,
    ],
    [
      head + 'rules:\n- level: None\n  resources:\n  - resources: ["a/b/c"]\n',
      /resources\[0\]: resources\[0\] "a\/b\/c" must be/,
    ],
    [head + "rules:\n- level: None\n  user: [a]\n", /rules\[0\]: unknown field "user"/],
    [head + "rules: []\n", /has no rules/],
    ["apiVersion: audit.k8s.io/v2\nkind: Policy\nrules:\n- level: None\n", /apiVersion is "audit.k8s.io\/v2"/],
    ["apiVersion: audit.k8s.io/v1\nkind: Pod\n", /kind is "Pod"/],
    ["rules: [\n", /not valid YAML or JSON/],
  ];
  for (const [text, pattern] of cases) {
    assert.throws(() => parsePolicy(text, "/etc/audit/policy.yaml"), (err: Error) => {
      assert.ok(err instanceof SetupError, `${text}: ${err}`);
      assert.match(err.message, pattern);
      assert.match(err.message, /^--audit-policy-file \/etc\/audit\/policy\.yaml: /);
      assert.ok(!err.message.includes("\n"), "one line");
      return true;
    });
  }
});

Deno.test("policy: a missing file is a SetupError", async () => {
  await assert.rejects(loadPolicyFile("/nonexistent/policy.yaml"), (err: Error) => {
    assert.ok(err instanceof SetupError);
    assert.match(err.message, /cannot read the audit policy/);
    return true;
  });
});
