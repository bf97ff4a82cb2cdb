/**
 * @module auth/delegation
 * Builds the authentication chain and the authorizer of the secure port from the settings:
 * CA bundles from files (or from the cluster lookup), TokenReview and SubjectAccessReview clients
 * from `--authentication-kubeconfig` / `--authorization-kubeconfig` (in-cluster when empty).
 */
import type { X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { loadKubeConfig } from "../cluster/access.ts";
import { ClusterClient } from "../cluster/client.ts";
import { oneLine, SetupError } from "../common/errors.ts";
import { log } from "../log/logger.ts";
import { parsePemBundle } from "../pki/cert_files.ts";
import { alwaysAllowMatcher, type PathMatcher } from "./always_allow.ts";
import type { AuthenticationChain } from "./authenticator.ts";
import { type AccessReviewer, clusterAccessReviewer, WebhookAuthorizer } from "./authorizer.ts";
import { ClientCertVerifier } from "./client_cert.ts";
import type { DelegationSettings } from "./settings.ts";
import { type ClusterAuthenticationConfig, lookupAuthenticationConfig } from "./lookup.ts";
import { clusterTokenReviewer, TokenAuthenticator, type TokenReviewer } from "./token.ts";

export interface DelegationOverrides {
  /** Replaces the TokenReview client (tests; the chain is otherwise unchanged). */
  readonly tokenReviewer?: TokenReviewer;
  /** Replaces the SubjectAccessReview client. */
  readonly accessReviewer?: AccessReviewer;
}

export interface Delegation {
  readonly authentication: AuthenticationChain;
  readonly authorizer: WebhookAuthorizer;
  readonly alwaysAllow: PathMatcher;
  /** Every CA a client certificate may chain to (for the TLS `ca` list). */
  readonly clientCAs: readonly X509Certificate[];
  close(): void;
}

/** Opens a delegated client; a missing file or no in-cluster configuration is a SetupError naming the option. */
export async function delegatedClient(path: string | null, option: string, purpose: string): Promise<ClusterClient> {
  if (path) {
    if (!existsSync(path)) {
      throw new SetupError(`--${option}: file ${path} does not exist; give a kubeconfig allowed to ${purpose}`);
    }
  } else if (!Deno.env.get("KUBERNETES_SERVICE_HOST")) {
    throw new SetupError(
      `--${option} is unset and there is no in-cluster configuration (not in a pod); give --${option} with a kubeconfig allowed to ${purpose}`,
    );
  }
  const kubeConfig = loadKubeConfig(path, option);
  try {
    return await ClusterClient.create({
      kubeConfig,
      qps: 200,
      burst: 400,
      requestTimeoutMs: 10_000,
      userAgent: "ingress-controller/delegated-auth",
    });
  } catch (err) {
    throw new SetupError(`--${option}: cannot use ${path || "the in-cluster configuration"} (${oneLine(err)})`);
  }
}

function caFromFile(file: string, option: string): X509Certificate[] {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (err) {
    throw new SetupError(`--${option}: cannot read ${file} (${(err as Error).message})`);
  }
  return parsePemBundle(pem, `--${option} ${file}`);
}

export async function buildDelegation(s: DelegationSettings, o: DelegationOverrides = {}): Promise<Delegation> {
  const clients: ClusterClient[] = [];
  try {
    let authnClient: ClusterClient | null = null;
    const needLookup = !s.authenticationSkipLookup &&
      (s.clientCaFile === null || s.requestheaderClientCaFile === null);
    if (!o.tokenReviewer || needLookup) {
      authnClient = await delegatedClient(
        s.authenticationKubeconfig,
        "authentication-kubeconfig",
        "create tokenreviews",
      );
      clients.push(authnClient);
    }
    let looked: ClusterAuthenticationConfig | null = null;
    if (needLookup && authnClient) looked = await lookupAuthenticationConfig(authnClient);

    let clientCert: ClientCertVerifier | null = null;
    if (s.clientCaFile) clientCert = new ClientCertVerifier(caFromFile(s.clientCaFile, "client-ca-file"));
    else if (looked?.clientCA) {
      clientCert = new ClientCertVerifier(parsePemBundle(looked.clientCA, "cluster client-ca-file"));
      log.info("client CA taken from kube-system/extension-apiserver-authentication");
    }

    let requestHeader: AuthenticationChain["requestHeader"] = null;
    if (s.requestheaderClientCaFile) {
      requestHeader = {
        verifier: new ClientCertVerifier(caFromFile(s.requestheaderClientCaFile, "requestheader-client-ca-file")),
        allowedNames: s.requestheaderAllowedNames,
        names: {
          usernameHeaders: s.requestheaderUsernameHeaders,
          groupHeaders: s.requestheaderGroupHeaders,
          extraHeaderPrefixes: s.requestheaderExtraHeadersPrefix,
        },
      };
    } else if (looked?.requestHeaderCA) {
      requestHeader = {
        verifier: new ClientCertVerifier(
          parsePemBundle(looked.requestHeaderCA, "cluster requestheader-client-ca-file"),
        ),
        allowedNames: looked.allowedNames,
        names: {
          usernameHeaders: looked.usernameHeaders,
          groupHeaders: looked.groupHeaders,
          extraHeaderPrefixes: looked.extraHeaderPrefixes,
        },
      };
      log.info("request-header settings taken from kube-system/extension-apiserver-authentication", {
        allowedNames: looked.allowedNames.join(","),
      });
    }

    const tokenReviewer = o.tokenReviewer ?? clusterTokenReviewer(authnClient!);
    const tokens = new TokenAuthenticator(tokenReviewer, s.authenticationTokenWebhookCacheTtl);

    let accessReviewer = o.accessReviewer;
    if (!accessReviewer) {
      const authzClient = await delegatedClient(
        s.authorizationKubeconfig,
        "authorization-kubeconfig",
        "create subjectaccessreviews",
      );
      clients.push(authzClient);
      accessReviewer = clusterAccessReviewer(authzClient);
    }
    const authorizer = new WebhookAuthorizer(
      accessReviewer,
      s.authorizationWebhookCacheAuthorizedTtl,
      s.authorizationWebhookCacheUnauthorizedTtl,
    );
    const alwaysAllow = alwaysAllowMatcher(s.authorizationAlwaysAllowPaths);
    return {
      authentication: { requestHeader, clientCert, tokens },
      authorizer,
      alwaysAllow,
      clientCAs: [...(requestHeader?.verifier.roots ?? []), ...(clientCert?.roots ?? [])],
      close: () => clients.forEach((c) => c.close()),
    };
  } catch (err) {
    clients.forEach((c) => c.close());
    throw err;
  }
}
