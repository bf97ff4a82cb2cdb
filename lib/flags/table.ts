/**
 * @module flags/table
 * The one declarative option table of `ingress-controller run` (and the small table of the hidden
 * `proxy` command). Every other part of lib/flags (parser, validation, help, `options`,
 * `migrate-flags`, README reference) is driven by these entries. Adding a release is adding a
 * column: a key in each entry's `default` map (presence = the key exists; `null` = unset).
 */

import { parseServerMetricFields } from "../exporter/fields.ts";
import { checkCloudProvider } from "../cloud/providers.ts";

/** The releases of the option set, newest first. */
export const RELEASES = ["A", "B", "C"] as const;
export type Release = typeof RELEASES[number];

/** The controller version each release carries (its image tags). */
export const VERSIONS = { A: "9.0.0", B: "7.0.0-rc.2", C: "6.0.0-rc.0" } as const satisfies Record<Release, string>;
export type Version = typeof VERSIONS[Release];

/**
 * How a value is parsed (Go pflag / klog / prometheus semantics), what it becomes in `Config`, and
 * the type name pflag prints in the help.
 */
export type Kind =
  | "string"
  | "bool"
  | "int"
  | "float"
  | "float32"
  | "duration"
  | "strings"
  | "ip"
  | "namedCertKey"
  | "logFormat"
  | "logLevel"
  | "severity"
  | "traceLocation"
  | "level"
  | "moduleSpec"
  | "crdKinds";

/** A default as written in the table: durations as Go strings ("10m0s"), lists as arrays, null = unset. */
export type DefaultValue = string | number | boolean | readonly string[] | null;

/** Per-release values; a missing key means "same as the entry's plain value". */
export type PerRelease<T> = Partial<Record<Release, T>>;

export interface OptionSpec {
  readonly kind: Kind;
  /** One-letter shorthand (`-h`, `-v`). */
  readonly short?: string;
  /** Presence and default per release: the option exists exactly in the releases listed here. */
  readonly default: PerRelease<DefaultValue>;
  /** Help text; `helpIn` overrides it for the releases whose wording differs. */
  readonly help: string;
  readonly helpIn?: PerRelease<string>;
  /** Type name printed by the help where it differs from the kind's own (C prints `stringSlice`). */
  readonly typeNameIn?: PerRelease<string>;
  /** Allowed values (exact strings; for lists, every element); per release where they differ. */
  readonly oneOf?: readonly string[];
  readonly oneOfIn?: PerRelease<readonly string[]>;
  /** Match values case-insensitively and store them as listed in `oneOf`. */
  readonly ignoreCase?: boolean;
  /** Numeric range (durations in milliseconds). */
  readonly min?: number;
  readonly max?: number;
  /** The value names files that must exist (lists / namedCertKey: every file). Empty string = none. */
  readonly file?: boolean;
  /**
   * Must be > 0, checked only when the named mode option is `batch` and/or the named switch is on
   * (the original checks unused batch / truncation options only when they are used).
   */
  readonly positiveWhen?: { readonly batchMode?: string; readonly on?: string };
  /** A syntax check of the value beyond its kind; throws UsageError naming `flag`. */
  readonly check?: (value: string, flag: string) => void;
  /** The same setting under another name in other releases (migrate-flags renames through it). */
  readonly sameAs?: string;
  /** What to do instead, for users moving to a release without this option. */
  readonly advice?: string;
  /** The default is tied to the release's own version (image tags): no migration note when it changes. */
  readonly followsRelease?: boolean;
  /**
   * Not in the launch-command specification: an option of this product's own design, present in
   * every release, and the document that records the decision.
   */
  readonly ours?: string;
}

const all = <const T extends DefaultValue>(v: T) => ({ A: v, B: v, C: v });
const ab = <const T extends DefaultValue>(v: T) => ({ A: v, B: v });
const onlyA = <const T extends DefaultValue>(v: T) => ({ A: v });

/** Cipher suite names accepted by release A (the spec's list). */
export const CIPHER_SUITES_A = [
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
  "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
  "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_RSA_WITH_AES_256_CBC_SHA",
  "TLS_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_RSA_WITH_RC4_128_SHA",
] as const;

/**
 * Cipher suite names accepted by release B: every cipher suite constant of Go's crypto/tls,
 * secure and insecure, TLS 1.3 suites and the legacy CHACHA20 aliases. (TLS_FALLBACK_SCSV is a
 * signalling value, not a suite, and is left out.) The secure port refuses at start-up the
 * ones the runtime cannot provide.
 */
export const CIPHER_SUITES_B = [
  "TLS_RSA_WITH_RC4_128_SHA",
  "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA",
  "TLS_RSA_WITH_AES_256_CBC_SHA",
  "TLS_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
  "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
  "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
  "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
  "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
  "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
  "TLS_AES_128_GCM_SHA256",
  "TLS_AES_256_GCM_SHA384",
  "TLS_CHACHA20_POLY1305_SHA256",
] as const;

const AUDIT_MODES = ["batch", "blocking"] as const;
const AUDIT_VERSIONS = ["audit.k8s.io/v1alpha1", "audit.k8s.io/v1beta1", "audit.k8s.io/v1"] as const;
const FEATURE_GATE_NOTE = " Requires the 'AdvancedAuditing' feature gate.";

/** The options of `ingress-controller run`, keyed by name without dashes. */
export const runTable = {
  // ---- 2.1 core and controller
  "help": {
    kind: "bool",
    short: "h",
    default: all(false),
    help: "help for run",
  },
  "kubeconfig": {
    kind: "string",
    default: all(null),
    file: true,
    help: "Path to kubeconfig file with authorization information (the master location is set by the master flag).",
  },
  "cloud-provider": {
    kind: "string",
    default: all(null),
    check: (value, flag) => checkCloudProvider(value, flag),
    help: "Name of cloud provider",
  },
  "cloud-config": {
    kind: "string",
    default: all(null),
    file: true,
    help: "The path to the cloud provider configuration file.  Empty string for no configuration file.",
  },
  "ingress-class": {
    kind: "string",
    default: all(null),
    help: "Ingress class handled by the controller. If empty, all ingresses are handled; otherwise only " +
      "ingresses annotated with this class.",
  },
  "operator-service": {
    kind: "string",
    default: all("ingress-controller-operator"),
    help: "Name of service used to expose the operator",
  },
  "restrict-to-operator-namespace": {
    kind: "bool",
    default: all(false),
    help: "If true, the operator handles only objects in its own namespace.",
  },
  "rbac": { kind: "bool", default: all(false), help: "Enable RBAC for operator & offshoot cluster objects" },
  "gateway-proxies-in-gateway-namespace": {
    kind: "bool",
    default: all(false),
    ours: "docs/gateway-api.md",
    help: "Run each Gateway's proxy (Deployment, Services, ConfigMaps, ServiceAccount) in the Gateway's own " +
      "namespace, named after the Gateway, instead of in the operator's namespace; needs writes in every namespace",
  },
  "resync-period": {
    kind: "duration",
    default: all("10m0s"),
    min: 0,
    help: "If non-zero, will re-list this often. Otherwise, re-list will be delayed aslong as possible " +
      "(until the upstream source closes the watch or times out.",
  },
  "qps": {
    kind: "float",
    default: all(1e6),
    min: 0,
    help: "The maximum QPS to the master from this client",
  },
  "burst": { kind: "int", default: all(1000000), min: 0, help: "The maximum burst for throttle" },
  "custom-templates": {
    kind: "string",
    default: all(null),
    help: "Glob pattern of custom proxy templates that override the built-in templates",
  },
  "image-registry": {
    kind: "string",
    default: all("docker.io/ingresscontroller"),
    help: "Image registry of the proxy and the metrics exporter images",
  },
  "proxy-image-tag": {
    kind: "string",
    default: { A: "1.9.2-9.0.0-alpine", B: "1.8.8-7.0.0-rc.2-alpine", C: "1.7.9-6.0.0-rc.0" },
    followsRelease: true,
    help: "Tag of the proxy image",
  },
  "exporter-image-tag": {
    kind: "string",
    default: { A: "9.0.0", B: "7.0.0-rc.2", C: "6.0.0-rc.0" },
    followsRelease: true,
    help: "Tag of the metrics exporter image",
  },
  "proxy.server-metric-fields": {
    kind: "string",
    default: all("2,3,4,5,6,7,8,9,13,14,15,16,17,18,21,24,33,35,38,39,40,41,42,43,44"),
    help: "Comma-separated list of exported proxy server metric field numbers.",
    // The exporter sidecar gets this value as it is: refuse at start what would crash-loop it.
    check: (value, flag) => void parseServerMetricFields(value, flag),
  },
  "proxy.timeout": {
    kind: "duration",
    default: all("5s"),
    min: 0,
    help: "Timeout for trying to get stats from the proxy.",
  },
  "validate-proxy-config": {
    kind: "bool",
    default: ab(true),
    help: "If true, validates the generated proxy configuration before sending it to the proxy pods.",
    advice: "release C does not validate the generated configuration; nothing to set",
  },
  "enable-status-subresource": {
    kind: "bool",
    default: onlyA(false),
    help: "If true, uses sub resource for the controller's custom resources.",
    advice: "this release always updates the whole custom resource",
  },
  "enable-validating-webhook": {
    kind: "bool",
    default: onlyA(false),
    help: "If true, enables validating webhooks for the controller's custom resources.",
    advice: "this release has no validating webhook; validate objects before applying them",
  },
  "bypass-validating-webhook-xray": {
    kind: "bool",
    default: onlyA(false),
    help: "If true, bypasses validating webhook xray checks",
    advice: "this release has no validating webhook",
  },
  "metrics-crd-apigroup": {
    kind: "string",
    default: all("monitoring.coreos.com"),
    help: "prometheus CRD API group name",
  },
  "metrics-crd-kinds": {
    kind: "crdKinds",
    default: all(null),
    help: " - EXPERIMENTAL (could be removed in future releases) - customize CRD kind names",
  },
  "use-apiserver-fqdn-for-managed-cluster": {
    kind: "bool",
    default: onlyA(true),
    help: "If true, uses the api server's FQDN for a managed cluster type, as a workaround for a known platform issue.",
    advice: "this release always uses the api server address",
  },

  // ---- 2.2 serving
  "bind-address": {
    kind: "ip",
    default: all("0.0.0.0"),
    help: "The IP address on which to listen for the --secure-port port. The associated interface(s) must be " +
      "reachable by the rest of the cluster, and by CLI/web clients. If blank, all interfaces will be used " +
      "(0.0.0.0 for all IPv4 interfaces and :: for all IPv6 interfaces).",
    helpIn: {
      C: "The IP address on which to listen for the --secure-port port. The associated interface(s) must be " +
        "reachable by the rest of the cluster, and by CLI/web clients. If blank, all interfaces will be used " +
        "(0.0.0.0).",
    },
  },
  "secure-port": {
    kind: "int",
    default: all(443),
    min: 0,
    max: 65535,
    help: "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
  },
  "ops-address": {
    kind: "string",
    default: { B: ":56790" },
    sameAs: "address",
    help: "Address to listen on for web interface and telemetry.",
    advice: "release A has no separate web interface and telemetry listener; remove the option",
  },
  "address": {
    kind: "string",
    default: { C: ":56790" },
    sameAs: "ops-address",
    help: "Address to listen on for web interface and telemetry.",
    advice: "release A has no separate web interface and telemetry listener; remove the option",
  },
  "profiling": {
    kind: "bool",
    default: all(true),
    help: "Enable profiling via web interface host:port/debug/pprof/",
  },
  "contention-profiling": {
    kind: "bool",
    default: all(false),
    help: "Enable lock contention profiling, if profiling is enabled",
  },
  "enable-swagger-ui": {
    kind: "bool",
    default: all(false),
    help: "Enables swagger ui on the apiserver at /swagger-ui",
  },
  "http2-max-streams-per-connection": {
    kind: "int",
    default: ab(1000),
    min: 0,
    help: "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. " +
      "Zero means to use the runtime's default.",
    advice: "release C always uses the runtime's default stream limit",
  },

  // ---- 2.3 TLS
  "cert-dir": {
    kind: "string",
    default: all("apiserver.local.config/certificates"),
    help: "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are " +
      "provided, this flag will be ignored.",
  },
  "tls-cert-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server " +
      "cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, a " +
      "self-signed certificate and key are generated for the public address and saved to the directory " +
      "specified by --cert-dir.",
  },
  "tls-private-key-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "File containing the default x509 private key matching --tls-cert-file.",
  },
  "tls-sni-cert-key": {
    kind: "namedCertKey",
    default: all([]),
    file: true,
    help: "A pair of x509 certificate and private key file paths, optionally suffixed with a list of domain " +
      "patterns which are fully qualified domain names, possibly with prefixed wildcard segments. If no domain " +
      "patterns are provided, the names of the certificate are extracted. Non-wildcard matches trump over " +
      "wildcard matches, explicit domain patterns trump over extracted names. For multiple key/certificate " +
      'pairs, use the --tls-sni-cert-key multiple times. Examples: "example.crt,example.key" or ' +
      '"foo.crt,foo.key:*.foo.com,foo.com".',
  },
  "tls-ca-file": {
    kind: "string",
    default: { C: null },
    file: true,
    help: "If set, this certificate authority will used for secure access from Admission Controllers. This must " +
      "be a valid PEM-encoded CA bundle. Altneratively, the certificate authority can be appended to the " +
      "certificate provided by --tls-cert-file.",
    advice: "append the CA certificate to the file given in --tls-cert-file",
  },
  "tls-min-version": {
    kind: "string",
    default: ab(null),
    oneOfIn: {
      A: ["VersionTLS10", "VersionTLS11", "VersionTLS12"],
      B: ["VersionSSL30", "VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"],
    },
    help: "Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12",
    helpIn: {
      B: "Minimum TLS version supported. Value must match version names from the runtime's TLS package " +
        "constants (VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13).",
    },
    advice: "release C accepts the runtime's default minimum TLS version only",
  },
  "tls-cipher-suites": {
    kind: "strings",
    default: ab([]),
    oneOfIn: { A: CIPHER_SUITES_A, B: CIPHER_SUITES_B },
    help: "Comma-separated list of cipher suites for the server. If omitted, the runtime's default cipher " +
      "suites will be used.  Possible values: " + CIPHER_SUITES_A.join(","),
    helpIn: {
      B: "Comma-separated list of cipher suites for the server. Values are from the runtime's TLS package " +
        "constants. If omitted, the runtime's default cipher suites will be used",
    },
    advice: "release C uses the runtime's default cipher suites only",
  },

  // ---- 2.4 authentication and authorization
  "client-ca-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "If set, any request presenting a client certificate signed by one of the authorities in the " +
      "client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.",
  },
  "requestheader-client-ca-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "Root certificate bundle to use to verify client certificates on incoming requests before trusting " +
      "usernames in headers specified by --requestheader-username-headers. WARNING: generally do not depend on " +
      "authorization being already done for incoming requests.",
    helpIn: {
      B: "Root certificate bundle to use to verify client certificates on incoming requests before trusting " +
        "usernames in headers specified by --requestheader-username-headers",
      C: "Root certificate bundle to use to verify client certificates on incoming requests before trusting " +
        "usernames in headers specified by --requestheader-username-headers",
    },
  },
  "requestheader-allowed-names": {
    kind: "strings",
    default: all([]),
    typeNameIn: { C: "stringSlice" },
    help: "List of client certificate common names to allow to provide usernames in headers specified by " +
      "--requestheader-username-headers. If empty, any client certificate validated by the authorities in " +
      "--requestheader-client-ca-file is allowed.",
  },
  "requestheader-username-headers": {
    kind: "strings",
    default: all(["x-remote-user"]),
    typeNameIn: { C: "stringSlice" },
    help: "List of request headers to inspect for usernames. X-Remote-User is common.",
  },
  "requestheader-group-headers": {
    kind: "strings",
    default: all(["x-remote-group"]),
    typeNameIn: { C: "stringSlice" },
    help: "List of request headers to inspect for groups. X-Remote-Group is suggested.",
  },
  "requestheader-extra-headers-prefix": {
    kind: "strings",
    default: all(["x-remote-extra-"]),
    typeNameIn: { C: "stringSlice" },
    help: "List of request header prefixes to inspect. X-Remote-Extra- is suggested.",
  },
  "authentication-kubeconfig": {
    kind: "string",
    default: all(null),
    file: true,
    help: "kubeconfig file pointing at the 'core' cluster server with enough rights to create " +
      "tokenaccessreviews.authentication.k8s.io.",
  },
  "authentication-skip-lookup": {
    kind: "bool",
    default: all(false),
    help: "If false, the authentication-kubeconfig will be used to lookup missing authentication configuration " +
      "from the cluster.",
  },
  "authentication-token-webhook-cache-ttl": {
    kind: "duration",
    default: all("10s"),
    min: 0,
    help: "The duration to cache responses from the webhook token authenticator.",
  },
  "authorization-kubeconfig": {
    kind: "string",
    default: all(null),
    file: true,
    help: "kubeconfig file pointing at the 'core' cluster server with enough rights to create " +
      " subjectaccessreviews.authorization.k8s.io.",
  },
  "authorization-webhook-cache-authorized-ttl": {
    kind: "duration",
    default: all("10s"),
    min: 0,
    help: "The duration to cache 'authorized' responses from the webhook authorizer.",
  },
  "authorization-webhook-cache-unauthorized-ttl": {
    kind: "duration",
    default: all("10s"),
    min: 0,
    help: "The duration to cache 'unauthorized' responses from the webhook authorizer.",
  },
  "authorization-always-allow-paths": {
    kind: "strings",
    default: onlyA([]),
    help: "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the " +
      "'core' cluster server.",
    advice: "every path is authorized in this release; grant the callers access through RBAC instead",
  },

  // ---- 2.5 audit: log backend
  "audit-log-path": {
    kind: "string",
    default: all(null),
    help: "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.",
  },
  "audit-log-format": {
    kind: "string",
    default: all("json"),
    oneOf: ["legacy", "json"],
    help: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates ' +
      "structured json format. Known formats are legacy,json.",
    helpIn: {
      B: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates ' +
        "structured json format. Requires the 'AdvancedAuditing' feature gate. Known formats are legacy,json.",
      C: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates ' +
        "structured json format. Requires the 'AdvancedAuditing' feature gate. Known formats are legacy,json.",
    },
  },
  "audit-log-maxage": {
    kind: "int",
    default: all(null),
    min: 0,
    help: "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.",
  },
  "audit-log-maxbackup": {
    kind: "int",
    default: all(null),
    min: 0,
    help: "The maximum number of old audit log files to retain.",
  },
  "audit-log-maxsize": {
    kind: "int",
    default: all(null),
    min: 0,
    help: "The maximum size in megabytes of the audit log file before it gets rotated.",
  },
  "audit-log-mode": {
    kind: "string",
    default: ab("blocking"),
    oneOf: AUDIT_MODES,
    help: "Strategy for sending audit events. Blocking indicates sending events should block server responses. " +
      "Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking.",
    advice: "release C writes the audit log in blocking mode only",
  },
  "audit-log-version": {
    kind: "string",
    default: onlyA("audit.k8s.io/v1beta1"),
    oneOf: AUDIT_VERSIONS,
    help: "API group and version used for serializing audit events written to log.",
    advice: "this release always writes audit.k8s.io/v1beta1 events",
  },
  "audit-policy-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "Path to the file that defines the audit policy configuration.",
    helpIn: {
      B: "Path to the file that defines the audit policy configuration." + FEATURE_GATE_NOTE +
        " With AdvancedAuditing, a profile is required to enable auditing.",
      C: "Path to the file that defines the audit policy configuration." + FEATURE_GATE_NOTE +
        " With AdvancedAuditing, a profile is required to enable auditing.",
    },
  },
  "audit-log-batch-buffer-size": {
    kind: "int",
    default: ab(10000),
    min: 0,
    positiveWhen: { batchMode: "audit-log-mode" },
    help: "The size of the buffer to store events before batching and writing. Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-batch-max-size": {
    kind: "int",
    default: { A: 1, B: 400 },
    min: 0,
    positiveWhen: { batchMode: "audit-log-mode" },
    help: "The maximum size of a batch. Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-batch-max-wait": {
    kind: "duration",
    default: { A: "0s", B: "30s" },
    min: 0,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. " +
      "Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-batch-throttle-burst": {
    kind: "int",
    default: { A: 0, B: 15 },
    min: 0,
    positiveWhen: { batchMode: "audit-log-mode", on: "audit-log-batch-throttle-enable" },
    help: "Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. " +
      "Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-batch-throttle-enable": {
    kind: "bool",
    default: ab(false),
    help: "Whether batching throttling is enabled. Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-batch-throttle-qps": {
    kind: "float32",
    default: { A: 0, B: 10 },
    min: 0,
    positiveWhen: { batchMode: "audit-log-mode", on: "audit-log-batch-throttle-enable" },
    help: "Maximum average number of batches per second. Only used in batch mode.",
    advice: "release C has no batch mode for the audit log",
  },
  "audit-log-truncate-enabled": {
    kind: "bool",
    default: onlyA(false),
    help: "Whether event and batch truncating is enabled.",
    advice: "this release does not truncate audit events",
  },
  "audit-log-truncate-max-batch-size": {
    kind: "int",
    default: onlyA(10485760),
    min: 0,
    positiveWhen: { on: "audit-log-truncate-enabled" },
    help: "Maximum size of the batch sent to the underlying backend. Actual serialized size can be several " +
      "hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.",
    advice: "this release does not truncate audit events",
  },
  "audit-log-truncate-max-event-size": {
    kind: "int",
    default: onlyA(102400),
    min: 0,
    positiveWhen: { on: "audit-log-truncate-enabled" },
    help: "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater " +
      "than this number, first request and response are removed, and if this doesn't reduce the size enough, " +
      "event is discarded.",
    advice: "this release does not truncate audit events",
  },

  // ---- 2.5 audit: webhook backend
  "audit-webhook-config-file": {
    kind: "string",
    default: all(null),
    file: true,
    help: "Path to a kubeconfig formatted file that defines the audit webhook configuration.",
    helpIn: {
      B: "Path to a kubeconfig formatted file that defines the audit webhook configuration." + FEATURE_GATE_NOTE,
      C: "Path to a kubeconfig formatted file that defines the audit webhook configuration." + FEATURE_GATE_NOTE,
    },
  },
  "audit-webhook-mode": {
    kind: "string",
    default: all("batch"),
    oneOf: AUDIT_MODES,
    help: "Strategy for sending audit events. Blocking indicates sending events should block server responses. " +
      "Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking.",
    helpIn: {
      C: "Strategy for sending audit events. Blocking indicates sending events should block server responses. " +
        "Batch causes the webhook to buffer and send events asynchronously. Known modes are batch,blocking.",
    },
  },
  "audit-webhook-initial-backoff": {
    kind: "duration",
    default: ab("10s"),
    min: 0,
    help: "The amount of time to wait before retrying the first failed request.",
    advice: "release C retries failed webhook requests with its built-in backoff",
  },
  "audit-webhook-version": {
    kind: "string",
    default: onlyA("audit.k8s.io/v1beta1"),
    oneOf: AUDIT_VERSIONS,
    help: "API group and version used for serializing audit events written to webhook.",
    advice: "this release always sends audit.k8s.io/v1beta1 events",
  },
  "audit-webhook-batch-buffer-size": {
    kind: "int",
    default: ab(10000),
    min: 0,
    positiveWhen: { batchMode: "audit-webhook-mode" },
    help: "The size of the buffer to store events before batching and writing. Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-batch-max-size": {
    kind: "int",
    default: ab(400),
    min: 0,
    positiveWhen: { batchMode: "audit-webhook-mode" },
    help: "The maximum size of a batch. Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-batch-max-wait": {
    kind: "duration",
    default: ab("30s"),
    min: 0,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. " +
      "Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-batch-throttle-burst": {
    kind: "int",
    default: ab(15),
    min: 0,
    positiveWhen: { batchMode: "audit-webhook-mode", on: "audit-webhook-batch-throttle-enable" },
    help: "Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. " +
      "Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-batch-throttle-enable": {
    kind: "bool",
    default: ab(true),
    help: "Whether batching throttling is enabled. Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-batch-throttle-qps": {
    kind: "float32",
    default: ab(10),
    min: 0,
    positiveWhen: { batchMode: "audit-webhook-mode", on: "audit-webhook-batch-throttle-enable" },
    help: "Maximum average number of batches per second. Only used in batch mode.",
    advice: "release C uses its built-in webhook batch settings",
  },
  "audit-webhook-truncate-enabled": {
    kind: "bool",
    default: onlyA(false),
    help: "Whether event and batch truncating is enabled.",
    advice: "this release does not truncate audit events",
  },
  "audit-webhook-truncate-max-batch-size": {
    kind: "int",
    default: onlyA(10485760),
    min: 0,
    positiveWhen: { on: "audit-webhook-truncate-enabled" },
    help: "Maximum size of the batch sent to the underlying backend. Actual serialized size can be several " +
      "hundreds of bytes greater. If a batch exceeds this limit, it is split into several batches of smaller size.",
    advice: "this release does not truncate audit events",
  },
  "audit-webhook-truncate-max-event-size": {
    kind: "int",
    default: onlyA(102400),
    min: 0,
    positiveWhen: { on: "audit-webhook-truncate-enabled" },
    help: "Maximum size of the audit event sent to the underlying backend. If the size of an event is greater " +
      "than this number, first request and response are removed, and if this doesn't reduce the size enough, " +
      "event is discarded.",
    advice: "this release does not truncate audit events",
  },

  // ---- 2.6 logging and analytics
  "log.format": {
    kind: "logFormat",
    default: all("logger:stderr"),
    help: 'Set the log target and format. Example: "logger:syslog?appname=bob&local=7" or "logger:stdout?json=true"',
  },
  "log.level": {
    kind: "logLevel",
    default: all("info"),
    oneOf: ["debug", "info", "warn", "error", "fatal"],
    ignoreCase: true,
    help: "Only log messages with the given severity or above. Valid levels: [debug, info, warn, error, fatal]",
  },
  "log_dir": {
    kind: "string",
    default: all(null),
    help: "If non-empty, write log files in this directory",
  },
  "logtostderr": {
    kind: "bool",
    default: { A: true, B: false, C: false },
    help: "log to standard error instead of files",
  },
  "alsologtostderr": {
    kind: "bool",
    default: all(false),
    help: "log to standard error as well as files",
  },
  "stderrthreshold": {
    kind: "severity",
    default: all(null),
    help: "logs at or above this threshold go to stderr",
  },
  "log_backtrace_at": {
    kind: "traceLocation",
    default: all(":0"),
    help: "when logging hits line file:N, emit a stack trace",
  },
  "log-flush-frequency": {
    kind: "duration",
    default: onlyA("5s"),
    min: 0,
    help: "Maximum number of seconds between log flushes",
    advice: "this release flushes logs every 5s",
  },
  "v": { kind: "level", short: "v", default: all(0), min: 0, help: "log level for V logs" },
  "vmodule": {
    kind: "moduleSpec",
    default: all(null),
    help: "comma-separated list of pattern=N settings for file-filtered logging",
  },
  "enable-analytics": {
    kind: "bool",
    default: ab(true),
    sameAs: "analytics",
    help:
      "Send analytical events to the external analytics service at $INGRESS_CONTROLLER_ANALYTICS_URL (nothing is sent while it is unset)",
  },
  "analytics": {
    kind: "bool",
    default: { C: true },
    sameAs: "enable-analytics",
    help:
      "Send analytical events to the external analytics service at $INGRESS_CONTROLLER_ANALYTICS_URL (nothing is sent while it is unset)",
  },
} as const satisfies Record<string, OptionSpec>;

export type RunTable = typeof runTable;
export type RunOptionName = keyof RunTable;

/** The flags of the hidden `proxy` command (contracts.md section 5); present in every release. */
export const proxyTable = {
  "help": { kind: "bool", short: "h", default: all(false), help: "help for proxy" },
  "kubeconfig": {
    kind: "string",
    default: all(""),
    file: true,
    help: "Path to kubeconfig file; empty means the in-cluster configuration",
  },
  "namespace": {
    kind: "string",
    default: all(""),
    help: "Namespace of the ConfigMap; empty means the pod's own namespace",
  },
  "configmap": {
    kind: "string",
    default: all(""),
    help: "Name of the ConfigMap holding the rendered proxy configuration",
  },
  "haproxy": { kind: "string", default: all("haproxy"), help: "The haproxy binary to run" },
  "work-dir": {
    kind: "string",
    default: all("/var/run/ingress-controller"),
    help: "Directory for the proxy configuration, certificates and sockets",
  },
  "bind-address": {
    kind: "ip",
    default: all("0.0.0.0"),
    help: "The IP address the proxy listens on",
  },
  "http-port": { kind: "int", default: all(80), min: 0, max: 65535, help: "The proxy's HTTP port" },
  "https-port": { kind: "int", default: all(443), min: 0, max: 65535, help: "The proxy's HTTPS port" },
  "stats-port": {
    kind: "int",
    default: all(56789),
    min: 0,
    max: 65535,
    help:
      "Port of HAProxy's stats page, which the exporter sidecar reads; on the loopback only (--bind-address when it is a loopback address, else 127.0.0.1)",
  },
  "health-port": {
    kind: "int",
    default: all(56791),
    min: 0,
    max: 65535,
    help:
      "Port on --bind-address of the proxy's probes (/readyz: HAProxy runs the configuration last accepted; /healthz, /livez); 0 turns them off",
  },
  "shutdown-drain": {
    kind: "duration",
    default: all("10s"),
    min: 0,
    help:
      "On SIGTERM: how long the proxy keeps serving with /readyz failing, so that endpoints and load balancers stop sending it traffic, before HAProxy soft-stops (a second SIGTERM or SIGINT ends it early)",
  },
  "shutdown-timeout": {
    kind: "duration",
    default: all("30s"),
    min: 0,
    help:
      "After the drain: how long HAProxy's soft stop may wait for requests in flight before HAProxy is stopped hard",
  },
} as const satisfies Record<string, OptionSpec>;

export type ProxyTable = typeof proxyTable;

/**
 * The flags of the hidden `exporter` command (the proxy pod's metrics sidecar, run by the
 * controller with the run options of the same names); present in every release.
 */
export const exporterTable = {
  "help": { kind: "bool", short: "h", default: all(false), help: "help for exporter" },
  "proxy.scrape-uri": {
    kind: "string",
    default: all("http://127.0.0.1:56789/;csv"),
    help: "URI of the proxy's CSV statistics: the stats page (http(s)://…/;csv) or unix:/path/to/stats.sock",
  },
  "proxy.server-metric-fields": runTable["proxy.server-metric-fields"],
  "proxy.timeout": runTable["proxy.timeout"],
  "listen-address": {
    kind: "string",
    default: all(":56790"),
    help: "Address (host:port) to listen on for telemetry",
  },
  "telemetry-path": { kind: "string", default: all("/metrics"), help: "Path under which to expose metrics" },
} as const satisfies Record<string, OptionSpec>;

export type ExporterTable = typeof exporterTable;

/** The flags of `nginx-check` (the ingress-nginx migration report, lib/nginx); present in every release. */
export const nginxCheckTable = {
  "help": { kind: "bool", short: "h", default: all(false), help: "help for nginx-check" },
  "filename": {
    kind: "string",
    short: "f",
    default: all(""),
    file: true,
    help:
      "YAML or JSON file of Ingresses (several documents, a List or an array; other kinds are skipped); empty: the cluster's",
  },
  "output": {
    kind: "string",
    short: "o",
    default: all("text"),
    oneOf: ["text", "json", "httproute"],
    help:
      "Output format: text (a table), json (an array of {namespace, ingress, annotation, verdict, note}) or httproute " +
      "(the Gateway API HTTPRoutes the Ingresses become, as YAML to apply, each annotation's verdict in comments)",
  },
  "gateway": {
    kind: "string",
    default: all(""),
    help: "With --output httproute: NAMESPACE/NAME of the Gateway the HTTPRoutes attach to",
  },
  "kubeconfig": {
    kind: "string",
    default: all(""),
    file: true,
    help: "Path to the kubeconfig file of the cluster to read without -f; empty: the in-cluster configuration",
  },
  "namespace": {
    kind: "string",
    short: "n",
    default: all(""),
    help: "Only the Ingresses of this namespace (cluster or file); empty: all",
  },
} as const satisfies Record<string, OptionSpec>;
export type AnyTable = Readonly<Record<string, OptionSpec>>;

/** The entries of a table that exist in a release, sorted by name. */
export function optionsOf(table: AnyTable, release: Release): [string, OptionSpec][] {
  return Object.entries(table).filter(([, spec]) => release in spec.default).sort(([a], [b]) => (a < b ? -1 : 1));
}

/** The releases an option exists in. */
export function releasesOf(spec: OptionSpec): Release[] {
  return RELEASES.filter((r) => r in spec.default);
}

/** Help text of an option in a release. */
export function helpOf(spec: OptionSpec, release: Release): string {
  return spec.helpIn?.[release] ?? spec.help;
}

/** Allowed values of an option in a release, if it is an enumeration. */
export function oneOfIn(spec: OptionSpec, release: Release): readonly string[] | undefined {
  return spec.oneOfIn?.[release] ?? spec.oneOf;
}
