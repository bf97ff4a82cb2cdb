/**
 * @module serving/settings
 * Everything the secure port and the ops listener need, as plain data. Built from the parsed
 * command line by `settingsFromConfig` or written directly by tests.
 */

/** One `--tls-sni-cert-key` value. */
export interface NamedCertKey {
  readonly certFile: string;
  readonly keyFile: string;
  /** Explicit domain patterns; empty means "use the names in the certificate". */
  readonly names: readonly string[];
}

export type Release = "A" | "B" | "C";

export interface ServingSettings {
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

  readonly clientCaFile: string | null;
  readonly requestheaderClientCaFile: string | null;
  readonly requestheaderAllowedNames: readonly string[];
  readonly requestheaderUsernameHeaders: readonly string[];
  readonly requestheaderGroupHeaders: readonly string[];
  readonly requestheaderExtraHeadersPrefix: readonly string[];
  readonly authenticationKubeconfig: string | null;
  readonly authenticationSkipLookup: boolean;
  /** Milliseconds. */
  readonly authenticationTokenWebhookCacheTtl: number;
  readonly authorizationKubeconfig: string | null;
  /** Milliseconds. */
  readonly authorizationWebhookCacheAuthorizedTtl: number;
  /** Milliseconds. */
  readonly authorizationWebhookCacheUnauthorizedTtl: number;
  /** A only; empty elsewhere. */
  readonly authorizationAlwaysAllowPaths: readonly string[];
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
} as ServingSettings);
