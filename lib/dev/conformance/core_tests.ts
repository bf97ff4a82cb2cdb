/**
 * @module lib/dev/conformance/core_tests
 * The profiles the harness runs and their core tests in the pinned suite
 * (sigs.k8s.io/gateway-api/conformance v1.6.3): the tests of `tests.ConformanceTests` whose
 * features all lie in the profile's core set (GATEWAY-HTTP: {Gateway, HTTPRoute, ReferenceGrant};
 * GATEWAY-GRPC: {Gateway, GRPCRoute, ReferenceGrant}; GATEWAY-TLS: {Gateway, ReferenceGrant,
 * TLSRoute}), none provisional. The Gateway-only tests are in every profile. The suite runs them whatever the
 * GatewayClass claims; the summary counts each of them as passed or failed, also when the suite
 * stopped before running it. Re-count on a suite upgrade (core membership moves between patch
 * releases: GatewayInvalidParametersRef left core in v1.6.3).
 */

export const SUITE_VERSION = "v1.6.3";
/** The HTTP profile (PROFILES lists every profile run). */
export const PROFILE = "GATEWAY-HTTP";

/**
 * The core tests whose features are only Gateway and ReferenceGrant: core in every Gateway profile
 * (the suite runs each test once and counts it in every profile it belongs to).
 */
const GATEWAY_CORE_TESTS: readonly string[] = [
  "GatewayClassObservedGenerationBump",
  "GatewayInvalidRouteKind",
  "GatewayInvalidTLSConfiguration",
  "GatewayListenerUnsupportedProtocol",
  "GatewayModifyListeners",
  "GatewayObservedGenerationBump",
  "GatewaySecretInvalidReferenceGrant",
  "GatewaySecretMissingReferenceGrant",
  "GatewaySecretReferenceGrantAllInNamespace",
  "GatewaySecretReferenceGrantSpecific",
];

export const CORE_TESTS: readonly string[] = [
  ...GATEWAY_CORE_TESTS,
  "GatewayWithAttachedRoutes",
  "HTTPRouteCrossNamespace",
  "HTTPRouteExactPathMatching",
  "HTTPRouteHTTPSListener",
  "HTTPRouteHeaderMatching",
  "HTTPRouteHostnameIntersection",
  "HTTPRouteInvalidBackendRefUnknownKind",
  "HTTPRouteInvalidCrossNamespaceBackendRef",
  "HTTPRouteInvalidCrossNamespaceParentRef",
  "HTTPRouteInvalidNonExistentBackendRef",
  "HTTPRouteInvalidParentRefNotMatchingSectionName",
  "HTTPRouteInvalidReferenceGrant",
  "HTTPRouteListenerHostnameMatching",
  "HTTPRouteMatchingAcrossRoutes",
  "HTTPRouteMatching",
  "HTTPRouteMultipleGateways",
  "HTTPRouteNoBackendRefs",
  "HTTPRouteObservedGenerationBump",
  "HTTPRoutePartiallyInvalidViaInvalidReferenceGrant",
  "HTTPRoutePathMatchOrder",
  "HTTPRouteRedirectHostAndStatus",
  "HTTPRouteReferenceGrant",
  "HTTPRouteRequestHeaderModifier",
  "HTTPRouteServiceTypes",
  "HTTPRouteSimpleSameNamespace",
  "HTTPRouteWeight",
];

/** The core tests of GATEWAY-GRPC: the Gateway-only ones and the four GRPCRoute tests. */
export const GRPC_CORE_TESTS: readonly string[] = [
  ...GATEWAY_CORE_TESTS,
  "GRPCExactMethodMatching",
  "GRPCRouteHeaderMatching",
  "GRPCRouteListenerHostnameMatching",
  "GRPCRouteWeight",
];

/** The core tests of GATEWAY-TLS: the Gateway-only ones and the TLSRoute ones (TLS listeners in Passthrough mode). */
export const TLS_CORE_TESTS: readonly string[] = [
  ...GATEWAY_CORE_TESTS,
  "TLSRouteHostnameIntersection",
  "TLSRouteInvalidBackendRefNonexistent",
  "TLSRouteInvalidBackendRefUnknownKind",
  "TLSRouteInvalidNoMatchingListener",
  "TLSRouteInvalidNoMatchingListenerHostname",
  "TLSRouteInvalidReferenceGrant",
  "TLSRouteListenerPassthroughSupportedKinds",
  "TLSRouteListenerTerminateNotSupported",
  "TLSRouteSimpleSameNamespace",
];

/** The profiles `deno task conformance` runs (`-conformance-profiles`), each with its core tests. */
export const PROFILES: readonly { name: string; coreTests: readonly string[] }[] = [
  { name: PROFILE, coreTests: CORE_TESTS },
  { name: "GATEWAY-GRPC", coreTests: GRPC_CORE_TESTS },
  { name: "GATEWAY-TLS", coreTests: TLS_CORE_TESTS },
];
