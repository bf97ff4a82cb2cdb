/**
 * @module gateway/features
 * The Gateway API features this controller supports, as its GatewayClasses' status lists them
 * (`status.supportedFeatures`, GEP-2162: sorted). The conformance suite tests exactly what this
 * list claims, so it names only features whose tests pass here (`deno task conformance`): the
 * core of the HTTP, gRPC and TLS profiles and the extended features below (`BackendTLSPolicy`
 * without `BackendTLSPolicySANValidation`, whose test checks URI and several names HAProxy 2.6 cannot), and `GatewayInfrastructure`
 * only where its test can pass: with the proxies in their Gateways' namespaces
 * (`--gateway-proxies-in-gateway-namespace`), where the test looks for them. Not claimed, and why:
 * README "Gateway API" and docs/gateway-api.md.
 */

/** The core features of the GATEWAY-HTTP and GATEWAY-GRPC profiles. */
const CORE = ["Gateway", "GRPCRoute", "HTTPRoute", "ReferenceGrant"] as const;

/** The core feature of the GATEWAY-TLS profile beyond those: TLSRoute with Passthrough listeners. */
const TLS_CORE = ["TLSRoute"] as const;

/** Extended features of the GATEWAY-HTTP profile whose conformance tests pass. */
export const EXTENDED_FEATURES = [
  "BackendTLSPolicy",
  "GatewayAddressEmpty",
  "GatewayFrontendClientCertificateValidation",
  "GatewayFrontendClientCertificateValidationInsecureFallback",
  "GatewayHTTPListenerIsolation",
  "GatewayHTTPSListenerDetectMisdirectedRequests",
  "GatewayPort8080",
  "HTTPRoute303RedirectStatusCode",
  "HTTPRoute307RedirectStatusCode",
  "HTTPRoute308RedirectStatusCode",
  "HTTPRouteBackendProtocolH2C",
  "HTTPRouteBackendProtocolWebSocket",
  "HTTPRouteBackendRequestHeaderModification",
  "HTTPRouteBackendTimeout",
  "HTTPRouteCORS",
  "HTTPRouteDestinationPortMatching",
  "HTTPRouteHostRewrite",
  "HTTPRouteMethodMatching",
  "HTTPRouteNamedRouteRule",
  "HTTPRouteParentRefPort",
  "HTTPRoutePathRedirect",
  "HTTPRoutePathRewrite",
  "HTTPRoutePortRedirect",
  "HTTPRouteQueryParamMatching",
  "HTTPRouteRequestTimeout",
  "HTTPRouteResponseHeaderModification",
  "HTTPRouteSchemeRedirect",
] as const;

/**
 * Extended features of the GATEWAY-TLS profile whose conformance tests pass: TLS listeners in
 * Terminate mode (decrypted with their certificates, routed by SNI in clear), and Passthrough and
 * Terminate listeners on one port.
 */
export const TLS_EXTENDED_FEATURES = ["TLSRouteModeMixed", "TLSRouteModeTerminate"] as const;

/**
 * Extended features claimed only with the proxies in their Gateways' namespaces: of the two tests
 * of GatewayInfrastructure (suite v1.6.3), GatewayInfrastructureMetadata lists the Gateway's
 * generated ServiceAccounts, Pods and Services in the Gateway's namespace (GatewayInvalidParametersRef
 * wants a bad parametersRef refused, which holds in both places).
 */
export const GATEWAY_NAMESPACE_FEATURES = ["GatewayInfrastructure"] as const;

/** Every feature claimed, sorted; `proxiesInGatewayNamespace`: --gateway-proxies-in-gateway-namespace. */
export function gatewayFeatures(proxiesInGatewayNamespace: boolean): readonly string[] {
  return [
    ...CORE,
    ...TLS_CORE,
    ...EXTENDED_FEATURES,
    ...TLS_EXTENDED_FEATURES,
    ...(proxiesInGatewayNamespace ? GATEWAY_NAMESPACE_FEATURES : []),
  ]
    .sort();
}
