/**
 * @module auth/authenticator
 * The authentication chain of the secure port, in Kubernetes' order and with its union semantics:
 * request header (front-proxy certificate), client certificate, bearer token. The first method
 * that identifies the caller wins. When none does, a request that presented credentials one of
 * them rejected is unauthorized (401); a request with no credentials at all is `system:anonymous`.
 */
import type { X509Certificate } from "node:crypto";
import type { ClientCertVerifier } from "./client_cert.ts";
import { userFromCertificate } from "./client_cert.ts";
import { type RawHeaderList, type RequestHeaderNames, userFromHeaders } from "./request_header.ts";
import type { TokenAuthenticator } from "./token.ts";
import { anonymousUser, type UserInfo } from "./types.ts";

export interface RequestHeaderAuth {
  readonly verifier: ClientCertVerifier;
  /** Empty: any certificate signed by the bundle may supply identity headers. */
  readonly allowedNames: readonly string[];
  readonly names: RequestHeaderNames;
}

export interface AuthenticationChain {
  readonly requestHeader: RequestHeaderAuth | null;
  readonly clientCert: ClientCertVerifier | null;
  readonly tokens: TokenAuthenticator | null;
}

export interface Credentials {
  /** Leaf first; empty when the client sent no certificate. */
  readonly peerChain: readonly X509Certificate[];
  /** All request headers, repeats kept. */
  readonly headers: RawHeaderList;
}

export type AuthenticationResult =
  | { readonly ok: true; readonly user: UserInfo; readonly method: "requestheader" | "x509" | "token" | "anonymous" }
  | { readonly ok: false; readonly reasons: readonly string[] };

/** The token of an `Authorization: Bearer …` header, or null. */
export function bearerToken(headers: RawHeaderList): string | null {
  const value = headers.find(([k]) => k.toLowerCase() === "authorization")?.[1];
  if (!value) return null;
  const parts = value.trim().split(" ");
  if (parts.length < 2 || parts[0].toLowerCase() !== "bearer") return null;
  return parts[1] === "" ? null : parts[1];
}

/**
 * Adds `system:authenticated` to an identified user unless it already carries it or
 * `system:unauthenticated` (Kubernetes' AuthenticatedGroupAdder).
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes("system:authenticated") || user.groups.includes("system:unauthenticated")) return user;
  return { ...user, groups: [...user.groups, "system:authenticated"] };
}

export async function authenticate(chain: AuthenticationChain, creds: Credentials): Promise<AuthenticationResult> {
  const result = await identify(chain, creds);
  return result.ok && result.method !== "anonymous" ? { ...result, user: withAuthenticatedGroup(result.user) } : result;
}

async function identify(chain: AuthenticationChain, creds: Credentials): Promise<AuthenticationResult> {
  const reasons: string[] = [];
  const hasCert = creds.peerChain.length > 0;

  if (chain.requestHeader && hasCert) {
    const rh = chain.requestHeader;
    const verified = rh.verifier.verify(creds.peerChain);
    if (!verified.ok) reasons.push(`request header: ${verified.reason}`);
    else if (rh.allowedNames.length > 0 && !rh.allowedNames.includes(verified.commonName)) {
      reasons.push(`request header: client certificate CN "${verified.commonName}" is not an allowed front proxy`);
    } else {
      const user = userFromHeaders(creds.headers, rh.names);
      if (user) return { ok: true, user, method: "requestheader" };
    }
  }

  if (chain.clientCert && hasCert) {
    const verified = chain.clientCert.verify(creds.peerChain);
    if (!verified.ok) reasons.push(`x509: ${verified.reason}`);
    else if (verified.commonName !== "") return { ok: true, user: userFromCertificate(verified), method: "x509" };
  }

  const token = bearerToken(creds.headers);
  if (token !== null) {
    if (!chain.tokens) reasons.push("bearer token: token authentication is not configured");
    else {
      try {
        const user = await chain.tokens.authenticate(token);
        if (user) return { ok: true, user, method: "token" };
        reasons.push("invalid bearer token");
      } catch (err) {
        reasons.push(`bearer token: review failed: ${(err as Error).message}`);
      }
    }
  }

  if (reasons.length > 0) return { ok: false, reasons };
  return { ok: true, user: anonymousUser, method: "anonymous" };
}
