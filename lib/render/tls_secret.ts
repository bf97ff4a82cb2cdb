/**
 * @module render/tls_secret
 * What the controller keeps of a Secret: verdicts, the reasons for refusals and a content hash,
 * never the key or a hash of a password. The
 * proxies read their Secrets themselves (lib/proxy/command.ts, by name from `secrets.json`), so
 * the renderer only needs to know whether a Secret can serve TLS (the chain parses, the key is
 * unencrypted, of a type the proxy serves and the certificate's: lib/pki/secret_checks.ts), holds a
 * CA bundle (`ca.crt`) or an htpasswd file (`auth`, lib/render/secret_content.ts), and why not.
 * `summarizedSecret` is the
 * transform of the controller's Secret informer: `data` (with `tls.key`) and the annotations
 * (`kubectl apply` copies the whole Secret into one) are gone before the object is stored.
 */
import { createHash } from "node:crypto";
import type { KubeObject } from "../cluster/resources.ts";
import { caBundle, tlsPair } from "../pki/secret_checks.ts";
import { parseHtpasswd } from "./secret_content.ts";

/** The verdict on a Secret's content and a hash of it. */
export interface TlsSecretSummary {
  /** A kubernetes.io/tls Secret whose `tls.crt` and `tls.key` the proxy can serve. */
  readonly valid: boolean;
  /** Why it cannot serve TLS (absent when `valid`), e.g. "tls.key does not match the certificate …". */
  readonly reason?: string;
  /** sha256 (hex) over the type and every data entry: changes whenever the content does. */
  readonly sha256: string;
  /** `ca.crt` holds PEM certificates only, each of which parses (a CA bundle the proxy may write). */
  readonly ca?: boolean;
  /** Why `ca.crt` is not such a bundle (absent when `ca`), e.g. "there is no ca.crt". */
  readonly caReason?: string;
  /** With an `auth` key: how many htpasswd lines are usable, and why the others are refused (no hashes). */
  readonly htpasswd?: { readonly users: number; readonly refused: readonly string[] } | null;
}

/** The fields read here: a full Secret (V1Secret, plain JSON) or one reduced by `summarizedSecret`. */
export interface SecretLike {
  type?: string;
  metadata?: { name?: string; namespace?: string };
  data?: Record<string, string>;
  tlsSummary?: TlsSecretSummary;
}

function decodedText(data: Record<string, string> | undefined, key: string): string | null {
  const b64 = data?.[key];
  if (typeof b64 !== "string") return null;
  try {
    return atob(b64);
  } catch {
    return null;
  }
}

/** Judges and hashes the content of a Secret (the key bytes are read here and kept nowhere). */
export function summarizeTlsSecret(secret: SecretLike): TlsSecretSummary {
  const tls = tlsPair(secret);
  const h = createHash("sha256").update(secret.type ?? "");
  for (const k of Object.keys(secret.data ?? {}).sort()) h.update(`\0${k}\0${secret.data![k]}`);
  const ca = caBundle(secret);
  const auth = decodedText(secret.data, "auth");
  const parsed = auth === null ? null : parseHtpasswd(auth);
  return {
    valid: !("problem" in tls),
    ...("problem" in tls ? { reason: tls.problem } : {}),
    sha256: h.digest("hex"),
    ca: !("problem" in ca),
    ...("problem" in ca ? { caReason: ca.problem } : {}),
    htpasswd: parsed && { users: parsed.users.length, refused: parsed.refused },
  };
}

/** The summary a Secret carries (cache objects), else one made from its data (lists, admission). */
export function tlsSummaryOf(secret: SecretLike): TlsSecretSummary {
  return secret.tlsSummary ?? summarizeTlsSecret(secret);
}

/**
 * The Secret as the controller caches it: identity, type and summary. Builds a new object, so
 * nothing of the original (data, annotations, managedFields) stays reachable from the cache.
 */
export function summarizedSecret(o: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion } = o.metadata;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name, namespace, uid, resourceVersion },
    type: o.type,
    tlsSummary: summarizeTlsSecret(o),
  };
}
