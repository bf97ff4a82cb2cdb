/**
 * @module serving/settings
 * Everything the secure port and the ops listener need, as plain data. Built from the parsed
 * command line by `settingsFromConfig` or written directly by tests.
 */
import type { Config } from "../flags/config.ts";
import type { DelegationSettings } from "../auth/settings.ts";
import { type ConnectionLimits, defaultConnectionLimits } from "./connection_guard.ts";

/** One `--tls-sni-cert-key` value. */
export interface NamedCertKey {
  readonly certFile: string;
  readonly keyFile: string;
  /** Explicit domain patterns; empty means "use the names in the certificate". */
  readonly names: readonly string[];
}

export type Release = "A" | "B" | "C";

export interface ServingSettings extends DelegationSettings {
  readonly release: Release;
  readonly version: string;
  readonly bindAddress: string;
  /** 0 disables HTTPS. */
  readonly securePort: number;
  /** B `--ops-address`, C `--address`; null in A or when empty. */
  readonly opsAddress: string | null;
  readonly profiling: boolean;
  readonly contentionProfiling: boolean;
  readonly enableSwaggerUi: boolean;
  /** 0 = the runtime's default. */
  readonly http2MaxStreamsPerConnection: number;

  readonly certDir: string;
  readonly tlsCertFile: string | null;
  readonly tlsPrivateKeyFile: string | null;
  readonly tlsSniCertKey: readonly NamedCertKey[];
  /** C only. */
  readonly tlsCaFile: string | null;
  readonly tlsMinVersion: string | null;
  readonly tlsCipherSuites: readonly string[];
  /** Timeouts and connection limit of both listeners: constants, no option sets them (tests shorten them). */
  readonly connections: ConnectionLimits;
}

/** The documented defaults of release A; tests spread over it. */
export const defaultSettings: ServingSettings = Object.freeze({
  release: "A",
  version: "9.0.0",
  bindAddress: "0.0.0.0",
  securePort: 443,
  opsAddress: null,
  profiling: true,
  contentionProfiling: false,
  enableSwaggerUi: false,
  http2MaxStreamsPerConnection: 1000,
  certDir: "apiserver.local.config/certificates",
  tlsCertFile: null,
  tlsPrivateKeyFile: null,
  tlsSniCertKey: [],
  tlsCaFile: null,
  tlsMinVersion: null,
  tlsCipherSuites: [],
  clientCaFile: null,
  requestheaderClientCaFile: null,
  requestheaderAllowedNames: [],
  requestheaderUsernameHeaders: ["x-remote-user"],
  requestheaderGroupHeaders: ["x-remote-group"],
  requestheaderExtraHeadersPrefix: ["x-remote-extra-"],
  authenticationKubeconfig: null,
  authenticationSkipLookup: false,
  authenticationTokenWebhookCacheTtl: 10_000,
  authorizationKubeconfig: null,
  authorizationWebhookCacheAuthorizedTtl: 10_000,
  authorizationWebhookCacheUnauthorizedTtl: 10_000,
  authorizationAlwaysAllowPaths: [],
  connections: defaultConnectionLimits,
} as ServingSettings);

/** The serving settings of a parsed command line (options a release lacks take A's neutral values). */
export function settingsFromConfig(config: Config): ServingSettings {
  const str = (v: string | null | undefined) => (v === undefined || v === null || v.trim() === "" ? null : v);
  const ops = config.release === "B"
    ? config.get("ops-address")
    : config.release === "C"
    ? config.get("address")
    : null;
  return Object.freeze({
    release: config.release,
    version: config.version,
    bindAddress: config.get("bind-address") ?? "0.0.0.0",
    securePort: config.get("secure-port"),
    opsAddress: str(ops),
    profiling: config.get("profiling"),
    contentionProfiling: config.get("contention-profiling"),
    enableSwaggerUi: config.get("enable-swagger-ui"),
    http2MaxStreamsPerConnection: config.get("http2-max-streams-per-connection") ?? 0,
    certDir: config.get("cert-dir"),
    tlsCertFile: str(config.get("tls-cert-file")),
    tlsPrivateKeyFile: str(config.get("tls-private-key-file")),
    tlsSniCertKey: config.get("tls-sni-cert-key"),
    tlsCaFile: str(config.get("tls-ca-file")),
    tlsMinVersion: str(config.get("tls-min-version")),
    tlsCipherSuites: config.get("tls-cipher-suites") ?? [],
    clientCaFile: str(config.get("client-ca-file")),
    requestheaderClientCaFile: str(config.get("requestheader-client-ca-file")),
    requestheaderAllowedNames: config.get("requestheader-allowed-names"),
    requestheaderUsernameHeaders: config.get("requestheader-username-headers"),
    requestheaderGroupHeaders: config.get("requestheader-group-headers"),
    requestheaderExtraHeadersPrefix: config.get("requestheader-extra-headers-prefix"),
    authenticationKubeconfig: str(config.get("authentication-kubeconfig")),
    authenticationSkipLookup: config.get("authentication-skip-lookup"),
    authenticationTokenWebhookCacheTtl: config.get("authentication-token-webhook-cache-ttl"),
    authorizationKubeconfig: str(config.get("authorization-kubeconfig")),
    authorizationWebhookCacheAuthorizedTtl: config.get("authorization-webhook-cache-authorized-ttl"),
    authorizationWebhookCacheUnauthorizedTtl: config.get("authorization-webhook-cache-unauthorized-ttl"),
    authorizationAlwaysAllowPaths: config.get("authorization-always-allow-paths") ?? [],
    connections: defaultConnectionLimits,
  });
}
