/**
 * @module gateway/model_types
 * What the Gateway API model of one Gateway produces (lib/gateway/model.ts) and its renderer
 * reads (lib/gateway/render.ts): the proxy's view (ports, their routes in the spec's precedence
 * order, rule backends with their filters and weighted targets, Service backends, certificates)
 * and the status the controller writes (the Gateway's conditions and listeners, each attached
 * route's parent statuses). Types only. Every string in the proxy's view has been validated by
 * the model with an anchored pattern (lib/gateway/validate.ts) before it lands here.
 */
import type { Backend, ClusterLookup, Problem, TlsCert } from "../render/model_types.ts";
import type {
  Condition,
  Gateway,
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  ListenerStatus,
  ReferenceGrant,
  RouteParentStatus,
  TLSRoute,
} from "./api.ts";
import type { BackendTls, BackendTlsPolicies, CaConfigMapLookup } from "./backend_tls.ts";

/** Our GatewayClasses' `spec.controllerName`. */
export const GATEWAY_CONTROLLER_NAME = "ingress-controller.io/gateway-controller";

/** What the model of one Gateway reads. */
export interface GatewayInputs {
  gateway: Gateway;
  /** The Gateway's class (ours: its controllerName is GATEWAY_CONTROLLER_NAME). */
  gatewayClass: GatewayClass;
  /** Every HTTPRoute with a parentRef naming this Gateway (any namespace, any sectionName/port). */
  routes: readonly HTTPRoute[];
  /** Every GRPCRoute with a parentRef naming this Gateway. */
  grpcRoutes?: readonly GRPCRoute[];
  /** Every TLSRoute with a parentRef naming this Gateway (absent: none; the TLSRoute CRD may not be installed). */
  tlsRoutes?: readonly TLSRoute[];
  /** Every ReferenceGrant of the cluster (the model picks those in the target namespaces). */
  grants: readonly ReferenceGrant[];
  /** The labels of a namespace (allowedRoutes `Selector`); undefined: not known (no such namespace). */
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
  /** Services, EndpointSlices and Secrets (their summaries: lib/render/tls_secret.ts). */
  lookup: ClusterLookup;
  /** Endpoints on loopback or link-local addresses are refused unless allowed (lib/render/patterns.ts). */
  allowLoopbackEndpoints?: boolean;
  /**
   * What is wrong with the parameters `spec.infrastructure.parametersRef` names (the Gateway is
   * refused, InvalidParameters); null: they were read and apply; undefined: not read at all (a
   * parametersRef then refuses the Gateway too).
   */
  parametersProblem?: string | null;
  /** The cluster's BackendTLSPolicies, judged (lib/gateway/backend_tls.ts); absent: none. */
  backendTls?: BackendTlsPolicies;
  /** The CA ConfigMaps `spec.tls.frontend` may name (lib/gateway/client_validation.ts); absent: none is known. */
  caConfigMaps?: CaConfigMapLookup;
  /** Whether HTTPS ports offer HTTP/2 through ALPN (the class's `http2`, default true): GRPCRoutes need it. */
  http2?: boolean;
}

export type PathType = "Exact" | "PathPrefix" | "RegularExpression";
export type ValueMatch = "Exact" | "RegularExpression";

/** One match of one rule of one route, on one port, for one effective hostname. */
export interface RouteEntry {
  /**
   * The effective hostname (the route's hostname ∩ the listener's): `a.example.com`, `*.example.com`
   * (matches one or more labels in front of `.example.com`), or "" (any host).
   */
  hostname: string;
  /**
   * The hostname of the listener the entry comes from ("" none). A request is served by the
   * listener with the most specific hostname matching its Host on that port (listener isolation):
   * an entry is for the requests whose Host that listener wins, and `routes` is ordered by it first.
   */
  listenerHostname?: string;
  /** `value` canonical: starts with `/`; PathPrefix without a trailing `/` except the root `/`. */
  path: { type: PathType; value: string };
  /** Header names lower-cased; at most one entry per name (the first one in the route wins). */
  headers: { name: string; type: ValueMatch; value: string }[];
  /** Query parameter names as written (case-sensitive); at most one entry per name. */
  queryParams: { name: string; type: ValueMatch; value: string }[];
  /** Upper-case method, or null: any. */
  method: string | null;
  /** The rule backend this entry routes to (RuleBackend.name). */
  rule: string;
  /** `namespace/name` of the HTTPRoute (`GRPCRoute:namespace/name` of a GRPCRoute; for logs and tests). */
  route: string;
}

export interface HeaderEdits {
  /** Header names as written (HAProxy compares names case-insensitively). */
  set: { name: string; value: string }[];
  add: { name: string; value: string }[];
  remove: string[];
}

export interface PathModifier {
  type: "ReplaceFullPath" | "ReplacePrefixMatch";
  value: string;
}

/** One weighted target of a rule. */
export interface Target {
  backend: string;
  weight: number;
  requestHeaders?: HeaderEdits | null;
  responseHeaders?: HeaderEdits | null;
}

/**
 * The CORS filter as the proxy applies it. Origins: `*` (any), or `scheme://host[:port]` where
 * the host may start with `*.` (one or more labels). `"*"` in methods or headers: the preflight's
 * own request is allowed (echoed back).
 */
export interface CorsPolicy {
  allowOrigins: string[];
  allowCredentials: boolean;
  allowMethods: string[];
  allowHeaders: string[];
  exposeHeaders: string[];
  maxAge: number;
}

/**
 * What one rule does with a request it matched (several entries may point to it: one per match
 * and hostname). Filters apply in this order: request headers, then redirect (answers at once) or
 * rewrite, then the choice of a target; response headers on the way back.
 */
export interface RuleBackend {
  /** `gw_<hash>`: a proxy name (lib/render/patterns.ts isProxyName), unique in the model. */
  name: string;
  requestHeaders: HeaderEdits | null;
  responseHeaders: HeaderEdits | null;
  /** RequestRedirect: null fields keep the request's own; `statusCode` 301 or 302 (core), 303/307/308. */
  redirect: {
    scheme: "http" | "https" | null;
    hostname: string | null;
    port: number | null;
    path: PathModifier | null;
    statusCode: number;
  } | null;
  /** URLRewrite. */
  rewrite: { hostname: string | null; path: PathModifier | null } | null;
  /** The CORS filter: preflights from an allowed origin answered by the proxy, the others' answers get the headers. */
  cors: CorsPolicy | null;
  /**
   * `timeouts` (request, backendRequest): how long the proxy waits for the backend's answer and
   * for each later piece of it, in ms (the smaller of the two); 0: no limit of the route's own
   * (the proxy's longest); null: the proxy's default.
   */
  timeoutMs: number | null;
  // ReplacePrefixMatch (redirect or rewrite) replaces the prefix each entry matched: its own path.
  /**
   * Valid backendRefs with weight > 0: Backend.name of a Service backend, its weight, and the
   * backendRef's own header filters, applied after the rule's only when the request goes there.
   */
  targets: Target[];
  /**
   * The summed weight of invalid backendRefs (not found, not permitted, unknown kind): that share
   * of requests is answered 500. No targets and no redirect: every request is answered 500.
   */
  invalidWeight: number;
  /**
   * A GRPCRoute's rule: what it cannot serve is answered as gRPC asks (503 with grpc-status 14,
   * UNAVAILABLE) instead of 500.
   */
  grpc?: true;
}

/**
 * One SNI name of a TLS port: the connections whose ClientHello names it go to `rule`'s targets,
 * undecrypted from a Passthrough listener, decrypted with the listener's certificate from a
 * Terminate listener (`terminate`). `hostname`: exact, `*.suffix` (one or more labels in front),
 * or "" (any name, and connections without SNI).
 */
export interface SniEntry {
  hostname: string;
  /** TlsRule.name; null: a listener's hostname with no route of its own there (its connections are closed). */
  rule: string | null;
  /** `namespace/name` of the TLSRoute ("" for a listener's stop; for logs and tests). */
  route: string;
  /** From a listener in Terminate mode: decrypted by the proxy, then routed. */
  terminate?: true;
}

/**
 * The rule of a TLSRoute as the proxy applies it: its valid backendRefs' `mode tcp` backends
 * (`be_<ns>_<svc>_<port>_tcp`) by weight; the share of invalid ones (`invalidWeight`) is refused
 * (the connection is closed), as is every connection when no target has weight.
 */
export interface TlsRule {
  /** `gw_<hash>` (lib/gateway/rules.ts ruleBackendName of `TLSRoute <namespace>/<name>` and 0). */
  name: string;
  targets: { backend: string; weight: number }[];
  invalidWeight: number;
}

/** One port of the Gateway's proxy and what its programmed listeners route. */
export interface ProxyPort {
  /** The listener port (what the Gateway's Service exposes). */
  port: number;
  /** TLS: TLSRoutes by SNI (`sni`), no HTTP routing. */
  protocol: "HTTP" | "HTTPS" | "TLS";
  /** In the spec's precedence order (GEP-1722 / HTTPRouteRule docs): the first entry that matches wins. */
  routes: RouteEntry[];
  /**
   * The hostnames of its programmed listeners that have one, most specific first. On HTTPS, a
   * request whose Host selects another listener than the TLS SNI did is answered 421.
   */
  listenerHostnames?: string[];
  /**
   * HTTPS and TLS Terminate: the certificates of its listeners, most specific SNI first; `hosts` empty: the
   * certificate of a listener without hostname (served to any SNI no other line names).
   */
  certs: TlsCert[];
  /** TLS: the SNI names routed, most specific first; each name once (the oldest route's wins). */
  sni?: SniEntry[];
  /**
   * TLS: the modes of its programmed listeners. Terminate alone: the port decrypts every
   * connection; both (TLSRouteModeMixed): it routes by the ClientHello's SNI first and hands the
   * Terminate listeners' names to a decrypting frontend.
   */
  tlsModes?: ("Passthrough" | "Terminate")[];
  /** HTTPS: the clients' certificates are checked against this CA (spec.tls.frontend). */
  clientValidation?: ClientValidation;
}

/**
 * Client-certificate validation of an HTTPS port: `AllowValidOnly`, a connection without a
 * certificate the CA signed is refused in the handshake; `AllowInsecureFallback`, any connection
 * is let through and the backends learn whether a certificate was presented and valid.
 */
export interface ClientValidation {
  mode: "AllowValidOnly" | "AllowInsecureFallback";
  /** The ConfigMap whose `ca.crt` the proxy writes as `file` (`<ns>_<name>_configmap_ca.pem`). */
  ca: { namespace: string; name: string; file: string };
}

/** The proxy's view of one Gateway. */
export interface GatewayProxyModel {
  /** Sorted by port. Only ports with at least one programmed listener. */
  ports: ProxyPort[];
  /** Sorted by name. */
  rules: RuleBackend[];
  /** The TLSRoutes' rules the TLS ports' SNI entries use, sorted by name. */
  tlsRules?: TlsRule[];
  /**
   * Service backends (`be_<ns>_<svc>_<port>`, servers in slots: lib/render/slots.ts), sorted by
   * name; `proto: "h2"`: the servers speak HTTP/2 without TLS (appProtocol `kubernetes.io/h2c`);
   * `mode: "tcp"` (`…_tcp`): a TLSRoute's, which gets the connections as they come;
   * `tls`: a BackendTLSPolicy's check (null: its policy cannot be used, the servers are never reached).
   */
  backends: (Backend & { proto?: "h2"; tls?: BackendTls | null })[];
}

/** What the controller writes into the Gateway's status (the addresses come from its proxy's Service). */
export interface GatewayStatusOut {
  conditions: Condition[];
  listeners: ListenerStatus[];
}

export interface GatewayBuild {
  proxy: GatewayProxyModel;
  gateway: GatewayStatusOut;
  /** Per HTTPRoute (`namespace/name`): its parent statuses for the parentRefs that name this Gateway. */
  routes: Map<string, RouteParentStatus[]>;
  /** Per GRPCRoute (`namespace/name`): the same. */
  grpcRoutes: Map<string, RouteParentStatus[]>;
  /** Problems to report as Warning Events (kind Gateway/HTTPRoute/Service/Secret …). */
  /** Per TLSRoute (`namespace/name`): the same. */
  tlsRoutes: Map<string, RouteParentStatus[]>;
  /** Problems to report as Warning Events (kind Gateway/HTTPRoute/TLSRoute/Service/Secret …). */
  problems: (Omit<Problem, "kind"> & { kind: string })[];
  /** Objects the build read (`namespace/name`), sorted: a change of one of them builds the Gateway again. */
  refs: { services: string[]; secrets: string[]; configMaps?: string[] };
  /** The BackendTLSPolicies (`namespace/name`) on the Service ports this Gateway's routes use: it is their ancestor. */
  tlsPolicies?: string[];
}

export type { Backend, Condition, GatewayClass, ReferenceGrant, TlsCert };
