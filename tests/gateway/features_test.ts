/** The features the GatewayClass status claims (lib/gateway/features.ts): the HTTP, gRPC and TLS cores and the extended ones, sorted, once each. */
import assert from "node:assert/strict";
import {
  EXTENDED_FEATURES,
  GATEWAY_NAMESPACE_FEATURES,
  gatewayFeatures,
  TLS_EXTENDED_FEATURES,
} from "../../lib/gateway/features.ts";

Deno.test("features: the HTTP, gRPC and TLS cores and each extended feature, sorted, once each", () => {
  for (const inGatewayNamespace of [false, true]) {
    const features = gatewayFeatures(inGatewayNamespace);
    for (const core of ["Gateway", "GRPCRoute", "HTTPRoute", "ReferenceGrant", "TLSRoute"]) {
      assert.ok(features.includes(core), core);
    }
    for (const f of [...EXTENDED_FEATURES, ...TLS_EXTENDED_FEATURES]) assert.ok(features.includes(f), f);
    assert.deepEqual([...features], [...new Set(features)].sort());
    for (const f of features) assert.match(f, /^[A-Z][A-Za-z0-9]+$/);
  }
  assert.equal(gatewayFeatures(false).length, 5 + EXTENDED_FEATURES.length + TLS_EXTENDED_FEATURES.length);
});

Deno.test("features: GatewayInfrastructure only with the proxies in their Gateways' namespaces", () => {
  assert.ok(!gatewayFeatures(false).includes("GatewayInfrastructure"));
  assert.ok(gatewayFeatures(true).includes("GatewayInfrastructure"));
  assert.deepEqual(
    gatewayFeatures(true).filter((f) => !gatewayFeatures(false).includes(f)),
    [...GATEWAY_NAMESPACE_FEATURES],
  );
});
