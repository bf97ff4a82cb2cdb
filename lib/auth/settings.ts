/**
 * @module auth/settings
 * What authentication and authorization of the secure port are built from: the client CA, the
 * front-proxy (request-header) options, and the token and access reviews through the cluster.
 * lib/serving/settings.ts reads them from the run configuration as part of its settings.
 */

export interface DelegationSettings {
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
  /** Release A's `--authorization-always-allow-paths`; empty in B and C (they lack the option). */
  readonly authorizationAlwaysAllowPaths: readonly string[];
}
