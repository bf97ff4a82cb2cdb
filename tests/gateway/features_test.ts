/** The features the GatewayClass status claims (lib/gateway/features.ts): the HTTP and TLS cores and the extended ones, sorted, once each. */
import assert from "node:assert/strict";
import { EXTENDED_FEATURES, GATEWAY_FEATURES } from "../../lib/gateway/features.ts";

Deno.test("supportedFeatures: the cores of GATEWAY-HTTP and GATEWAY-TLS and the extended features, sorted (GEP-2162), no name twice", () => {
  for (const core of ["Gateway", "HTTPRoute", "ReferenceGrant", "TLSRoute"]) {
    assert.ok(GATEWAY_FEATURES.includes(core), core);
  }
  for (const f of EXTENDED_FEATURES) assert.ok(GATEWAY_FEATURES.includes(f), f);
  assert.equal(GATEWAY_FEATURES.length, 4 + EXTENDED_FEATURES.length);
  assert.deepEqual([...GATEWAY_FEATURES], [...new Set(GATEWAY_FEATURES)].sort());
  for (const f of GATEWAY_FEATURES) assert.match(f, /^[A-Z][A-Za-z0-9]+$/);
});
