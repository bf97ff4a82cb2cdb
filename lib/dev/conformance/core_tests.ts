/**
 * @module lib/dev/conformance/core_tests
 * The core tests of the profiles run (GATEWAY-HTTP, GATEWAY-TLS) in the pinned suite
 * (sigs.k8s.io/gateway-api/conformance v1.6.3): the tests of `tests.ConformanceTests` whose
 * features all lie in the profile's core set ({Gateway, HTTPRoute, ReferenceGrant};
 * {Gateway, ReferenceGrant, TLSRoute}), none provisional. The Gateway-only tests are in both. The suite runs them whatever the
 * GatewayClass claims; the summary counts each of them as passed or failed, also when the suite
 * stopped before running it. Re-count on a suite upgrade (core membership moves between patch
 * releases: GatewayInvalidParametersRef left core in v1.6.3).
 */

export const SUITE_VERSION = "v1.6.3";
/** The HTTP profile (PROFILES lists every profile run). */
export const PROFILE = "GATEWAY-HTTP";

export const CORE_TESTS: readonly string[] = [
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

/** The tests whose features are Gateway and ReferenceGrant only: in the core of every profile. */
const GATEWAY_ONLY = CORE_TESTS.filter((t) => t.startsWith("Gateway") && t !== "GatewayWithAttachedRoutes");

/** The core tests of GATEWAY-TLS: the Gateway-only ones and the TLSRoute ones (TLS listeners in Passthrough mode). */
export const TLS_CORE_TESTS: readonly string[] = [
  ...GATEWAY_ONLY,
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

/** Every profile run, with its core tests. */
export const PROFILES: readonly { name: string; core: readonly string[] }[] = [
  { name: PROFILE, core: CORE_TESTS },
  { name: "GATEWAY-TLS", core: TLS_CORE_TESTS },
];
