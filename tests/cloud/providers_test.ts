import assert from "node:assert/strict";
import { UsageError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { checkCloudProvider, CLOUD_PROVIDERS, exposureOf } from "../../lib/cloud/providers.ts";

Deno.test("providers: cloud load balancers get a LoadBalancer Service, bare metal and minikube node ports", () => {
  for (const p of ["aws", "gce", "gke", "azure", "aks", "acs", "digitalocean", "linode", "openstack", "metallb"]) {
    assert.equal(exposureOf(p).serviceType, "LoadBalancer", p);
  }
  for (const p of ["baremetal", "minikube"]) {
    assert.equal(exposureOf(p).serviceType, "NodePort", p);
    assert.deepEqual(exposureOf(p).annotations, {}, p);
  }
  assert.equal(exposureOf(null).serviceType, "LoadBalancer", "unset keeps the LoadBalancer");
  assert.equal(exposureOf("").serviceType, "LoadBalancer");
});

Deno.test("providers: aws passes TCP through to HAProxy; the others need no annotation", () => {
  assert.deepEqual(exposureOf("aws").annotations, {
    "service.beta.kubernetes.io/aws-load-balancer-backend-protocol": "tcp",
  });
  for (const p of CLOUD_PROVIDERS.filter((p) => p !== "aws")) assert.deepEqual(exposureOf(p).annotations, {}, p);
});

Deno.test("providers: an unknown name is a usage error naming the option and the known names", () => {
  assert.throws(
    () => checkCloudProvider("amazon"),
    (err: unknown) =>
      err instanceof UsageError && /--cloud-provider/.test(err.message) && /"amazon"/.test(err.message) &&
      CLOUD_PROVIDERS.every((p) => err.message.includes(p)) && !err.message.includes("\n"),
  );
  assert.doesNotThrow(() => checkCloudProvider(""));
  assert.doesNotThrow(() => checkCloudProvider("gke"));
  // Names are exact, as Kubernetes takes them; and no Object.prototype key slips through.
  assert.throws(() => checkCloudProvider("AWS"), UsageError);
  assert.throws(() => checkCloudProvider("toString"), UsageError);
});

Deno.test("providers: the option table checks --cloud-provider in every release", () => {
  for (const release of ["A", "B", "C"] as const) {
    assert.throws(() => parseRunFlags(release, ["--cloud-provider=nope"]), UsageError, release);
    assert.equal(parseRunFlags(release, ["--cloud-provider=aks"]).get("cloud-provider"), "aks");
    assert.equal(parseRunFlags(release, ["--cloud-provider="]).get("cloud-provider"), "");
    assert.equal(parseRunFlags(release, []).get("cloud-provider"), null);
  }
});
