/**
 * @module gateway/api
 * The Gateway API objects the controller reads (gateway.networking.k8s.io, v1.6 standard channel):
 * GatewayClass, Gateway, HTTPRoute, GRPCRoute and TLSRoute (v1) and ReferenceGrant (v1beta1), as plain JSON. Only the
 * fields the controller reads or writes are typed; everything comes from users, so every value is
 * checked before use (lib/gateway/validate.ts, lib/render/patterns.ts).
 */
import type { KubeObject } from "../cluster/resources.ts";

export const GROUP = "gateway.networking.k8s.io";

/** A status condition (metav1.Condition). */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface GatewayClass extends KubeObject {
  spec?: { controllerName?: string; parametersRef?: unknown; description?: string };
  status?: { conditions?: Condition[]; supportedFeatures?: { name: string }[] };
}

export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

export interface RouteGroupKind {
  group?: string;
  kind: string;
}

export interface AllowedRoutes {
  namespaces?: {
    from?: "All" | "Same" | "Selector";
    selector?: {
      matchLabels?: Record<string, string>;
      matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
    };
  };
  kinds?: RouteGroupKind[];
}

export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: {
    mode?: "Terminate" | "Passthrough";
    certificateRefs?: SecretObjectReference[];
    options?: Record<string, string>;
  };
  allowedRoutes?: AllowedRoutes;
}

export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: Condition[];
}

export interface GatewayAddress {
  type?: "IPAddress" | "Hostname" | string;
  /** Optional in spec.addresses (GatewayAddressEmpty): the implementation assigns one. */
  value?: string;
}

export interface Gateway extends KubeObject {
  spec: {
    gatewayClassName: string;
    listeners: Listener[];
    addresses?: GatewayAddress[];
    /** Labels and annotations for the objects made for the Gateway (its proxy); parametersRef: lib/controller/gateway_params.ts. */
    infrastructure?: { labels?: Record<string, string>; annotations?: Record<string, string>; parametersRef?: unknown };
    /** Client-certificate validation of the HTTPS listeners (lib/gateway/client_validation.ts). */
    tls?: { frontend?: FrontendTLSConfig };
  };
  status?: { addresses?: GatewayAddress[]; conditions?: Condition[]; listeners?: ListenerStatus[] };
}

/** `spec.tls.frontend` of a Gateway (FrontendTLSConfig): `perPort` overrides `default` on its port. */
export interface FrontendTLSConfig {
  default?: TLSConfig;
  perPort?: { port?: number; tls?: TLSConfig }[];
}

/** TLSConfig: the validation of the clients' certificates (FrontendTLSValidation). */
export interface TLSConfig {
  validation?: {
    caCertificateRefs?: { group?: string; kind?: string; name?: string; namespace?: string }[];
    /** AllowValidOnly (the default) or AllowInsecureFallback. */
    mode?: string;
  };
}

export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

export interface HTTPPathMatch {
  type?: "Exact" | "PathPrefix" | "RegularExpression";
  value?: string;
}

export interface HTTPHeaderMatch {
  type?: "Exact" | "RegularExpression";
  name: string;
  value: string;
}

export interface HTTPQueryParamMatch {
  type?: "Exact" | "RegularExpression";
  name: string;
  value: string;
}

export interface HTTPRouteMatch {
  path?: HTTPPathMatch;
  headers?: HTTPHeaderMatch[];
  queryParams?: HTTPQueryParamMatch[];
  method?: string;
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPHeaderFilter {
  set?: HTTPHeader[];
  add?: HTTPHeader[];
  remove?: string[];
}

export interface HTTPPathModifier {
  type: "ReplaceFullPath" | "ReplacePrefixMatch";
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

/** The CORS filter (HTTPCORSFilter): `*` in allowOrigins, allowMethods and allowHeaders is a wildcard. */
export interface HTTPCORSFilter {
  allowOrigins?: string[];
  allowCredentials?: boolean;
  allowMethods?: string[];
  allowHeaders?: string[];
  exposeHeaders?: string[];
  maxAge?: number;
}

export interface HTTPRouteFilter {
  type: string;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestRedirect?: {
    scheme?: string;
    hostname?: string;
    path?: HTTPPathModifier;
    port?: number;
    statusCode?: number;
  };
  urlRewrite?: { hostname?: string; path?: HTTPPathModifier };
  cors?: HTTPCORSFilter;
  requestMirror?: unknown;
  extensionRef?: unknown;
}

export interface HTTPBackendRef {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
  weight?: number;
  filters?: HTTPRouteFilter[];
}

export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  /** Gateway API durations (GEP-2257), e.g. `500ms`, `1h30m`; `0s` disables. */
  timeouts?: { request?: string; backendRequest?: string };
}

export interface RouteParentStatus {
  parentRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

export interface HTTPRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: HTTPRouteRule[] };
  status?: { parents?: RouteParentStatus[] };
}

/** GRPCMethodMatch: at least one of service and method; Exact (default) or RegularExpression. */
export interface GRPCMethodMatch {
  type?: "Exact" | "RegularExpression";
  service?: string;
  method?: string;
}

export interface GRPCRouteMatch {
  method?: GRPCMethodMatch;
  headers?: HTTPHeaderMatch[];
}

/** GRPCRouteFilter: the HTTPRoute filter shapes of the types a GRPCRoute allows. */
export type GRPCRouteFilter = HTTPRouteFilter;

export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  filters?: GRPCRouteFilter[];
  backendRefs?: HTTPBackendRef[];
}

export interface GRPCRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: GRPCRouteRule[] };
  status?: { parents?: RouteParentStatus[] };
}

/** A TLSRoute rule: where the connections of its hostnames go (the CRD allows exactly one rule). */
export interface TLSRouteRule {
  name?: string;
  backendRefs?: Omit<HTTPBackendRef, "filters">[];
}

/** TLSRoute (v1 in the v1.6 standard channel): TLS connections routed by their SNI, here only passed through. */
export interface TLSRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: TLSRouteRule[] };
  status?: { parents?: RouteParentStatus[] };
}

export interface ReferenceGrant extends KubeObject {
  spec: {
    from: { group: string; kind: string; namespace: string }[];
    to: { group: string; kind: string; name?: string }[];
  };
}
