/**
 * @module render/configmap_ca
 * CA bundles the proxy reads from ConfigMaps (key `ca.crt`, PEM certificates only): the Gateway
 * API names its CAs that way (BackendTLSPolicy `validation.caCertificateRefs`, a Gateway's
 * client-certificate validation). The controller lists each such ConfigMap in `secrets.json`
 * as a `configmap-ca` entry ({@link configMapCaEntry}); the proxy watches it by name, writes its
 * `ca.crt` to {@link configMapCaFile} and leaves a missing or unusable one out with a CA that
 * verifies nothing (lib/proxy/left_out.ts), so what checks against it fails closed.
 */
import { caBundleProblem } from "../pki/secret_checks.ts";
import { CONFIGMAP_CA_FILE, isDns1123Label, isDns1123Subdomain } from "./patterns.ts";
import type { SecretFile } from "./render.ts";
import { show } from "./show.ts";

/**
 * The proxy's file for the CA of a ConfigMap, relative to its cert directory (`ca-base`):
 * `<ns>_<name>_configmap_ca.pem`. Names have no `_`, so it can meet neither a TLS Secret's
 * `<ns>_<name>.pem` nor a CA Secret's `<ns>_<name>_ca.pem`. Throws on a name that is not one
 * (callers validate names first: a throw here is a bug).
 */
export function configMapCaFile(namespace: string, name: string): string {
  const file = `${namespace}_${name}_configmap_ca.pem`;
  if (!isDns1123Label(namespace) || !isDns1123Subdomain(name) || !CONFIGMAP_CA_FILE.test(file)) {
    throw new Error(`bug: ConfigMap name ${show(`${namespace}/${name}`)}`);
  }
  return file;
}

/**
 * The `secrets.json` entry that makes a proxy read the CA ConfigMap `namespace/name` and write it
 * as {@link configMapCaFile}: add it to the proxy's rendered `secrets` (the list is deduplicated
 * there), and name the file in `ca-file`. The proxy's Role then allows get/list/watch of that
 * ConfigMap by name (lib/controller/objects.ts).
 */
export function configMapCaEntry(namespace: string, name: string): SecretFile {
  return { kind: "configmap-ca", file: configMapCaFile(namespace, name), namespace, name };
}

/** Why the `ca.crt` of a ConfigMap cannot be a CA bundle, or null (the proxy applies the same check). */
export function configMapCaProblem(cm: { data?: Record<string, unknown> }): string | null {
  const text = cm.data?.["ca.crt"];
  if (typeof text !== "string" || text === "") return "has no key ca.crt";
  return caBundleProblem(text);
}

/**
 * `secrets` (a proxy's rendered list) with a `configmap-ca` entry for each of `cas` (ConfigMaps as
 * `{namespace, name}`), each once, sorted as the render sorts its list (kind, then file).
 */
export function withConfigMapCas(
  secrets: readonly SecretFile[],
  cas: Iterable<{ namespace: string; name: string }>,
): SecretFile[] {
  const key = (s: SecretFile) => `${s.kind ?? "tls"} ${s.file ?? ""} ${s.namespace}/${s.name}`;
  const out = new Map(secrets.map((s) => [key(s), s]));
  for (const ca of cas) {
    const entry = configMapCaEntry(ca.namespace, ca.name);
    out.set(key(entry), entry);
  }
  return [...out.values()].sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}
