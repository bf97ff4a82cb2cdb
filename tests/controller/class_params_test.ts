import assert from "node:assert/strict";
import { defaultClassParams, parametersRef, parseClassParams } from "../../lib/controller/class_params.ts";

Deno.test("class parameters: every key parsed", () => {
  const { params, problems } = parseClassParams({
    "replicas": "3",
    "service-type": "NodePort",
    "service-annotations": '{"service.beta.kubernetes.io/aws-load-balancer-internal":"true"}',
    "resources.requests.cpu": "250m",
    "resources.requests.memory": "128Mi",
    "resources.limits.memory": "1Gi",
    "node-selector": '{"kubernetes.io/os":"linux"}',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(params, {
    replicas: 3,
    serviceType: "NodePort",
    serviceAnnotations: { "service.beta.kubernetes.io/aws-load-balancer-internal": "true" },
    resources: { requests: { cpu: "250m", memory: "128Mi" }, limits: { memory: "1Gi" } },
    nodeSelector: { "kubernetes.io/os": "linux" },
  });
});

Deno.test("class parameters: a bad value keeps that key's default and is reported; the others apply", () => {
  const { params, problems } = parseClassParams({
    "replicas": "3\n",
    "service-type": "ExternalName",
    "resources.limits.cpu": "1; rm -rf /",
    "service-annotations": '{"bad key!":"x"}',
    "node-selector": '["not","an","object"]',
    "resources.requests.cpu": "500m",
    "unknown": "1",
  });
  assert.equal(params.replicas, null);
  assert.equal(params.serviceType, null);
  assert.deepEqual(params.resources, { requests: { cpu: "500m" }, limits: {} });
  assert.deepEqual(params.serviceAnnotations, {});
  assert.deepEqual(params.nodeSelector, {});
  assert.deepEqual(problems.map((p) => p.key).sort(), [
    "node-selector",
    "replicas",
    "resources.limits.cpu",
    "service-annotations",
    "service-type",
    "unknown",
  ]);
  assert.match(
    problems.find((p) => p.key === "replicas")!.message,
    /^parameter replicas: "3\\n" is not a whole number/,
  );
  assert.deepEqual(parseClassParams(undefined), { params: defaultClassParams, problems: [] });
});

Deno.test("class parameters: only a ConfigMap in the controller's namespace is accepted", () => {
  const cls = (parameters: unknown) => ({ metadata: { name: "edge" }, spec: { parameters } });
  assert.deepEqual(parametersRef(cls({ kind: "ConfigMap", scope: "Namespace", namespace: "ops", name: "p" }), "ops"), {
    ref: "ops/p",
    problem: null,
  });
  assert.deepEqual(parametersRef(cls(undefined), "ops"), { ref: null, problem: null });
  for (
    const bad of [
      { kind: "ConfigMap", scope: "Namespace", namespace: "tenant", name: "p" },
      { kind: "Secret", scope: "Namespace", namespace: "ops", name: "p" },
      { apiGroup: "example.com", kind: "ConfigMap", scope: "Namespace", namespace: "ops", name: "p" },
      { kind: "ConfigMap", scope: "Cluster", name: "p" },
    ]
  ) {
    const r = parametersRef(cls(bad), "ops");
    assert.equal(r.ref, null);
    assert.match(r.problem!, /must name a ConfigMap .* in the controller's namespace ops/);
  }
});
