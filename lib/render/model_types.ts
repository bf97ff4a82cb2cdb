/**
 * @module render/model_types
 * The types of the model of one proxy: what a build produces (Model, its routes, backends and
 * certificates, the problems found), what it reads the cluster through (ClusterLookup), and the
 * fragments it is made of (one per Ingress: render/ingress_reading.ts reads them, render/model.ts
 * replays them, render/model_delta.ts swaps them). Types only: every module of the model imports
 * them from here, so none needs the builder's.
 */
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import type { CanaryRule, CanarySettings } from "./canary.ts";
import type { Stop } from "./host_ownership.ts";
import type { BackendSettings, Balance } from "./settings.ts";
import type { SecretLike } from "./tls_secret.ts";

export type PathType = "Exact" | "Prefix" | "ImplementationSpecific";
export type Match = "exact" | "prefix" | "regex";

/** One routing rule. `host` "" means any host; `match` is how `path` is compared. */
export interface Route {
  host: string;
  path: string;
  pathType: PathType;
  /** `regex`: `path` is a path regex (ImplementationSpecific with `path-regex`). */
  match: Match;
  backend: string;
  /** `namespace/name` of the ingress the route comes from. */
  ingress: string;
}

/** An endpoint: `address` as written in the configuration (IPv4, or bracketed IPv6). */
export interface Server {
  address: string;
  port: number;
}

export interface Backend {
  /**
   * `be_<namespace>_<service>_<port>`; parts are validated, `_` cannot occur in them. A route whose
   * annotations set something points to a variant `be_<namespace>_<service>_<port>_<hash>` holding
   * those settings (docs/annotations-rendering.md).
   */
  name: string;
  namespace: string;
  service: string;
  /** The Service port as the ingress refers to it: a number or a port name. */
  port: number | string;
  servers: Server[];
  /** max(4, next power of two ≥ servers.length). */
  slots: number;
  balance: Balance;
  /** `timeout server` for this backend, e.g. `30s`; null: the defaults section applies. */
  timeoutServer: string | null;
  /** Everything the annotations set (lib/render/settings.ts); absent: none. */
  settings?: BackendSettings;
  /** `default-backend`: the backend that answers while this one has no usable server. */
  fallback?: string;
  /** `tcp`: an `ssl-passthrough` backend, `be_<ns>_<svc>_<port>_tcp`, which gets TLS connections as they come. */
  mode?: "tcp";
}

/** One TLS certificate: a kubernetes.io/tls Secret written by the proxy as `file` in its cert dir. */
export interface TlsCert {
  file: string;
  namespace: string;
  name: string;
  /** SNI names served with this certificate, sorted (never empty: a certificate is never a default). */
  hosts: string[];
  /**
   * Hosts under one of `hosts`' wildcards that another namespace owns, sorted: negative SNI
   * filters (`!host`), so the wildcard's certificate is not served for them.
   */
  excluded?: string[];
}

/** A host's client certificate check (`client-cert-*`), rendered on its crt-list line. */
export interface ClientCertCheck {
  namespace: string;
  name: string;
  verify: "required" | "optional";
}

export interface Model {
  /** `namespace/name` of the ingresses merged into this model, oldest first. */
  ingresses: string[];
  /**
   * Ingresses that name hosts and own none of them (render/host_ownership.ts), oldest first: they
   * are not in `ingresses`, and their status lists no address.
   */
  unserved?: string[];
  /** Routes in match order: exact hosts, wildcard hosts, any host; longer paths first; Exact before prefix. */
  routes: Route[];
  /** Sorted by name. */
  backends: Backend[];
  /** Backend name of the ingress default backend; null: the built-in 404. */
  defaultBackend: string | null;
  /** Sorted by file. */
  tls: TlsCert[];
  /** Hosts whose plain HTTP requests are redirected to HTTPS, sorted. */
  redirectHosts: string[];
  /**
   * The redirect's status code per host when not 308 (`ssl-redirect-code`), followed by `s` when it
   * drops a trailing slash (`ssl-redirect-trailing-slash: drop`).
   */
  redirectCodes?: Record<string, string>;
  /** Canary rules (lib/render/canary.ts), sorted by main backend. */
  canaries?: CanaryRule[];
  /** TLS hosts that ask for client certificates: the CA Secret (its `_ca.pem` file) and the check. */
  clientCerts?: Record<string, ClientCertCheck>;
  /**
   * `ssl-passthrough` hosts and their `mode tcp` backend, sorted by host (docs/ssl-passthrough.md);
   * PASS_TERMINATE for a host under a passthrough wildcard that another namespace serves itself.
   */
  passthrough?: { host: string; backend: string }[];
  /**
   * Owned hosts whose unmatched requests must not fall through to another namespace's wildcard or
   * host-less rules, in the order of their map keys (render/host_ownership.ts `stopKey`,
   * `owned-hosts.map`).
   */
  stops?: { host: string; stop: Stop }[];
  /** Objects the model depends on (`namespace/name`), sorted: re-render when one of them changes. */
  refs: { services: string[]; secrets: string[] };
}

export type ProblemKind = "Ingress" | "Service" | "EndpointSlice" | "Secret";

/** Something wrong with one object; the controller emits it as a Warning Event on `object`. */
export interface Problem {
  object: string;
  kind: ProblemKind;
  reason: string;
  message: string;
}

/** Access to the cluster state (the controller's caches; tests use `lookupFromLists`). */
export interface ClusterLookup {
  service(namespace: string, name: string): V1Service | undefined;
  /** The EndpointSlices labelled `kubernetes.io/service-name=<service>` in `namespace`. */
  endpointSlices(namespace: string, service: string): readonly V1EndpointSlice[];
  /** A full Secret or the summary the controller caches (lib/render/tls_secret.ts): only its verdict is read. */
  secret(namespace: string, name: string): SecretLike | undefined;
  /**
   * A number that changes whenever any object this lookup can hand out changes (the controller's
   * caches count their events). With a ModelMemo, kept fragments are then taken without looking
   * up what they read again while it stays the same.
   */
  generation?(): number;
}

export interface BuildResult {
  model: Model;
  problems: Problem[];
  servable: boolean;
  /** The decided owners (claim → namespace) under a Strict policy; null under InterNamespaceAllowed. */
  owners: ReadonlyMap<string, string> | null;
}

/** What resolving one backend reference produced; the model takes it only if the route is used. */
export interface Resolved {
  name: string | null;
  /** In the order found: problems of the route and of the Service's EndpointSlices. */
  problems: Problem[];
  backends: Backend[];
  services: string[];
  secrets: string[];
}

/** One step of an Ingress, replayed in order by the model. */
export type Step =
  | { step: "problem"; problem: Problem }
  /** A TLS entry with a usable Secret and its valid hosts. */
  | { step: "tls"; t: number; hosts: string[]; cert: Omit<TlsCert, "hosts"> }
  /** After the TLS entries of an Ingress asking for client certificates. */
  | { step: "clientCertWithoutTls" }
  | { step: "defaultBackend"; resolved: Resolved }
  | { step: "www"; host: string }
  | { step: "passthrough"; host: string }
  | { step: "forceRedirect"; host: string }
  | {
    step: "route";
    key: string;
    host: string;
    path: string;
    pathType: PathType;
    match: Match;
    where: string;
    resolved: Resolved;
    /** The route the model made of this step (kept with the fragment). */
    route?: Route;
  }
  | { step: "canary"; key: string; where: string; resolved: Resolved };

/** One Ingress as read (see the module header). */
export interface IngressFragment {
  id: string;
  ns: string;
  /** False: the Ingress is ignored (its one problem says why). */
  accepted: boolean;
  sslRedirect: boolean;
  redirectCode: string;
  canary: CanarySettings | null;
  clientCert: ClientCertCheck | null;
  /** Secrets read outside backends (TLS, client certificate CA): the model re-renders when they change. */
  secrets: string[];
  /**
   * The hosts the Ingress names (rule and TLS hosts, wildcards as written) and CATCH_ALL for
   * host-less rules or a default backend, once each: its claims on hosts (render/host_ownership.ts).
   * A canary claims nothing: it joins routes of its namespace.
   */
  claims: string[];
  steps: Step[];
  /**
   * `path-regex: all` (ingress-nginx's use-regex): every path of the hosts it routes is a regex,
   * other Ingresses' too (render/model.ts `regexHosts`).
   */
  regexAll?: true;
}
