/**
 * @module gateway/features
 * The Gateway API features this controller supports, as its GatewayClasses' status lists them
 * (`status.supportedFeatures`, GEP-2162: sorted). The conformance suite tests exactly what this
 * list claims, so it names only features whose tests pass here (`deno task conformance`): the
 * core of the HTTP and TLS profiles and the extended features below. Not claimed, and why: README
 * "Gateway API" and docs/gateway-api.md.
 */

/** The core features of the GATEWAY-HTTP profile. */
const CORE = ["Gateway", "HTTPRoute", "ReferenceGrant"] as const;

/** The core feature of the GATEWAY-TLS profile beyond those: TLSRoute with Passthrough listeners. */
const TLS_CORE = ["TLSRoute"] as const;

/** Extended features of the GATEWAY-HTTP profile whose conformance tests pass. */
export const EXTENDED_FEATURES = [
  "GatewayAddressEmpty",
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

/** Every feature claimed, sorted. */
export const GATEWAY_FEATURES: readonly string[] = [...CORE, ...TLS_CORE, ...EXTENDED_FEATURES].sort();
