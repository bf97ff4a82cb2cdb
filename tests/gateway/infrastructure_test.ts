/**
 * Gateway `spec.infrastructure` (GatewayInfrastructure docs, GEP-1762): labels and annotations for
 * the objects made for the Gateway, checked as Kubernetes checks them, the controller's own keys
 * refused, and the `gateway.networking.k8s.io/gateway-name` label.
 */
import assert from "node:assert/strict";
import { GATEWAY_NAME_LABEL, infrastructureMetadata, isQualifiedName } from "../../lib/gateway/infrastructure.ts";
import { gateway, http } from "./fixtures.ts";

Deno.test("infrastructure: labels and annotations as written, and the Gateway's name label", () => {
  const gw = gateway([http("a")]);
  gw.spec.infrastructure = {
    labels: { key2: "value2", "team.example/owner": "" },
    annotations: { key1: "any text: 1" },
  };
  const m = infrastructureMetadata(gw);
  assert.deepEqual(m.labels, { key2: "value2", "team.example/owner": "", [GATEWAY_NAME_LABEL]: gw.metadata!.name });
  assert.deepEqual(m.annotations, { key1: "any text: 1" });
  assert.deepEqual(m.problems, []);
  assert.deepEqual(infrastructureMetadata(gateway([http("a")])).annotations, {});
});

Deno.test("infrastructure: bad keys and values and the controller's own keys are left out, each named", () => {
  const gw = gateway([http("a")]);
  gw.spec.infrastructure = {
    labels: {
      "app.kubernetes.io/instance": "other-proxy",
      "ingress-controller.io/controller": "x",
      [GATEWAY_NAME_LABEL]: "someone-else",
      "bad key": "v",
      ok: "a value with spaces",
      long: "x".repeat(64),
      fine: "yes",
    },
    annotations: { "x.ingress-controller.io/y": "1", "-bad": "1", big: "x".repeat(4097) },
  };
  const m = infrastructureMetadata(gw);
  assert.deepEqual(m.labels, { fine: "yes", [GATEWAY_NAME_LABEL]: gw.metadata!.name });
  assert.deepEqual(m.annotations, {});
  assert.equal(m.problems.length, 9);
  assert.match(
    m.problems.join("\n"),
    /spec\.infrastructure\.labels\["app\.kubernetes\.io\/instance"\]: the controller sets/,
  );
  assert.match(m.problems.join("\n"), /labels\["bad key"\]: not a qualified name/);
  assert.match(m.problems.join("\n"), /labels\["ok"\]: "a value with spaces" is not a label value/);
  assert.match(m.problems.join("\n"), /annotations\["big"\]: the value is longer than 4096/);
});

Deno.test("qualified names: [DNS subdomain/]name of 63 characters, alphanumeric at both ends", () => {
  for (const ok of ["a", "a.b-c_d", "example.com/a", "x".repeat(63)]) assert.ok(isQualifiedName(ok), ok);
  for (const bad of ["", "-a", "a-", "a/b/c", "Ex ample/a", "x".repeat(64), "/a", "a/", "a'b"]) {
    assert.ok(!isQualifiedName(bad), bad);
  }
});
