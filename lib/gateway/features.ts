/**
 * @module gateway/features
 * The Gateway API features this controller supports, as its GatewayClasses' status lists them
 * (`status.supportedFeatures`, GEP-2162). The conformance suite tests exactly what this list
 * claims, so it names only features whose tests pass: the core of the HTTP profile.
 */
export const GATEWAY_FEATURES: readonly string[] = ["Gateway", "HTTPRoute", "ReferenceGrant"];
